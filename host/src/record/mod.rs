//! The run record: what one bench measured, as `run.json` stores it and
//! `memlab show` reads it back. The record owns its schema: every type it
//! stores is its own (`spec`, `figures`, `outcome`), converted from the
//! runtime's structs, so renaming a hot-path field cannot change the
//! format. `SCHEMA_VERSION` is written into every record; records of
//! older schemas are upgraded on load, and a newer one is refused by
//! number.

mod breakdown;
mod checks;
mod figures;
mod later;
mod log;
mod outcome;
mod profile;
mod provenance;
mod run_path;
mod spec;
pub mod stats;
pub mod sweep;
mod taint;
pub mod verdict;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

pub use crate::input::RunPath;
/// Untrusted text, escaped for a terminal or a report.
pub use crate::util::text;
pub use breakdown::TimeBreakdown;
pub use checks::{NoEffect, NotProbed, RoundChecks, Site};
pub use figures::{BoundaryFigures, FlushFigures, IntervalSample, Latency, Machine, ReadFigures, Resources, Steady, VerifiedFigures, WriteFigures};
pub use log::{KeptLog, LogFigures, LogSpec};
/// The names of the counters in the stats maps (the SDK's contract).
pub use memlab_sdk::Stat;
pub use outcome::{Failure, FailureClass, Outcome};
pub use profile::{ProfileFigures, ProfileSource, flame_graph};
pub use provenance::{EngineInfo, Provenance};
pub use spec::{BenchSpec, ConfigSpec, Param, Runtime, StrategySpec, SweepSpec, VariantSpec};
pub use verdict::Verdict;

/// The kinds of strategy, as the record names them.
pub use crate::seam::{Kind, KindSpecs};

/// The schema this build writes.
/// - 2 added `schema` and `outcome` (replacing schema 1's `failure`
///   string) and hashes the verify digest with FNV-1a 128 (schema 1 used
///   std's `DefaultHasher`).
/// - 3 types a failed outcome: `class`, `plugin`, `sha256`, `operation`,
///   `shard` and `message` (schema 2 kept a `reason` string, read back as
///   class `unclassified`).
/// - 4 keeps a variant's strategies by kind (`strategies`, with the log's
///   format among them and its host settings in `log`) and its counters
///   by kind (`stats`), where 3 had a field a kind.
/// - 5 keeps the plugins' descriptions by kind (`descriptions`), where 4
///   had a list in pipeline order.
pub const SCHEMA_VERSION: u32 = 5;

