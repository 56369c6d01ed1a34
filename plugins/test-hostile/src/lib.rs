//! `hostile`: a memtable that behaves until its `after`-th insert, then
//! does what its `mode` parameter says. Built like the bundled plugins but
//! never bundled: the sandbox tests load it to prove that a broken or
//! malicious plugin cannot hurt the host or fake a result.
//!
//! Modes: `none` (a correct memtable), `loop` (never returns),
//! `memory-bomb` (allocates until the cap), `huge-return` (its cursor
//! returns 16 MiB, whatever was asked), `panic` (panics in the middle of
//! a batch), `deep-recursion` (overflows the stack), `drop-row` (silently
//! loses one row: the lost-row test).
//!
//! Liars, each breaking one numbered contract subtly: `drop-every` (loses
//! every 100,000th insert), `swap-past` (its cursor swaps two neighbours
//! past 65,536 entries), `index-lie` (reports `index-bytes` = 1),
//! `scan-extra` (a scan returns `limit + 1` entries), `get-neighbour` (a
//! get is answered with the next key's entry), `clamp-after` (silently
//! clamps its `after` parameter to 10, and says so in `describe`),
//! `get-miss` (answers every point read "absent"), `short-scan` (a scan
//! returns at most half its limit), `drop-bench-keys` (loses keys shaped
//! like a bench's, and only those), `create-loop` (never returns from
//! `create`), `stats-loop` (never returns from `stats`), `probe-loop` (never returns from an insert with an even
//! `after`: slow only where the parameter probe looks), `coin-cursor` (leaves 1 key in 4 out of its cursor, and
//! counts `entries` from the cursor, in an instance whose first two
//! timestamps draw the coin: a lie a read-back of one round misses),
//! `racing-drop` (the same, once a bench-shaped key arrived with a
//! timestamp older than its newest: only racing client threads send one), `partition-scan` (a
//! scan stops at the end of its start's partition), `span-drop` (the
//! same drop, when its keys' tokens span one shard of 3 to 6 or 12 to
//! 20, counts no shipped config uses: a lie gated on the shard count).
//!
//! `put-outside` hands bytes to `output.put` from an insert, and
//! `put-twice` answers its cursor through `output.put` twice (output
//! contract 2): only its component does; its native twin is honest.
//!
//! `trap-call` panics in its `after`-th insert call (not entry): a fault,
//! not a lie, which a variant with a commit log recovers from (a fresh
//! instance, replayed in a few large calls, traps again only `after`
//! calls later).

use std::collections::BTreeMap;
use std::hint::black_box;

use memlab_sdk::{Entry, Error, Memtable, Packed, Params, Stat, Stats};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    None,
    Loop,
    MemoryBomb,
    HugeReturn,
    Panic,
    DeepRecursion,
    DropRow,
    Unsorted,
    DropEvery,
    SwapPast,
    IndexLie,
    /// Reports more counters than any report should list.
    StatsFlood,
    ScanExtra,
    GetNeighbour,
    ClampAfter,
    /// Honest, but spins on every insert: a known slow variant.
    Slow,
    /// Answers every point read "absent".
    GetMiss,
    /// A scan returns at most half its limit: in range, in order, short.
    ShortScan,
    /// Loses every 50th key shaped like a bench's sort key (a token, then
    /// a partition ended by two zero bytes): honest on any other input.
    DropBenchKeys,
    /// Never returns from `create`.
    CreateLoop,
    StatsLoop,
    /// Honest with an odd `after`; with an even one (what the parameter
    /// probe tries first, doubling it) it never returns from an insert:
    /// slow only where the probe looks.
    ProbeLoop,
    /// Leaves 1 key in 4 out of its cursor where its first two
    /// timestamps draw the coin (1 in 4 instances).
    CoinCursor,
    /// Leaves 1 key in 4 out of its cursor once timestamps arrived out
    /// of order.
    RacingDrop,
    /// A scan stops at its start partition's last row.
    PartitionScan,
    /// Leaves 1 key in 4 out of its cursor when its keys' tokens span
    /// what one shard of 3-6 or 12-20 owns: a lie gated on the shard count.
    SpanDrop,
    TrapCall,
    /// Panics in its first insert unless `after` = 1: a parameter change
    /// it accepts when created and then fails on.
    ParamPanic,
    /// Panics in get call `after` (the log must recover a read, too).
    TrapGet,
    PutOutside,
    PutTwice,
}

