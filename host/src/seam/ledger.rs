//! The host's ledger of one shard's generation: every row it handed the
//! allocator and the entry it handed the memtable for it, kept as hashes
//! keyed by the per-process secret (a plugin never sees the key, so it
//! cannot make a forged row hash alike). At the flush, what the cursor
//! returns and the allocator loads is held to it in every round: the
//! newest row of each key, exactly once, with its bytes. Dropped, extra
//! and hollow rows are caught without reading a segment back. The scans
//! the live memtable answered for sampled starts are held to it too,
//! across partitions, up to their limit.

use std::hash::BuildHasher;
use std::sync::OnceLock;

use memlab_sdk::{Entry, Packed};

pub use super::noted::Noted;
use super::sample::{picked, secret};

/// The ledger's hash of a key or a row: foldhash's quality hasher, seeded
/// by the per-process secret.
pub fn hash(bytes: &[u8]) -> u64 {
    static STATE: OnceLock<foldhash::quality::SeedableRandomState> = OnceLock::new();
    STATE.get_or_init(|| foldhash::quality::SeedableRandomState::with_seed(secret(), foldhash::SharedSeed::global_random())).hash_one(bytes)
}

/// splitmix64's finaliser, to spread a row's three words over two lanes.
fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// An order-independent digest of a set of rows: their count, a sum over
/// key and timestamp, and a sum over key, timestamp and row bytes. The
/// two sums tell a memtable's wrong entry from an allocator's wrong bytes.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Tally {
    /// Rows counted.
    pub rows: u64,
    heads: u128,
    whole: u128,
}

impl Tally {
    /// Counts one row: its key's hash, its timestamp and its bytes' hash.
    pub fn add(&mut self, key: u64, timestamp: u64, row: u64) {
        let head = mix(key ^ mix(timestamp));
        let lanes = |a: u64, b: u64| (u128::from(a) << 64) | u128::from(b);
        self.rows += 1;
        self.heads = self.heads.wrapping_add(lanes(head, mix(head.rotate_left(29) ^ 0x6c65_6467_6572)));
        let whole = mix(head ^ row.rotate_left(17));
        self.whole = self.whole.wrapping_add(lanes(whole, mix(row ^ head.rotate_left(41))));
    }

    /// Whether the keys and timestamps agree (the rows' bytes may not).
    pub fn same_heads(&self, other: &Tally) -> bool {
        self.rows == other.rows && self.heads == other.heads
    }
}

/// One row handed over: its key's hash, timestamp, bytes' hash, and its
/// place in the order of insertion (later wins a timestamp tie).
#[derive(Debug, Clone, Copy)]
struct Line {
    key: u64,
    timestamp: u64,
    row: u64,
    seq: u64,
}

/// A scan the live memtable answered, from a sampled start.
#[derive(Debug)]
struct ScanSeen {
    start: Vec<u8>,
    end: Option<Vec<u8>>,
    limit: u32,
    /// How many rows had been inserted when it ran.
    cut: u64,
    returned: Vec<(Vec<u8>, u64)>,
}

/// What the host handed one shard's generation.
#[derive(Debug, Default)]
pub struct Ledger {
    lines: Vec<Line>,
    scans: Vec<ScanSeen>,
    /// One scan start in this many is kept (0: none).
    scan_every: u64,
}

impl Ledger {
    /// A ledger that also keeps one scan in `scan_every` (by the secret's
    /// pick of its start's token).
    pub fn new(scan_every: u64) -> Self {
        Ledger { scan_every, ..Ledger::default() }
    }

    /// Notes entries the memtable accepted without their rows (a caller
    /// that did not hash its batch ahead): no row bytes to hold them to,
    /// so the flush fails them loudly.
    pub fn inserted(&mut self, entries: &Packed) {
        let base = self.lines.len() as u64;
        let lines = entries.iter().filter_map(|r| Entry::decode(r).ok()).enumerate();
        self.lines.extend(lines.map(|(i, e)| Line { key: hash(e.key), timestamp: e.timestamp, row: 0, seq: base + i as u64 }));
    }

