//! `region`: reserves whole regions from the pool (`region_size`, 1 MiB by
//! default) and carves rows out of them with a bump pointer, like
//! Cassandra's NativeAllocator and SlabAllocator. Few pool calls; the
//! unused tail of each region is waste.

use memlab_sdk::{Allocator, ChunkStore, Error, Params, Pool, RowView, Stats};

/// A region allocator.
#[derive(Debug)]
pub struct RegionAllocator {
    store: ChunkStore,
    reserved: u64,
    reservations: u64,
}

impl Allocator for RegionAllocator {
    const NAME: &'static str = "region";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");

    fn create(params: &mut Params) -> Result<Self, Error> {
        let region_size: usize = params.get("region_size", 1 << 20)?;
        if !(4096..=1 << 30).contains(&region_size) {
            return Err(Error::BadParam(format!("`region_size` = {region_size} is outside 4096..=1GiB")));
        }
        Ok(RegionAllocator { store: ChunkStore::new(region_size), reserved: 0, reservations: 0 })
    }

    fn store(&mut self, pool: &mut dyn Pool, row: RowView<'_>) -> Result<u64, Error> {
        if let Some(region) = self.store.next_chunk(row.as_bytes().len()) {
            pool.reserve(region as u64)?;
            self.reserved += region as u64;
            self.reservations += 1;
        }
        Ok(self.store.push(row.as_bytes()))
    }

    fn load(&self, reference: u64) -> Result<&[u8], Error> {
        self.store.get(reference)
    }

    fn stats(&self) -> Stats {
        self.store.stats(self.reserved, self.reservations)
    }
}

memlab_sdk::export!(allocator: RegionAllocator);
