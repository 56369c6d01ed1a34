//! The write path's counters: declared once, kept as atomics while the
//! run goes, and read out whole by `WriteMetrics::snapshot`.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::pool::MemoryPool;

macro_rules! write_metrics {
    ($($(#[$doc:meta])* $name:ident,)*) => {
        /// Counters of the write path, for the report.
        #[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
        pub struct WriteCounters {
            $($(#[$doc])* pub $name: u64,)*
        }

        /// The live counters behind `WriteCounters`.
        #[derive(Debug, Default)]
        pub struct WriteMetrics {
            $($(#[$doc])* pub(super) $name: AtomicU64,)*
        }

        impl WriteMetrics {
            /// The counters so far; the pool's own counters from `pool`.
            pub fn snapshot(&self, pool: &MemoryPool) -> WriteCounters {
                let mut counters = WriteCounters { $($name: self.$name.load(Ordering::Relaxed),)* };
                counters.pool_cas_retries = pool.cas_retries();
                counters.pool_sum_checks = pool.sum_checks();
                counters.pool_refusals = pool.refusals();
                counters.pool_charged = pool.charged();
                counters
            }
        }
    };
}

write_metrics! {
    /// Memtable switches (drain at the end included).
    switches,
    /// Shard lock taken without waiting.
    uncontended,
    /// Shard lock that had to wait.
    contended,
    /// Time spent waiting for shard locks, and handing one on to a
    /// writer that had parked (`WritePath::unlock`).
    lock_wait_ns,
    /// Time writers spent blocked on a full pool.
    backpressure_ns,
    /// Compare-and-swap conflicts in the pool (`cas-loop`).
    pool_cas_retries,
    /// Sums of all cells to check the limit (`striped`).
    pool_sum_checks,
    /// Reservations the pool refused, whether or not a plugin said so.
    pool_refusals,
    /// Bytes the host charged the pool for memory allocators held
    /// unreserved.
    pool_charged,
    /// Coalesced groups written (`group`, `adaptive`).
    groups,
    /// Time client batches waited in a group's queue, summed.
    coalesce_wait_ns,
    /// Time switching writers spent getting fresh generations' shards:
    /// taking the ones a flush writer started ahead, or else starting them.
    generation_start_ns,
    /// Shards switched in as fresh generations.
    generation_shards,
    /// CPU time spent starting shards (instantiation and `create`), by
    /// writers or ahead of time by flush writers.
    generation_start_cpu_ns,
    /// Shards started, ahead of time or not.
    generation_started_shards,
    /// Shards switched in that a flush writer had started ahead.
    generation_ahead_shards,
    /// Time writers waited for their writes to be durable (commit log
    /// `batch` and `group`), outside any lock, summed.
    durability_wait_ns,
    /// Shards whose memtable or allocator trapped, replayed from the
    /// commit log into fresh instances.
    recoveries,
    /// The most writers the host saw inside one memtable's `insert` at
    /// once, when the shards take concurrent writers (0: under the lock).
    most_inside,
}

/// The write path's plugin calls, timed for the time breakdown. Each
/// writer keeps its own (`OwnCallTimes`): no shared counter moves on the
/// hot path (a contention bench must not add any).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct CallTimes {
    /// Time in `store-rows` calls (the host's checks of each included).
    pub allocator_ns: u64,
    /// Bytes they carried in.
    pub allocator_bytes: u64,
    /// Time in `insert` calls, likewise.
    pub memtable_ns: u64,
    /// Bytes they carried in.
    pub memtable_bytes: u64,
    /// Pairs of `store-rows` and `insert` calls timed.
    pub writes: u64,
    /// Time encoding and appending log records (`commitlog.encode` and
    /// the host's append), in the shard's turn.
    pub log_ns: u64,
    /// Bytes of log records appended.
    pub log_bytes: u64,
    /// Log records appended.
    pub log_records: u64,
    /// Rows they held.
    pub log_rows: u64,
}

impl CallTimes {
    /// Adds another shard's.
    pub fn add(&mut self, o: &CallTimes) {
        self.allocator_ns += o.allocator_ns;
        self.allocator_bytes += o.allocator_bytes;
        self.memtable_ns += o.memtable_ns;
        self.memtable_bytes += o.memtable_bytes;
        self.writes += o.writes;
        self.log_ns += o.log_ns;
        self.log_bytes += o.log_bytes;
        self.log_records += o.log_records;
        self.log_rows += o.log_rows;
    }
}

/// One writer's call times, on a line only that writer writes: a plain
/// load and store a field (no read-modify-write, no lock), read by the
/// run's end.
#[derive(Debug, Default)]
pub(super) struct OwnCallTimes([AtomicU64; 9]);

impl OwnCallTimes {
    fn fields(t: &CallTimes) -> [u64; 9] {
        [t.allocator_ns, t.allocator_bytes, t.memtable_ns, t.memtable_bytes, t.writes, t.log_ns, t.log_bytes, t.log_records, t.log_rows]
    }

    /// Adds `t`; called by the owning writer alone.
    pub(super) fn add(&self, t: &CallTimes) {
        for (own, n) in self.0.iter().zip(Self::fields(t)) {
            own.store(own.load(Ordering::Relaxed) + n, Ordering::Relaxed);
        }
    }

    /// The times so far.
    pub(super) fn get(&self) -> CallTimes {
        let [allocator_ns, allocator_bytes, memtable_ns, memtable_bytes, writes, log_ns, log_bytes, log_records, log_rows] =
            self.0.each_ref().map(|f| f.load(Ordering::Relaxed));
        CallTimes { allocator_ns, allocator_bytes, memtable_ns, memtable_bytes, writes, log_ns, log_bytes, log_records, log_rows }
    }
}

/// Times one `store-rows` and the `insert` after it: three clock reads a
/// batch (or group), never one per row.
pub(super) struct CallClock(std::time::Instant);

impl CallClock {
    pub(super) fn start() -> Self {
        CallClock(std::time::Instant::now())
    }

    /// After `store-rows` of `bytes`.
    pub(super) fn stored(&mut self, times: &mut CallTimes, bytes: usize) {
        let now = std::time::Instant::now();
        times.allocator_ns += (now - self.0).as_nanos() as u64;
        times.allocator_bytes += bytes as u64;
        self.0 = now;
    }

    /// After `insert` of `bytes`.
    pub(super) fn inserted(self, times: &mut CallTimes, bytes: usize) {
        times.memtable_ns += self.0.elapsed().as_nanos() as u64;
        times.memtable_bytes += bytes as u64;
        times.writes += 1;
    }
}

impl WriteMetrics {
    /// Adds `n` to a counter.
    pub(super) fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }
}
