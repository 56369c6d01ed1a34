//! `lockfree`: a lock-free skiplist memtable that takes every writer at
//! once, as Cassandra's `SkipListMemtable` (a `ConcurrentSkipListMap`)
//! and RocksDB's `InlineSkipList` with concurrent inserts do.
//!
//! Over crossbeam-skiplist's `SkipMap` rather than a skiplist of its own:
//! a lock-free list needs safe memory reclamation for the versions a
//! newer timestamp replaces, and crossbeam's epochs are the well-kept,
//! well-tested answer; writing one here would be the riskiest unsafe
//! code in the project for no gain in what memlab measures.
//!
//! A key's node is never replaced: crossbeam-skiplist 0.1.3 unlinks a
//! replaced node before its successor is visible, so a racing `get` can
//! find neither (crossbeam issue #1023; `memlab check --native` caught
//! it). Each node instead holds the index of its newest version in an
//! append-only list, moved forward by a CAS, as Cassandra's partitions
//! swap their holder.

use std::ops::Bound;
use std::sync::atomic::{AtomicU64, Ordering};

use crossbeam_skiplist::SkipMap;
use memlab_sdk::{ConcurrentMemtable, Entry, Error, Packed, Params, Stat, Stats, Version};

/// The least a node costs beyond its key's bytes: the key's vector, the
/// version's index, and crossbeam's header (a count and a height) with
/// one tower pointer, on this target's pointer width.
const NODE_LEAST: usize = size_of::<Vec<u8>>() + size_of::<AtomicU64>() + 3 * size_of::<usize>();

/// The lock-free skiplist: key -> the index of its newest version.
#[derive(Debug, Default)]
pub struct LockFree {
    map: SkipMap<Vec<u8>, AtomicU64>,
    /// Every version inserted, (timestamp, ref), never moved or freed
    /// while the memtable lives.
    versions: boxcar::Vec<(u64, u64)>,
}

impl LockFree {
    fn version(&self, index: &AtomicU64) -> (u64, u64) {
        // Every index stored was returned by `push`, so it is present.
        self.versions.get(index.load(Ordering::Acquire) as usize).copied().unwrap_or_default()
    }
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
        let mine = self.versions.push((timestamp, entry.reference)) as u64;
        let node = self.map.get_or_insert_with(entry.key.to_vec(), || AtomicU64::new(mine));
        let slot = node.value();
        let mut seen = slot.load(Ordering::Acquire);
        // A tie goes to the later insert; an older one leaves the slot.
        while seen != mine && self.versions.get(seen as usize).is_some_and(|v| v.0 <= timestamp) {
            match slot.compare_exchange_weak(seen, mine, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => break,
                Err(now) => seen = now,
            }
        }
        Ok(())
    }

    fn get(&self, key: &[u8]) -> Option<Version> {
        let (timestamp, reference) = self.version(self.map.get(key)?.value());
        Some(Version { timestamp, reference })
    }

    fn scan(&self, start: &[u8], end: Option<&[u8]>, limit: usize, out: &mut Packed) {
        let upper = end.map_or(Bound::Unbounded, Bound::Excluded);
        for e in self.map.range::<[u8], _>((Bound::Included(start), upper)).take(limit) {
            push(out, e.key(), &self.version(e.value()));
        }
    }

    fn cursor(&self) -> Option<Vec<u8>> {
        None
    }

    fn next(&self, position: &mut Option<Vec<u8>>, max_bytes: usize, out: &mut Packed) {
        let lower = position.as_deref().map_or(Bound::Unbounded, Bound::Excluded);
        let mut last = None;
        for e in self.map.range::<[u8], _>((lower, Bound::Unbounded)) {
            push(out, e.key(), &self.version(e.value()));
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
        let nodes: usize = self.map.iter().map(|e| e.key().len() + NODE_LEAST).sum();
        let index = (nodes + self.versions.count() * size_of::<(u64, u64)>()) as u64;
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

    /// A key once inserted never goes missing while writers replace its
    /// version: the window crossbeam's replacing insert leaves open.
    #[test]
    fn a_get_racing_a_newer_version_still_finds_the_key() {
        let table = LockFree::default();
        table.insert(Entry { key: b"k", timestamp: 0, reference: 0 }).expect("insert");
        let done = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|s| {
            s.spawn(|| {
                for i in 1..200_000u64 {
                    table.insert(Entry { key: b"k", timestamp: i, reference: i }).expect("insert");
                }
                done.store(true, Ordering::Release);
            });
            let mut last = 0;
            while !done.load(Ordering::Acquire) {
                let seen = table.get(b"k").expect("the key is always there").timestamp;
                assert!(seen >= last, "went back from {last} to {seen}");
                last = seen;
            }
        });
    }
}
