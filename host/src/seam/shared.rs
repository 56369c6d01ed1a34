//! A shard whose memtable and allocator take many writers at once,
//! checked and metered as `Shard` is, by the same checks, without the
//! shard's lock: the counters are atomics, and the ledger and the sample
//! take a short host lock after the plugin's call returns. Once no writer
//! is in (the switch holds the write path's lock on the generation), it
//! becomes a `Shard` again for the flush, its checks carried over whole.
//!
//! What a concurrent memtable is held to: a `get` or `scan` sees every
//! insert that completed before it started. The bench reads the live
//! memtables only once its writers stopped, so every read it checks has
//! no insert racing it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use memlab_sdk::Packed;

use super::budget::{FRAMING_PER_ROW, Observed};
use super::checked::{answers_get, answers_scan, packed_bytes};
use super::ledger::{Ledger, Noted};
use super::sample::Sample;
use super::watch::during;
use super::{Boundary, Fault, Op, SeamError, Shard, SharedShardRuntime};

fn locked<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Counters many writers move at once.
#[derive(Debug, Default)]
struct Counts {
    calls: AtomicU64,
    bytes_in: AtomicU64,
    bytes_out: AtomicU64,
    rows: AtomicU64,
    row_bytes: AtomicU64,
    largest_batch: AtomicU64,
    /// Writers inside the memtable's `insert` now, and the most at once.
    inside: AtomicU64,
    most_inside: AtomicU64,
}

impl Counts {
    fn count(&self, bytes_in: u64) {
        self.calls.fetch_add(1, Ordering::Relaxed);
        self.bytes_in.fetch_add(bytes_in, Ordering::Relaxed);
    }
}

/// A shard's generation taking concurrent writers, checked and metered.
pub struct SharedShard {
    runtime: Box<dyn SharedShardRuntime>,
    memtable: String,
    allocator: String,
    shard: usize,
    counts: Counts,
    holds_rows: bool,
    sample: Option<Mutex<Sample>>,
    ledger: Option<Mutex<Ledger>>,
}

impl Shard {
    /// This shard taking concurrent writers, where its runtime can (both
    /// strategies concurrent, native); else itself back.
    pub fn share(self) -> Result<SharedShard, Box<Shard>> {
        let Shard { runtime, memtable, allocator, shard, boundary, cursor_open, observed, allocator_baseline, holds_rows, sample, ledger, tape } = self;
        match runtime.into_shared() {
            Ok(runtime) => {
                let counts = Counts {
                    calls: boundary.calls.into(),
                    bytes_in: boundary.bytes_in.into(),
                    bytes_out: boundary.bytes_out.into(),
                    rows: observed.rows.into(),
                    row_bytes: observed.row_bytes.into(),
                    largest_batch: observed.largest_batch.into(),
                    ..Counts::default()
                };
                let (sample, ledger) = (sample.map(Mutex::new), ledger.map(Mutex::new));
                Ok(SharedShard { runtime, memtable, allocator, shard, counts, holds_rows, sample, ledger })
            }
            Err(runtime) => Err(Box::new(Shard {
                runtime,
                memtable,
                allocator,
                shard,
                boundary,
                cursor_open,
                observed,
                allocator_baseline,
                holds_rows,
                sample,
                ledger,
                tape,
            })),
        }
    }
}

impl SharedShard {
    /// The shard for one thread again, once no writer is in (the
    /// flush's), and the most writers seen inside its memtable at once.
    pub fn into_shard(self) -> (Shard, u64) {
        let c = self.counts;
        let mut shard = Shard::new(self.runtime.exclusive(), &self.memtable, &self.allocator, self.shard);
        shard.boundary = Boundary { calls: c.calls.into_inner(), bytes_in: c.bytes_in.into_inner(), bytes_out: c.bytes_out.into_inner() };
        shard.observed =
            Observed { rows: c.rows.into_inner(), row_bytes: c.row_bytes.into_inner(), largest_batch: c.largest_batch.into_inner(), ..Observed::default() };
        shard.holds_rows = self.holds_rows;
        shard.sample = self.sample.map(|s| s.into_inner().unwrap_or_else(PoisonError::into_inner));
        shard.ledger = self.ledger.map(|l| l.into_inner().unwrap_or_else(PoisonError::into_inner));
        (shard, c.most_inside.into_inner())
    }

    /// The shard's index.
    pub fn index(&self) -> usize {
        self.shard
    }

    /// Whether this shard keeps the host's ledger.
    pub fn has_ledger(&self) -> bool {
        self.ledger.is_some()
    }

    /// The most writers the host saw inside this memtable's `insert` at once.
    pub fn most_inside(&self) -> u64 {
        self.counts.most_inside.load(Ordering::Relaxed)
    }

    fn contract(&self, plugin: &str, operation: Op, detail: impl ToString) -> SeamError {
        SeamError::contract(plugin, operation, self.shard, detail.to_string())
    }