/// Whether `key` looks like a router sort key, as only a bench sends.
fn bench_shaped(key: &[u8]) -> bool {
    key.len() > 10 && key[8..].windows(2).any(|w| w == [0, 0])
}

/// A parameter the `clamp-after` liar takes: it keeps at most 10.
struct Clamped(u64);

impl std::str::FromStr for Clamped {
    type Err = std::num::ParseIntError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(Clamped(s.parse::<u64>()?.min(10)))
    }
}

impl std::fmt::Display for Clamped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// The misbehaving memtable.
#[derive(Debug)]
pub struct Hostile {
    mode: Mode,
    after: u64,
    inserts: u64,
    entries: BTreeMap<Vec<u8>, (u64, u64)>,
    /// The cursor's order, taken at the freeze.
    frozen: Vec<(Vec<u8>, u64, u64)>,
    /// The first timestamp, the newest so far, and whether to lie.
    first: Option<u64>,
    newest: u64,
    lying: bool,
    /// Insert calls so far (`trap-call`).
    calls: u64,
    /// Gets so far (`trap-get`), counted behind `&self`.
    gets: std::sync::atomic::AtomicU64,
}

/// Recursion that only wasm's own stack can stop: `limit` is not known at
/// compile time, and the rotate keeps it from becoming a loop. It keeps
/// nothing in linear memory, so the wasm stack, not the shadow stack,
/// overflows first.
fn recurse(depth: u64, limit: u64) -> u64 {
    if depth == limit {
        return depth;
    }
    recurse(depth + 1, limit).rotate_left(1) ^ depth
}

impl Hostile {
    fn misbehave(&mut self) {
        match self.mode {
            Mode::Loop => loop {
                self.inserts = black_box(self.inserts.wrapping_add(1));
            },
            Mode::MemoryBomb => {
                let mut hoard: Vec<Vec<u8>> = Vec::new();
                loop {
                    hoard.push(vec![1u8; 16 << 20]);
                    black_box(&hoard);
                }
            }
            Mode::Panic => panic!("hostile plugin: panic in the middle of a batch"),
            Mode::DeepRecursion => {
                black_box(recurse(0, black_box(u64::MAX)));
            }

            _ => {}
        }
    }
}

impl Memtable for Hostile {
    const NAME: &'static str = "hostile";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    type Position = usize;

    fn create(params: &mut Params) -> Result<Self, Error> {
        let mode: String = params.get("mode", "none".to_string())?;
        let mode = match mode.as_str() {
            "none" => Mode::None,
            "loop" => Mode::Loop,
            "memory-bomb" => Mode::MemoryBomb,
            "huge-return" => Mode::HugeReturn,
            "panic" => Mode::Panic,
            "deep-recursion" => Mode::DeepRecursion,
            "drop-row" => Mode::DropRow,
            "unsorted" => Mode::Unsorted,
            "drop-every" => Mode::DropEvery,
            "swap-past" => Mode::SwapPast,
            "index-lie" => Mode::IndexLie,
            "stats-flood" => Mode::StatsFlood,
            "scan-extra" => Mode::ScanExtra,
            "get-neighbour" => Mode::GetNeighbour,
            "clamp-after" => Mode::ClampAfter,
            "slow" => Mode::Slow,
            "get-miss" => Mode::GetMiss,
            "short-scan" => Mode::ShortScan,
            "drop-bench-keys" => Mode::DropBenchKeys,
            "create-loop" => Mode::CreateLoop,
            "stats-loop" => Mode::StatsLoop,
            "probe-loop" => Mode::ProbeLoop,
            "coin-cursor" => Mode::CoinCursor,
            "racing-drop" => Mode::RacingDrop,
            "partition-scan" => Mode::PartitionScan,
            "span-drop" => Mode::SpanDrop,
            "trap-call" => Mode::TrapCall,
            "param-panic" => Mode::ParamPanic,
            "trap-get" => Mode::TrapGet,
            "put-outside" => Mode::PutOutside,
            "put-twice" => Mode::PutTwice,
            other => return Err(Error::BadParam(format!("unknown mode `{other}`"))),
        };
        if mode == Mode::CreateLoop {
            let mut spins = 0u64;
            loop {
                spins = black_box(spins.wrapping_add(1));
            }
        }
        let after = if mode == Mode::ClampAfter { params.get("after", Clamped(0))?.0 } else { params.get("after", 0)? };
        Ok(Hostile {
            mode,
            after,
            inserts: 0,
            entries: BTreeMap::new(),
            frozen: Vec::new(),
            first: None,
            newest: 0,
            lying: false,
            calls: 0,
            gets: Default::default(),
        })
    }

