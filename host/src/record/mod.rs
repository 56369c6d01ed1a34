//! The run record: what one bench measured, as `run.json` stores it and
//! `memlab show` reads it back. It is versioned: `SCHEMA_VERSION` is
//! written into every record, and records of older schemas are upgraded
//! on load (schema 1, before the version field, kept a failure string).
//! A record of a newer schema is refused by number.

mod provenance;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use hdrhistogram::Histogram;

pub use provenance::{EngineInfo, Provenance};

use crate::config::{BenchConfig, Variant};
use crate::flush::FlushReport;
use crate::read_probe::ReadProbe;
use crate::seam::{Boundary, Kind};
use crate::verify::Verified;
use crate::write_path::WriteCounters;

/// The schema this build writes. 2 added `schema` and `outcome` (which
/// replaces schema 1's `failure` string) and hashes the verify digest
/// with FNV-1a 128 (schema 1 used std's `DefaultHasher`).
pub const SCHEMA_VERSION: u32 = 2;

/// How one run of one variant ended.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum Outcome {
    /// Every op ran and, where asked, verification passed.
    #[default]
    Completed,
    /// The run stopped or failed verification; the figures are not valid.
    Failed {
        /// What failed, naming the plugin and operation where one did.
        reason: String,
    },
}

/// Why a run record cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("{path}: cannot read: {detail}")]
    Read { path: String, detail: String },
    #[error("{path}: not a memlab run record: {detail}")]
    Malformed { path: String, detail: String },
    #[error("{path}: cannot write: {detail}")]
    Write { path: String, detail: String },
    #[error("{path}: run record schema {found} is newer than this memlab reads (up to {SCHEMA_VERSION}); use a newer memlab")]
    NewerSchema { path: String, found: u32 },
}

/// Latency figures, in nanoseconds.
#[derive(Debug, Clone, Copy, Default, serde::Serialize, serde::Deserialize)]
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

/// A loaded plugin, as reports show it.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct PluginInfo {
    /// What it implements.
    pub kind: Kind,
    /// Its name or path.
    pub name: String,
    /// sha256 of the component ("native" for twins).
    pub sha256: String,
    /// Compile or cache-load time.
    pub load: Duration,
    /// Served by the precompiled cache.
    pub cache_hit: bool,
}

/// A plugin's `describe()`: name, version, and the parameters it applied.
pub type Described = (String, String, Vec<(String, String)>);

/// Everything measured in one run of one variant.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct VariantResult {
    /// The variant as configured.
    pub variant: Variant,
    /// Which repeat this run was (1-based).
    pub repeat: usize,
    /// Plugins used.
    pub plugins: Vec<PluginInfo>,
    /// What ran, as the plugins describe themselves.
    pub descriptions: Vec<Described>,
    /// Ops of every kind.
    pub ops: u64,
    /// Ops per kind (`insert`, `read`, `scan`).
    pub op_counts: BTreeMap<String, u64>,
    /// Rows inserted.
    pub rows: u64,
    /// Partitions written (one per insert op).
    pub partitions: u64,
    /// Ops that failed.
    pub errors: u64,
    /// The first failed op's error.
    #[serde(default)]
    pub first_error: Option<String>,
    /// Point reads that found their row in a live memtable.
    pub read_hits: u64,
    /// Rows the scans returned.
    pub scan_rows: u64,
    /// Time from the first op to the last.
    pub elapsed: Duration,
    /// Loading plugins and creating generation 0.
    pub setup: Duration,
    /// Latency of all ops; from the intended start under a target rate.
    pub latency: Latency,
    /// Latency per op kind that ran.
    pub latencies: BTreeMap<String, Latency>,
    /// (percentile, ns) of all ops, for the spectrum chart.
    pub spectrum: Vec<(f64, u64)>,
    /// Whether a target rate paced the ops.
    pub paced: bool,
    /// One sample per interval.
    pub intervals: Vec<IntervalSample>,
    /// Switches, contention, backpressure, coalescing.
    pub counters: WriteCounters,
    /// Every flush, in generation order.
    pub flushes: Vec<FlushReport>,
    /// Memtable counters, summed over all generations.
    pub memtable_stats: BTreeMap<String, u64>,
    /// Allocator counters, summed over all generations.
    pub allocator_stats: BTreeMap<String, u64>,
    /// Boundary traffic of shards and serializers.
    pub boundary: Boundary,
    /// The stream's fingerprint as this run's clients saw it.
    pub fingerprint: String,
    /// Point reads from the live memtables after the writes.
    pub reads: ReadProbe,
    /// CPU and memory of the process during the run.
    pub resources: Resources,
    /// What verification proved.
    pub verified: Option<Verified>,
    /// Whether the run completed; a failed run's figures are not valid.
    #[serde(default)]
    pub outcome: Outcome,
    /// The folder under the run's directory holding its kept segments.
    #[serde(default)]
    pub segments: Option<String>,
    /// Schema 1's `failure` string: read from old records, then folded
    /// into `outcome`; never written.
    #[serde(default, rename = "failure", skip_serializing)]
    pub(crate) legacy_failure: Option<String>,
}