    /// Stores rows; one ref per row, as `Shard::store_rows`, beside other writers.
    pub fn store_rows(&self, rows: &mut Packed) -> Result<Vec<u64>, SeamError> {
        const OP: Op = Op::AllocatorStoreRows;
        self.counts.count(packed_bytes(rows));
        let mut refused = false;
        let refs = match during(OP, self.shard, || self.runtime.store_rows(rows, &mut refused)) {
            Ok(refs) => refs,
            Err(Fault::Guest(memlab_sdk::Error::PoolFull)) if !refused => {
                return Err(self.contract(&self.allocator, OP, "returned `pool-full`, but the pool refused no reservation in this call"));
            }
            Err(f) => return Err(SeamError::call(&self.allocator, OP, self.shard, f)),
        };
        self.counts.bytes_out.fetch_add(8 * refs.len() as u64, Ordering::Relaxed);
        if refs.len() != rows.len() {
            return Err(self.contract(&self.allocator, OP, format_args!("returned {} refs for {} rows", refs.len(), rows.len())));
        }
        // Each writer's rows are counted after its reservations were made,
        // so the rows counted never outrun what an honest allocator reserved.
        let c = &self.counts;
        let all_rows = c.rows.fetch_add(rows.len() as u64, Ordering::SeqCst) + rows.len() as u64;
        let all_bytes = c.row_bytes.fetch_add(rows.data_len() as u64, Ordering::SeqCst) + rows.data_len() as u64;
        c.largest_batch.fetch_max(packed_bytes(rows), Ordering::Relaxed);
        let held = all_bytes.saturating_add(all_rows.saturating_mul(FRAMING_PER_ROW));
        let reserved = self.runtime.reserved_bytes();
        if self.holds_rows && reserved < held {
            let detail = format!(
                "it holds {all_rows} rows of {all_bytes} bytes ({held} with {FRAMING_PER_ROW} bytes of framing each, the least a store keeps) but has reserved only {reserved} bytes from the pool"
            );
            return Err(SeamError::call(&self.allocator, OP, self.shard, Fault::Budget(detail)));
        }
        Ok(refs)
    }

    /// Inserts entries, beside other writers; the ledger notes `noted`
    /// (as `Shard::insert_noted`).
    pub fn insert_noted(&self, entries: &mut Packed, noted: Option<&Noted>) -> Result<(), SeamError> {
        const OP: Op = Op::MemtableInsert;
        let c = &self.counts;
        c.count(packed_bytes(entries));
        let now = c.inside.fetch_add(1, Ordering::AcqRel) + 1;
        c.most_inside.fetch_max(now, Ordering::Relaxed);
        let inserted = during(OP, self.shard, || self.runtime.insert(entries));
        c.inside.fetch_sub(1, Ordering::AcqRel);
        inserted.map_err(|f| SeamError::call(&self.memtable, OP, self.shard, f))?;
        if let Some(sample) = &self.sample {
            locked(sample).inserted(entries);
        }
        if let Some(ledger) = &self.ledger {
            match noted {
                Some(noted) => locked(ledger).noted(noted),
                None => locked(ledger).inserted(entries),
            }
        }
        Ok(())
    }

    /// Batched point reads, checked as `Shard::get`.
    pub fn get(&self, keys: Packed) -> Result<Packed, SeamError> {
        const OP: Op = Op::MemtableGet;
        self.counts.count(packed_bytes(&keys));
        let asked = keys.clone();
        let out = during(OP, self.shard, || self.runtime.get(keys)).map_err(|f| SeamError::call(&self.memtable, OP, self.shard, f))?;
        self.counts.bytes_out.fetch_add(packed_bytes(&out), Ordering::Relaxed);
        answers_get(&asked, &out).map_err(|detail| self.contract(&self.memtable, OP, detail))?;
        self.sampled(OP, |s| s.check_get(&asked, &out))?;
        Ok(out)
    }

    /// A range scan, checked as `Shard::scan`.
    pub fn scan(&self, start: &[u8], end: Option<&[u8]>, limit: u32) -> Result<Packed, SeamError> {
        const OP: Op = Op::MemtableScan;
        self.counts.count((start.len() + end.map_or(0, <[u8]>::len)) as u64);
        let out = during(OP, self.shard, || self.runtime.scan(start, end, limit)).map_err(|f| SeamError::call(&self.memtable, OP, self.shard, f))?;
        self.counts.bytes_out.fetch_add(packed_bytes(&out), Ordering::Relaxed);
        answers_scan(start, end, limit, &out).map_err(|detail| self.contract(&self.memtable, OP, detail))?;
        self.sampled(OP, |s| s.check_scan(start, end, limit, &out))?;
        if let Some(ledger) = &self.ledger {
            locked(ledger).scanned(start, end, limit, &out);
        }
        Ok(out)
    }

    fn sampled(&self, operation: Op, check: impl FnOnce(&mut Sample) -> Result<(), String>) -> Result<(), SeamError> {
        match self.sample.as_ref().map(|s| check(&mut locked(s))) {
            Some(Err(detail)) => Err(self.contract(&self.memtable, operation, format_args!("the host's sample of this generation: {detail}"))),
            _ => Ok(()),
        }
    }
}