    /// Notes a batch hashed ahead (`Noted::of`, outside the shard's lock),
    /// once the memtable accepted it.
    pub fn noted(&mut self, batch: &Noted) {
        let base = self.lines.len() as u64;
        self.lines.extend(batch.lines().iter().enumerate().map(|(i, &(key, timestamp, row))| Line { key, timestamp, row, seq: base + i as u64 }));
    }

    /// Keeps a scan from a sampled start, with what it returned.
    pub fn scanned(&mut self, start: &[u8], end: Option<&[u8]>, limit: u32, out: &Packed) {
        let token = start.get(..8).and_then(|t| <[u8; 8]>::try_from(t).ok()).map(u64::from_be_bytes);
        if !token.is_some_and(|t| picked(t, self.scan_every)) {
            return;
        }
        let returned = out.iter().filter_map(|r| Entry::decode(r).ok()).map(|e| (e.key.to_vec(), e.timestamp)).collect();
        self.scans.push(ScanSeen { start: start.to_vec(), end: end.map(<[u8]>::to_vec), limit, cut: self.lines.len() as u64, returned });
    }

    /// An empty ledger that keeps scans as this one does.
    pub fn empty_like(&self) -> Ledger {
        Ledger::new(self.scan_every)
    }

    /// Appends `other`'s rows after this one's. A concurrent shard's
    /// writers each keep a ledger; their rows have no order between them,
    /// so each writer's come whole, in its own order.
    pub fn absorb(&mut self, other: Ledger) {
        let base = self.lines.len() as u64;
        self.lines.extend(other.lines.into_iter().map(|l| Line { seq: base + l.seq, ..l }));
        self.scans.extend(other.scans.into_iter().map(|s| ScanSeen { cut: base + s.cut, ..s }));
    }

    /// Rows handed over so far.
    pub fn rows(&self) -> usize {
        self.lines.len()
    }

    /// Settles the ledger for the flush: each key's history in order.
    pub fn settle(mut self) -> Settled {
        self.lines = by_key(std::mem::take(&mut self.lines));
        self.scans.sort_by(|a, b| a.start.cmp(&b.start));
        let mut expected = Tally::default();
        let mut keys = 0;
        for (key, timestamp, row) in winners(&self.lines) {
            expected.add(key, timestamp, row);
            keys += 1;
        }
        Settled { lines: self.lines, scans: self.scans, expected, keys }
    }
}

/// Each key's newest line, from lines sorted by key, in insertion order
/// among equal keys. Memtable contract 2: the higher timestamp wins, a tie
/// goes to the later.
fn winners(lines: &[Line]) -> impl Iterator<Item = (u64, u64, u64)> + '_ {
    lines.chunk_by(|a, b| a.key == b.key).filter_map(|group| group.iter().max_by_key(|l| l.timestamp).map(|w| (w.key, w.timestamp, w.row)))
}

/// `lines` (in insertion order) sorted by key, insertion order kept among
/// equal keys: one radix pass on the keys' top bits into buckets of about
/// four lines, in place (each swap puts a line in its bucket for good, so
/// a flush allocates no copy of the ledger), then each small bucket sorted
/// by key and place of insertion. A comparison sort of a generation's
/// lines cost ~500 instructions a row (callgrind,
/// `instructions-11-ledger/`); the hashed keys are uniform, so buckets stay small.
fn by_key(mut lines: Vec<Line>) -> Vec<Line> {
    let bits = (lines.len() / 4).max(2).next_power_of_two().trailing_zeros().min(24);
    let shift = 64 - bits;
    let bucket = |l: &Line| (l.key >> shift) as usize;
    let mut starts = vec![0usize; (1 << bits) + 1];
    for l in &lines {
        starts[bucket(l) + 1] += 1;
    }
    for i in 1..starts.len() {
        starts[i] += starts[i - 1];
    }
    let mut next = starts.clone();
    for b in 0..next.len() - 1 {
        while next[b] < starts[b + 1] {
            let to = bucket(&lines[next[b]]);
            if to == b {
                next[b] += 1;
            } else {
                lines.swap(next[b], next[to]);
                next[to] += 1;
            }
        }
    }
    for w in starts.windows(2) {
        lines[w[0]..w[1]].sort_unstable_by_key(|l| (l.key, l.seq));
    }
    lines
}

