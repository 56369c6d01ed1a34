//! What ran, as the record keeps it: the bench's header, the workload and
//! each variant's settings, in the record's own types. Renaming a field
//! of the runtime's `config::Variant` does not change `run.json`: the
//! `From` conversions below stop compiling instead.

use std::collections::BTreeMap;

use crate::config::{BenchConfig, ParamValue, Variant};

/// Where a variant's strategies ran.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Runtime {
    /// As sandboxed wasm components.
    #[default]
    Wasm,
    /// As the native twins linked into the host.
    Native,
}

/// A plugin parameter as the config wrote it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(untagged)]
pub enum Param {
    /// A string.
    Text(String),
    /// An integer.
    Integer(i64),
    /// A float.
    Float(f64),
    /// A boolean.
    Bool(bool),
}

impl std::fmt::Display for Param {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Param::Text(s) => f.write_str(s),
            Param::Integer(i) => write!(f, "{i}"),
            Param::Float(x) => write!(f, "{x}"),
            Param::Bool(b) => write!(f, "{b}"),
        }
    }
}

impl From<Runtime> for crate::config::Runtime {
    fn from(r: Runtime) -> Self {
        match r {
            Runtime::Wasm => crate::config::Runtime::Wasm,
            Runtime::Native => crate::config::Runtime::Native,
        }
    }
}

/// One variant's settings.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct VariantSpec {
    /// Shown in every table.
    pub name: String,
    /// Memtable plugin, as configured.
    pub memtable: String,
    /// Its parameters.
    #[serde(default)]
    pub memtable_params: BTreeMap<String, Param>,
    /// Allocator plugin.
    pub allocator: String,
    /// Its parameters.
    #[serde(default)]
    pub allocator_params: BTreeMap<String, Param>,
    /// Flush serializer plugin.
    pub serializer: String,
    /// Its parameters.
    #[serde(default)]
    pub serializer_params: BTreeMap<String, Param>,
    /// Shards.
    pub shards: usize,
    /// The global memtable budget in bytes.
    pub memtable_space: u64,
    /// Share of the budget at which the live generation is switched (the
    /// default, `1 / (flush_writers + 1)`, when unset).
    pub cleanup_threshold: Option<f64>,
    /// Flush writer threads.
    pub flush_writers: usize,
    /// How the pool counts (`fetch-add`, `cas-loop`, `striped`).
    pub pool: String,
    /// How client batches share boundary calls (`none`, `group`, `adaptive`).
    pub coalescing: String,
    /// Wasm components or native twins.
    pub runtime: Runtime,
    /// Whether the segments were read back and compared.
    #[serde(default = "yes")]
    pub verify: bool,
    /// One partition in this many was checked as the run went (0: none,
    /// and every record before schema 3's sampling).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub verify_sample: u64,
    /// The named configurations used.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub configurations: Vec<String>,
    /// The commit log, when the variant kept one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commitlog: Option<super::log::LogSpec>,
}

fn yes() -> bool {
    true
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl VariantSpec {
    /// The plugin it ran of `kind`, as configured (empty for no log).
    pub fn plugin(&self, kind: crate::seam::Kind) -> &str {
        use crate::seam::Kind;
        match kind {
            Kind::Memtable => &self.memtable,
            Kind::Allocator => &self.allocator,
            Kind::Serializer => &self.serializer,
            Kind::CommitLog => self.commitlog.as_ref().map_or("", |l| l.format.as_str()),
        }
    }

    /// The cleanup threshold in force.
    pub fn threshold(&self) -> f64 {
        self.cleanup_threshold.unwrap_or(1.0 / (self.flush_writers as f64 + 1.0))
    }

    /// The serializer's parameters as the plugin receives them.
    pub fn serializer_args(&self) -> Vec<(String, String)> {
        self.serializer_params.iter().map(|(k, v)| (k.clone(), v.to_string())).collect()
    }
}

/// The bench's header.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct BenchSpec {
    /// A short name.
    #[serde(default)]
    pub name: String,
    /// What the comparison is meant to show.
    #[serde(default)]
    pub description: String,
    /// The config file it was read from, as given; none for the
    /// built-in default (the advice's command names it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// The CPUs the run was pinned to (`--cpus`), if it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<String>,
    /// Runs of every variant, interleaved.
    #[serde(default = "one")]
    pub repeats: usize,
    /// Seconds between interval lines.
    #[serde(default)]
    pub interval: f64,
    /// The epoch deadline per plugin call, in milliseconds, if on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_deadline_ms: Option<f64>,
    /// A ratio within this of 1 counts as the same (records before it
    /// read as 0.02).
    #[serde(default = "two_percent")]
    pub threshold: f64,
    /// What each run left out of its steady-state rate.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub warmup: String,
    /// Which rounds were verified (`all` or `first`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub verify_rounds: String,
    /// The rounds rule (`[bench.decide]`), as configured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decide: Option<serde_json::Value>,
    /// Whether a profiled round followed the measured ones.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub profile: bool,
}

