//! The checked shard: every call into a shard's memtable and allocator,
//! wasm or native, one writer at a time or many at once, goes through
//! here once. It counts the boundary traffic, names the plugin, operation
//! and shard of a failure, and enforces the contract checks the host can
//! make on a result. This file holds the writers' calls; the flush's are
//! in `shard_alone`.
//!
//! What a concurrent memtable is held to: a `get` or `scan` sees every
//! insert that completed before it started. Its scans are held to the
//! sample at the read; the ledger keeps no scan there, because concurrent
//! inserts have no one order for a scan to take its place in.

use std::sync::Mutex;
use std::time::Instant;

use memlab_sdk::{Entry, Packed};

use super::books::{Books, UNREFUSED_POOL_FULL, packed_bytes, sampled, within_reservations};
use super::budget::{Memory, Observed};
use super::describe::show_key;
use super::ledger::{Ledger, Noted};
use super::locked::Locked;
use super::sample::Sample;
use super::tape::Tape;
use super::watch::during;
use super::writers::{Writer, Writers, locked};
use super::{Fault, Op, Pooled, SeamError, SerialShardRuntime, ShardRuntime};

/// Memtable contract 3: one record per key asked, each absent or the
/// asked key's entry.
pub(super) fn answers_get(asked: &Packed, out: &Packed) -> Result<(), String> {
    if out.len() != asked.len() {
        return Err(format!("returned {} records for {} keys", out.len(), asked.len()));
    }
    for (i, (key, answer)) in asked.iter().zip(out.iter()).enumerate() {
        if answer.is_empty() {
            continue;
        }
        let entry = Entry::decode(answer).map_err(|e| format!("answer {i} is not an entry: {e}"))?;
        if entry.key != key {
            return Err(format!("asked for key {}, answered with key {}", show_key(key), show_key(entry.key)));
        }
    }
    Ok(())
}

/// Memtable contract 4: a scan's entries are in [start, end), ascending,
/// at most `limit`.
pub(super) fn answers_scan(start: &[u8], end: Option<&[u8]>, limit: u32, out: &Packed) -> Result<(), String> {
    if out.len() > limit as usize {
        return Err(format!("returned {} entries for a limit of {limit}", out.len()));
    }
    let mut previous: Option<&[u8]> = None;
    for (i, record) in out.iter().enumerate() {
        let entry = Entry::decode(record).map_err(|e| format!("entry {i} does not decode: {e}"))?;
        let out_of_range = entry.key < start || end.is_some_and(|end| entry.key >= end);
        if out_of_range || previous.is_some_and(|p| entry.key <= p) {
            let why = if out_of_range { "outside the range asked for" } else { "out of order" };
            return Err(format!("entry {i}, key {}, is {why} (from {})", show_key(entry.key), show_key(start)));
        }
        previous = Some(entry.key);
    }
    Ok(())
}

/// Which of a shard's two strategies a call goes to.
#[derive(Clone, Copy)]
pub(super) enum Side {
    Memtable,
    Allocator,
}

impl Side {
    pub(super) fn stats(self) -> Op {
        match self {
            Side::Memtable => Op::MemtableStats,
            Side::Allocator => Op::AllocatorStats,
        }
    }
}

/// A shard's memtable and allocator for one generation, checked and metered.
pub struct Shard {
    pub(super) runtime: Box<dyn ShardRuntime>,
    pub(super) memtable: String,
    pub(super) allocator: String,
    pub(super) shard: usize,
    /// The host's books: the calls made before the writers' last ones
    /// were gathered into them (`shard_alone`).
    pub(super) books: Books,
    /// The writers' own books since.
    pub(super) writers: Writers,
    /// Every gathered insert's interval (concurrent writers).
    pub(super) inserts: Vec<(u64, u64)>,
    pub(super) cursor_open: bool,
    /// The allocator's linear memory once created (wasm).
    pub(super) allocator_baseline: Option<u64>,
    /// Hold `bytes-used` to the row bytes stored (off for allocators that
    /// keep nothing by design, in `verify = false` variants).
    pub(super) holds_rows: bool,
    /// The host's sample of what the live memtable holds, which reads and
    /// scans are held to (off where the variant does not verify), and
    /// one partition in how many it picks: a writer takes its lock only
    /// for a batch that holds a picked one.
    pub(super) sample: Option<(u64, Mutex<Sample>)>,
    started: Instant,
}