/// A ledger sorted by key, ready to hold a flush to.
#[derive(Debug)]
pub struct Settled {
    lines: Vec<Line>,
    scans: Vec<ScanSeen>,
    expected: Tally,
    /// Distinct keys: the rows a flush must return.
    keys: usize,
}

impl Settled {
    /// The newest timestamp of `key` among the rows inserted before `cut`.
    fn at(&self, key: u64, cut: u64) -> Option<u64> {
        let from = self.lines.partition_point(|l| l.key < key);
        let group = self.lines[from..].iter().take_while(|l| l.key == key).filter(|l| l.seq < cut);
        group.fold(None, |best: Option<u64>, l| Some(best.map_or(l.timestamp, |b| b.max(l.timestamp))))
    }

    /// Starts holding a flush's rows to the ledger.
    pub fn audit(&self) -> FlushAudit<'_> {
        FlushAudit { settled: self, seen: Tally::default(), lines: Vec::with_capacity(self.keys), next_scan: 0, active: Vec::new() }
    }
}

/// A scan being walked along the cursor.
#[derive(Debug)]
struct Active {
    scan: usize,
    pos: usize,
}

/// Which plugin the ledger says is wrong, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mismatch {
    /// The cursor's keys or timestamps are not the newest rows handed over.
    Memtable(String),
    /// The keys agree, but loaded bytes are not the rows stored.
    Allocator(String),
    /// A sampled scan, walked along the cursor, was short or wrong.
    Scan(String),
}

/// A flush's rows held to the ledger as the cursor hands them over.
#[derive(Debug)]
pub struct FlushAudit<'s> {
    settled: &'s Settled,
    seen: Tally,
    lines: Vec<(u64, u64, u64)>,
    next_scan: usize,
    active: Vec<Active>,
}

impl FlushAudit<'_> {
    /// One row of the cursor, in key order: its entry's key and timestamp
    /// and the bytes the allocator loaded for it. Returns the key's and
    /// the row's hashes, for the segment's own tally.
    pub fn see(&mut self, key: &[u8], timestamp: u64, row: &[u8]) -> Result<(u64, u64), Mismatch> {
        let (k, r) = (hash(key), hash(row));
        self.seen.add(k, timestamp, r);
        self.lines.push((k, timestamp, r));
        self.walk_scans(key, k)?;
        Ok((k, r))
    }

    fn walk_scans(&mut self, key: &[u8], k: u64) -> Result<(), Mismatch> {
        let scans = &self.settled.scans;
        while self.next_scan < scans.len() && scans[self.next_scan].start.as_slice() <= key {
            self.active.push(Active { scan: self.next_scan, pos: 0 });
            self.next_scan += 1;
        }
        let mut i = 0;
        while i < self.active.len() {
            let a = &mut self.active[i];
            let s = &scans[a.scan];
            let done = match s.end.as_deref() {
                Some(end) if key >= end => true,
                _ => step(s, &mut a.pos, key, self.settled.at(k, s.cut))?,
            };
            if done {
                extra(s, a.pos)?;
                self.active.swap_remove(i);
            } else {
                i += 1;
            }
        }
        Ok(())
    }

    /// After the cursor's last row: the rows against the ledger's newest
    /// rows, and every scan's rest.
    pub fn finish(self) -> Result<(), Mismatch> {
        let scans = &self.settled.scans;
        for a in &self.active {
            extra(&scans[a.scan], a.pos)?;
        }
        for s in &scans[self.next_scan..] {
            extra(s, 0)?;
        }
        let want = &self.settled.expected;
        if self.seen == *want {
            return Ok(());
        }
        let (missing, extra, different) = diff(&winners(&self.settled.lines).collect::<Vec<_>>(), self.lines);
        let counts = format!(
            "the host handed this generation {} distinct keys and the cursor returned {} rows: {missing} of the newest rows missing, {extra} not handed over or not the newest, {different} with other bytes",
            want.rows, self.seen.rows
        );
        if self.seen.same_heads(want) {
            Err(Mismatch::Allocator(format!("the host's ledger of this generation: the rows it loaded are not the bytes the host stored ({counts})")))
        } else {
            Err(Mismatch::Memtable(format!(
                "the host's ledger of this generation: the cursor did not return the newest row of every key handed over, once ({counts})"
            )))
        }
    }
}

