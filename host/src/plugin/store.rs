//! What each `Store` carries: the memory cap, the deadline, and the shard's
//! account with the global memory pool.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use super::EngineSettings;
use super::bindings::{memlab::strategy::diagnostics, memlab::strategy::pool, types};
use crate::pool::MemoryPool;

/// Per-instance limits.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Bytes of linear memory one store may hold.
    pub memory_cap: u64,
    /// Epoch ticks a call may run; `None` is no deadline.
    pub deadline_ticks: Option<u64>,
    /// When every call must have ended (`EngineSettings::budget_until`).
    pub until: Option<std::time::Instant>,
    /// One epoch tick.
    pub tick: Duration,
}

/// The engine's budget for all calls is spent.
#[derive(Debug)]
pub(super) struct BudgetSpent;

impl Limits {
    /// The ticks the next call may run: its deadline, cut to what is left
    /// of the budget.
    pub(super) fn ticks_now(&self) -> Result<Option<u64>, BudgetSpent> {
        let Some(until) = self.until else { return Ok(self.deadline_ticks) };
        let left = until.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            return Err(BudgetSpent);
        }
        let budget = (left.as_micros() / self.tick.as_micros().max(1)).max(1) as u64;
        Ok(Some(self.deadline_ticks.map_or(budget, |t| t.min(budget))))
    }
}

/// How often the epoch advances when deadlines are on.
const EPOCH_TICK: Duration = Duration::from_millis(10);

/// The epoch's tick: the sampling interval on a profiling engine.
pub(super) fn epoch_tick(settings: &EngineSettings) -> Duration {
    if settings.profile { super::sampler::SAMPLE_EVERY } else { EPOCH_TICK }
}

impl Limits {
    pub(super) fn from_settings(settings: &EngineSettings) -> Self {
        let tick = epoch_tick(settings).as_micros().max(1);
        let ticks = settings.call_deadline.map(|d| (d.as_micros() / tick).max(1) as u64);
        Limits { memory_cap: settings.memory_cap, deadline_ticks: ticks, until: settings.budget_until, tick: epoch_tick(settings) }
    }
}

/// Advances the engine's epoch for per-call deadlines.
pub(super) struct EpochTicker {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl EpochTicker {
    pub(super) fn start(engine: wasmtime::Engine, tick: Duration) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("memlab-epoch".into())
            .spawn(move || {
                while !flag.load(Ordering::Relaxed) {
                    std::thread::sleep(tick);
                    engine.increment_epoch();
                }
            })
            .ok();
        EpochTicker { stop, thread }
    }
}

impl Drop for EpochTicker {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Which instance of a shard's store is running, so that memory growth
/// is charged to it (a store's two instances grow their own memories, but
/// the limiter is told only the sizes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Running {
    Memtable = 0,
    Allocator = 1,
}

impl Running {
    /// The instance a plugin of `kind` runs as (a serializer's store holds
    /// only it, charged as the first).
    pub(super) fn of(kind: crate::seam::Kind) -> Self {
        if kind == crate::seam::Kind::Allocator { Running::Allocator } else { Running::Memtable }
    }
}

/// The data of one `Store`.
pub struct StoreCtx {
    pub(super) memory_cap: u64,
    /// Linear memory held by this store's instances.
    pub(super) memory_bytes: u64,
    /// The instance running now (calls are synchronous), and the linear
    /// memory charged to each.
    pub(super) running: Running,
    pub(super) memory_of: [u64; 2],
    /// Set when a grow was refused, to classify the trap that follows.
    pub(super) memory_denied: bool,
    pool: Option<Arc<MemoryPool>>,
    /// Bytes this store reserved from the pool and has not released.
    pub(super) reserved: u64,
    /// Bytes the host charged to the pool for this store's allocator
    /// (memory it held unreserved), not yet released.
    pub(super) charged: u64,
    pub(super) reservations: u64,
    /// Whether the pool refused a reservation since the host last cleared
    /// it (before each `store-rows`): `pool-full` is believed only then.
    pub(super) refused: bool,
    /// The first panic message an instance sent before trapping.
    pub(super) panic: Option<String>,
    /// On a profiling engine: the plugin running now (the samples' root),
    /// and the ticks left of the call's deadline.
    pub(super) profiled: Option<Arc<str>>,
    pub(super) ticks_left: Option<u64>,
    /// Where the call in progress hands its answer (`output`).
    pub(super) answer: super::output::Answer,
}

impl StoreCtx {
    pub(super) fn new(limits: Limits, pool: Option<Arc<MemoryPool>>) -> Self {
        StoreCtx {
            memory_cap: limits.memory_cap,
            memory_bytes: 0,
            running: Running::Memtable,
            memory_of: [0; 2],
            memory_denied: false,
            pool,
            reserved: 0,
            charged: 0,
            reservations: 0,
            refused: false,
            panic: None,
            profiled: None,
            ticks_left: None,
            answer: Default::default(),
        }
    }
}

impl wasmtime::ResourceLimiter for StoreCtx {
    fn memory_growing(&mut self, current: usize, desired: usize, _maximum: Option<usize>) -> wasmtime::Result<bool> {
        let grown = self.memory_bytes + (desired.saturating_sub(current)) as u64;
        if grown > self.memory_cap {
            self.memory_denied = true;
            // An error here traps: the guest cannot recover from a refused
            // grow as if it were ordinary `memory.grow` failure.
            return Err(wasmtime::format_err!("memory cap of {} bytes reached (wanted {grown})", self.memory_cap));
        }
        self.memory_of[self.running as usize] += (desired.saturating_sub(current)) as u64;
        self.memory_bytes = grown;
        Ok(true)
    }

    fn table_growing(&mut self, _current: usize, desired: usize, _maximum: Option<usize>) -> wasmtime::Result<bool> {
        Ok(desired <= 1 << 20)
    }
}

impl types::Host for StoreCtx {}

impl diagnostics::Host for StoreCtx {
    fn panicked(&mut self, message: String) {
        if self.panic.is_none() {
            let mut end = message.len().min(4096);
            while !message.is_char_boundary(end) {
                end -= 1;
            }
            self.panic = Some(message[..end].to_string());
        }
    }
}

impl StoreCtx {
    /// Charges the pool for memory the allocator holds unreserved.
    pub(super) fn charge(&mut self, bytes: u64) {
        if let Some(pool) = &self.pool {
            pool.charge(bytes);
            self.charged += bytes;
        }
    }
}

impl pool::Host for StoreCtx {
    fn reserve(&mut self, bytes: u64) -> Result<(), types::Error> {
        let Some(pool) = &self.pool else {
            return Err(types::Error::Other("no memory pool is attached to this store".into()));
        };
        if pool.reserve(bytes).is_err() {
            self.refused = true;
            return Err(types::Error::PoolFull);
        }
        self.reserved += bytes;
        self.reservations += 1;
        Ok(())
    }

    fn reserve_each(&mut self, sizes: Vec<u64>) -> Result<(), types::Error> {
        let Some(pool) = &self.pool else {
            return Err(types::Error::Other("no memory pool is attached to this store".into()));
        };
        let Ok(granted) = pool.reserve_each(&sizes) else {
            self.refused = true;
            return Err(types::Error::PoolFull);
        };
        self.reserved += granted;
        self.reservations += sizes.len() as u64;
        Ok(())
    }

    fn release(&mut self, bytes: u64) {
        // Never release more than this store reserved: a buggy or hostile
        // plugin must not inflate the global budget.
        let bytes = bytes.min(self.reserved);
        if let Some(pool) = &self.pool {
            pool.release(bytes);
        }
        self.reserved -= bytes;
    }
}
