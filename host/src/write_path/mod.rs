//! Shards, memtable generations, switching and backpressure. The hot path takes one shard lock per client batch and
//! nothing global but the pool's counter.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};
use std::time::{Duration, Instant};

use crossbeam::channel::Sender;

mod coalesce;

pub use coalesce::Coalescing;

use crate::plugin::PluginError;
use crate::pool::MemoryPool;
use crate::router::{RoutedBatch, Router};
use crate::strategy::ShardStrategies;

/// Creates the strategies of one shard for a new generation.
pub type ShardFactory = dyn Fn(usize) -> Result<Box<dyn ShardStrategies>, PluginError> + Send + Sync;

/// A frozen generation's shards in token order, handed to a flush writer.
pub struct FlushJob {
    /// The memtable generation.
    pub generation: u64,
    /// Which part of the generation (one per flush writer).
    pub part: usize,
    /// (shard index, strategies), in token order.
    pub shards: Vec<(usize, Box<dyn ShardStrategies>)>,
    /// Pool bytes these shards hold; released after the flush.
    pub reserved: u64,
}

struct ShardSlot {
    strategies: Box<dyn ShardStrategies>,
}

/// Spins before parking: a shard's critical section is one or two plugin
/// calls (a few µs), while parking and being woken again costs tens of µs
/// here. Measured on 8 shards, 2 writers: lock wait halved. Yielding
/// instead of spinning made it worse (the flush thread takes the core).
fn spin_then_lock(mutex: &Mutex<ShardSlot>) -> MutexGuard<'_, ShardSlot> {
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
}

/// Counters of the write path, for the report.
#[derive(Debug, Default, Clone, Copy, serde::Serialize, serde::Deserialize)]
pub struct WriteCounters {
    /// Memtable switches (drain at the end included).
    pub switches: u64,
    /// Shard lock taken without waiting.
    pub uncontended: u64,
    /// Shard lock that had to wait.
    pub contended: u64,
    /// Time spent waiting for shard locks.
    pub lock_wait_ns: u64,
    /// Time writers spent blocked on a full pool.
    pub backpressure_ns: u64,
    /// Compare-and-swap conflicts in the pool (`cas-loop`).
    pub pool_cas_retries: u64,
    /// Sums of all cells to check the limit (`striped`).
    pub pool_sum_checks: u64,
    /// Coalesced groups written (`group`, `adaptive`).
    pub groups: u64,
    /// Time client batches waited in a group's queue, summed.
    pub coalesce_wait_ns: u64,
    /// Time switching writers spent getting fresh generations' shards:
    /// taking the ones a flush writer started ahead, or else starting them.
    pub generation_start_ns: u64,
    /// Shards switched in as fresh generations.
    pub generation_shards: u64,
    /// CPU time spent starting shards (instantiation and `create`), by
    /// writers or ahead of time by flush writers.
    #[serde(default)]
    pub generation_start_cpu_ns: u64,
    /// Shards started, ahead of time or not.
    #[serde(default)]
    pub generation_started_shards: u64,
    /// Shards switched in that a flush writer had started ahead.
    #[serde(default)]
    pub generation_ahead_shards: u64,
}

/// The live generation of every shard, and the machinery to switch it.
pub struct WritePath {
    router: Router,
    shards: Vec<Mutex<ShardSlot>>,
    factory: Box<ShardFactory>,
    pool: Arc<MemoryPool>,
    threshold: u64,
    flush_writers: usize,
    // Taken (closed) by `drain`, which ends the flush writers' loops.
    jobs: Mutex<Option<Sender<FlushJob>>>,
    generation: AtomicU64,
    switching: AtomicBool,
    switches: AtomicU64,
    uncontended: AtomicU64,
    contended: AtomicU64,
    lock_wait_ns: AtomicU64,
    backpressure_ns: AtomicU64,
    coalescing: Coalescing,
    clients: usize,
    groups: Vec<coalesce::Group>,
    groups_written: AtomicU64,
    coalesce_wait_ns: AtomicU64,
    generation_start_ns: AtomicU64,
    generation_shards: AtomicU64,
    generation_start_cpu_ns: AtomicU64,
    generation_started_shards: AtomicU64,
    generation_ahead_shards: AtomicU64,
    /// The next generation's shards, started ahead by a flush writer.
    spare: Mutex<Option<Vec<Box<dyn ShardStrategies>>>>,
}

