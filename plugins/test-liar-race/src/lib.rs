//! A concurrent memtable that lies only under contention: honest while
//! it has one writer at a time. With `lie = "drop"` (the default) it
//! drops the last entry of a batch that another writer's batch overlaps;
//! with `lie = "stale"` a get answers a key's previous version while a
//! writer is inside. Serialized (under the shard lock, or in wasm) it
//! never lies; the host's ledger must catch the drop when run without
//! the lock, and `memlab check --native`'s races property both.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use memlab_sdk::{ConcurrentMemtable, Entry, Error, Packed, Params, Stat, Stats, Version};

/// A key's newest version and the one it replaced (the newest again
/// until it replaced one).
type Versions = [(u64, u64); 2];

/// The liar: a map behind its own lock, and its writers in flight.
#[derive(Debug, Default)]
pub struct Racy {
    map: Mutex<BTreeMap<Vec<u8>, Versions>>,
    inside: AtomicUsize,
    stale: bool,
}

impl Racy {
    fn map(&self) -> MutexGuard<'_, BTreeMap<Vec<u8>, Versions>> {
        self.map.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

fn push(out: &mut Packed, key: &[u8], &(timestamp, reference): &(u64, u64)) {
    out.push_with(|buf| Entry { key, timestamp, reference }.encode(buf));
}

impl ConcurrentMemtable for Racy {
    const NAME: &'static str = "liar-race";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    type Position = Option<Vec<u8>>;

    fn create(params: &mut Params) -> Result<Self, Error> {
        let stale = match params.get("lie", "drop".to_string())?.as_str() {
            "drop" => false,
            "stale" => true,
            other => return Err(Error::BadParam(format!("`lie` = {other:?}: expected \"drop\" or \"stale\""))),
        };
        Ok(Racy { stale, ..Racy::default() })
    }

    fn insert(&self, entry: Entry<'_>) -> Result<(), Error> {
        let mut map = self.map();
        let version = (entry.timestamp, entry.reference);
        let slot = map.entry(entry.key.to_vec()).or_insert([version; 2]);
        if entry.timestamp >= slot[0].0 {
            *slot = [version, slot[0]];
        }
        Ok(())
    }

    fn insert_batch(&self, entries: &Packed) -> Result<(), Error> {
        let overlapped = self.inside.fetch_add(1, Ordering::SeqCst) > 0;
        // Checked again at the end of the window: one that another writer
        // entered since overlapped too.
        let overlapped = overlapped || self.inside.load(Ordering::SeqCst) > 1;
        let keep = if overlapped && !self.stale { entries.len().saturating_sub(1) } else { entries.len() };
        let result = entries.iter().take(keep).try_for_each(|record| self.insert(Entry::decode(record)?));
        self.inside.fetch_sub(1, Ordering::SeqCst);
        result
    }

    fn get(&self, key: &[u8]) -> Option<Version> {
        let lying = self.stale && self.inside.load(Ordering::SeqCst) > 0;
        self.map().get(key).map(|v| v[usize::from(lying)]).map(|(timestamp, reference)| Version { timestamp, reference })
    }

    fn scan(&self, start: &[u8], end: Option<&[u8]>, limit: usize, out: &mut Packed) {
        let map = self.map();
        let upper = end.map_or(Bound::Unbounded, Bound::Excluded);
        for (k, v) in map.range::<[u8], _>((Bound::Included(start), upper)).take(limit) {
            push(out, k, &v[0]);
        }
    }

    fn cursor(&self) -> Option<Vec<u8>> {
        None
    }

    fn next(&self, position: &mut Option<Vec<u8>>, max_bytes: usize, out: &mut Packed) {
        let map = self.map();
        let lower = position.as_deref().map_or(Bound::Unbounded, Bound::Excluded);
        for (k, v) in map.range::<[u8], _>((lower, Bound::Unbounded)) {
            push(out, k, &v[0]);
            *position = Some(k.clone());
            if out.data_len() >= max_bytes {
                break;
            }
        }
    }

    fn stats(&self) -> Stats {
        let map = self.map();
        let index: u64 = map.keys().map(|k| k.len() as u64 + 64).sum();
        vec![Stat::Entries.with(map.len() as u64), Stat::IndexBytes.with(index)]
    }
}

memlab_sdk::export!(concurrent memtable: Racy);