impl Shard {
    /// Wraps a runtime's shard, for one caller at a time; the names are
    /// the plugins' as configured.
    pub fn new(runtime: Box<dyn SerialShardRuntime>, memtable: &str, allocator: &str, shard: usize) -> Self {
        let allocator_baseline = runtime.allocator_baseline();
        Shard {
            runtime: Box::new(Locked::new(runtime)),
            memtable: memtable.into(),
            allocator: allocator.into(),
            shard,
            books: Books::default(),
            writers: Writers::One(Mutex::default()),
            inserts: Vec::new(),
            cursor_open: false,
            allocator_baseline,
            holds_rows: true,
            sample: None,
            started: Instant::now(),
        }
    }

    /// This shard taking concurrent writers, where its runtime can (both
    /// strategies concurrent, native); else itself back. Before any call.
    pub fn share(mut self) -> Result<Shard, Box<Shard>> {
        self.gather();
        let runtime = self.runtime;
        match runtime.into_concurrent() {
            Ok(runtime) => Ok(Shard { runtime, writers: Writers::Each(Default::default()), ..self }),
            Err(runtime) => Err(Box::new(Shard { runtime, ..self })),
        }
    }

    /// Tapes this instance's stores and inserts into `tape`.
    pub fn taped(mut self, tape: Tape) -> Self {
        if let Writers::One(one) = &mut self.writers {
            one.get_mut().unwrap_or_else(std::sync::PoisonError::into_inner).tape = Some(tape);
        }
        self
    }

    /// Keeps the host's ledger of every row handed over, and of one scan
    /// start in `scan_every`, for the flush to hold the plugins to.
    pub fn with_ledger(mut self, scan_every: u64) -> Self {
        self.books.ledger = Some(Ledger::new(scan_every));
        self.gather();
        self
    }

    /// Holds reads and scans to a sample of one partition in `every`.
    pub fn with_sample(mut self, every: u64) -> Self {
        self.sample = Some((every, Mutex::new(Sample::new(every))));
        self
    }

    /// Stops holding `bytes-used` to the row bytes stored: for variants
    /// that do not verify (the `null` allocator keeps nothing).
    pub fn without_row_accounting(mut self) -> Self {
        self.holds_rows = false;
        self
    }

    /// The allocator's name, as configured.
    pub fn allocator_plugin(&self) -> &str {
        &self.allocator
    }

    /// The memtable's name, as configured.
    pub fn memtable_plugin(&self) -> &str {
        &self.memtable
    }

    /// The shard's index.
    pub fn index(&self) -> usize {
        self.shard
    }

    /// Whether writers call it at once.
    pub fn concurrent(&self) -> bool {
        self.runtime.concurrent()
    }

    pub(super) fn plugin(&self, side: Side) -> &str {
        match side {
            Side::Memtable => &self.memtable,
            Side::Allocator => &self.allocator,
        }
    }

    pub(super) fn fault(&self, side: Side, operation: Op, fault: Fault) -> SeamError {
        SeamError::call(self.plugin(side), operation, self.shard, fault)
    }

    pub(super) fn contract(&self, side: Side, operation: Op, detail: impl ToString) -> SeamError {
        SeamError::contract(self.plugin(side), operation, self.shard, detail.to_string())
    }

    /// Runs `f` on the calling writer's books.
    fn mine<R>(&self, f: impl FnOnce(&mut Writer) -> R) -> R {
        self.writers.mine(&self.books, f)
    }

    fn count(&self, bytes_in: u64) {
        self.mine(|w| w.books.count(bytes_in));
    }

