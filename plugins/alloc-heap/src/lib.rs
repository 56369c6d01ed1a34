//! `heap`: every row is its own allocation from the guest's global
//! allocator (unslabbed), reserved from the pool one row at a time.

use memlab_sdk::{Allocator, Error, Packed, Params, Pool, RowView, Stat, Stats, reserve_rows};

/// One heap allocation per row.
#[derive(Debug, Default)]
pub struct HeapAllocator {
    rows: Vec<Box<[u8]>>,
    used: u64,
    reserved: u64,
    // Reused across batches by `store_batch`.
    costs: Vec<u64>,
}

// What a heap allocation costs beyond its bytes: the boxed slice's fat
// pointer in `rows` plus a typical allocator header.
const OVERHEAD: u64 = 16 + 8;

impl Allocator for HeapAllocator {
    const NAME: &'static str = "heap";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");

    fn create(_params: &mut Params) -> Result<Self, Error> {
        Ok(Self::default())
    }

    fn store(&mut self, pool: &mut dyn Pool, row: RowView<'_>) -> Result<u64, Error> {
        let bytes = row.as_bytes();
        let cost = bytes.len() as u64 + OVERHEAD;
        pool.reserve(cost)?;
        self.reserved += cost;
        // What it keeps per row is used: the fat pointer and the header.
        self.used += cost;
        self.rows.push(bytes.into());
        Ok(self.rows.len() as u64 - 1)
    }

    fn store_batch(&mut self, pool: &mut dyn Pool, rows: &Packed, refs: &mut Vec<u64>) -> Result<(), Error> {
        // Still one reservation per row, in one crossing.
        reserve_rows(pool, rows, &mut self.costs, |row, costs| costs.push(row.as_bytes().len() as u64 + OVERHEAD))?;
        self.reserved += self.costs.iter().sum::<u64>();
        for record in rows.iter() {
            self.used += record.len() as u64 + OVERHEAD;
            self.rows.push(record.into());
            refs.push(self.rows.len() as u64 - 1);
        }
        Ok(())
    }

    fn load(&self, reference: u64) -> Result<&[u8], Error> {
        usize::try_from(reference)
            .ok()
            .and_then(|i| self.rows.get(i))
            .map(|row| &row[..])
            .ok_or_else(|| Error::Corrupt(format!("ref {reference} was not returned by this allocator")))
    }

    fn stats(&self) -> Stats {
        vec![
            Stat::BytesUsed.with(self.used),
            Stat::BytesReserved.with(self.reserved),
            Stat::Regions.with(self.rows.len() as u64),
            Stat::Reservations.with(self.rows.len() as u64),
            Stat::Waste.with(self.reserved - self.used),
        ]
    }
}

memlab_sdk::export!(allocator: HeapAllocator);