/// Why a run record cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("{path}: cannot read: {detail}")]
    /// The record could not be read.
    Read {
        /// The file.
        path: String,
        /// What went wrong.
        detail: String,
    },
    #[error("{path}: not a memlab run record: {detail}")]
    /// The file is not a memlab record.
    Malformed {
        /// The file.
        path: String,
        /// What went wrong.
        detail: String,
    },
    #[error("{path}: cannot write: {detail}")]
    /// The record could not be written.
    Write {
        /// The file.
        path: String,
        /// What went wrong.
        detail: String,
    },
    #[error("{path}: run record schema {found} is newer than this memlab reads (up to {SCHEMA_VERSION}); use a newer memlab")]
    /// The record's schema is newer than this build reads.
    NewerSchema {
        /// The file.
        path: String,
        /// The schema found.
        found: u32,
    },
    /// A name the record gives under its run leads out of it.
    #[error(transparent)]
    Outside(#[from] crate::input::Outside),
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

/// Descriptions by kind; schema 4 and before kept a list in pipeline
/// order, a variant's kinds being a prefix of the table of kinds.
fn described_by_kind<'de, D: serde::Deserializer<'de>>(d: D) -> Result<BTreeMap<Kind, Described>, D::Error> {
    #[derive(serde::Deserialize)]
    #[serde(untagged)]
    enum Either {
        ByKind(BTreeMap<Kind, Described>),
        InOrder(Vec<Described>),
    }
    Ok(match serde::Deserialize::deserialize(d)? {
        Either::ByKind(map) => map,
        Either::InOrder(list) => Kind::ALL.into_iter().zip(list).collect(),
    })
}

/// Everything measured in one run of one variant.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct VariantResult {
    /// The variant as configured.
    #[serde(deserialize_with = "spec::upgraded")]
    pub variant: VariantSpec,
    /// Which repeat this run was (1-based).
    pub repeat: usize,
    /// Plugins used.
    pub plugins: Vec<PluginInfo>,
    /// What ran, as the plugins describe themselves, by kind.
    #[serde(deserialize_with = "described_by_kind")]
    pub descriptions: BTreeMap<Kind, Described>,
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
    /// The steady-state window, where the run got past its warm-up.
    #[serde(default)]
    pub steady: Option<Steady>,
    /// CPU time of the client threads, summed (their own clocks).
    #[serde(default)]
    pub client_cpu: Duration,
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
    pub counters: WriteFigures,
    /// Every flush, in generation order.
    pub flushes: Vec<FlushFigures>,
    /// Each kind's own counters, by kind, summed over every generation,
    /// flush or shard (what the host makes of each: `report::counters`).
    #[serde(default)]
    pub stats: BTreeMap<Kind, BTreeMap<String, u64>>,
    /// Boundary traffic of shards and serializers.
    pub boundary: BoundaryFigures,
    /// Where the client threads' time went.
    #[serde(default, skip_serializing_if = "TimeBreakdown::is_empty")]
    pub time: TimeBreakdown,
    /// The stream's fingerprint as this run's clients saw it.
    pub fingerprint: String,
    /// Its shape print: what its ops are without their content (kinds,
    /// partitions, sizes, timestamps), the same whatever the salt.
    /// Comparisons across runs hold two runs to this.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub shape: String,
    /// Point reads from the live memtables after the writes.
    pub reads: ReadFigures,
    /// CPU and memory of the process during the run.
    pub resources: Resources,
    /// What verification proved.
    pub verified: Option<VerifiedFigures>,
    /// Why this run's final state was not compared with the stream, where
    /// the config left it out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_verified: Option<String>,
    /// Described parameters whose change made no difference, each with
    /// where it was probed ("has no effect here": not a failure). (None
    /// in records before the probe.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_effect: Option<Vec<NoEffect>>,
    /// Rows of the bench's own (a secret shard's taped calls) on which the
    /// memtable's and the allocator's parameters were probed; 0 where none
    /// were taped (a native variant, a failed run, older records).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub params_rows: u64,
    /// Described parameters the probe did not reach: nothing is said of
    /// what they do.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_probed: Vec<NotProbed>,
    /// What the host checked of this run on its own account (every round
    /// of a verifying variant; none in records before it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checked: Option<RoundChecks>,
    /// The commit log's figures, when the variant kept one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commitlog: Option<LogFigures>,
    /// Whether the run completed; a failed run's figures are not valid.
    #[serde(default)]
    pub outcome: Outcome,
    /// The folder under the run's directory holding its kept segments.
    #[serde(default)]
    pub segments: Option<RunPath>,
    /// Schema 1's `failure` string: read from old records, then folded
    /// into `outcome`; never written.
    #[serde(default, rename = "failure", skip_serializing)]
    pub(crate) legacy_failure: Option<String>,
    /// Schema 1-3's counters, a field a kind: folded into `stats`.
    #[serde(default, rename = "memtable_stats", skip_serializing)]
    pub(crate) legacy_memtable_stats: BTreeMap<String, u64>,
    #[serde(default, rename = "allocator_stats", skip_serializing)]
    pub(crate) legacy_allocator_stats: BTreeMap<String, u64>,
    #[serde(default, rename = "serializer_stats", skip_serializing)]
    pub(crate) legacy_serializer_stats: BTreeMap<String, u64>,
}