    fn since_start(&self) -> u64 {
        self.started.elapsed().as_nanos() as u64
    }

    /// Whether this shard keeps the host's ledger (then a writer may hash
    /// its batch ahead, outside the lock: `Noted`).
    pub fn has_ledger(&self) -> bool {
        self.books.ledger.is_some()
    }

    /// Stores rows in the allocator; one ref per row. The batch is lent
    /// and comes back unchanged. What the rows hold is held to the
    /// reservations at the call: for one caller, all the shard's rows;
    /// for concurrent writers, this writer's and those gathered before
    /// (every writer's together are held at the flush, `check_stats`).
    pub fn store_rows(&self, rows: &mut Packed) -> Result<Vec<u64>, SeamError> {
        const OP: Op = Op::AllocatorStoreRows;
        let bytes_in = packed_bytes(rows);
        let (refs, pooled) = during(OP, self.shard, || self.runtime.store_rows(rows));
        let refs = match refs {
            Ok(refs) => refs,
            Err(fault) => {
                self.count(bytes_in);
                return Err(match fault {
                    // A failed op is left out of verification: one the plugin
                    // failed on its own, calling the pool full, would hide rows.
                    Fault::Guest(memlab_sdk::Error::PoolFull) if !pooled.refused => self.contract(Side::Allocator, OP, UNREFUSED_POOL_FULL),
                    f => self.fault(Side::Allocator, OP, f),
                });
            }
        };
        let held = self.mine(|writer| {
            writer.books.count(bytes_in);
            writer.books.stored(rows, &refs)?;
            writer.tape = writer.tape.take().filter(|t| t.stored(rows, &refs));
            Ok::<_, String>(plus(self.books.observed, writer.books.observed))
        });
        let held = held.map_err(|detail| self.contract(Side::Allocator, OP, detail))?;
        // At the call, not at the flush: what it holds is reserved now;
        // the reservations are read after this writer's were made.
        if self.holds_rows {
            within_reservations(&held, pooled.reserved).map_err(|d| self.fault(Side::Allocator, OP, Fault::Budget(d)))?;
        }
        self.check_allocator_memory(OP, &held, pooled)?;
        Ok(refs)
    }

    /// Inserts entries replayed from the commit log: the ledger and the
    /// sample have them already.
    pub fn insert_replayed(&self, entries: &mut Packed) -> Result<(), SeamError> {
        self.count(packed_bytes(entries));
        during(Op::MemtableInsert, self.shard, || self.runtime.insert(entries)).map_err(|f| self.fault(Side::Memtable, Op::MemtableInsert, f))
    }

    /// Inserts entries into the memtable; lent as in `store_rows`.
    pub fn insert(&self, entries: &mut Packed) -> Result<(), SeamError> {
        self.insert_noted(entries, None)
    }

    /// `insert`, the ledger noting `noted`: the batch, rows and entries,
    /// hashed ahead by the writer outside the shard's lock. A shard with
    /// a ledger must be given it (without, the rows' hashes are missing
    /// and the flush fails loudly).
    pub fn insert_noted(&self, entries: &mut Packed, noted: Option<&Noted>) -> Result<(), SeamError> {
        const OP: Op = Op::MemtableInsert;
        let bytes_in = packed_bytes(entries);
        // Concurrent writers' inserts are timed: how many were inside at once.
        let concurrent = !self.writers.ordered();
        let began = concurrent.then(|| self.since_start());
        let inserted = during(OP, self.shard, || self.runtime.insert(entries));
        let ended = began.map(|_| self.since_start());
        if let Err(f) = inserted {
            self.count(bytes_in);
            return Err(self.fault(Side::Memtable, OP, f));
        }
        self.mine(|writer| {
            writer.books.count(bytes_in);
            if let (Some(began), Some(ended)) = (began, ended) {
                writer.timed(began, ended);
            }
            writer.books.inserted(entries, noted);
            writer.tape = writer.tape.take().filter(|t| t.inserted(entries));
        });
        if let Some((every, sample)) = &self.sample
            && Sample::holds_picked(*every, entries)
        {
            locked(sample).inserted(entries);
        }
        Ok(())
    }

