//! `lockfree`: a lock-free skiplist memtable that takes every writer at
//! once, as Cassandra's `SkipListMemtable` (a `ConcurrentSkipListMap`)
//! and RocksDB's `InlineSkipList` with concurrent inserts do.
//!
//! Over crossbeam-skiplist's `SkipMap` rather than a skiplist of its own:
//! a lock-free list needs safe memory reclamation for the versions a
//! newer timestamp replaces, and crossbeam's epochs are the well-kept,
//! well-tested answer; writing one here would be the riskiest unsafe
//! code in the project for no gain in what memlab measures.

use std::ops::Bound;

use crossbeam_skiplist::SkipMap;
use memlab_sdk::{ConcurrentMemtable, Entry, Error, Packed, Params, Stat, Stats, Version};

/// What a node costs beyond its key and value: crossbeam's node header
/// and a tower of about 1.33 pointers on average, rounded up.
const NODE_OVERHEAD: u64 = 48;

/// The lock-free skiplist: key -> (timestamp, ref).
#[derive(Debug, Default)]
pub struct LockFree {
    map: SkipMap<Vec<u8>, (u64, u64)>,
}

fn push(out: &mut Packed, key: &[u8], &(timestamp, reference): &(u64, u64)) {
    out.push_with(|buf| Entry { key, timestamp, reference }.encode(buf));
}

impl ConcurrentMemtable for LockFree {
    const NAME: &'static str = "lockfree";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    /// The last key the cursor returned.
    type Position = Option<Vec<u8>>;

    fn create(_params: &mut Params) -> Result<Self, Error> {
        Ok(LockFree::default())
    }

    fn insert(&self, entry: Entry<'_>) -> Result<(), Error> {
        let timestamp = entry.timestamp;
        // Replaces the entry only when this one is newer; atomic against
        // racing inserts of the same key.
        self.map.compare_insert(entry.key.to_vec(), (timestamp, entry.reference), |old| timestamp >= old.0);
        Ok(())
    }

    fn get(&self, key: &[u8]) -> Option<Version> {
        self.map.get(key).map(|e| Version { timestamp: e.value().0, reference: e.value().1 })
    }

    fn scan(&self, start: &[u8], end: Option<&[u8]>, limit: usize, out: &mut Packed) {
        let upper = end.map_or(Bound::Unbounded, Bound::Excluded);
        for e in self.map.range::<[u8], _>((Bound::Included(start), upper)).take(limit) {
            push(out, e.key(), e.value());
        }
    }

    fn cursor(&self) -> Option<Vec<u8>> {
        None
    }

    fn next(&self, position: &mut Option<Vec<u8>>, max_bytes: usize, out: &mut Packed) {
        let lower = position.as_deref().map_or(Bound::Unbounded, Bound::Excluded);
        let mut last = None;
        for e in self.map.range::<[u8], _>((lower, Bound::Unbounded)) {
            push(out, e.key(), e.value());
            last = Some(e);
            if out.data_len() >= max_bytes {
                break;
            }
        }
        if let Some(e) = last {
            *position = Some(e.key().clone());
        }
    }

    fn stats(&self) -> Stats {
        let index: u64 = self.map.iter().map(|e| e.key().len() as u64 + 16 + NODE_OVERHEAD).sum();
        vec![Stat::Entries.with(self.map.len() as u64), Stat::IndexBytes.with(index)]
    }
}

memlab_sdk::export!(concurrent memtable: LockFree);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn racing_writers_keep_the_newest_version_of_each_key() {
        let table = LockFree::default();
        std::thread::scope(|s| {
            for t in 0..4u64 {
                let table = &table;
                s.spawn(move || {
                    for i in 0..1000u64 {
                        let key = (i % 100).to_be_bytes();
                        table.insert(Entry { key: &key, timestamp: i * 4 + t, reference: t }).expect("insert");
                    }
                });
            }
        });
        for k in 0..100u64 {
            let newest = (900 + k) * 4 + 3;
            assert_eq!(table.get(&k.to_be_bytes()).map(|v| v.timestamp), Some(newest), "key {k}");
        }
    }
}
