//! `null`: an allocator that hands out refs and keeps no bytes. It still
//! reserves each row's bytes (and the 4 bytes of framing the contract
//! counts) from the pool, so the harness's budget, switches and flushes
//! run as with a real allocator. With the `null` memtable it measures the
//! harness alone; it cannot serve a flush's loads (its memtable hands it
//! none), so give its variants `verify = false`.

use memlab_sdk::{Allocator, Error, Packed, Params, Pool, RowView, Stat, Stats};

/// What the contract counts a row as holding: its bytes and 4 of framing.
const FRAMING: u64 = 4;

/// Counts rows and what it reserved for them, and forgets the rows.
#[derive(Debug, Default)]
pub struct NullAllocator {
    rows: u64,
    reserved: u64,
    sizes: Vec<u64>,
}

impl Allocator for NullAllocator {
    const NAME: &'static str = "null";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");

    fn create(_params: &mut Params) -> Result<Self, Error> {
        Ok(NullAllocator::default())
    }

    fn store(&mut self, pool: &mut dyn Pool, row: RowView<'_>) -> Result<u64, Error> {
        let size = row.as_bytes().len() as u64 + FRAMING;
        pool.reserve(size)?;
        self.reserved += size;
        self.rows += 1;
        Ok(self.rows)
    }

    fn store_batch(&mut self, pool: &mut dyn Pool, rows: &Packed, refs: &mut Vec<u64>) -> Result<(), Error> {
        // A row's size is its record's length: the null keeps no bytes, so
        // it does not walk the cells (what the harness ceiling should omit).
        self.sizes.clear();
        self.sizes.extend(rows.iter().map(|record| record.len() as u64 + FRAMING));
        pool.reserve_each(&self.sizes)?;
        let total: u64 = self.sizes.iter().sum();
        self.reserved += total;
        refs.extend(self.rows + 1..=self.rows + rows.len() as u64);
        self.rows += rows.len() as u64;
        Ok(())
    }

    fn load(&self, reference: u64) -> Result<&[u8], Error> {
        Err(Error::Other(format!("the null allocator keeps nothing (ref {reference})")))
    }

    fn stats(&self) -> Stats {
        vec![
            Stat::BytesUsed.with(self.reserved),
            Stat::BytesReserved.with(self.reserved),
            Stat::Regions.with(0),
            Stat::Reservations.with(self.rows),
            Stat::Waste.with(0),
            ("rows".to_string(), self.rows),
        ]
    }
}

memlab_sdk::export!(allocator: NullAllocator);
