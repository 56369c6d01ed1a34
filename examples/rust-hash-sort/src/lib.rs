//! `hash-sort`: a memtable that does not keep its keys in order while it
//! fills. Inserts and gets go to a hash map (one probe, no comparisons);
//! the order a flush needs is made once, at `freeze`, by sorting the keys.
//! Scans of the live table pay for it: each keeps the `limit` smallest keys
//! past its start in a heap, a pass over the whole table. An outside crate,
//! not bundled: `memlab check examples/rust-hash-sort --build --native`
//! runs it both ways, and `rust-hash-sort.toml` benches it both ways.

use std::collections::{BinaryHeap, HashMap};

use memlab_sdk::{Entry, Error, Memtable, Packed, Params, Stat, Stats};

/// Key -> (timestamp, ref), and the keys in order once frozen.
pub struct Table {
    map: HashMap<Vec<u8>, (u64, u64)>,
    sorted: Vec<Vec<u8>>,
    key_bytes: u64,
}

impl Table {
    fn entry<'a>(&'a self, key: &'a [u8]) -> Option<Entry<'a>> {
        self.map.get_key_value(key).map(|(k, &(timestamp, reference))| Entry { key: k, timestamp, reference })
    }
}

impl Memtable for Table {
    const NAME: &'static str = "hash-sort";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    /// The index into the sorted keys of the next entry a cursor returns.
    type Position = usize;

    fn create(params: &mut Params) -> Result<Self, Error> {
        // Rows the map is sized for up front, so a generation grows it less.
        let capacity: usize = params.get("capacity", 1024)?;
        Ok(Table { map: HashMap::with_capacity(capacity), sorted: Vec::new(), key_bytes: 0 })
    }

    fn insert(&mut self, entry: Entry<'_>) -> Result<(), Error> {
        match self.map.get_mut(entry.key) {
            // The higher timestamp wins; on a tie, the later write.
            Some(slot) if entry.timestamp >= slot.0 => *slot = (entry.timestamp, entry.reference),
            Some(_) => {}
            None => {
                self.key_bytes += entry.key.len() as u64;
                self.map.insert(entry.key.to_vec(), (entry.timestamp, entry.reference));
            }
        }
        Ok(())
    }

    fn get<'a>(&'a self, key: &'a [u8]) -> Option<Entry<'a>> {
        self.entry(key)
    }

    fn scan(&self, start: &[u8], end: Option<&[u8]>, limit: usize, out: &mut Packed) {
        // The `limit` smallest keys in [start, end): a max-heap of them.
        let mut heap: BinaryHeap<&[u8]> = BinaryHeap::with_capacity(limit.min(self.map.len()) + 1);
        for k in self.map.keys().map(Vec::as_slice) {
            if k < start || end.is_some_and(|e| k >= e) || limit == 0 {
                continue;
            }
            if heap.len() < limit {
                heap.push(k);
            } else if heap.peek().is_some_and(|&top| k < top) {
                heap.pop();
                heap.push(k);
            }
        }
        for k in heap.into_sorted_vec() {
            if let Some(e) = self.entry(k) {
                out.push_with(|buf| e.encode(buf));
            }
        }
    }

    fn freeze(&mut self) {
        let mut keys: Vec<Vec<u8>> = self.map.keys().cloned().collect();
        keys.sort_unstable();
        self.sorted = keys;
    }

    fn cursor(&self) -> usize {
        0
    }

    fn next(&self, position: &mut usize, max_bytes: usize, out: &mut Packed) {
        while let Some(k) = self.sorted.get(*position) {
            *position += 1;
            if let Some(e) = self.entry(k) {
                out.push_with(|buf| e.encode(buf));
            }
            if out.data_len() >= max_bytes {
                return;
            }
        }
    }

    fn stats(&self) -> Stats {
        // Keys, timestamp and ref (16), a hash slot's share (about 24), and
        // once frozen a sorted copy of each key and its Vec (24).
        let entries = self.map.len() as u64;
        let sorted = self.sorted.iter().map(|k| k.len() as u64 + 24).sum::<u64>();
        vec![Stat::Entries.with(entries), Stat::IndexBytes.with(self.key_bytes + 40 * entries + sorted)]
    }
}

memlab_sdk::export!(memtable: Table);
