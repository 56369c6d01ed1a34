//! `per-cell`: like `per-row`, but the pool is asked once for the row's
//! header and once per cell — the shape before CASSANDRA-20226's
//! allocation batching, where every cell was its own `allocate` call.

use memlab_sdk::{Allocator, ChunkStore, Error, Packed, Params, Pool, RowView, Stats};

/// A chunked bump allocator with one pool reservation per cell.
#[derive(Debug)]
pub struct PerCellAllocator {
    store: ChunkStore,
}

impl Allocator for PerCellAllocator {
    const NAME: &'static str = "per-cell";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");

    fn create(params: &mut Params) -> Result<Self, Error> {
        Ok(PerCellAllocator { store: ChunkStore::from_param(params, "chunk_size", 1 << 20, 64..=1 << 30)? })
    }

    fn store(&mut self, pool: &mut dyn Pool, row: RowView<'_>) -> Result<u64, Error> {
        let mut sizes = Vec::with_capacity(usize::from(row.cell_count()) + 1);
        cell_reservations(&row, &mut sizes);
        for bytes in sizes {
            self.store.reserve(pool, bytes)?;
        }
        Ok(self.store.push(row.as_bytes()))
    }

    fn store_batch(&mut self, pool: &mut dyn Pool, rows: &Packed, refs: &mut Vec<u64>) -> Result<(), Error> {
        self.store.store_batch(pool, rows, refs, cell_reservations)
    }

    fn load(&self, reference: u64) -> Result<&[u8], Error> {
        self.store.get(reference)
    }

    fn stats(&self) -> Stats {
        self.store.stats()
    }
}

/// One reservation per cell, then one for the rest of the row.
fn cell_reservations(row: &RowView<'_>, sizes: &mut Vec<u64>) {
    let total = ChunkStore::footprint(row.as_bytes().len()) as u64;
    let mut cells = 0u64;
    for cell in row.cells() {
        // Column id, length and value, as the row layout stores them.
        let bytes = 6 + cell.value.len() as u64;
        sizes.push(bytes);
        cells += bytes;
    }
    // The rest: keys, timestamp, flags, count, length prefix.
    sizes.push(total - cells);
}

memlab_sdk::export!(allocator: PerCellAllocator);
