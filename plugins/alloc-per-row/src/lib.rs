//! `per-row`: rows are bump-allocated in chunks, and each row is reserved
//! from the host pool with one call, sized once — the allocation batching
//! of CASSANDRA-20226.

use memlab_sdk::{Allocator, ChunkStore, Error, Params, Pool, RowView, Stats};

/// A chunked bump allocator with one pool reservation per row.
#[derive(Debug)]
pub struct PerRowAllocator {
    store: ChunkStore,
    reserved: u64,
    reservations: u64,
}

impl Allocator for PerRowAllocator {
    const NAME: &'static str = "per-row";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");

    fn create(params: &mut Params) -> Result<Self, Error> {
        let chunk_size: usize = params.get("chunk_size", 1 << 20)?;
        if chunk_size < 64 {
            return Err(Error::BadParam(format!("`chunk_size` = {chunk_size} is below 64")));
        }
        Ok(PerRowAllocator { store: ChunkStore::new(chunk_size), reserved: 0, reservations: 0 })
    }

    fn store(&mut self, pool: &mut dyn Pool, row: RowView<'_>) -> Result<u64, Error> {
        let need = ChunkStore::footprint(row.as_bytes().len()) as u64;
        pool.reserve(need)?;
        self.reserved += need;
        self.reservations += 1;
        Ok(self.store.push(row.as_bytes()))
    }

    fn load(&self, reference: u64) -> Result<&[u8], Error> {
        self.store.get(reference)
    }

    fn stats(&self) -> Stats {
        self.store.stats(self.reserved, self.reservations)
    }
}

memlab_sdk::export!(allocator: PerRowAllocator);