/// The result of a whole bench: what `run.json` holds.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct BenchResult {
    /// The run record's schema version (`SCHEMA_VERSION` when written;
    /// records without one are schema 1).
    #[serde(default = "schema_1")]
    pub schema: u32,
    /// Where, when and with what it ran.
    pub provenance: Provenance,
    /// The config as resolved.
    pub config: ConfigSpec,
    /// Every run, in run order (repeats interleaved).
    pub variants: Vec<VariantResult>,
    /// How many rounds ran, and what ended them.
    #[serde(default)]
    pub stop: Option<Stop>,
    /// Flame graphs, from a profiled round of each variant after the
    /// measured ones (`--profile`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub profiles: Vec<ProfileFigures>,
}

/// What ended a bench's rounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StopReason {
    /// The configured number of rounds (`repeats`) ran.
    Fixed,
    /// Every verdict was decided.
    Decided,
    /// Every verdict's ratio was known within the target `rse`.
    Precise,
    /// The ceiling on rounds.
    MaxRounds,
    /// The ceiling on the bench's wall time.
    MaxTime,
    /// The user stopped it.
    Interrupted,
}

impl StopReason {
    /// What the report says.
    pub fn describe(self) -> &'static str {
        match self {
            StopReason::Fixed => "the configured number of rounds ran",
            StopReason::Decided => "every verdict was decided",
            StopReason::Precise => "every ratio was known within the target relative standard error",
            StopReason::MaxRounds => "the ceiling on rounds (`max_rounds`) was reached",
            StopReason::MaxTime => "the ceiling on time (`max_time`) was reached",
            StopReason::Interrupted => "interrupted",
        }
    }
}

/// The rounds a bench ran and why it stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Stop {
    /// Rounds run (each variant once per round).
    pub rounds: usize,
    /// What ended them.
    pub reason: StopReason,
}

impl VariantResult {
    /// What comparisons across runs hold this run's stream to, named
    /// (`Provenance::stream_print`).
    pub fn stream_print(&self) -> String {
        provenance::stream_print(&self.shape, &self.fingerprint)
    }

    /// An empty result for `variant` that failed with `failure`.
    pub fn failed(variant: VariantSpec, failure: Failure) -> Self {
        VariantResult { variant, outcome: Outcome::Failed(failure), ..VariantResult::default() }
    }

    /// Why the run failed, if it did.
    pub fn failure(&self) -> Option<&Failure> {
        match &self.outcome {
            Outcome::Completed => None,
            Outcome::Failed(failure) => Some(failure),
        }
    }

    /// Brings a run read from an older schema up to this one: schema 1's
    /// failure string typed, schema 1-3's counters by kind.
    fn upgrade(&mut self) {
        if let Some(reason) = self.legacy_failure.take() {
            self.outcome = Outcome::Failed(Failure::new(FailureClass::Unclassified, reason));
        }
        let legacy = [
            (Kind::Memtable, &mut self.legacy_memtable_stats),
            (Kind::Allocator, &mut self.legacy_allocator_stats),
            (Kind::Serializer, &mut self.legacy_serializer_stats),
        ];
        fold_legacy(&mut self.stats, legacy);
        self.flushes.iter_mut().for_each(FlushFigures::upgrade);
    }

    /// Its counters of `kind` (none where it has none).
    pub fn stats_of(&self, kind: Kind) -> &BTreeMap<String, u64> {
        static NONE: BTreeMap<String, u64> = BTreeMap::new();
        self.stats.get(&kind).unwrap_or(&NONE)
    }

    /// Marks the run failed, keeping the first failure.
    pub fn fail(&mut self, failure: Failure) {
        if self.outcome == Outcome::Completed {
            self.outcome = Outcome::Failed(failure);
        }
    }
}

mod bounds;

/// The record's name in its run directory, as memlab writes it.
pub const RUN_FILE: &str = "run.json";
/// The same record kept compressed (`gzip run.json`), read as it is.
pub const RUN_FILE_GZ: &str = "run.json.gz";