impl WritePath {
    /// Creates generation 0 of every shard.
    pub fn new(router: Router, factory: Box<ShardFactory>, pool: Arc<MemoryPool>, settings: PathSettings, jobs: Sender<FlushJob>) -> Result<Self, PluginError> {
        let PathSettings { cleanup_threshold, flush_writers, coalescing, clients } = settings;
        let shards = (0..router.shards())
            .map(|i| factory(i).map(|strategies| Mutex::new(ShardSlot { strategies })))
            .collect::<Result<Vec<_>, _>>()?;
        let threshold = (pool.budget() as f64 * cleanup_threshold) as u64;
        let groups = (0..router.shards()).map(|_| coalesce::Group::default()).collect();
        Ok(WritePath {
            router,
            shards,
            factory,
            pool,
            threshold,
            flush_writers: flush_writers.max(1),
            jobs: Mutex::new(Some(jobs)),
            generation: AtomicU64::new(0),
            switching: AtomicBool::new(false),
            switches: AtomicU64::new(0),
            uncontended: AtomicU64::new(0),
            contended: AtomicU64::new(0),
            lock_wait_ns: AtomicU64::new(0),
            backpressure_ns: AtomicU64::new(0),
            coalescing,
            clients: clients.max(1),
            groups,
            groups_written: AtomicU64::new(0),
            coalesce_wait_ns: AtomicU64::new(0),
            generation_start_ns: AtomicU64::new(0),
            generation_shards: AtomicU64::new(0),
            generation_start_cpu_ns: AtomicU64::new(0),
            generation_started_shards: AtomicU64::new(0),
            generation_ahead_shards: AtomicU64::new(0),
            spare: Mutex::new(None),
        })
    }

    /// The router writers use.
    pub fn router(&self) -> &Router {
        &self.router
    }

