//! A shard whose memtable and allocator take many writers at once,
//! checked and metered by the same checks as `Shard` (`books`), without
//! the shard's lock and without a line two writers write: each writer
//! keeps its own books (calls, bytes, rows, ledger), merged at the switch,
//! when no writer is in and the generation becomes a `Shard` again for
//! the flush. The one thing writers share is the sample, whose lock a
//! writer takes only for a batch that holds a sampled partition.
//!
//! What a concurrent memtable is held to: a `get` or `scan` sees every
//! insert that completed before it started. Scans are held to the sample
//! at the read; the ledger keeps no scan here, because concurrent inserts
//! have no one order for a scan to take its place in.

use std::cell::RefCell;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use crossbeam::utils::CachePadded;
use memlab_sdk::Packed;
use thread_local::ThreadLocal;

use super::books::{Books, UNREFUSED_POOL_FULL, packed_bytes, sampled, within_reservations};
use super::checked::{answers_get, answers_scan};
use super::ledger::Noted;
use super::sample::Sample;
use super::tape::Tape;
use super::watch::during;
use super::{Fault, Op, SeamError, Shard, SharedShardRuntime};

/// Inserts a writer keeps the times of, a generation: enough for any
/// generation of a bench, and a bound on what the books hold.
const MAX_TIMED_INSERTS: usize = 1 << 20;

/// One writer's own books, on a cache line of its own.
#[derive(Debug, Default)]
struct Writer {
    books: Books,
    /// When each of its inserts began and ended, in ns from the shard's
    /// start: how many writers were inside at once, found at the switch.
    inserts: Vec<(u64, u64)>,
}

/// What a shard carries through its concurrent generation to the flush,
/// untouched by the writers.
struct Carried {
    books: Books,
    cursor_open: bool,
    allocator_baseline: Option<u64>,
    /// The tape holds the calls made under the lock: a tape replays one
    /// caller's order, which concurrent writers do not have.
    tape: Option<Tape>,
}

/// A shard's generation taking concurrent writers, checked and metered.
pub struct SharedShard {
    runtime: Box<dyn SharedShardRuntime>,
    memtable: String,
    allocator: String,
    shard: usize,
    holds_rows: bool,
    carried: Carried,
    writers: ThreadLocal<CachePadded<RefCell<Writer>>>,
    sample: Option<(u64, Mutex<Sample>)>,
    started: Instant,
}

