//! The figures a run record keeps, in the record's own types, each with a
//! `From` conversion from the runtime struct it is measured in. A field
//! renamed at run time breaks the conversion, not the on-disk format.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use hdrhistogram::Histogram;

use super::is_zero;
use crate::flush::FlushReport;
use crate::read_probe::ReadProbe;
use crate::seam::{Boundary, Kind};
use crate::verify::Verified;
use crate::write_path::WriteCounters;

/// Latency figures, in nanoseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Latency {
    /// Mean.
    pub mean: f64,
    /// Median.
    pub p50: u64,
    /// 95th percentile.
    pub p95: u64,
    /// 99th percentile.
    pub p99: u64,
    /// 99.9th percentile.
    pub p999: u64,
    /// Maximum.
    pub max: u64,
}

impl Latency {
    /// The figures of a histogram of nanoseconds.
    pub fn from(h: &Histogram<u64>) -> Self {
        if h.is_empty() {
            return Latency::default();
        }
        Latency {
            mean: h.mean(),
            p50: h.value_at_quantile(0.5),
            p95: h.value_at_quantile(0.95),
            p99: h.value_at_quantile(0.99),
            p999: h.value_at_quantile(0.999),
            max: h.max(),
        }
    }
}

/// One interval of a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct IntervalSample {
    /// Seconds since the run started, at the interval's end.
    pub at: f64,
    /// The interval's length in seconds (the last one may be short).
    pub secs: f64,
    /// Ops completed in the interval.
    pub ops: u64,
    /// Rows inserted in the interval.
    pub rows: u64,
    /// Ops per second in the interval.
    pub op_rate: f64,
    /// Rows per second in the interval.
    pub row_rate: f64,
    /// Latency of the interval's ops.
    pub latency: Latency,
    /// Errors in the interval.
    pub errors: u64,
    /// Bytes the memory pool held at the interval's end.
    pub memory: u64,
    /// The process's CPU time in the interval, in seconds (over the
    /// interval and the cores, the share of the machine the run had).
    #[serde(default)]
    pub cpu: f64,
    /// Whether the interval ended within the warm-up.
    #[serde(default)]
    pub warmup: bool,
}

/// The steady-state window of one run: from the end of the warm-up to
/// the last op. Its rate is the one verdicts compare.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Steady {
    /// Seconds of warm-up left out.
    pub warmup_secs: f64,
    /// Rows written in the warm-up, left out.
    pub warmup_rows: u64,
    /// Seconds measured.
    pub secs: f64,
    /// Rows written in the window.
    pub rows: u64,
    /// The process's CPU time in the window, in seconds.
    pub cpu: f64,
    /// Memtable switches in the window (generations flushed in it).
    pub switches: u64,
}

/// CPU and memory of the whole process during one run.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Resources {
    /// User CPU time, all threads.
    pub user_cpu: Duration,
    /// System CPU time, all threads.
    pub system_cpu: Duration,
    /// Peak resident set size during the run (the high-water mark is
    /// reset at the start where the kernel allows it).
    pub peak_rss: u64,
    /// Resident set size when the run started: the binary, the engine,
    /// and what the harness holds across runs (the verifier's expected
    /// state). `peak_rss - start_rss` is what the run itself added.
    #[serde(default)]
    pub start_rss: u64,
    /// The machine around the run, where the kernel says (records
    /// before it have none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<Machine>,
}

/// The machine while one run ran, from Linux's `/proc`: what this process
/// got and what everything else on the machine took.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Machine {
    /// The cores the machine has online.
    pub cpus: usize,
    /// Cores this process kept busy (its CPU time over the wall time).
    pub cores: f64,
    /// Cores the whole machine kept busy over the run (every process).
    pub busy: f64,
    /// Share of the machine's CPU time stolen by its hypervisor.
    pub steal: f64,
    /// The one-minute load average at the run's end.
    pub load: f64,
}

impl Machine {
    /// Cores the rest of the machine kept busy: the neighbours.
    pub fn others(&self) -> f64 {
        (self.busy - self.cores).max(0.0)
    }
}

