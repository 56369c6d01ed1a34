#[cfg(all(target_arch = "wasm32", feature = "allocator"))]
#[doc(hidden)]
pub mod export;
#[cfg(not(target_arch = "wasm32"))]
#[expect(unsafe_code, reason = "the host's pool is lent through the native table's C functions")]
pub(crate) mod native;
pub(crate) mod twin;
use crate::{Error, Packed, Params, RowView, Stats};

/// The host's memory budget, as an allocator sees it.
pub trait Pool {
    /// Accounts `bytes` before the allocator keeps them.
    fn reserve(&mut self, bytes: u64) -> Result<(), Error>;
    /// Accounts each of `sizes` as its own reservation, as that many
    /// `reserve` calls would, but crossing into the host once. On refusal
    /// none of them stays reserved.
    fn reserve_each(&mut self, sizes: &[u64]) -> Result<(), Error>;
    /// Gives `bytes` back early.
    fn release(&mut self, bytes: u64);
}

/// Checks every row of a batch and makes all its reservations with one
/// `Pool::reserve_each`: `reservations` pushes, for one row, the sizes an
/// allocator's `store` would reserve one by one. `sizes` is scratch space,
/// left holding what was reserved.
pub fn reserve_rows(pool: &mut dyn Pool, rows: &Packed, sizes: &mut Vec<u64>, mut reservations: impl FnMut(&RowView<'_>, &mut Vec<u64>)) -> Result<(), Error> {
    sizes.clear();
    for record in rows.iter() {
        reservations(&RowView::decode(record)?, sizes);
    }
    pool.reserve_each(sizes)
}

/// Where row bytes live: WIT `allocator`, in plain Rust.
pub trait Allocator: Sized + 'static {
    /// The name config uses, e.g. `"per-row"`.
    const NAME: &'static str;
    /// The implementation's version.
    const VERSION: &'static str;

    /// Builds an empty allocator, taking its parameters from `params`.
    fn create(params: &mut Params) -> Result<Self, Error>;

    /// Keeps `row`'s bytes, reserving them from `pool` first, and returns
    /// the ref that `load` takes.
    fn store(&mut self, pool: &mut dyn Pool, row: RowView<'_>) -> Result<u64, Error>;

    /// Stores a batch; override to reserve for the batch in one crossing
    /// (see `ChunkStore::store_batch`).
    fn store_batch(&mut self, pool: &mut dyn Pool, rows: &Packed, refs: &mut Vec<u64>) -> Result<(), Error> {
        for record in rows.iter() {
            refs.push(self.store(pool, RowView::decode(record)?)?);
        }
        Ok(())
    }

    /// The row bytes behind `reference`, exactly as stored.
    fn load(&self, reference: u64) -> Result<&[u8], Error>;

    /// Counters; must include `bytes-used`, `bytes-reserved`, `regions`,
    /// `reservations` and `waste`.
    fn stats(&self) -> Stats;
}