    fn insert_batch(&mut self, entries: &Packed) -> Result<(), Error> {
        self.calls += 1;
        if self.mode == Mode::PutOutside {
            raw_output::put(b"not an answer");
        }
        if self.mode == Mode::ParamPanic && self.after != 1 {
            panic!("hostile plugin: `after` = {} is not 1", self.after);
        }
        if self.mode == Mode::TrapCall && self.calls == self.after {
            panic!("hostile plugin: a trap in insert call {}", self.calls);
        }
        for record in entries.iter() {
            self.insert(Entry::decode(record)?)?;
        }
        Ok(())
    }

    fn insert(&mut self, entry: Entry<'_>) -> Result<(), Error> {
        self.inserts += 1;
        match (self.mode, self.first) {
            (Mode::CoinCursor, None) => self.first = Some(entry.timestamp),
            (Mode::CoinCursor, Some(first)) if self.inserts == 2 => self.lying = (first ^ entry.timestamp).count_ones().is_multiple_of(4),
            (Mode::RacingDrop, _) if bench_shaped(entry.key) && entry.timestamp < self.newest => self.lying = true,
            _ => {}
        }
        self.newest = self.newest.max(entry.timestamp);
        if self.inserts > self.after {
            self.misbehave();
        }
        if self.mode == Mode::ProbeLoop && self.after.is_multiple_of(2) {
            loop {
                self.inserts = black_box(self.inserts.wrapping_add(1));
            }
        }
        if self.mode == Mode::Slow {
            // Work the optimizer cannot drop: the hash feeds `inserts`.
            let mut h = 0xcbf2_9ce4_8422_2325u64;
            // Slow enough to stay several times slower under a debug host
            // and a loaded machine (the rounds test decides on it).
            for _ in 0..1000 {
                for &b in entry.key {
                    h = (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
                }
            }
            self.inserts = self.inserts.wrapping_add(h & 1).wrapping_sub(h & 1);
            black_box(h);
        }
        if self.mode == Mode::DropRow && self.inserts == self.after + 1 {
            return Ok(());
        }
        if self.mode == Mode::DropEvery && self.inserts.is_multiple_of(100_000) {
            return Ok(());
        }
        if self.mode == Mode::DropBenchKeys && bench_shaped(entry.key) && self.inserts.is_multiple_of(50) {
            return Ok(());
        }
        match self.entries.get_mut(entry.key) {
            Some(slot) if entry.timestamp < slot.0 => {}
            Some(slot) => *slot = (entry.timestamp, entry.reference),
            None => {
                self.entries.insert(entry.key.to_vec(), (entry.timestamp, entry.reference));
            }
        }
        Ok(())
    }

    fn get<'a>(&'a self, key: &'a [u8]) -> Option<Entry<'a>> {
        if self.mode == Mode::TrapGet && self.gets.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1 == self.after {
            panic!("hostile plugin: a trap in get {}", self.after);
        }
        if self.mode == Mode::GetMiss {
            return None;
        }
        if self.mode == Mode::GetNeighbour {
            // The first key after `key`: a neighbour's entry, when one exists.
            let (k, &(timestamp, reference)) = self.entries.range::<[u8], _>((std::ops::Bound::Excluded(key), std::ops::Bound::Unbounded)).next()?;
            return Some(Entry { key: k, timestamp, reference });
        }
        self.entries.get_key_value(key).map(|(k, &(timestamp, reference))| Entry { key: k, timestamp, reference })
    }

    fn scan(&self, start: &[u8], end: Option<&[u8]>, limit: usize, out: &mut Packed) {
        let limit = match self.mode {
            Mode::ScanExtra => limit + 1,
            Mode::ShortScan => limit.div_ceil(2),
            _ => limit,
        };
        for (k, &(timestamp, reference)) in self.entries.range(start.to_vec()..).take(limit) {
            if end.is_some_and(|end| k.as_slice() >= end) || (self.mode == Mode::PartitionScan && !k.starts_with(start)) {
                break;
            }
            out.push_with(|buf| Entry { key: k, timestamp, reference }.encode(buf));
        }
    }

    fn freeze(&mut self) {
        if self.mode == Mode::SpanDrop {
            let token = |k: &[u8]| k.get(..8).and_then(|t| <[u8; 8]>::try_from(t).ok()).map(u64::from_be_bytes);
            let tokens: Vec<u64> = self.entries.keys().filter(|k| bench_shaped(k)).filter_map(|k| token(k)).collect();
            if let (Some(lo), Some(hi)) = (tokens.iter().min(), tokens.iter().max()) {
                let shards = u64::MAX / (hi - lo).max(1);
                // Counts no shipped config uses (they use 1, 8 and 32).
                self.lying = tokens.len() > 100 && ((3..=6).contains(&shards) || (12..=20).contains(&shards));
            }
        }
        self.frozen = self.entries.iter().map(|(k, &(timestamp, reference))| (k.clone(), timestamp, reference)).collect();
        match self.mode {
            Mode::Unsorted => self.frozen.reverse(),
            // Entries 65,536 and 65,537 of the cursor change places.
            Mode::SwapPast if self.frozen.len() > 65_537 => self.frozen.swap(65_536, 65_537),
            Mode::CoinCursor | Mode::RacingDrop | Mode::SpanDrop if self.lying => {
                let mut i = 0;
                self.frozen.retain(|_| {
                    i += 1;
                    i % 4 != 0
                });
            }
            _ => {}
        }
    }

    fn cursor(&self) -> usize {
        0
    }

    fn next(&self, position: &mut usize, max_bytes: usize, out: &mut Packed) {
        if self.mode == Mode::PutTwice {
            raw_output::put(&Packed::new().into_wire());
        }
        if self.mode == Mode::HugeReturn {
            // 16 MiB of entries, whatever was asked.
            let key = vec![b'h'; 1 << 20];
            for _ in 0..16 {
                out.push_with(|buf| Entry { key: &key, timestamp: 1, reference: 0 }.encode(buf));
            }
            return;
        }
        for (k, timestamp, reference) in self.frozen.iter().skip(*position) {
            out.push_with(|buf| Entry { key: k, timestamp: *timestamp, reference: *reference }.encode(buf));
            *position += 1;
            // `unsorted` also floods: every entry at once.
            if out.data_len() >= max_bytes && self.mode != Mode::Unsorted {
                break;
            }
        }
    }

    fn stats(&self) -> Stats {
        if self.mode == Mode::StatsLoop {
            let mut spins = 0u64;
            loop {
                spins = black_box(spins.wrapping_add(1));
            }
        }
        // A B-tree node's share per entry, besides the key and the 16
        // bytes of timestamp and ref.
        let index: u64 = self.entries.keys().map(|k| k.len() as u64 + 16 + 32).sum();
        // A liar that dropped keys from its cursor counts what it returns.
        let entries = if self.lying { self.frozen.len() } else { self.entries.len() };
        let mut stats = vec![Stat::Entries.with(entries as u64), Stat::IndexBytes.with(if self.mode == Mode::IndexLie { 1 } else { index })];
        if self.mode == Mode::StatsFlood {
            stats.extend((0..1000).map(|i| (format!("flood-{i}"), i)));
        }
        stats
    }
}

memlab_sdk::export!(memtable: Hostile);

/// `output.put` as the canonical ABI imports it, past the SDK, which puts
/// once and only where a call answers through it: reaching the import
/// past it is the point of these modes, hence the one `unsafe` here.
mod raw_output {
    #[cfg(target_arch = "wasm32")]
    #[expect(unsafe_code, reason = "the raw import is the point")]
    pub fn put(bytes: &[u8]) {
        // The version is the WIT package's (wit/worlds.wit).
        #[link(wasm_import_module = "memlab:strategy/output@0.8.0")]
        unsafe extern "C" {
            #[link_name = "put"]
            fn put(ptr: *const u8, len: usize);
        }
        // SAFETY: the import reads `len` bytes at `ptr` during the call,
        // and `bytes` lives across it.
        unsafe { put(bytes.as_ptr(), bytes.len()) }
    }

    #[cfg(not(target_arch = "wasm32"))]
    pub fn put(_: &[u8]) {}
}