impl Resources {
    /// Memory the run added beyond its memtable budget: the overhead of
    /// the write path, flush and sandbox (negative when under budget).
    pub fn beyond_budget(&self, budget: u64) -> i64 {
        // In i128: a record's numbers may be anything.
        (i128::from(self.peak_rss) - i128::from(self.start_rss) - i128::from(budget)).clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
    }
}

/// Calls and bytes across the plugin boundary.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct BoundaryFigures {
    /// Calls made.
    pub calls: u64,
    /// Bytes passed in (arguments).
    pub bytes_in: u64,
    /// Bytes passed back (results).
    pub bytes_out: u64,
}

impl From<Boundary> for BoundaryFigures {
    fn from(b: Boundary) -> Self {
        BoundaryFigures { calls: b.calls, bytes_in: b.bytes_in, bytes_out: b.bytes_out }
    }
}

/// Figures of one flush, as Cassandra's "Completed flushing" line has them.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FlushFigures {
    /// The memtable generation.
    pub generation: u64,
    /// Seconds from the run's start to the flush's start.
    pub started_at: f64,
    /// Which part of it.
    pub part: usize,
    /// The data file, if any rows were written.
    pub segment: Option<PathBuf>,
    /// Rows flushed.
    pub rows: u64,
    /// Partitions flushed (as the serializer counted them).
    pub partitions: u64,
    /// Bytes of data, index and metadata written.
    pub bytes: u64,
    /// Bytes of the rows flushed, as the stream made them (0 in records
    /// made before it was kept).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub raw_bytes: u64,
    /// Wall time.
    pub wall: Duration,
    /// CPU time of the flush thread.
    pub cpu: Duration,
    /// Linear memory of the serializer's instance at the end (wasm).
    pub serializer_memory: u64,
    /// How much of that the serializer grew during this flush.
    pub serializer_grew: u64,
    /// Bytes the flush thread allocated on the host heap (host-measured;
    /// absent in records made before it was).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heap_allocated: Option<u64>,
    /// Of that, what the serializer's calls allocated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serializer_heap: Option<u64>,
    /// Linear memory of the flushed shards (wasm).
    pub shard_memory: u64,
    /// Each kind's counters, by kind (the memtable's and the allocator's
    /// over the flushed shards, the serializer's own).
    #[serde(default)]
    pub stats: BTreeMap<Kind, BTreeMap<String, u64>>,
    /// Schema 1-3's counters, a field a kind: folded into `stats`.
    #[serde(default, rename = "memtable_stats", skip_serializing)]
    pub(crate) legacy_memtable_stats: BTreeMap<String, u64>,
    #[serde(default, rename = "allocator_stats", skip_serializing)]
    pub(crate) legacy_allocator_stats: BTreeMap<String, u64>,
    #[serde(default, rename = "serializer_stats", skip_serializing)]
    pub(crate) legacy_serializer_stats: BTreeMap<String, u64>,
    /// Boundary traffic of the flushed shards over their whole life.
    pub shard_boundary: BoundaryFigures,
    /// Boundary traffic of the serializer.
    pub serializer_boundary: BoundaryFigures,
}

impl From<&FlushReport> for FlushFigures {
    fn from(f: &FlushReport) -> Self {
        FlushFigures {
            generation: f.generation,
            started_at: f.started_at,
            part: f.part,
            segment: f.segment.clone(),
            rows: f.rows,
            partitions: f.partitions,
            bytes: f.bytes,
            raw_bytes: f.raw_bytes,
            wall: f.wall,
            cpu: f.cpu,
            serializer_memory: f.serializer_memory,
            serializer_grew: f.serializer_grew,
            heap_allocated: Some(f.heap_allocated),
            serializer_heap: Some(f.serializer_heap),
            shard_memory: f.shard_memory,
            stats: f.stats.clone(),
            shard_boundary: f.shard_boundary.into(),
            serializer_boundary: f.serializer_boundary.into(),
            ..FlushFigures::default()
        }
    }
}