#[cfg(test)]
thread_local! {
    /// Host locks this thread took through `locked`: the tests hold a
    /// writer's batches to none.
    static HOST_LOCKS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Every host lock this type takes.
fn locked<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    #[cfg(test)]
    HOST_LOCKS.with(|c| c.set(c.get() + 1));
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Shard {
    /// This shard taking concurrent writers, where its runtime can (both
    /// strategies concurrent, native); else itself back.
    pub fn share(self) -> Result<SharedShard, Box<Shard>> {
        let Shard { runtime, memtable, allocator, shard, books, cursor_open, allocator_baseline, holds_rows, sample, tape } = self;
        match runtime.into_shared() {
            Ok(runtime) => Ok(SharedShard {
                runtime,
                memtable,
                allocator,
                shard,
                holds_rows,
                carried: Carried { books, cursor_open, allocator_baseline, tape },
                writers: ThreadLocal::new(),
                sample: sample.map(|s| (s.every(), Mutex::new(s))),
                started: Instant::now(),
            }),
            Err(runtime) => Err(Box::new(Shard { runtime, memtable, allocator, shard, books, cursor_open, allocator_baseline, holds_rows, sample, tape })),
        }
    }
}

impl SharedShard {
    /// The shard for one thread again, once no writer is in (the
    /// flush's), and the most writers seen inside its memtable at once.
    pub fn into_shard(self) -> (Shard, u64) {
        let Carried { mut books, cursor_open, allocator_baseline, tape } = self.carried;
        let mut inserts = Vec::new();
        for writer in self.writers {
            let writer = CachePadded::into_inner(writer).into_inner();
            books.absorb(writer.books);
            inserts.extend(writer.inserts);
        }
        let shard = Shard {
            runtime: self.runtime.exclusive(),
            memtable: self.memtable,
            allocator: self.allocator,
            shard: self.shard,
            books,
            cursor_open,
            allocator_baseline,
            holds_rows: self.holds_rows,
            sample: self.sample.map(|(_, s)| s.into_inner().unwrap_or_else(PoisonError::into_inner)),
            tape,
        };
        (shard, most_at_once(inserts))
    }

    /// The shard's index.
    pub fn index(&self) -> usize {
        self.shard
    }

    /// Whether this shard keeps the host's ledger.
    pub fn has_ledger(&self) -> bool {
        self.carried.books.ledger.is_some()
    }

    /// The calling writer's own books.
    fn mine(&self) -> &RefCell<Writer> {
        self.writers.get_or(|| CachePadded::new(RefCell::new(Writer { books: Books::like(&self.carried.books), inserts: Vec::new() })))
    }

    fn contract(&self, plugin: &str, operation: Op, detail: impl ToString) -> SeamError {
        SeamError::contract(plugin, operation, self.shard, detail.to_string())
    }

    fn since_start(&self) -> u64 {
        self.started.elapsed().as_nanos() as u64
    }

    /// Stores rows; one ref per row, as `Shard::store_rows`, beside other
    /// writers. What the rows hold is held to the shard's reservations at
    /// the call for this writer's rows; for every writer's, at the flush
    /// (`Shard::check_stats`).
    pub fn store_rows(&self, rows: &mut Packed) -> Result<Vec<u64>, SeamError> {
        const OP: Op = Op::AllocatorStoreRows;
        let mine = self.mine();
        mine.borrow_mut().books.count(packed_bytes(rows));
        let mut refused = false;
        let refs = match during(OP, self.shard, || self.runtime.store_rows(rows, &mut refused)) {
            Ok(refs) => refs,
            Err(Fault::Guest(memlab_sdk::Error::PoolFull)) if !refused => return Err(self.contract(&self.allocator, OP, UNREFUSED_POOL_FULL)),
            Err(f) => return Err(SeamError::call(&self.allocator, OP, self.shard, f)),
        };
        let mut writer = mine.borrow_mut();
        writer.books.stored(rows, &refs).map_err(|detail| self.contract(&self.allocator, OP, detail))?;
        if self.holds_rows {
            let mut held = writer.books.observed;
            held.rows += self.carried.books.observed.rows;
            held.row_bytes += self.carried.books.observed.row_bytes;
            // The reservations are read after this writer's were made.
            within_reservations(&held, self.runtime.reserved_bytes())
                .map_err(|detail| SeamError::call(&self.allocator, OP, self.shard, Fault::Budget(detail)))?;
        }
        Ok(refs)
    }

    /// Inserts entries, beside other writers; the ledger notes `noted`
    /// (as `Shard::insert_noted`).
    pub fn insert_noted(&self, entries: &mut Packed, noted: Option<&Noted>) -> Result<(), SeamError> {
        const OP: Op = Op::MemtableInsert;
        let mine = self.mine();
        mine.borrow_mut().books.count(packed_bytes(entries));
        let began = self.since_start();
        let inserted = during(OP, self.shard, || self.runtime.insert(entries));
        let ended = self.since_start();
        inserted.map_err(|f| SeamError::call(&self.memtable, OP, self.shard, f))?;
        let mut writer = mine.borrow_mut();
        if writer.inserts.len() < MAX_TIMED_INSERTS {
            writer.inserts.push((began, ended));
        }
        writer.books.inserted(entries, noted);
        if let Some((every, sample)) = &self.sample
            && Sample::holds_picked(*every, entries)
        {
            locked(sample).inserted(entries);
        }
        Ok(())
    }

    /// Batched point reads, checked as `Shard::get`.
    pub fn get(&self, keys: Packed) -> Result<Packed, SeamError> {
        const OP: Op = Op::MemtableGet;
        let mine = self.mine();
        mine.borrow_mut().books.count(packed_bytes(&keys));
        let asked = keys.clone();
        let out = during(OP, self.shard, || self.runtime.get(keys)).map_err(|f| SeamError::call(&self.memtable, OP, self.shard, f))?;
        mine.borrow_mut().books.boundary.bytes_out += packed_bytes(&out);
        answers_get(&asked, &out).map_err(|detail| self.contract(&self.memtable, OP, detail))?;
        self.sampled(OP, |s| s.check_get(&asked, &out))?;
        Ok(out)
    }

    /// A range scan, checked as `Shard::scan`.
    pub fn scan(&self, start: &[u8], end: Option<&[u8]>, limit: u32) -> Result<Packed, SeamError> {
        const OP: Op = Op::MemtableScan;
        let mine = self.mine();
        mine.borrow_mut().books.count((start.len() + end.map_or(0, <[u8]>::len)) as u64);
        let out = during(OP, self.shard, || self.runtime.scan(start, end, limit)).map_err(|f| SeamError::call(&self.memtable, OP, self.shard, f))?;
        mine.borrow_mut().books.boundary.bytes_out += packed_bytes(&out);
        answers_scan(start, end, limit, &out).map_err(|detail| self.contract(&self.memtable, OP, detail))?;
        self.sampled(OP, |s| s.check_scan(start, end, limit, &out))?;
        Ok(out)
    }

    fn sampled(&self, operation: Op, check: impl FnOnce(&mut Sample) -> Result<(), String>) -> Result<(), SeamError> {
        let mut sample = self.sample.as_ref().map(|(_, s)| locked(s));
        sampled(sample.as_deref_mut(), check).map_err(|detail| self.contract(&self.memtable, operation, detail))
    }
}

/// The most intervals that overlap at one instant: writers inside the
/// memtable's `insert` at once.
fn most_at_once(inserts: Vec<(u64, u64)>) -> u64 {
    // Ends sort before starts at one instant: touching is not overlapping.
    let mut edges: Vec<(u64, bool)> = inserts.into_iter().flat_map(|(began, ended)| [(began, true), (ended, false)]).collect();
    edges.sort_unstable();
    let (mut inside, mut most) = (0u64, 0u64);
    for (_, starts) in edges {
        if starts {
            inside += 1;
            most = most.max(inside);
        } else {
            inside = inside.saturating_sub(1);
        }
    }
    most
}

#[cfg(test)]
#[path = "shared_tests.rs"]
mod tests;