/// Walks scan `s` one cursor key on: `at` is that key's newest timestamp
/// when the scan ran (none: not inserted yet). True when the scan is done.
fn step(s: &ScanSeen, pos: &mut usize, key: &[u8], at: Option<u64>) -> Result<bool, Mismatch> {
    let shown = super::show_key;
    if let Some((returned, _)) = s.returned.get(*pos).filter(|(r, _)| r.as_slice() < key) {
        return Err(scan(s, format!("it returned key {}, which this generation never held", shown(returned))));
    }
    let here = s.returned.get(*pos).filter(|(r, _)| r.as_slice() == key).map(|&(_, t)| t);
    match (at, here) {
        (Some(want), Some(got)) if want != got => {
            return Err(scan(s, format!("it returned key {} at timestamp {got}, the newest then was {want}", shown(key))));
        }
        (Some(_), Some(_)) => *pos += 1,
        (Some(_), None) if *pos < s.limit as usize => {
            let what = if *pos == s.returned.len() { "it stopped before key" } else { "it skipped key" };
            return Err(scan(s, format!("{what} {}, which this generation held when it ran", shown(key))));
        }
        (None, Some(_)) => return Err(scan(s, format!("it returned key {}, which was inserted only after it ran", shown(key)))),
        _ => {}
    }
    Ok(*pos >= s.limit as usize)
}

/// A scan that returned more than the generation held from its start.
fn extra(s: &ScanSeen, pos: usize) -> Result<(), Mismatch> {
    match s.returned.get(pos) {
        Some((key, _)) => Err(scan(s, format!("it returned key {}, which this generation never held", super::show_key(key)))),
        None => Ok(()),
    }
}

fn scan(s: &ScanSeen, what: String) -> Mismatch {
    Mismatch::Scan(format!(
        "the host's ledger of this generation: a scan from {} (limit {}) returned {} entries: {what}",
        super::show_key(&s.start),
        s.limit,
        s.returned.len()
    ))
}

/// Missing, extra and different rows between the ledger's newest rows
/// and what the flush saw (only on a mismatch: it sorts both).
fn diff(want: &[(u64, u64, u64)], mut seen: Vec<(u64, u64, u64)>) -> (u64, u64, u64) {
    seen.sort_unstable();
    let (mut i, mut j) = (0, 0);
    let (mut missing, mut extra, mut different) = (0, 0, 0);
    while i < want.len() || j < seen.len() {
        match (want.get(i), seen.get(j)) {
            (Some(w), Some(s)) if w.0 == s.0 => {
                different += u64::from(w != s);
                i += 1;
                j += 1;
            }
            (Some(w), Some(s)) if w.0 < s.0 => (missing, i) = (missing + 1, i + 1),
            (Some(_), None) => (missing, i) = (missing + 1, i + 1),
            _ => (extra, j) = (extra + 1, j + 1),
        }
    }
    (missing, extra, different)
}

#[cfg(test)]
mod tests {
    use super::{Ledger, Mismatch, Noted};
    use memlab_sdk::{Entry, Packed};

    fn key(token: u8, i: u8) -> Vec<u8> {
        [[token; 8].as_slice(), b"p\0\0", &[i]].concat()
    }

    fn entries(keys: &[(Vec<u8>, u64)]) -> Packed {
        let mut p = Packed::new();
        for (k, ts) in keys {
            let mut out = Vec::new();
            Entry { key: k, timestamp: *ts, reference: 0 }.encode(&mut out);
            p.push(&out);
        }
        p
    }

    fn rows(bodies: &[&[u8]]) -> Packed {
        let mut p = Packed::new();
        bodies.iter().for_each(|b| p.push(b));
        p
    }

    /// Keys 0..4 of one partition, key 1 written twice (the later wins).
    fn ledger() -> Ledger {
        let mut l = Ledger::new(1);
        let batch: Vec<(Vec<u8>, u64)> = [(0, 5), (1, 5), (2, 5), (3, 5), (1, 5)].iter().map(|&(i, t)| (key(7, i), t)).collect();
        l.noted(&Noted::of(&rows(&[b"r0", b"r1", b"r2", b"r3", b"r1b"]), &entries(&batch)));
        l
    }

