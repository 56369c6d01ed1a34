//! Bench configs (TOML): a workload plus the variants to compare. Unknown
//! keys and bad values are errors that name the file, the line and the key.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

mod check;
mod log;
mod named;
mod param;
mod raw;
mod rounds;
mod shape;
mod sweep;
mod text;
mod workload;

pub use log::{DEFAULT_SEGMENT_SIZE, LogSettings};
pub use param::ParamValue;
pub use raw::parse_bytes;
pub(crate) use text::read_text;
pub use text::{MAX_TEXT_BYTES, one_line};
pub use workload::load_profile;

use raw::RawConfig;

use crate::seam::Kind;

pub use rounds::{Decide, MAX_TIME, VerifyRounds, Warmup, round_count, rse_target, time_ceiling};
pub use sweep::{Knob, MAX_POINTS, Sweep, SweepPoint};

use crate::pool::PoolMode;
use crate::workload::Profile;
use crate::write_path::Coalescing;

/// The config `memlab bench` runs with no argument.
pub const DEFAULT_CONFIG: &str = include_str!("../../../benches/default.toml");

/// A config that cannot be used; the message names file, line and key.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{file}: {source}")]
    /// The file could not be read.
    Read {
        /// The file.
        file: String,
        /// The underlying error.
        source: std::io::Error,
    },
    #[error("{file}: {message}")]
    /// The config is not one memlab runs.
    Invalid {
        /// The file.
        file: String,
        /// What went wrong.
        message: String,
    },
}

/// A whole bench config, resolved: named configurations expanded into
/// the variants, the workload's profile file loaded.
#[derive(Debug, Clone)]
pub struct BenchConfig {
    /// Name, description, repeats.
    pub bench: BenchInfo,
    /// The stream every variant receives.
    pub workload: Profile,
    /// The variants, run one after another on the same stream.
    pub variants: Vec<Variant>,
    /// `[sweep]`: the points to run this config at, if any.
    pub sweep: Option<Sweep>,
    /// Which point of a sweep this config is (set by `Sweep::point`).
    pub point: Option<SweepPoint>,
}

/// What the bench is about, and how often to run it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BenchInfo {
    /// A short name, used for the run directory.
    pub name: String,
    /// The file the config was read from (none for text parsed as is,
    /// such as the built-in default).
    #[serde(skip)]
    pub file: Option<String>,
    /// The CPUs `--cpus` pinned the run to (a flag, never a config key).
    #[serde(skip)]
    pub cpus: Option<String>,
    /// What the comparison is meant to show.
    pub description: String,
    /// Runs of every variant, interleaved: A B A B ... (1 to 100).
    #[serde(deserialize_with = "raw::repeats")]
    pub repeats: usize,
    /// Seconds between interval lines.
    pub interval: f64,
    /// An epoch deadline per plugin call, in milliseconds (off if unset):
    /// a call that runs longer traps, classified as a deadline.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call_deadline_ms: Option<f64>,
    /// What each run leaves out of its steady-state rate.
    pub warmup: Warmup,
    /// A ratio within this of 1 is "the same" (0 to 0.5; 0.02 is 2%).
    pub threshold: f64,
    /// Rounds until every verdict is decided; without it, `repeats`
    /// rounds run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decide: Option<Decide>,
    /// Which rounds are verified.
    pub verify_rounds: VerifyRounds,
    /// After the measured rounds, one profiled round of each variant for
    /// its flame graphs (`--profile`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub profile: bool,
}

impl Default for BenchInfo {
    fn default() -> Self {
        BenchInfo {
            name: String::new(),
            description: String::new(),
            file: None,
            cpus: None,
            repeats: 1,
            interval: 0.25,
            call_deadline_ms: None,
            warmup: Warmup::default(),
            threshold: 0.02,
            decide: None,
            verify_rounds: VerifyRounds::All,
            profile: false,
        }
    }
}

/// One partition in this many is sampled for the checks made as a run
/// goes (reads and scans held to the host's own record of the live state).
pub const DEFAULT_SAMPLE: u64 = 64;

/// Where strategies run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Runtime {
    /// As sandboxed wasm components.
    #[default]
    Wasm,
    /// As the native twins linked into the host.
    Native,
}

/// A variant's strategy of one kind, as configured: a plugin and its
/// parameters.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Chosen {
    /// The plugin: a bundled name, a `.wasm` path or a crate folder.
    pub plugin: String,
    /// Its parameters.
    pub params: BTreeMap<String, ParamValue>,
}

