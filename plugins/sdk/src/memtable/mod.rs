#[cfg(all(target_arch = "wasm32", feature = "memtable"))]
#[doc(hidden)]
pub mod export;
#[cfg(not(target_arch = "wasm32"))]
pub(crate) mod native;
pub(crate) mod twin;
use crate::{Entry, Error, Packed, Params, Stats};

/// A sorted in-memory index: WIT `memtable`, in plain Rust.
///
/// The export glue enforces the state rules of the contract (no insert
/// after a cursor is opened), so an implementation only keeps its index.
pub trait Memtable: Sized + 'static {
    /// The name config uses, e.g. `"btree"`.
    const NAME: &'static str;
    /// The implementation's version.
    const VERSION: &'static str;

    /// Where a cursor stands between `next` calls.
    type Position: 'static;

    /// Builds an empty memtable, taking its parameters from `params`.
    fn create(params: &mut Params) -> Result<Self, Error>;

    /// Inserts one entry. For an existing key the higher timestamp wins;
    /// on equal timestamps this (later) entry wins.
    fn insert(&mut self, entry: Entry<'_>) -> Result<(), Error>;

    /// Inserts a batch; override to exploit the batch as a whole.
    fn insert_batch(&mut self, entries: &Packed) -> Result<(), Error> {
        for record in entries.iter() {
            self.insert(Entry::decode(record)?)?;
        }
        Ok(())
    }

    /// The entry for `key`, if any. It may borrow its key from `key`,
    /// for an index that does not store keys whole (a trie).
    fn get<'a>(&'a self, key: &'a [u8]) -> Option<Entry<'a>>;

    /// Appends entries with `start <= key < end` in order, at most `limit`.
    fn scan(&self, start: &[u8], end: Option<&[u8]>, limit: usize, out: &mut Packed);

    /// Called once before the first cursor; no insert follows.
    fn freeze(&mut self) {}

    /// A cursor before the first entry.
    fn cursor(&self) -> Self::Position;

    /// Appends entries after `position` until `max_bytes` is reached (at
    /// least one while any remain), and moves `position` past them.
    fn next(&self, position: &mut Self::Position, max_bytes: usize, out: &mut Packed);

    /// Counters; must include `entries` and `index-bytes`.
    fn stats(&self) -> Stats;
}
