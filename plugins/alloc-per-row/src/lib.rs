//! `per-row`: rows are bump-allocated in chunks, and each row is reserved
//! from the host pool with one call, sized once — the allocation batching
//! of CASSANDRA-20226.

use memlab_sdk::{Allocator, ChunkStore, Error, Packed, Params, Pool, RowView, Stats};

/// A chunked bump allocator with one pool reservation per row.
#[derive(Debug)]
pub struct PerRowAllocator {
    store: ChunkStore,
}

impl Allocator for PerRowAllocator {
    const NAME: &'static str = "per-row";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");

    fn create(params: &mut Params) -> Result<Self, Error> {
        Ok(PerRowAllocator { store: ChunkStore::from_param(params, "chunk_size", 1 << 20, 64..=1 << 30)? })
    }

    fn store(&mut self, pool: &mut dyn Pool, row: RowView<'_>) -> Result<u64, Error> {
        self.store.reserve(pool, ChunkStore::footprint(row.as_bytes().len()) as u64)?;
        Ok(self.store.push(row.as_bytes()))
    }

    fn store_batch(&mut self, pool: &mut dyn Pool, rows: &Packed, refs: &mut Vec<u64>) -> Result<(), Error> {
        self.store.store_batch(pool, rows, refs, |row, sizes| sizes.push(ChunkStore::footprint(row.as_bytes().len()) as u64))
    }

    fn load(&self, reference: u64) -> Result<&[u8], Error> {
        self.store.get(reference)
    }

    fn stats(&self) -> Stats {
        self.store.stats()
    }
}

memlab_sdk::export!(allocator: PerRowAllocator);