    fn lock(&self, shard: usize) -> MutexGuard<'_, ShardSlot> {
        match self.shards[shard].try_lock() {
            Ok(guard) => {
                self.uncontended.fetch_add(1, Ordering::Relaxed);
                guard
            }
            Err(TryLockError::Poisoned(p)) => p.into_inner(),
            Err(TryLockError::WouldBlock) => {
                let started = Instant::now();
                let guard = spin_then_lock(&self.shards[shard]);
                self.contended.fetch_add(1, Ordering::Relaxed);
                self.lock_wait_ns.fetch_add(started.elapsed().as_nanos() as u64, Ordering::Relaxed);
                guard
            }
        }
    }

    /// Writes one routed batch: rows into the allocator, entries into the
    /// memtable, under the shard's lock. Blocks first while the pool is
    /// full, and switches generations when the live one passes the
    /// cleanup threshold.
    pub fn write(&self, batch: &mut RoutedBatch) -> Result<(), PluginError> {
        if self.pool.owns() >= self.pool.budget() {
            let started = Instant::now();
            while self.pool.owns() >= self.pool.budget() {
                self.maybe_switch()?;
                self.pool.wait_for_room(Duration::from_millis(5));
            }
            self.backpressure_ns.fetch_add(started.elapsed().as_nanos() as u64, Ordering::Relaxed);
        }
        match self.coalescing {
            Coalescing::None => {
                let mut slot = self.lock(batch.shard);
                let refs = slot.strategies.store_rows(&mut batch.rows)?;
                batch.set_refs(&refs);
                slot.strategies.insert(&mut batch.entries)?;
            }
            Coalescing::Group => self.write_grouped(batch, false)?,
            Coalescing::Adaptive => self.write_grouped(batch, true)?,
        }
        if self.pool.live() >= self.threshold {
            self.maybe_switch()?;
        }
        Ok(())
    }

    /// Reads under the shard lock (for point reads and scans).
    pub fn with_shard<R>(&self, shard: usize, f: impl FnOnce(&mut dyn ShardStrategies) -> R) -> R {
        let mut slot = self.lock(shard);
        f(slot.strategies.as_mut())
    }

    fn maybe_switch(&self) -> Result<(), PluginError> {
        if self.switching.swap(true, Ordering::Acquire) {
            return Ok(());
        }
        let result = if self.pool.live() >= self.threshold { self.switch(true) } else { Ok(()) };
        self.switching.store(false, Ordering::Release);
        result
    }

    /// Freezes every shard's live generation and queues it for flush;
    /// with `replace`, a fresh generation takes new writes.
    fn switch(&self, replace: bool) -> Result<(), PluginError> {
        let fresh = if replace {
            let started = Instant::now();
            let spare = self.spare.lock().unwrap_or_else(|p| p.into_inner()).take();
            let fresh = match spare {
                Some(shards) => {
                    self.generation_ahead_shards.fetch_add(shards.len() as u64, Ordering::Relaxed);
                    shards
                }
                None => self.start_generation()?,
            };
            self.generation_start_ns.fetch_add(started.elapsed().as_nanos() as u64, Ordering::Relaxed);
            self.generation_shards.fetch_add(self.shards.len() as u64, Ordering::Relaxed);
            fresh.into_iter().map(Some).collect::<Vec<_>>()
        } else {
            (0..self.shards.len()).map(|_| None).collect()
        };
        let generation = self.generation.fetch_add(1, Ordering::Relaxed);
        let mut frozen = Vec::with_capacity(self.shards.len());
        for (i, new) in fresh.into_iter().enumerate() {
            let mut slot = self.lock(i);
            let old = match new {
                Some(new) => std::mem::replace(&mut slot.strategies, new),
                None => std::mem::replace(&mut slot.strategies, Box::new(Drained)),
            };
            frozen.push((i, old));
        }
        self.switches.fetch_add(1, Ordering::Relaxed);
        let per_part = frozen.len().div_ceil(self.flush_writers);
        let mut part = 0;
        let mut rest = frozen.into_iter().peekable();
        while rest.peek().is_some() {
            let shards: Vec<_> = rest.by_ref().take(per_part).collect();
            let reserved = shards.iter().map(|(_, s)| s.reserved_bytes()).sum();
            self.pool.freeze(reserved);
            let jobs = self.jobs.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(jobs) = jobs.as_ref() {
                // A send fails only when the flush writers are gone: then
                // nothing will release this memory, nor wait for it.
                let _ = jobs.send(FlushJob { generation, part, shards, reserved });
            }
            part += 1;
        }
        Ok(())
    }

    /// Starts a fresh shard of every index, counting its CPU time.
    fn start_generation(&self) -> Result<Vec<Box<dyn ShardStrategies>>, PluginError> {
        let cpu_started = cpu_time::ThreadTime::try_now().ok();
        let fresh = (0..self.shards.len()).map(|i| (self.factory)(i)).collect::<Result<Vec<_>, _>>()?;
        if let Some(cpu) = cpu_started {
            self.generation_start_cpu_ns.fetch_add(cpu.elapsed().as_nanos() as u64, Ordering::Relaxed);
        }
        self.generation_started_shards.fetch_add(fresh.len() as u64, Ordering::Relaxed);
        Ok(fresh)
    }

    /// Starts the next generation's shards ahead of the switch that needs
    /// them; flush writers call it between jobs, so a switch only swaps
    /// them in (RocksDB and Cassandra create the new memtable on the
    /// switching thread, but theirs cost no instantiation). No-op once
    /// drained or when a spare is ready; an error is left for the switch,
    /// which starts the generation itself and reports it.
    pub fn prepare_next_generation(&self) {
        if self.jobs.lock().unwrap_or_else(|p| p.into_inner()).is_none() {
            return;
        }
        // Another flush writer already at it: nothing to add.
        let mut spare = match self.spare.try_lock() {
            Ok(spare) => spare,
            Err(TryLockError::Poisoned(p)) => p.into_inner(),
            Err(TryLockError::WouldBlock) => return,
        };
        if spare.is_none() {
            *spare = self.start_generation().ok();
        }
    }

    /// Freezes whatever is live, queues it for flush and closes the flush
    /// queue; no generation follows. Called once, after the writers stop.
    pub fn drain(&self) -> Result<(), PluginError> {
        while self.switching.swap(true, Ordering::Acquire) {
            std::thread::yield_now();
        }
        let result = self.switch(false);
        self.jobs.lock().unwrap_or_else(|p| p.into_inner()).take();
        self.switching.store(false, Ordering::Release);
        result
    }

    /// The counters so far.
    pub fn counters(&self) -> WriteCounters {
        WriteCounters {
            switches: self.switches.load(Ordering::Relaxed),
            uncontended: self.uncontended.load(Ordering::Relaxed),
            contended: self.contended.load(Ordering::Relaxed),
            lock_wait_ns: self.lock_wait_ns.load(Ordering::Relaxed),
            backpressure_ns: self.backpressure_ns.load(Ordering::Relaxed),
            pool_cas_retries: self.pool.cas_retries(),
            pool_sum_checks: self.pool.sum_checks(),
            groups: self.groups_written.load(Ordering::Relaxed),
            coalesce_wait_ns: self.coalesce_wait_ns.load(Ordering::Relaxed),
            generation_start_ns: self.generation_start_ns.load(Ordering::Relaxed),
            generation_shards: self.generation_shards.load(Ordering::Relaxed),
            generation_start_cpu_ns: self.generation_start_cpu_ns.load(Ordering::Relaxed),
            generation_started_shards: self.generation_started_shards.load(Ordering::Relaxed),
            generation_ahead_shards: self.generation_ahead_shards.load(Ordering::Relaxed),
        }
    }
}

