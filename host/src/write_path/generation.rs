//! The memtable generation lifecycle: starting a generation's shards
//! (ahead of time when a flush writer has a moment), counting what that
//! costs, and numbering generations as they switch.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, TryLockError};
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
}

impl Generations {
    pub(super) fn new(factory: Box<ShardFactory>, shards: usize) -> Self {
        Generations { factory, shards, number: AtomicU64::new(0), spare: Mutex::new(None) }
    }

    /// Starts a fresh shard of every index, counting its CPU time.
    pub(super) fn start(&self, metrics: &WriteMetrics) -> Result<Vec<Shard>, SeamError> {
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
    pub(super) fn next(&self, metrics: &WriteMetrics) -> Result<Vec<Shard>, SeamError> {
        let started = Instant::now();
        let spare = self.spare.lock().unwrap_or_else(|p| p.into_inner()).take();
        let fresh = match spare {
            Some(shards) => {
                WriteMetrics::add(&metrics.generation_ahead_shards, shards.len() as u64);
                shards
            }
            None => self.start(metrics)?,
        };
        WriteMetrics::add(&metrics.generation_start_ns, started.elapsed().as_nanos() as u64);
        WriteMetrics::add(&metrics.generation_shards, self.shards as u64);
        Ok(fresh)
    }

    /// Starts the next generation's shards unless a spare is ready or
    /// another thread is at it. An error is left for the switch, which
    /// starts the generation itself and reports it.
    pub(super) fn prepare_spare(&self, metrics: &WriteMetrics) {
        let mut spare = match self.spare.try_lock() {
            Ok(spare) => spare,
            Err(TryLockError::Poisoned(p)) => p.into_inner(),
            Err(TryLockError::WouldBlock) => return,
        };
        if spare.is_none() {
            *spare = self.start(metrics).ok();
        }
    }

    /// Numbers the generation being frozen.
    pub(super) fn freeze_next(&self) -> u64 {
        self.number.fetch_add(1, Ordering::Relaxed)
    }
}
