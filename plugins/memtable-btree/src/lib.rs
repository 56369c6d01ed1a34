//! `btree`: the reference memtable, a `BTreeMap` from sort key to the
//! newest entry. Simple and obviously correct; other memtables are judged
//! against it.

use std::collections::BTreeMap;
use std::ops::Bound;

use memlab_sdk::{Entry, Error, Memtable, Packed, Params, Stat, Stats};

/// A `BTreeMap` memtable.
#[derive(Debug, Default)]
pub struct BTreeMemtable {
    map: BTreeMap<Vec<u8>, Slot>,
    key_bytes: u64,
}

#[derive(Debug, Clone, Copy)]
struct Slot {
    timestamp: u64,
    reference: u64,
}

/// Where a cursor stands: before everything, or after a key.
#[derive(Debug)]
pub enum Position {
    /// Nothing returned yet.
    Start,
    /// The last key returned.
    After(Vec<u8>),
}

// A rough per-entry cost of a B-tree slot (node share, Vec header, slot).
const ENTRY_OVERHEAD: u64 = 48;

impl BTreeMemtable {
    fn entry<'a>(key: &'a [u8], slot: &Slot) -> Entry<'a> {
        Entry { key, timestamp: slot.timestamp, reference: slot.reference }
    }
}

impl Memtable for BTreeMemtable {
    const NAME: &'static str = "btree";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    type Position = Position;

    fn create(_params: &mut Params) -> Result<Self, Error> {
        Ok(Self::default())
    }

    fn insert(&mut self, entry: Entry<'_>) -> Result<(), Error> {
        let slot = Slot { timestamp: entry.timestamp, reference: entry.reference };
        match self.map.get_mut(entry.key) {
            Some(old) => {
                if entry.timestamp >= old.timestamp {
                    *old = slot;
                }
            }
            None => {
                self.key_bytes += entry.key.len() as u64;
                self.map.insert(entry.key.to_vec(), slot);
            }
        }
        Ok(())
    }

    fn get(&self, key: &[u8]) -> Option<Entry<'_>> {
        self.map.get_key_value(key).map(|(k, slot)| Self::entry(k, slot))
    }

    fn scan(&self, start: &[u8], end: Option<&[u8]>, limit: usize, out: &mut Packed) {
        if end.is_some_and(|end| end <= start) {
            return;
        }
        let upper = end.map_or(Bound::Unbounded, Bound::Excluded);
        for (key, slot) in self.map.range::<[u8], _>((Bound::Included(start), upper)).take(limit) {
            out.push_with(|buf| Self::entry(key, slot).encode(buf));
        }
    }

    fn cursor(&self) -> Position {
        Position::Start
    }

    fn next(&self, position: &mut Position, max_bytes: usize, out: &mut Packed) {
        let lower = match position {
            Position::Start => Bound::Unbounded,
            Position::After(key) => Bound::Excluded(key.as_slice()),
        };
        let mut last = None;
        for (key, slot) in self.map.range::<[u8], _>((lower, Bound::Unbounded)) {
            out.push_with(|buf| Self::entry(key, slot).encode(buf));
            last = Some(key);
            if out.data_len() >= max_bytes {
                break;
            }
        }
        if let Some(key) = last {
            *position = Position::After(key.clone());
        }
    }

    fn stats(&self) -> Stats {
        let entries = self.map.len() as u64;
        vec![Stat::Entries.with(entries), Stat::IndexBytes.with(self.key_bytes + entries * ENTRY_OVERHEAD)]
    }
}

memlab_sdk::export!(memtable: BTreeMemtable);
