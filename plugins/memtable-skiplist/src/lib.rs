//! `skiplist`: an arena skiplist addressed by offsets, not pointers, in the
//! manner of LevelDB, RocksDB's InlineSkipList and Pebble's arenaskl. Every
//! node lives in one growing byte arena, so an insert allocates nothing of
//! its own; tower heights come from a seeded generator (p = 1/4).
//!
//! Node layout at offset `o`: `timestamp: u64, ref: u64, key-len: u32,
//! height: u8, 3 pad bytes, next: [u32; height], key`. The head sits at
//! offset 0, so 0 also means "no next node".

use memlab_sdk::{Entry, Error, Memtable, Packed, Params, Stat, Stats, compare_keys};

const MAX_HEIGHT: usize = 12;
const HEAD: u32 = 0;
const NEXT_AT: usize = 24;

/// The arena skiplist.
#[derive(Debug)]
pub struct SkipList {
    arena: Vec<u8>,
    height: usize,
    rng: u64,
    entries: u64,
}

impl SkipList {
    fn u32_at(&self, at: usize) -> u32 {
        let b = &self.arena[at..at + 4];
        u32::from_le_bytes([b[0], b[1], b[2], b[3]])
    }

    fn u64_at(&self, at: usize) -> u64 {
        let mut a = [0u8; 8];
        a.copy_from_slice(&self.arena[at..at + 8]);
        u64::from_le_bytes(a)
    }

    fn next(&self, node: u32, level: usize) -> u32 {
        self.u32_at(node as usize + NEXT_AT + 4 * level)
    }

    fn set_next(&mut self, node: u32, level: usize, to: u32) {
        let at = node as usize + NEXT_AT + 4 * level;
        self.arena[at..at + 4].copy_from_slice(&to.to_le_bytes());
    }

    fn key(&self, node: u32) -> &[u8] {
        let at = node as usize;
        let len = self.u32_at(at + 16) as usize;
        let height = self.arena[at + 20] as usize;
        let start = at + NEXT_AT + 4 * height;
        &self.arena[start..start + len]
    }

    fn entry(&self, node: u32) -> Entry<'_> {
        let at = node as usize;
        Entry { key: self.key(node), timestamp: self.u64_at(at), reference: self.u64_at(at + 8) }
    }

    fn allocate(&mut self, key: &[u8], timestamp: u64, reference: u64, height: usize) -> Result<u32, Error> {
        let at = self.arena.len();
        let offset = u32::try_from(at).map_err(|_| Error::Other("skiplist arena passed 4 GiB".into()))?;
        self.arena.extend_from_slice(&timestamp.to_le_bytes());
        self.arena.extend_from_slice(&reference.to_le_bytes());
        self.arena.extend_from_slice(&(key.len() as u32).to_le_bytes());
        self.arena.extend_from_slice(&[height as u8, 0, 0, 0]);
        self.arena.resize(at + NEXT_AT + 4 * height, 0);
        self.arena.extend_from_slice(key);
        Ok(offset)
    }

    fn random_height(&mut self) -> usize {
        let mut height = 1;
        loop {
            // xorshift64*
            self.rng ^= self.rng >> 12;
            self.rng ^= self.rng << 25;
            self.rng ^= self.rng >> 27;
            let r = self.rng.wrapping_mul(0x2545_f491_4f6c_dd1d);
            if height == MAX_HEIGHT || r >> 62 != 0 {
                return height;
            }
            height += 1;
        }
    }

    /// The first node with a key `>= key` (0 if none), filling `prev` with
    /// the last node before it on every level.
    fn seek(&self, key: &[u8], prev: &mut [u32; MAX_HEIGHT]) -> u32 {
        let mut x = HEAD;
        // The node that stopped the level above: known to be >= key, so
        // meeting it again needs no comparison (RocksDB's InlineSkipList).
        let mut bigger = 0;
        for level in (0..self.height).rev() {
            loop {
                let n = self.next(x, level);
                if n != 0 && n != bigger && compare_keys(self.key(n), key).is_lt() {
                    x = n;
                } else {
                    bigger = n;
                    break;
                }
            }
            prev[level] = x;
        }
        self.next(x, 0)
    }
}

impl Memtable for SkipList {
    const NAME: &'static str = "skiplist";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    type Position = u32;

    fn create(params: &mut Params) -> Result<Self, Error> {
        let seed: u64 = params.get("seed", 0x5eed)?;
        let capacity: usize = params.get("arena_capacity", 1 << 20)?;
        let mut list = SkipList { arena: Vec::with_capacity(capacity), height: 1, rng: seed | 1, entries: 0 };
        list.allocate(&[], 0, 0, MAX_HEIGHT)?;
        Ok(list)
    }

    fn insert(&mut self, entry: Entry<'_>) -> Result<(), Error> {
        let mut prev = [HEAD; MAX_HEIGHT];
        let found = self.seek(entry.key, &mut prev);
        if found != 0 && self.key(found) == entry.key {
            let at = found as usize;
            if entry.timestamp >= self.u64_at(at) {
                self.arena[at..at + 8].copy_from_slice(&entry.timestamp.to_le_bytes());
                self.arena[at + 8..at + 16].copy_from_slice(&entry.reference.to_le_bytes());
            }
            return Ok(());
        }
        let height = self.random_height();
        if height > self.height {
            self.height = height;
        }
        let node = self.allocate(entry.key, entry.timestamp, entry.reference, height)?;
        for (level, &before) in prev.iter().enumerate().take(height) {
            let after = self.next(before, level);
            self.set_next(node, level, after);
            self.set_next(before, level, node);
        }
        self.entries += 1;
        Ok(())
    }

    fn get(&self, key: &[u8]) -> Option<Entry<'_>> {
        let node = self.seek(key, &mut [HEAD; MAX_HEIGHT]);
        (node != 0 && self.key(node) == key).then(|| self.entry(node))
    }

    fn scan(&self, start: &[u8], end: Option<&[u8]>, limit: usize, out: &mut Packed) {
        let mut node = self.seek(start, &mut [HEAD; MAX_HEIGHT]);
        let mut n = 0;
        while node != 0 && n < limit && end.is_none_or(|end| self.key(node) < end) {
            out.push_with(|buf| self.entry(node).encode(buf));
            node = self.next(node, 0);
            n += 1;
        }
    }

    fn cursor(&self) -> u32 {
        self.next(HEAD, 0)
    }

    fn next(&self, position: &mut u32, max_bytes: usize, out: &mut Packed) {
        while *position != 0 {
            out.push_with(|buf| self.entry(*position).encode(buf));
            *position = SkipList::next(self, *position, 0);
            if out.data_len() >= max_bytes {
                break;
            }
        }
    }

    fn stats(&self) -> Stats {
        vec![Stat::Entries.with(self.entries), Stat::IndexBytes.with(self.arena.len() as u64)]
    }
}

memlab_sdk::export!(memtable: SkipList);