/// The record a run directory holds: `run.json`, else `run.json.gz`;
/// a path that is no directory is taken as the record itself.
pub fn file_in(path: &Path) -> std::path::PathBuf {
    if !path.is_dir() {
        return path.to_path_buf();
    }
    // Whatever stands at the name, a link or a FIFO included: the reader
    // then says what is wrong with it, rather than that none is there.
    let there = |p: &Path| std::fs::symlink_metadata(p).is_ok();
    let plain = path.join(RUN_FILE);
    let compressed = path.join(RUN_FILE_GZ);
    if !there(&plain) && there(&compressed) { compressed } else { plain }
}

/// Whether a directory holds a record, plain or compressed, or anything
/// at a record's name.
pub fn is_run_dir(path: &Path) -> bool {
    [RUN_FILE, RUN_FILE_GZ].iter().any(|name| std::fs::symlink_metadata(path.join(name)).is_ok())
}

impl BenchResult {
    /// Reads a run record, upgrading older schemas.
    pub fn load(path: &Path) -> Result<BenchResult, RecordError> {
        let shown = path.display().to_string();
        let bytes = crate::input::read_inflated(path, 1 << 30, "run record").map_err(|e| RecordError::Read { path: shown.clone(), detail: e.reason() })?;
        let mut record = Self::parse(&bytes).map_err(|e| match e {
            ParseError::Newer(found) => RecordError::NewerSchema { path: shown, found },
            ParseError::Json(detail) => RecordError::Malformed { path: shown, detail },
        })?;
        // Only memlab's own `run.json` has a `variants/` beside it: a
        // folder beside any other file (a shared temporary directory) is
        // not taken into it.
        if path.file_name().is_some_and(|n| n == RUN_FILE || n == RUN_FILE_GZ) {
            record.take_later_variants(path)?;
        }
        record.check_names().map_err(|detail| RecordError::Malformed { path: path.display().to_string(), detail })?;
        // A record written before this rule, or cut off before its end,
        // still publishes nothing of a plugin it caught.
        record.taint_shared_plugins();
        Ok(record)
    }

    /// Writes the record to `path` whole or not at all: to a temporary
    /// file beside it, then renamed over it.
    pub fn save(&self, path: &Path) -> Result<(), RecordError> {
        let failed = |e: &dyn std::fmt::Display| RecordError::Write { path: path.display().to_string(), detail: e.to_string() };
        let text = serde_json::to_string_pretty(self).map_err(|e| failed(&e))?;
        crate::util::files::write_whole(path, text.as_bytes()).map_err(|e| failed(&e))
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
        let walked: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| ParseError::Json(e.to_string()))?;
        bounds::check(&walked).map_err(ParseError::Json)?;
        // Straight from the bytes: a `serde_json::Value` would round the
        // u128 digests to floats.
        let mut record: BenchResult = serde_json::from_slice(bytes).map_err(|e| ParseError::Json(e.to_string()))?;
        record.variants.iter_mut().for_each(VariantResult::upgrade);
        Ok(record)
    }
}

/// Schema 1-3 kept a field of counters a kind (only for the three kinds
/// there were): moved into the map by kind.
fn fold_legacy(stats: &mut BTreeMap<Kind, BTreeMap<String, u64>>, legacy: [(Kind, &mut BTreeMap<String, u64>); 3]) {
    for (kind, old) in legacy {
        if !old.is_empty() {
            stats.insert(kind, std::mem::take(old));
        }
    }
}

fn schema_1() -> u32 {
    1
}

enum ParseError {
    Newer(u32),
    Json(String),
}

/// serde's `skip_serializing_if` for counters added after their schema:
/// a zero is left out, so the records before them read the same.
fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_newer_schema_is_refused_by_number() {
        assert!(matches!(BenchResult::parse(br#"{"schema": 99}"#), Err(ParseError::Newer(99))));
    }
}
