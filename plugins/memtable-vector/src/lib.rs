//! `vector`: append on insert, sort once when the cursor opens, like
//! RocksDB's VectorRep. The fastest writes; reads before the freeze scan
//! everything, and the report shows that too.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use memlab_sdk::{Entry, Error, Memtable, Packed, Params, Stat, Stats, compare_keys};

#[derive(Debug, Clone, Copy)]
struct Item {
    key_at: u32,
    key_len: u32,
    timestamp: u64,
    reference: u64,
}

/// Append-only until frozen, then sorted and deduplicated.
#[derive(Debug, Default)]
pub struct VectorMemtable {
    keys: Vec<u8>,
    items: Vec<Item>,
    frozen: bool,
}

impl VectorMemtable {
    fn key(&self, item: &Item) -> &[u8] {
        &self.keys[item.key_at as usize..(item.key_at + item.key_len) as usize]
    }

    fn entry(&self, item: &Item) -> Entry<'_> {
        Entry { key: self.key(item), timestamp: item.timestamp, reference: item.reference }
    }

    /// Before the freeze: the winner for each key in range, by a full pass.
    fn winners(&self, start: &[u8], end: Option<&[u8]>) -> BTreeMap<&[u8], Item> {
        let mut out: BTreeMap<&[u8], Item> = BTreeMap::new();
        for item in &self.items {
            let key = self.key(item);
            if key < start || end.is_some_and(|end| key >= end) {
                continue;
            }
            // Later items win ties: they were inserted later.
            match out.get(key) {
                Some(old) if old.timestamp > item.timestamp => {}
                _ => {
                    out.insert(key, *item);
                }
            }
        }
        out
    }

    fn first_at_or_after(&self, key: &[u8]) -> usize {
        self.items.partition_point(|item| compare_keys(self.key(item), key).is_lt())
    }
}

impl Memtable for VectorMemtable {
    const NAME: &'static str = "vector";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    type Position = usize;

    fn create(params: &mut Params) -> Result<Self, Error> {
        let capacity: usize = params.get("capacity", 1 << 16)?;
        Ok(VectorMemtable { keys: Vec::with_capacity(capacity * 32), items: Vec::with_capacity(capacity), frozen: false })
    }

    fn insert(&mut self, entry: Entry<'_>) -> Result<(), Error> {
        let key_at = u32::try_from(self.keys.len()).map_err(|_| Error::Other("vector key arena passed 4 GiB".into()))?;
        self.keys.extend_from_slice(entry.key);
        self.items.push(Item { key_at, key_len: entry.key.len() as u32, timestamp: entry.timestamp, reference: entry.reference });
        Ok(())
    }

    fn get(&self, key: &[u8]) -> Option<Entry<'_>> {
        if self.frozen {
            let i = self.first_at_or_after(key);
            return self.items.get(i).filter(|item| self.key(item) == key).map(|item| self.entry(item));
        }
        let mut best: Option<&Item> = None;
        for item in &self.items {
            if self.key(item) == key && best.is_none_or(|b| item.timestamp >= b.timestamp) {
                best = Some(item);
            }
        }
        best.map(|item| self.entry(item))
    }

    fn scan(&self, start: &[u8], end: Option<&[u8]>, limit: usize, out: &mut Packed) {
        if self.frozen {
            let from = self.first_at_or_after(start);
            for item in self.items[from..].iter().take_while(|i| end.is_none_or(|end| self.key(i) < end)).take(limit) {
                out.push_with(|buf| self.entry(item).encode(buf));
            }
            return;
        }
        for item in self.winners(start, end).values().take(limit) {
            out.push_with(|buf| self.entry(item).encode(buf));
        }
    }

    fn freeze(&mut self) {
        let mut items = std::mem::take(&mut self.items);
        // Stable: equal keys keep insertion order, so the last of the
        // highest timestamp is the winner.
        items.sort_by(|a, b| compare_keys(self.key(a), self.key(b)));
        let mut kept: Vec<Item> = Vec::with_capacity(items.len());
        for item in items {
            match kept.last_mut() {
                Some(last) if self.key(last) == self.key(&item) => {
                    if item.timestamp.cmp(&last.timestamp) != Ordering::Less {
                        *last = item;
                    }
                }
                _ => kept.push(item),
            }
        }
        self.items = kept;
        self.frozen = true;
    }

    fn cursor(&self) -> usize {
        0
    }

    fn next(&self, position: &mut usize, max_bytes: usize, out: &mut Packed) {
        while let Some(item) = self.items.get(*position) {
            out.push_with(|buf| self.entry(item).encode(buf));
            *position += 1;
            if out.data_len() >= max_bytes {
                break;
            }
        }
    }

    fn stats(&self) -> Stats {
        let entries = if self.frozen { self.items.len() } else { self.winners(&[], None).len() };
        let index = self.keys.capacity() + self.items.capacity() * size_of::<Item>();
        vec![Stat::Entries.with(entries as u64), Stat::IndexBytes.with(index as u64)]
    }
}

memlab_sdk::export!(memtable: VectorMemtable);
