//! `region`: reserves whole regions from the pool (`region_size`, 1 MiB by
//! default) and carves rows out of them with a bump pointer, like
//! Cassandra's NativeAllocator and SlabAllocator. Few pool calls; the
//! unused tail of each region is waste.

use memlab_sdk::{Allocator, ChunkStore, Error, Params, Pool, RowView, Stats};

/// A region allocator.
#[derive(Debug)]
pub struct RegionAllocator {
    store: ChunkStore,
}

impl Allocator for RegionAllocator {
    const NAME: &'static str = "region";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");

    fn create(params: &mut Params) -> Result<Self, Error> {
        Ok(RegionAllocator { store: ChunkStore::from_param(params, "region_size", 1 << 20, 4096..=1 << 30)? })
    }

    fn store(&mut self, pool: &mut dyn Pool, row: RowView<'_>) -> Result<u64, Error> {
        if let Some(region) = self.store.next_chunk(row.as_bytes().len()) {
            self.store.reserve(pool, region as u64)?;
        }
        Ok(self.store.push(row.as_bytes()))
    }

    fn load(&self, reference: u64) -> Result<&[u8], Error> {
        self.store.get(reference)
    }

    fn stats(&self) -> Stats {
        self.store.stats()
    }
}

memlab_sdk::export!(allocator: RegionAllocator);
