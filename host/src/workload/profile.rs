//! Workload profiles (TOML), modelled on cassandra-stress user profiles.
//! A profile is a file of its own (`benches/profiles/`) or a bench
//! config's `[workload]` table; `profile = "path"` in that table loads a
//! file and the table's other keys override it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize};

use super::dist::Dist;

/// A workload: what to write and read, how much, how fast.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Profile {
    /// A short name for reports.
    pub name: String,
    /// The stream's seed.
    pub seed: u64,
    /// Client threads.
    pub threads: usize,
    /// Ops in all, split evenly over threads (unless `duration` is set).
    pub ops: u64,
    /// Run for this long instead of a fixed count, e.g. `"30s"`.
    #[serde(deserialize_with = "duration", serialize_with = "duration_text", skip_serializing_if = "Option::is_none")]
    pub duration: Option<Duration>,
    /// Ops per second over all threads; latency then counts from each
    /// op's intended start (no coordinated omission).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_rate: Option<f64>,
    /// The partition population.
    pub partitions: Partitions,
    /// Rows per partition and their clustering keys.
    pub clustering: Clustering,
    /// Rows an insert writes into its partition (capped by the
    /// partition's rows).
    pub rows_per_batch: Dist,
    /// Value columns, in order.
    #[serde(rename = "column")]
    pub columns: Vec<Column>,
    /// The op mix.
    pub mix: Mix,
    /// Share of inserted rows written as row tombstones, 0 to 1.
    pub tombstone_ratio: f64,
    /// Point reads of stream keys from the live memtables once the writes
    /// end (0: none).
    pub read_probe: u64,
    /// Replay this stream file (`memlab stream`) instead of generating.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream: Option<PathBuf>,
    /// Generate the whole stream into memory before the clock starts and
    /// replay it, so that the timed part is the write path without the
    /// generator (the same bytes and fingerprint; ~150 bytes of memory per
    /// seed-profile row, held across runs).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub materialize: bool,
    /// The run's secret salt, keying every byte of content (never read
    /// from a file, never written with the profile: the record keeps it
    /// apart, once the run is over).
    #[serde(skip)]
    pub salt: Option<super::Salt>,
}

/// Which partitions ops touch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Partitions {
    /// Distinct partitions.
    pub count: u64,
    /// How often each is chosen.
    pub distribution: Popularity,
    /// Partition key length.
    pub key: Dist,
}

/// How ops choose partitions.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub enum Popularity {
    /// All partitions equally likely.
    #[default]
    Uniform,
    /// Partition rank k chosen with probability ~ k^-s.
    Zipf {
        /// The exponent.
        s: f64,
    },
    /// A `fraction` of the partitions gets a `share` of the ops.
    Hot {
        /// The share of keys that are hot.
        fraction: f64,
        /// The share of operations that go to them.
        share: f64,
    },
}

/// Rows within a partition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Clustering {
    /// Rows a partition has (sampled once per partition).
    pub rows: Dist,
    /// Clustering key length.
    pub key: Dist,
}

/// A value column.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Column {
    /// Its name (reports only; cells carry the column's index).
    pub name: String,
    /// Value length.
    pub size: Dist,
}

/// Relative weights of the op kinds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Mix {
    /// Batched inserts into one partition.
    pub insert: u32,
    /// Point reads of one row from the live memtable.
    pub read: u32,
    /// Range scans from a partition's start.
    pub scan: u32,
    /// Rows a scan returns at most.
    pub scan_limit: u32,
}

impl Default for Mix {
    fn default() -> Self {
        Mix { insert: 1, read: 0, scan: 0, scan_limit: 100 }
    }
}

impl Default for Partitions {
    fn default() -> Self {
        Partitions { count: 1_000_000, distribution: Popularity::Uniform, key: Dist::fixed(10) }
    }
}

impl Default for Clustering {
    fn default() -> Self {
        Clustering { rows: Dist::fixed(10), key: Dist::uniform(8, 16) }
    }
}

impl Default for Profile {
    /// The seed profile of CASSANDRA-20226.
    fn default() -> Self {
        Profile {
            name: String::new(),
            seed: 20226,
            ops: 100_000,
            duration: None,
            target_rate: None,
            threads: 2,
            partitions: Partitions::default(),
            clustering: Clustering::default(),
            rows_per_batch: Dist::fixed(10),
            columns: (1..=5).map(|i| Column { name: format!("v{i}"), size: Dist::uniform(4, 16) }).collect(),
            mix: Mix::default(),
            tombstone_ratio: 0.0,
            read_probe: 10_000,
            stream: None,
            materialize: false,
            salt: None,
        }
    }
}

fn duration_text<S: serde::Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&format!("{}ms", d.unwrap_or_default().as_millis()))
}

fn duration<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
    let text = String::deserialize(d)?;
    parse_duration(&text).map(Some).map_err(serde::de::Error::custom)
}

