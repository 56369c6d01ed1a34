//! The memtable generation lifecycle: starting a generation's shards
//! (ahead of time when a flush writer has a moment), counting what that
//! costs, and numbering generations as they switch.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, TryLockError};
use std::time::Instant;

use super::metrics::WriteMetrics;
use crate::seam::{SeamError, Shard};

/// Creates the strategies of one shard for a new generation.
pub type ShardFactory = dyn Fn(usize) -> Result<Shard, SeamError> + Send + Sync;

/// Starts generations: the factory, the spare started ahead, the number.
pub(super) struct Generations {
    factory: Box<ShardFactory>,
    shards: usize,
    number: AtomicU64,
    /// The next generation's shards, started ahead by a flush writer.
    spare: Mutex<Option<Vec<Shard>>>,
    /// Set by the final drain: no generation follows.
    closed: AtomicBool,
    metrics: Arc<WriteMetrics>,
}

/// Handed to a flush writer with each job: a switch just happened, so the
/// next one is furthest away, and the writer can start the next
/// generation's shards off the writers' path (a switch then only swaps
/// them in). The job carries the work forward; nothing calls back into
/// the write path.
#[derive(Clone)]
pub struct NextGeneration(pub(super) Arc<Generations>);

impl NextGeneration {
    /// Starts the next generation's shards unless a spare is ready,
    /// another flush writer is at it, or the write path was drained. An
    /// error is left for the switch, which starts the generation itself
    /// and reports it.
    pub fn start_ahead(&self) {
        self.0.prepare_spare();
    }
}

impl Generations {
    pub(super) fn new(factory: Box<ShardFactory>, shards: usize, metrics: Arc<WriteMetrics>) -> Self {
        Generations { factory, shards, number: AtomicU64::new(0), spare: Mutex::new(None), closed: AtomicBool::new(false), metrics }
    }

    /// A fresh shard `index` of the live generation (a recovery's).
    pub(super) fn fresh(&self, index: usize) -> Result<Shard, SeamError> {
        (self.factory)(index)
    }

    /// No generation follows: starting ahead stops.
    pub(super) fn close(&self) {
        self.closed.store(true, Ordering::Release);
    }

    /// Starts a fresh shard of every index, counting its CPU time.
    pub(super) fn start(&self) -> Result<Vec<Shard>, SeamError> {
        let metrics = &self.metrics;
        let cpu_started = cpu_time::ThreadTime::try_now().ok();
        let fresh = (0..self.shards).map(|i| (self.factory)(i)).collect::<Result<Vec<_>, _>>()?;
        if let Some(cpu) = cpu_started {
            WriteMetrics::add(&metrics.generation_start_cpu_ns, cpu.elapsed().as_nanos() as u64);
        }
        WriteMetrics::add(&metrics.generation_started_shards, fresh.len() as u64);
        Ok(fresh)
    }

    /// The shards of the next generation: the spare if one was started
    /// ahead, else started now. Counts the switching writer's wait.
    pub(super) fn next(&self) -> Result<Vec<Shard>, SeamError> {
        let metrics = &self.metrics;
        let started = Instant::now();
        let spare = self.spare.lock().unwrap_or_else(|p| p.into_inner()).take();
        let fresh = match spare {
            Some(shards) => {
                WriteMetrics::add(&metrics.generation_ahead_shards, shards.len() as u64);
                shards
            }
            None => self.start()?,
        };
        WriteMetrics::add(&metrics.generation_start_ns, started.elapsed().as_nanos() as u64);
        WriteMetrics::add(&metrics.generation_shards, self.shards as u64);
        Ok(fresh)
    }

    /// Starts the next generation's shards unless a spare is ready, another
    /// thread is at it, or no generation follows.
    pub(super) fn prepare_spare(&self) {
        if self.closed.load(Ordering::Acquire) {
            return;
        }
        let mut spare = match self.spare.try_lock() {
            Ok(spare) => spare,
            Err(TryLockError::Poisoned(p)) => p.into_inner(),
            Err(TryLockError::WouldBlock) => return,
        };
        if spare.is_none() {
            *spare = self.start().ok();
        }
    }

    /// Numbers the generation being frozen.
    pub(super) fn freeze_next(&self) -> u64 {
        self.number.fetch_add(1, Ordering::Relaxed)
    }
}