    fn flush(l: Ledger, rows: &[(u8, u64, &[u8])]) -> Result<(), Mismatch> {
        let settled = l.settle();
        let mut audit = settled.audit();
        for &(i, ts, row) in rows {
            audit.see(&key(7, i), ts, row)?;
        }
        audit.finish()
    }

    #[test]
    fn the_newest_row_of_each_key_once_passes_and_each_lie_is_named() {
        let honest: [(u8, u64, &[u8]); 4] = [(0, 5, b"r0"), (1, 5, b"r1b"), (2, 5, b"r2"), (3, 5, b"r3")];
        assert_eq!(flush(ledger(), &honest), Ok(()));
        assert!(matches!(flush(ledger(), &honest[..3]), Err(Mismatch::Memtable(_))), "a dropped row");
        let older = [(0, 5, b"r0".as_slice()), (1, 5, b"r1"), (2, 5, b"r2"), (3, 5, b"r3")];
        assert!(matches!(flush(ledger(), &older), Err(Mismatch::Allocator(_))), "the tie's loser");
        let hollow = [(0, 5, b"r0".as_slice()), (1, 5, b"r1b"), (2, 5, b""), (3, 5, b"r3")];
        assert!(matches!(flush(ledger(), &hollow), Err(Mismatch::Allocator(_))), "a hollow row");
        let stale = [(0, 5, b"r0".as_slice()), (1, 4, b"r1b"), (2, 5, b"r2"), (3, 5, b"r3")];
        assert!(matches!(flush(ledger(), &stale), Err(Mismatch::Memtable(_))), "a wrong timestamp");
    }

    #[test]
    fn lines_sort_by_key_and_keep_insertion_order_among_equal_keys() {
        let mut rng = 0x1234_5678_u64;
        let mut lines: Vec<super::Line> = (0..10_000u64)
            .map(|seq| {
                rng = super::mix(rng.wrapping_add(seq));
                super::Line { key: (rng % 3000).wrapping_mul(0x9e37_79b9_7f4a_7c15), timestamp: 0, row: 0, seq }
            })
            .collect();
        let sorted = super::by_key(lines.clone());
        lines.sort_by_key(|l| (l.key, l.seq));
        assert_eq!(sorted.iter().map(|l| (l.key, l.seq)).collect::<Vec<_>>(), lines.iter().map(|l| (l.key, l.seq)).collect::<Vec<_>>());
        assert!(super::by_key(Vec::new()).is_empty());
    }

    #[test]
    fn a_scan_is_held_across_partitions_to_what_was_inserted_before_it() {
        let mut l = Ledger::new(1);
        // Partition 7 holds keys 0 and 1; partition 8, inserted before the scan, key 0.
        let first: Vec<(Vec<u8>, u64)> = vec![(key(7, 0), 1), (key(7, 1), 1), (key(8, 0), 1)];
        l.noted(&Noted::of(&rows(&[b"a", b"b", b"c"]), &entries(&first)));
        let start = [[7u8; 8].as_slice(), b"p\0\0"].concat();
        // Stopped at its partition's end: key(8, 0) is missing.
        l.scanned(&start, None, 50, &entries(&first[..2]));
        // Inserted after the scan: not owed to it.
        l.noted(&Noted::of(&rows(&[b"d"]), &entries(&[(key(8, 1), 2)])));
        let all: [(u8, u64, &[u8]); 3] = [(0, 1, b"a"), (1, 1, b"b"), (0, 1, b"c")];
        let settled = l.settle();
        let mut audit = settled.audit();
        let mut result = Ok(());
        for (i, &(k, ts, row)) in all.iter().enumerate() {
            let token = if i < 2 { 7 } else { 8 };
            if let Err(e) = audit.see(&key(token, k), ts, row) {
                result = Err(e);
                break;
            }
        }
        match result {
            Err(Mismatch::Scan(why)) => assert!(why.contains("stopped before"), "{why}"),
            other => panic!("a short scan passed: {other:?}"),
        }
    }
}