/// Parses `"30s"`, `"500ms"`, `"2m"`.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let n: f64 = number.parse().map_err(|_| format!("`{text}` is not a duration like \"30s\""))?;
    let secs = match unit.trim() {
        "ms" => n / 1e3,
        "s" => n,
        "m" => n * 60.0,
        "h" => n * 3600.0,
        other => return Err(format!("unknown unit `{other}` in `{text}` (use ms, s, m or h)")),
    };
    Duration::try_from_secs_f64(secs).map_err(|_| format!("`{text}` is not a usable duration"))
}

/// A profile that cannot generate a stream.
#[derive(Debug, thiserror::Error)]
#[error("workload: `{key}` {problem}")]
pub struct ProfileError {
    /// The offending key.
    pub key: &'static str,
    /// What is wrong with it.
    pub problem: String,
}

impl Profile {
    /// Checks what serde cannot.
    pub fn validate(&self) -> Result<(), ProfileError> {
        let bad = |key, problem: String| Err(ProfileError { key, problem });
        if !(1..=1024).contains(&self.threads) {
            return bad("threads", format!("{} is outside 1..=1024", self.threads));
        }
        if self.partitions.count == 0 {
            return bad("partitions.count", "must be at least 1".into());
        }
        match self.partitions.distribution {
            Popularity::Zipf { s } if !(s > 0.0 && s.is_finite()) => return bad("partitions.distribution", format!("zipf needs s > 0 (got {s})")),
            Popularity::Hot { fraction, share } if !(fraction > 0.0 && fraction < 1.0 && (0.0..=1.0).contains(&share)) => {
                return bad("partitions.distribution", format!("hot needs 0 < fraction < 1 and 0 <= share <= 1 (got {fraction}, {share})"));
            }
            _ => {}
        }
        if self.clustering.rows.bounds().0 == 0 {
            return bad("clustering.rows", "must be at least 1".into());
        }
        let (min_batch, max_batch) = self.rows_per_batch.bounds();
        if min_batch == 0 || max_batch > 65_536 {
            return bad("rows_per_batch", format!("must lie in 1..=65536 (got {min_batch}..={max_batch})"));
        }
        if self.columns.len() > 1024 {
            return bad("column", format!("{} columns; at most 1024", self.columns.len()));
        }
        let sizes = [("partitions.key", self.partitions.key), ("clustering.key", self.clustering.key)];
        for (key, dist) in sizes.into_iter().chain(self.columns.iter().map(|c| ("column.size", c.size))) {
            if dist.bounds().1 > 16 << 20 {
                return bad(key, "can reach above 16 MiB".into());
            }
        }
        let m = self.mix;
        if u64::from(m.insert) + u64::from(m.read) + u64::from(m.scan) == 0 {
            return bad("mix", "gives every op kind weight 0".into());
        }
        if !(0.0..=1.0).contains(&self.tombstone_ratio) {
            return bad("tombstone_ratio", "must be between 0 and 1".into());
        }
        if self.target_rate.is_some_and(|r| !(1.0..=1e9).contains(&r)) {
            return bad("target_rate", "must lie in 1..=1e9 ops per second (slower would take days)".into());
        }
        if self.stream.is_none() && self.duration.is_none() && self.ops == 0 {
            return bad("ops", "is 0: the run would test nothing".into());
        }
        if self.duration.is_some_and(|d| d.is_zero() || d > MAX_DURATION) {
            return bad("duration", format!("must lie above 0 and at most {} days", MAX_DURATION.as_secs() / 86_400));
        }
        if self.ops > MAX_OPS {
            return bad("ops", format!("{} is above the most a run takes ({MAX_OPS})", self.ops));
        }
        if self.stream.as_ref().is_some_and(|s| s.as_os_str().is_empty()) {
            return bad("stream", "is empty: name a stream file (`memlab stream` writes one)".into());
        }
        Ok(())
    }

    /// Ops thread `thread` writes in count mode.
    pub fn ops_for(&self, thread: usize) -> u64 {
        let threads = self.threads as u64;
        self.ops / threads + u64::from((thread as u64) < self.ops % threads)
    }

    /// The largest batch, which spaces the timestamps of successive ops.
    pub fn max_batch(&self) -> u64 {
        self.rows_per_batch.bounds().1
    }
}

/// The longest `duration` a run takes: a week of soak.
pub const MAX_DURATION: Duration = Duration::from_secs(7 * 86_400);

/// The most `ops` a run takes (2^48: weeks at a million ops a second).
pub const MAX_OPS: u64 = 1 << 48;

/// A profile file with a path for relative `stream` paths (an empty one
/// is left empty, for `validate` to name).
pub fn resolve_stream_path(profile: &mut Profile, base: &Path) {
    if let Some(stream) = &profile.stream
        && stream.is_relative()
        && !stream.as_os_str().is_empty()
    {
        profile.stream = Some(base.join(stream));
    }
}