impl FlushFigures {
    /// Folds schema 1-3's counters into `stats`.
    pub(super) fn upgrade(&mut self) {
        super::fold_legacy(
            &mut self.stats,
            [
                (Kind::Memtable, &mut self.legacy_memtable_stats),
                (Kind::Allocator, &mut self.legacy_allocator_stats),
                (Kind::Serializer, &mut self.legacy_serializer_stats),
            ],
        );
    }
}

/// Counters of the write path.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct WriteFigures {
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
    /// Reservations the pool refused, counted by the host whether or not
    /// the plugin reported them.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub pool_refusals: u64,
    /// Bytes the host charged the pool for memory allocators held beyond
    /// their reservations (wasm only: measured on the linear memory).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub pool_charged: u64,
    /// Coalesced groups written (`group`, `adaptive`).
    pub groups: u64,
    /// Time client batches waited in a group's queue, summed.
    pub coalesce_wait_ns: u64,
    /// Time switching writers spent getting fresh generations' shards.
    pub generation_start_ns: u64,
    /// Shards switched in as fresh generations.
    pub generation_shards: u64,
    /// CPU time spent starting shards (instantiation and `create`).
    pub generation_start_cpu_ns: u64,
    /// Shards started, ahead of time or not.
    pub generation_started_shards: u64,
    /// Shards switched in that a flush writer had started ahead.
    pub generation_ahead_shards: u64,
    /// Time writers waited for durability (commit log), summed.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub durability_wait_ns: u64,
    /// Shards recovered from the commit log after a trap.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub recoveries: u64,
    /// The most writers the host saw inside one memtable at once, when
    /// the shards took concurrent writers (0: every call under the lock).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub most_inside: u64,
}

impl From<WriteCounters> for WriteFigures {
    fn from(c: WriteCounters) -> Self {
        WriteFigures {
            switches: c.switches,
            uncontended: c.uncontended,
            contended: c.contended,
            lock_wait_ns: c.lock_wait_ns,
            backpressure_ns: c.backpressure_ns,
            pool_cas_retries: c.pool_cas_retries,
            pool_sum_checks: c.pool_sum_checks,
            pool_refusals: c.pool_refusals,
            pool_charged: c.pool_charged,
            groups: c.groups,
            coalesce_wait_ns: c.coalesce_wait_ns,
            generation_start_ns: c.generation_start_ns,
            generation_shards: c.generation_shards,
            generation_start_cpu_ns: c.generation_start_cpu_ns,
            generation_started_shards: c.generation_started_shards,
            generation_ahead_shards: c.generation_ahead_shards,
            durability_wait_ns: c.durability_wait_ns,
            recoveries: c.recoveries,
            most_inside: c.most_inside,
        }
    }
}

/// Point reads from the live memtables after the writes.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ReadFigures {
    /// Keys looked up.
    pub keys: u64,
    /// Keys found (the rest were flushed with an earlier generation).
    pub hits: u64,
    /// Time inside the `get` calls.
    pub elapsed: Duration,
}

impl ReadFigures {
    /// Lookups per second.
    pub fn rate(&self) -> f64 {
        self.keys as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

impl From<&ReadProbe> for ReadFigures {
    fn from(r: &ReadProbe) -> Self {
        ReadFigures { keys: r.keys, hits: r.hits, elapsed: r.elapsed }
    }
}

/// What verification proved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct VerifiedFigures {
    /// Distinct keys in the final state.
    pub keys: u64,
    /// Rows read back from segments, older versions included.
    pub rows_read: u64,
    /// Digest of the final state (FNV-1a 128 since run record schema 2).
    pub digest: u128,
}

impl From<Verified> for VerifiedFigures {
    fn from(v: Verified) -> Self {
        VerifiedFigures { keys: v.keys, rows_read: v.rows_read, digest: v.digest }
    }
}

impl From<VerifiedFigures> for Verified {
    fn from(v: VerifiedFigures) -> Self {
        Verified { keys: v.keys, rows_read: v.rows_read, digest: v.digest }
    }
}
