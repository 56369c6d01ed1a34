//! Shards, memtable generations, switching and backpressure, and the
//! reads the write path serves. The hot path takes one shard lock per
//! client batch where the shard takes one caller at a time, none where
//! its writers call at once, and nothing global but the pool's counter.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};
use std::time::{Duration, Instant};

use crossbeam::channel::Sender;
use crossbeam::utils::CachePadded;
use memlab_sdk::Packed;
use thread_local::ThreadLocal;

mod coalesce;
mod generation;
mod logging;
mod metrics;
mod slot;

pub use coalesce::{Coalescing, MAX_FIXED_WINDOW_US};
pub use generation::{NextGeneration, ShardFactory};
pub use logging::PathLog;
use metrics::{CallClock, OwnCallTimes};
pub use metrics::{CallTimes, WriteCounters, WriteMetrics};
use slot::{ShardSlot, Turn};

use crate::pool::MemoryPool;
use crate::router::{RoutedBatch, Router, sort_key, token};
use crate::seam::ledger::Noted;
use crate::seam::{SeamError, Shard};
use generation::Generations;

/// A frozen generation's shards in token order, handed to a flush writer.
pub struct FlushJob {
    /// The memtable generation.
    pub generation: u64,
    /// Which part of the generation (one per flush writer).
    pub part: usize,
    /// The shards, in token order.
    pub shards: Vec<Shard>,
    /// Pool bytes these shards hold; released after the flush.
    pub reserved: u64,
    /// Lets the flush writer start the next generation ahead of its switch.
    pub next: NextGeneration,
    /// The commit log, which releases what the generation alone wrote
    /// once it is flushed (`CommitLog::flushed`).
    pub log: Option<Arc<crate::commitlog::CommitLog>>,
}

/// Gives `pool` back what `shard` holds of it: its reservations, and
/// what the host charged for its unreserved memory.
pub(crate) fn give_back(pool: &MemoryPool, shard: &Shard) {
    pool.release(shard.reserved_bytes());
    pool.discharge(shard.charged_bytes());
}

/// Spins before parking: a shard's critical section is one or two plugin
/// calls (a few µs), while parking and being woken again costs tens of µs
/// here. Measured on 8 shards, 2 writers: lock wait halved. Yielding
/// instead of spinning made it worse (the flush thread takes the core).
fn spin_then_lock(mutex: &Mutex<Turn>) -> MutexGuard<'_, Turn> {
    const SPINS: u32 = 1 << 14;
    for _ in 0..SPINS {
        std::hint::spin_loop();
        match mutex.try_lock() {
            Ok(guard) => return guard,
            Err(TryLockError::Poisoned(p)) => return p.into_inner(),
            Err(TryLockError::WouldBlock) => {}
        }
    }
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

/// How a write path switches, flushes and coalesces.
#[derive(Debug, Clone, Copy)]
pub struct PathSettings {
    /// Share of the pool's budget at which generations switch.
    pub cleanup_threshold: f64,
    /// Flush writer threads.
    pub flush_writers: usize,
    /// How client batches share boundary calls.
    pub coalescing: Coalescing,
    /// Client threads: a group never waits for more than this many.
    pub clients: usize,
    /// Whether writers call the shards at once, without the shard lock:
    /// `Some(true)` must (both strategies concurrent, native), `None` does
    /// where the shards can, `Some(false)` never does.
    pub concurrent: Option<bool>,
}

/// The live generation of every shard, and the machinery to switch it.
pub struct WritePath {
    router: Router,
    shards: Vec<ShardSlot>,
    /// Whether the shards' writers call at once (then they take no lock).
    concurrent: bool,
    generations: Arc<Generations>,
    pool: Arc<MemoryPool>,
    threshold: u64,
    flush_writers: usize,
    // Taken (closed) by `drain`, which ends the flush writers' loops.
    jobs: Mutex<Option<Sender<FlushJob>>>,
    switching: AtomicBool,
    metrics: Arc<WriteMetrics>,
    coalescing: Coalescing,
    clients: usize,
    groups: Vec<coalesce::Group>,
    /// Whether the shards keep the host's ledger (all or none do).
    ledgered: bool,
    /// The host's commit log, when the variant keeps one (`with_log`).
    log: Option<Arc<crate::commitlog::CommitLog>>,
    /// Each concurrent writer's log formats, when the variant keeps a log.
    lanes: Option<logging::Lanes>,
    /// Call times, each writer's its own (timing its calls moves no
    /// counter another writer moves).
    calls: ThreadLocal<CachePadded<OwnCallTimes>>,
    /// The most writers the host saw inside one memtable at once.
    most_inside: AtomicU64,
}