/// The result of a whole bench: what `run.json` holds.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct BenchResult {
    /// The run record's schema version (`SCHEMA_VERSION` when written;
    /// records without one are schema 1).
    #[serde(default = "schema_1")]
    pub schema: u32,
    /// Where, when and with what it ran.
    pub provenance: Provenance,
    /// The config as resolved.
    pub config: BenchConfig,
    /// Every run, in run order (repeats interleaved).
    pub variants: Vec<VariantResult>,
}

/// One interval of a run.
#[derive(Debug, Clone, Copy, Default, serde::Serialize, serde::Deserialize)]
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
}

/// CPU and memory of the whole process during one run.
#[derive(Debug, Clone, Copy, Default, serde::Serialize, serde::Deserialize)]
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
}

impl Resources {
    /// Memory the run added beyond its memtable budget: the overhead of
    /// the write path, flush and sandbox (negative when under budget).
    pub fn beyond_budget(&self, budget: u64) -> i64 {
        self.peak_rss as i64 - self.start_rss as i64 - budget as i64
    }
}

impl VariantResult {
    /// An empty result for `variant` that failed for `reason`.
    pub fn failed(variant: &Variant, reason: impl Into<String>) -> Self {
        VariantResult { variant: variant.clone(), outcome: Outcome::Failed { reason: reason.into() }, ..VariantResult::default() }
    }

    /// Why the run failed, if it did.
    pub fn failure(&self) -> Option<&str> {
        match &self.outcome {
            Outcome::Completed => None,
            Outcome::Failed { reason } => Some(reason),
        }
    }

    /// Marks the run failed, keeping the first reason.
    pub fn fail(&mut self, reason: impl Into<String>) {
        if self.outcome == Outcome::Completed {
            self.outcome = Outcome::Failed { reason: reason.into() };
        }
    }
}

impl BenchResult {
    /// Reads a run record, upgrading older schemas.
    pub fn load(path: &Path) -> Result<BenchResult, RecordError> {
        let shown = path.display().to_string();
        let bytes = std::fs::read(path).map_err(|e| RecordError::Read { path: shown.clone(), detail: e.to_string() })?;
        Self::parse(&bytes).map_err(|e| match e {
            ParseError::Newer(found) => RecordError::NewerSchema { path: shown, found },
            ParseError::Json(detail) => RecordError::Malformed { path: shown, detail },
        })
    }

    /// Writes the record to `path` whole or not at all: to a temporary
    /// file beside it, then renamed over it.
    pub fn save(&self, path: &Path) -> Result<(), RecordError> {
        let failed = |e: &dyn std::fmt::Display| RecordError::Write { path: path.display().to_string(), detail: e.to_string() };
        let text = serde_json::to_string_pretty(self).map_err(|e| failed(&e))?;
        let partial = path.with_extension("json.partial");
        std::fs::write(&partial, text).map_err(|e| failed(&e))?;
        std::fs::rename(&partial, path).map_err(|e| failed(&e))
    }

    fn parse(bytes: &[u8]) -> Result<BenchResult, ParseError> {
        // The version first, so a newer record is named rather than misread.
        #[derive(serde::Deserialize)]
        struct Version {
            #[serde(default = "schema_1")]
            schema: u32,
        }
        let version: Version = serde_json::from_slice(bytes).map_err(|e| ParseError::Json(e.to_string()))?;
        if version.schema > SCHEMA_VERSION {
            return Err(ParseError::Newer(version.schema));
        }
        // Straight from the bytes: a `serde_json::Value` would round the
        // u128 digests to floats.
        let mut record: BenchResult = serde_json::from_slice(bytes).map_err(|e| ParseError::Json(e.to_string()))?;
        for variant in &mut record.variants {
            if let Some(reason) = variant.legacy_failure.take() {
                variant.outcome = Outcome::Failed { reason };
            }
        }
        Ok(record)
    }
}

fn schema_1() -> u32 {
    1
}

enum ParseError {
    Newer(u32),
    Json(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_newer_schema_is_refused_by_number() {
        assert!(matches!(BenchResult::parse(br#"{"schema": 99}"#), Err(ParseError::Newer(99))));
    }
}