/// One configuration under test, resolved.
#[derive(Debug, Clone, Default)]
pub struct Variant {
    /// Shown in every table.
    pub name: String,
    /// Each kind's strategy, by kind (written `KIND = "..."` and
    /// `KIND_params = {...}`); a kind the variant goes without, the
    /// commit log, is absent.
    pub strategies: BTreeMap<Kind, Chosen>,
    /// How the host writes and syncs the log.
    pub log: LogSettings,
    /// Shards, each owning an even token range (1 to 1024).
    pub shards: usize,
    /// The global memtable budget in bytes.
    pub memtable_space: u64,
    /// Share of the budget at which the live generation is switched;
    /// default `1 / (flush_writers + 1)`, as in Cassandra.
    pub cleanup_threshold: Option<f64>,
    /// Flush writer threads (1 to 64).
    pub flush_writers: usize,
    /// How the pool counts.
    pub pool: PoolMode,
    /// How client batches share boundary calls.
    pub coalescing: Coalescing,
    /// Wasm components or native twins.
    pub runtime: Runtime,
    /// Whether a shard's calls take its lock: `None` takes it unless both
    /// strategies take concurrent writers and run natively.
    pub shard_lock: Option<bool>,
    /// Read the segments back and compare with the stream's final state
    /// (off only for strategies that keep nothing, like `null`).
    pub verify: bool,
    /// One partition in this many has its reads and scans held to the
    /// host's sample of the live memtables as the run goes; 0 turns it off.
    pub verify_sample: u64,
    /// The named configurations used, e.g. `memtable trie32 (inherits trie)`.
    pub configurations: Vec<String>,
}

/// A variant's strategy of one kind, as configured.
#[derive(Debug, Clone, Copy)]
pub struct Strategy<'a> {
    /// The plugin: a bundled name, a `.wasm` path or a crate folder
    /// (empty for a kind the variant goes without).
    pub plugin: &'a str,
    /// Its parameters.
    pub params: &'a BTreeMap<String, ParamValue>,
}

static NO_PARAMS: BTreeMap<String, ParamValue> = BTreeMap::new();

impl Variant {
    /// Its strategy of `kind` (an empty plugin where it has none).
    pub fn strategy(&self, kind: Kind) -> Strategy<'_> {
        self.strategies.get(&kind).map_or(Strategy { plugin: "", params: &NO_PARAMS }, |c| Strategy { plugin: &c.plugin, params: &c.params })
    }

    /// Whether writers call its shards without the lock, as
    /// `PathSettings::concurrent` takes it: as `shard_lock` says, else
    /// wherever the strategies can, but not beside coalescing (which
    /// needs the lock) or a commit log (which recovers a trap only
    /// under it).
    pub fn unlocked(&self) -> Option<bool> {
        match self.shard_lock {
            Some(lock) => Some(!lock),
            None if self.coalescing == Coalescing::None && !self.strategies.contains_key(&Kind::CommitLog) => None,
            None => Some(false),
        }
    }

    /// Its plugin of `kind` (empty where it has none).
    pub fn plugin(&self, kind: Kind) -> &str {
        self.strategy(kind).plugin
    }

    /// Every kind's strategy the variant runs, in pipeline order (no
    /// commit log's when it keeps none).
    pub fn strategies(&self) -> impl Iterator<Item = (Kind, Strategy<'_>)> {
        self.strategies.iter().map(|(&kind, c)| (kind, Strategy { plugin: &c.plugin, params: &c.params }))
    }

    /// The parameters of its strategy of `kind`, to change (none where it
    /// has no such strategy).
    pub fn params_mut(&mut self, kind: Kind) -> Option<&mut BTreeMap<String, ParamValue>> {
        self.strategies.get_mut(&kind).map(|c| &mut c.params)
    }

    /// The cleanup threshold in force.
    pub fn threshold(&self) -> f64 {
        self.cleanup_threshold.unwrap_or(1.0 / (self.flush_writers as f64 + 1.0))
    }
}

/// Parameters as plugins receive them.
pub fn params(map: &BTreeMap<String, ParamValue>) -> Vec<(String, String)> {
    map.iter().map(|(k, v)| (k.clone(), v.to_string())).collect()
}

impl BenchConfig {
    /// Reads and checks a config file; a profile file it names is read
    /// relative to it.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let file = path.display().to_string();
        let text = read_text(path)?;
        let mut config = Self::parse_in(&file, &text, path.parent().unwrap_or(Path::new(".")))?;
        config.bench.file = Some(file);
        Ok(config)
    }

    /// Parses and checks config text; `file` names it in errors, and
    /// relative paths are taken from the current directory.
    pub fn parse(file: &str, text: &str) -> Result<Self, ConfigError> {
        Self::parse_in(file, text, Path::new("."))
    }

    fn parse_in(file: &str, text: &str, base: &Path) -> Result<Self, ConfigError> {
        let raw: RawConfig = toml::from_str(text).map_err(|e| ConfigError::Invalid { file: file.to_string(), message: one_line(text, &e) })?;
        check::resolved(raw, &check::Source { file, text, base })
    }
}