impl WritePath {
    /// Creates generation 0 of every shard.
    pub fn new(router: Router, factory: Box<ShardFactory>, pool: Arc<MemoryPool>, settings: PathSettings, jobs: Sender<FlushJob>) -> Result<Self, SeamError> {
        let PathSettings { cleanup_threshold, flush_writers, coalescing, clients, concurrent } = settings;
        let first: Vec<Shard> = (0..router.shards()).map(&factory).collect::<Result<_, _>>()?;
        let ledgered = first.first().is_some_and(Shard::has_ledger);
        let (first, concurrent) = slot::share_all(first, concurrent)?;
        let shards = first.into_iter().map(ShardSlot::new).collect();
        let threshold = (pool.budget() as f64 * cleanup_threshold) as u64;
        let groups = (0..router.shards()).map(|_| coalesce::Group::default()).collect();
        let metrics = Arc::new(WriteMetrics::default());
        Ok(WritePath {
            generations: Arc::new(Generations::new(factory, router.shards(), Arc::clone(&metrics))),
            router,
            shards,
            concurrent,
            pool,
            threshold,
            flush_writers: flush_writers.max(1),
            jobs: Mutex::new(Some(jobs)),
            switching: AtomicBool::new(false),
            metrics,
            coalescing,
            clients: clients.max(1),
            groups,
            ledgered,
            log: None,
            lanes: None,
            calls: ThreadLocal::new(),
            most_inside: AtomicU64::new(0),
        })
    }

    /// The router writers use.
    pub fn router(&self) -> &Router {
        &self.router
    }

