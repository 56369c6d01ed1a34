//! `null`: an allocator that hands out refs and keeps no bytes, reserving
//! nothing. With the `null` memtable it measures the harness alone; it
//! cannot serve a flush (loads fail), so give its variants
//! `verify = false`.

use memlab_sdk::{Allocator, Error, Packed, Params, Pool, RowView, Stat, Stats};

/// Counts rows and forgets them.
#[derive(Debug, Default)]
pub struct NullAllocator {
    rows: u64,
}

impl Allocator for NullAllocator {
    const NAME: &'static str = "null";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");

    fn create(_params: &mut Params) -> Result<Self, Error> {
        Ok(NullAllocator::default())
    }

    fn store(&mut self, _pool: &mut dyn Pool, _row: RowView<'_>) -> Result<u64, Error> {
        self.rows += 1;
        Ok(self.rows)
    }

    fn store_batch(&mut self, _pool: &mut dyn Pool, rows: &Packed, refs: &mut Vec<u64>) -> Result<(), Error> {
        refs.extend(self.rows + 1..=self.rows + rows.len() as u64);
        self.rows += rows.len() as u64;
        Ok(())
    }

    fn load(&self, reference: u64) -> Result<&[u8], Error> {
        Err(Error::Other(format!("the null allocator keeps nothing (ref {reference})")))
    }

    fn stats(&self) -> Stats {
        Stat::ALLOCATOR.iter().map(|s| s.with(0)).chain([("rows".to_string(), self.rows)]).collect()
    }
}

memlab_sdk::export!(allocator: NullAllocator);