fn two_percent() -> f64 {
    0.02
}

fn one() -> usize {
    1
}

/// The config as resolved when the bench ran.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ConfigSpec {
    /// The header.
    pub bench: BenchSpec,
    /// The workload profile in its own file format (the profile TOML's
    /// keys), kept for a reader; memlab does not read it back.
    pub workload: serde_json::Value,
    /// The variants.
    #[serde(rename = "variant")]
    pub variants: Vec<VariantSpec>,
    /// Which point of a sweep this run is, if it is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep: Option<SweepSpec>,
}

/// One point of a `[sweep]`: what varies, its value here, and the
/// sweep's identity, by which points recorded apart are merged.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SweepSpec {
    /// What the sweep varies (`threads`, `shards`, `memtable.NAME`, ...).
    pub over: String,
    /// This point's value.
    pub value: String,
    /// Its place among `values`.
    pub index: usize,
    /// Every value of the sweep, in the config's order.
    pub values: Vec<String>,
    /// sha256 of the config without the sweep's values.
    pub id: String,
    /// Variants whose plugin has no such parameter: they ran as
    /// configured at every point.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_applied: Vec<String>,
}

impl ConfigSpec {
    /// The workload profile, read back (a stream can be regenerated
    /// from it).
    pub fn profile(&self) -> Result<crate::workload::Profile, serde_json::Error> {
        serde_json::from_value(self.workload.clone())
    }
}

fn params(map: &BTreeMap<String, ParamValue>) -> BTreeMap<String, Param> {
    map.iter()
        .map(|(k, v)| {
            let v = match v {
                ParamValue::Text(s) => Param::Text(s.clone()),
                ParamValue::Integer(i) => Param::Integer(*i),
                ParamValue::Float(x) => Param::Float(*x),
                ParamValue::Bool(b) => Param::Bool(*b),
            };
            (k.clone(), v)
        })
        .collect()
}

impl From<&Variant> for VariantSpec {
    fn from(v: &Variant) -> Self {
        VariantSpec {
            name: v.name.clone(),
            memtable: v.memtable.clone(),
            memtable_params: params(&v.memtable_params),
            allocator: v.allocator.clone(),
            allocator_params: params(&v.allocator_params),
            serializer: v.serializer.clone(),
            serializer_params: params(&v.serializer_params),
            shards: v.shards,
            memtable_space: v.memtable_space,
            cleanup_threshold: v.cleanup_threshold,
            flush_writers: v.flush_writers,
            pool: v.pool.to_string(),
            coalescing: v.coalescing.to_string(),
            runtime: match v.runtime {
                crate::config::Runtime::Wasm => Runtime::Wasm,
                crate::config::Runtime::Native => Runtime::Native,
            },
            verify: v.verify,
            verify_sample: v.verify_sample,
            configurations: v.configurations.clone(),
            commitlog: super::log::LogSpec::of(&v.commitlog, params(&v.commitlog_params), &v.log),
        }
    }
}

/// A config value as its TOML spells it (a string).
fn config_text(value: &impl serde::Serialize) -> String {
    serde_json::to_value(value).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
}

impl From<&BenchConfig> for ConfigSpec {
    fn from(c: &BenchConfig) -> Self {
        let b = &c.bench;
        ConfigSpec {
            bench: BenchSpec {
                name: b.name.clone(),
                description: b.description.clone(),
                file: b.file.clone(),
                cpus: b.cpus.clone(),
                repeats: b.repeats,
                interval: b.interval,
                call_deadline_ms: b.call_deadline_ms,
                threshold: b.threshold,
                // The config's own spellings, as it reads them.
                warmup: config_text(&b.warmup),
                decide: b.decide.as_ref().and_then(|d| serde_json::to_value(d).ok()),
                verify_rounds: config_text(&b.verify_rounds),
                profile: b.profile,
            },
            workload: serde_json::to_value(&c.workload).unwrap_or(serde_json::Value::Null),
            variants: c.variants.iter().map(VariantSpec::from).collect(),
            sweep: c.point.as_ref().map(|p| SweepSpec {
                over: p.over.clone(),
                value: p.value.clone(),
                index: p.index,
                values: p.values.clone(),
                id: p.id.clone(),
                not_applied: p.not_applied.clone(),
            }),
        }
    }
}