    /// A serial shard's turn.
    fn lock(&self, shard: usize) -> MutexGuard<'_, Turn> {
        let turn = &self.shards[shard].turn;
        match turn.try_lock() {
            Ok(guard) => {
                WriteMetrics::add(&self.metrics.uncontended, 1);
                guard
            }
            Err(TryLockError::Poisoned(p)) => p.into_inner(),
            Err(TryLockError::WouldBlock) => {
                let started = Instant::now();
                let guard = spin_then_lock(turn);
                WriteMetrics::add(&self.metrics.contended, 1);
                WriteMetrics::add(&self.metrics.lock_wait_ns, started.elapsed().as_nanos() as u64);
                guard
            }
        }
    }

    /// Unlocks `slot`. An unlock that wakes a parked waiter is a syscall,
    /// and on a busy machine the woken writer may take this one's core
    /// for a scheduler tick (measured: ~200 hand-offs a round of 120,000
    /// writes, 2 ms each, were the bulk of "other write path"): that is
    /// the lock's cost, so it counts as lock wait. A plain unlock takes
    /// tens of ns and stays the write path's own.
    fn unlock(&self, slot: MutexGuard<'_, Turn>) {
        const HANDOFF_NS: u64 = 1_000;
        let started = Instant::now();
        drop(slot);
        let took = started.elapsed().as_nanos() as u64;
        if took >= HANDOFF_NS {
            WriteMetrics::add(&self.metrics.lock_wait_ns, took);
        }
    }

    /// Writes one routed batch: rows into the allocator, entries into the
    /// memtable, under the shard's lock. Blocks first while the pool is
    /// full, and switches generations when the live one passes the
    /// cleanup threshold.
    pub fn write(&self, batch: &mut RoutedBatch) -> Result<(), SeamError> {
        if self.pool.owns() >= self.pool.budget() {
            let started = Instant::now();
            while self.pool.owns() >= self.pool.budget() {
                self.maybe_switch()?;
                self.pool.wait_for_room(Duration::from_millis(5));
            }
            WriteMetrics::add(&self.metrics.backpressure_ns, started.elapsed().as_nanos() as u64);
        }
        let logged = match (self.concurrent, self.coalescing) {
            (true, _) => self.write_concurrent(batch)?,
            (false, Coalescing::None) => self.write_alone(batch)?,
            (false, mode) => self.write_grouped(batch, mode)?,
        };
        if self.pool.live() >= self.threshold {
            self.maybe_switch()?;
        }
        self.wait_durable(logged)
    }

    /// A point read of one row from the live memtables: its entry, or
    /// `None` for a miss.
    pub fn get(&self, partition: &[u8], clustering: &[u8]) -> Result<Option<Vec<u8>>, SeamError> {
        let (shard, key) = self.key_of(partition, clustering);
        let mut keys = Packed::new();
        keys.push(&key);
        let found = self.get_at(shard, keys)?;
        Ok(found.get(0).filter(|entry| !entry.is_empty()).map(<[u8]>::to_vec))
    }

    /// Point reads of many rows, batched per shard at most `per_call` keys
    /// a call; one record per key in the given order (empty for a miss),
    /// and the time spent in the calls.
    pub fn get_many<'k>(&self, keys: impl IntoIterator<Item = (&'k [u8], &'k [u8])>, per_call: usize) -> Result<(Vec<Vec<u8>>, Duration), SeamError> {
        let mut by_shard: Vec<Vec<(usize, Vec<u8>)>> = vec![Vec::new(); self.router.shards()];
        let mut count = 0;
        for (i, (partition, clustering)) in keys.into_iter().enumerate() {
            let (shard, key) = self.key_of(partition, clustering);
            by_shard[shard].push((i, key));
            count = i + 1;
        }
        let mut answers = vec![Vec::new(); count];
        let mut in_calls = Duration::ZERO;
        for (shard, keys) in by_shard.iter().enumerate() {
            for chunk in keys.chunks(per_call.max(1)) {
                let mut batch = Packed::with_capacity(chunk.len(), chunk.iter().map(|(_, k)| k.len()).sum());
                chunk.iter().for_each(|(_, k)| batch.push(k));
                let started = Instant::now();
                let found = self.get_at(shard, batch)?;
                in_calls += started.elapsed();
                for ((i, _), entry) in chunk.iter().zip(found.iter()) {
                    answers[*i] = entry.to_vec();
                }
            }
        }
        Ok((answers, in_calls))
    }

    /// A scan of one partition from its first row, at most `limit` entries.
    pub fn scan(&self, partition: &[u8], limit: u32) -> Result<Packed, SeamError> {
        let (shard, start) = self.key_of(partition, &[]);
        self.read(shard, |live| live.scan(&start, None, limit))
    }

    fn get_at(&self, shard: usize, keys: Packed) -> Result<Packed, SeamError> {
        // Kept for a second read after a recovery.
        self.read(shard, |live| live.get(keys.clone()))
    }

    /// A read of shard `shard`'s live generation: beside its writers,
    /// or in its turn (recovering it once, where it can, if it trapped).
    fn read<R>(&self, shard: usize, read: impl FnMut(&Shard) -> Result<R, SeamError>) -> Result<R, SeamError> {
        match self.concurrent {
            true => self.shards[shard].with(read),
            false => self.read_recovering(shard, &mut self.lock(shard), read),
        }
    }

    fn key_of(&self, partition: &[u8], clustering: &[u8]) -> (usize, Vec<u8>) {
        let t = token(partition);
        let mut key = Vec::with_capacity(partition.len() + clustering.len() + 16);
        sort_key(t, partition, clustering, &mut key);
        (self.router.shard_of(t), key)
    }

    fn maybe_switch(&self) -> Result<(), SeamError> {
        if self.switching.swap(true, Ordering::Acquire) {
            return Ok(());
        }
        let result = if self.pool.live() >= self.threshold { self.switch(true).map(|_| ()) } else { Ok(()) };
        self.switching.store(false, Ordering::Release);
        result
    }

    /// Freezes every shard's live generation and queues it for flush;
    /// with `replace`, a fresh generation takes new writes.
    fn switch(&self, replace: bool) -> Result<u64, SeamError> {
        let fresh: Vec<Option<Shard>> =
            if replace { self.generations.next()?.into_iter().map(Some).collect() } else { (0..self.shards.len()).map(|_| None).collect() };
        let generation = self.generations.freeze_next();
        // The next generation's records all come after this.
        let next_from = self.log.as_ref().map(|log| log.end());
        let mut frozen = Vec::with_capacity(self.shards.len());
        for (i, new) in fresh.into_iter().enumerate() {
            let old = match self.concurrent {
                true => self.shards[i].swap(new.map(slot::share).transpose()?),
                false => {
                    let mut turn = self.lock(i);
                    turn.logged.clear();
                    self.shards[i].swap(new)
                }
            };
            if let Some(mut old) = old {
                self.most_inside.fetch_max(old.most_inside(), Ordering::Relaxed);
                frozen.push(old);
            }
        }
        WriteMetrics::add(&self.metrics.switches, 1);
        let per_part = frozen.len().div_ceil(self.flush_writers).max(1);
        if let (Some(log), Some(next_from)) = (&self.log, next_from) {
            log.frozen(generation, frozen.len().div_ceil(per_part), next_from);
        }
        let mut part = 0;
        let mut rest = frozen.into_iter().peekable();
        while rest.peek().is_some() {
            let shards: Vec<_> = rest.by_ref().take(per_part).collect();
            let reserved = shards.iter().map(Shard::held_bytes).sum();
            self.pool.freeze(reserved);
            let jobs = self.jobs.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(jobs) = jobs.as_ref() {
                // A send fails only when the flush writers are gone: then
                // nothing will release this memory, nor wait for it.
                let next = NextGeneration(Arc::clone(&self.generations));
                let _ = jobs.send(FlushJob { generation, part, shards, reserved, next, log: self.log.clone() });
            }
            part += 1;
        }
        Ok(generation)
    }

    /// Starts the next generation's shards ahead of the switch that needs
    /// them, so that a switch only swaps them in (RocksDB and Cassandra
    /// create the new memtable on the switching thread, but theirs cost no
    /// instantiation). The bench calls it once at set-up; after that each
    /// flush job carries it (`FlushJob::next`). No-op once drained or when
    /// a spare is ready.
    pub fn prepare_next_generation(&self) {
        self.generations.prepare_spare();
    }

    /// Freezes whatever is live, queues it for flush and closes the flush
    /// queue; no generation follows. Called once, after the writers stop.
    /// Returns the generation it froze: the memtables a read probe just
    /// read (which may hold nothing, and then write no segment).
    pub fn drain(&self) -> Result<u64, SeamError> {
        while self.switching.swap(true, Ordering::Acquire) {
            std::thread::yield_now();
        }
        // Before the final jobs go out, so no flush writer starts a spare.
        self.generations.close();
        let result = self.switch(false);
        self.jobs.lock().unwrap_or_else(|p| p.into_inner()).take();
        self.switching.store(false, Ordering::Release);
        result
    }

    /// The counters so far.
    pub fn counters(&self) -> WriteCounters {
        let mut counters = self.metrics.snapshot(&self.pool);
        counters.most_inside = self.most_inside.load(Ordering::Relaxed);
        counters
    }

    /// The write calls' times so far, summed over the writers.
    pub fn call_times(&self) -> CallTimes {
        let mut sum = CallTimes::default();
        for own in self.calls.iter() {
            sum.add(&own.get());
        }
        sum
    }

    /// Adds what the calling writer timed to its own times.
    fn timed(&self, times: &CallTimes) {
        self.calls.get_or(CachePadded::default).add(times);
    }

    /// Memtable switches so far: one relaxed load, for the warm-up watch.
    pub fn switches(&self) -> u64 {
        self.metrics.switches.load(Ordering::Relaxed)
    }
}