/// What a shard holds after the final drain: nothing, and writes fail.
struct Drained;

impl Drained {
    fn refuse<T>(&self, operation: &str) -> Result<T, PluginError> {
        Err(PluginError::Contract {
            plugin: "memlab".into(),
            operation: operation.into(),
            shard: 0,
            detail: "the write path was drained".into(),
        })
    }
}

impl ShardStrategies for Drained {
    fn store_rows(&mut self, _: &mut memlab_sdk::Packed) -> Result<Vec<u64>, PluginError> {
        self.refuse("store")
    }
    fn insert(&mut self, _: &mut memlab_sdk::Packed) -> Result<(), PluginError> {
        self.refuse("insert")
    }
    fn get(&mut self, _: memlab_sdk::Packed) -> Result<memlab_sdk::Packed, PluginError> {
        self.refuse("get")
    }
    fn scan(&mut self, _: &[u8], _: Option<&[u8]>, _: u32) -> Result<memlab_sdk::Packed, PluginError> {
        self.refuse("scan")
    }
    fn open_cursor(&mut self) -> Result<(), PluginError> {
        self.refuse("cursor")
    }
    fn next_entries(&mut self, _: u32) -> Result<memlab_sdk::Packed, PluginError> {
        self.refuse("cursor.next")
    }
    fn load(&mut self, _: Vec<u64>) -> Result<memlab_sdk::Packed, PluginError> {
        self.refuse("load")
    }
    fn stats(&mut self) -> Result<(memlab_sdk::Stats, memlab_sdk::Stats), PluginError> {
        Ok((Vec::new(), Vec::new()))
    }
    fn describe(&mut self) -> Result<(memlab_sdk::Description, memlab_sdk::Description), PluginError> {
        self.refuse("describe")
    }
    fn reserved_bytes(&self) -> u64 {
        0
    }
    fn guest_memory_bytes(&self) -> u64 {
        0
    }
    fn boundary(&self) -> crate::strategy::Boundary {
        crate::strategy::Boundary::default()
    }
}