    /// Holds a read's answers to the host's sample.
    fn sampled(&self, operation: Op, check: impl FnOnce(&mut Sample) -> Result<(), String>) -> Result<(), SeamError> {
        let mut sample = self.sample.as_ref().map(|(_, s)| locked(s));
        sampled(sample.as_deref_mut(), check).map_err(|detail| self.contract(Side::Memtable, operation, detail))
    }

    /// An allocator's memory may grow only with what it reserved: one that
    /// keeps bytes without reserving them would slip past the budget. What
    /// it holds past its reservations and the call's copies, within the
    /// allowance, the host charges to the pool: under-reserving buys no
    /// budget.
    fn check_allocator_memory(&self, operation: Op, held: &Observed, pooled: Pooled) -> Result<(), SeamError> {
        let (Some(baseline), Some(now)) = (self.allocator_baseline, pooled.memory) else { return Ok(()) };
        let Pooled { reserved, charged, .. } = pooled;
        let (largest, loads) = (held.largest_batch, held.load_growth);
        match (Memory { baseline, now, reserved, charged, largest, loads }).unreserved() {
            Err(detail) => Err(SeamError::call(&self.allocator, operation, self.shard, Fault::Budget(detail))),
            Ok(unreserved) => {
                if unreserved > 0 {
                    self.runtime.charge(unreserved);
                }
                Ok(())
            }
        }
    }

    /// Batched point reads: one record per key, empty for a miss.
    pub fn get(&self, keys: Packed) -> Result<Packed, SeamError> {
        const OP: Op = Op::MemtableGet;
        let bytes_in = packed_bytes(&keys);
        // The keys go to the runtime; keep them to check the answers by.
        let asked = keys.clone();
        let out = during(OP, self.shard, || self.runtime.get(keys));
        let bytes_out = out.as_ref().map_or(0, packed_bytes);
        self.mine(|w| {
            w.books.count(bytes_in);
            w.books.boundary.bytes_out += bytes_out;
        });
        let out = out.map_err(|f| self.fault(Side::Memtable, OP, f))?;
        answers_get(&asked, &out).map_err(|detail| self.contract(Side::Memtable, OP, detail))?;
        self.sampled(OP, |s| s.check_get(&asked, &out))?;
        Ok(out)
    }

    /// A range scan: entries with `start <= key < end`, at most `limit`.
    pub fn scan(&self, start: &[u8], end: Option<&[u8]>, limit: u32) -> Result<Packed, SeamError> {
        const OP: Op = Op::MemtableScan;
        let bytes_in = (start.len() + end.map_or(0, <[u8]>::len)) as u64;
        let out = during(OP, self.shard, || self.runtime.scan(start, end, limit));
        let out = out.map_err(|f| {
            self.count(bytes_in);
            self.fault(Side::Memtable, OP, f)
        })?;
        let ordered = self.writers.ordered();
        self.mine(|w| {
            w.books.count(bytes_in);
            w.books.boundary.bytes_out += packed_bytes(&out);
            if let Some(ledger) = w.books.ledger.as_mut().filter(|_| ordered) {
                ledger.scanned(start, end, limit, &out);
            }
        });
        answers_scan(start, end, limit, &out).map_err(|detail| self.contract(Side::Memtable, OP, detail))?;
        self.sampled(OP, |s| s.check_scan(start, end, limit, &out))?;
        Ok(out)
    }
}

/// Two keepers' rows together, as held at a call.
fn plus(a: Observed, b: Observed) -> Observed {
    Observed {
        rows: a.rows + b.rows,
        row_bytes: a.row_bytes + b.row_bytes,
        largest_batch: a.largest_batch.max(b.largest_batch),
        load_growth: a.load_growth + b.load_growth,
    }
}

#[cfg(test)]
#[path = "shard_tests.rs"]
mod tests;