impl WritePath {
    /// One client batch in one store and one insert call, in the shard's
    /// turn (logged first, when the variant keeps a log: then where its
    /// record ends).
    fn write_alone(&self, batch: &mut RoutedBatch) -> Result<Option<crate::commitlog::Position>, SeamError> {
        // Hashed for the ledger before the lock (or ahead, with the
        // batch): the lock is held only to append what was hashed.
        let RoutedBatch { rows, entries, noted: ahead, shard } = batch;
        let hashed = (self.ledgered && ahead.is_none()).then(|| Noted::of(rows, entries));
        let noted = if self.ledgered { hashed.as_ref().or(ahead.as_ref()) } else { None };
        let mut times = CallTimes::default();
        let mut turn = self.lock(*shard);
        let written = self.logged_apply(*shard, &mut turn, &mut times, rows, noted, |live, times, rows| store_and_insert(live, times, rows, entries, noted));
        self.unlock(turn);
        self.timed(&times);
        written
    }

    /// One client batch, logged first when the variant keeps a log (then
    /// where its record ends), its rows stored and its entries inserted
    /// while other writers do the same in the same shard.
    fn write_concurrent(&self, batch: &mut RoutedBatch) -> Result<Option<crate::commitlog::Position>, SeamError> {
        let RoutedBatch { rows, entries, noted: ahead, shard } = batch;
        let hashed = (self.ledgered && ahead.is_none()).then(|| Noted::of(rows, entries));
        let noted = if self.ledgered { hashed.as_ref().or(ahead.as_ref()) } else { None };
        let mut times = CallTimes::default();
        let logged = self.shards[*shard].with(|live| {
            let end = self.log_beside(*shard, &mut times, rows, noted)?;
            store_and_insert(live, &mut times, rows, entries, noted).map(|()| end)
        })?;
        self.timed(&times);
        Ok(logged)
    }
}

/// A batch's rows stored, their refs set on its entries, and the entries
/// inserted, each call timed.
fn store_and_insert(live: &Shard, times: &mut CallTimes, rows: &mut Packed, entries: &mut Packed, noted: Option<&Noted>) -> Result<(), SeamError> {
    let mut clock = CallClock::start();
    let refs = live.store_rows(rows)?;
    clock.stored(times, rows.data_len());
    crate::router::set_refs(entries, &refs);
    live.insert_noted(entries, noted)?;
    clock.inserted(times, entries.data_len());
    Ok(())
}
