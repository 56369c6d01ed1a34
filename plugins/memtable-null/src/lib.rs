//! `null`: a memtable that accepts every entry and keeps none. It measures
//! the harness (stream, routing, locks, the boundary) without an index:
//! a run with it shows the ceiling the harness allows. It fails
//! `memlab check` and verification by design; give its variants
//! `verify = false`.

use memlab_sdk::{Entry, Error, Memtable, Packed, Params, Stat, Stats};

/// Counts inserts and forgets them.
#[derive(Debug, Default)]
pub struct NullMemtable {
    inserted: u64,
}

impl Memtable for NullMemtable {
    const NAME: &'static str = "null";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    type Position = ();

    fn create(_params: &mut Params) -> Result<Self, Error> {
        Ok(NullMemtable::default())
    }

    fn insert(&mut self, _entry: Entry<'_>) -> Result<(), Error> {
        self.inserted += 1;
        Ok(())
    }

    fn insert_batch(&mut self, entries: &Packed) -> Result<(), Error> {
        self.inserted += entries.len() as u64;
        Ok(())
    }

    fn get<'a>(&'a self, _key: &'a [u8]) -> Option<Entry<'a>> {
        None
    }

    fn scan(&self, _start: &[u8], _end: Option<&[u8]>, _limit: usize, _out: &mut Packed) {}

    fn cursor(&self) {}

    fn next(&self, _position: &mut (), _max_bytes: usize, _out: &mut Packed) {}

    fn stats(&self) -> Stats {
        vec![Stat::Entries.with(0), Stat::IndexBytes.with(0), ("inserted".into(), self.inserted)]
    }
}

memlab_sdk::export!(memtable: NullMemtable);
