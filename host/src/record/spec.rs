//! What ran, as the record keeps it: the bench's header, the workload and
//! each variant's settings, in the record's own types. Renaming a field
//! of the runtime's `config::Variant` does not change `run.json`: the
//! `From` conversions below stop compiling instead.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::is_zero;
use crate::config::{BenchConfig, ParamValue, Variant};
use crate::seam::Kind;

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

/// A variant's strategy of one kind: the plugin as configured, and its
/// parameters.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StrategySpec {
    /// The plugin: a bundled name, a path or a crate folder.
    pub plugin: String,
    /// Its parameters.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub params: BTreeMap<String, Param>,
}

/// One variant's settings.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct VariantSpec {
    /// Shown in every table.
    pub name: String,
    /// Each kind's strategy, by kind (no commit log's where the variant
    /// kept none).
    pub strategies: BTreeMap<Kind, StrategySpec>,
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
    /// How the host wrote and synced the commit log, when the variant
    /// kept one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log: Option<super::log::LogSpec>,
}

fn yes() -> bool {
    true
}

impl VariantSpec {
    /// The plugin it ran of `kind`, as configured (empty for no log).
    pub fn plugin(&self, kind: Kind) -> &str {
        self.strategies.get(&kind).map_or("", |s| s.plugin.as_str())
    }

    /// Its parameters of `kind`'s strategy.
    pub fn params(&self, kind: Kind) -> &BTreeMap<String, Param> {
        static NONE: BTreeMap<String, Param> = BTreeMap::new();
        self.strategies.get(&kind).map_or(&NONE, |s| &s.params)
    }

    /// The parameters of `kind`'s strategy as the plugin receives them.
    pub fn args(&self, kind: Kind) -> Vec<(String, String)> {
        self.params(kind).iter().map(|(k, v)| (k.clone(), v.to_string())).collect()
    }

    /// The cleanup threshold in force.
    pub fn threshold(&self) -> f64 {
        self.cleanup_threshold.unwrap_or(1.0 / (self.flush_writers as f64 + 1.0))
    }
}

/// Reads a variant's spec of any schema: before 4, each kind had its own
/// keys (`memtable`, `memtable_params`, ...) and the log's format and
/// parameters sat in `commitlog` beside its settings. A spec holds no
/// 128-bit number, so it may pass through a JSON value.
pub(super) fn upgraded<'de, D: serde::Deserializer<'de>>(d: D) -> Result<VariantSpec, D::Error> {
    let mut value = serde_json::Value::deserialize(d)?;
    upgrade(&mut value);
    serde_json::from_value(value).map_err(serde::de::Error::custom)
}

/// The same, for a config's list of variants.
pub(super) fn upgraded_all<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<VariantSpec>, D::Error> {
    let mut values = Vec::<serde_json::Value>::deserialize(d)?;
    values.iter_mut().for_each(upgrade);
    values.into_iter().map(|v| serde_json::from_value(v).map_err(serde::de::Error::custom)).collect()
}

/// Moves schema 1-3's per-kind keys into `strategies`, and the log's
/// format out of its settings; a schema-4 spec is left as it is.
fn upgrade(value: &mut serde_json::Value) {
    use serde_json::{Map, Value};
    let Some(spec) = value.as_object_mut() else { return };
    if spec.contains_key("strategies") {
        return;
    }
    let mut strategies = Map::new();
    // The three kinds schema 3 had a field for, by their names then.
    for name in ["memtable", "allocator", "serializer"] {
        let (name, params) = (name.to_string(), format!("{name}_params"));
        let mut strategy = Map::new();
        strategy.insert("plugin".into(), spec.remove(&name).unwrap_or(Value::String(String::new())));
        strategy.insert("params".into(), spec.remove(&params).unwrap_or(Value::Object(Map::new())));
        strategies.insert(name, Value::Object(strategy));
    }
    if let Some(Value::Object(mut log)) = spec.remove("commitlog") {
        let mut strategy = Map::new();
        strategy.insert("plugin".into(), log.remove("format").unwrap_or(Value::String(String::new())));
        strategy.insert("params".into(), log.remove("params").unwrap_or(Value::Object(Map::new())));
        strategies.insert("commitlog".into(), Value::Object(strategy));
        spec.insert("log".into(), Value::Object(log));
    }
    spec.insert("strategies".into(), Value::Object(strategies));
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
    #[serde(rename = "variant", deserialize_with = "upgraded_all")]
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
            strategies: v.strategies().map(|(kind, s)| (kind, StrategySpec { plugin: s.plugin.to_string(), params: params(s.params) })).collect(),
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
            log: super::log::LogSpec::of(&v.log),
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Schema 3 kept the log's format and parameters beside its settings.
    #[test]
    fn a_schema_3_log_upgrades_into_the_strategies_and_the_log() {
        let old = r#"{"name": "a", "memtable": "btree", "memtable_params": {"order": 8}, "allocator": "per-row", "allocator_params": {},
            "serializer": "lean", "serializer_params": {}, "shards": 2, "memtable_space": 1048576, "cleanup_threshold": null,
            "flush_writers": 1, "pool": "fetch-add", "coalescing": "none", "runtime": "wasm",
            "commitlog": {"format": "lz4", "params": {"level": 3}, "sync": "group", "sync_ms": 1.0, "access": "buffered", "segment_size": 1048576}}"#;
        let spec = upgraded(&mut serde_json::Deserializer::from_str(old)).expect("upgrades");
        assert_eq!((spec.plugin(Kind::Memtable), spec.params(Kind::Memtable).get("order")), ("btree", Some(&Param::Integer(8))));
        assert_eq!((spec.plugin(Kind::CommitLog), spec.params(Kind::CommitLog).get("level")), ("lz4", Some(&Param::Integer(3))));
        let log = spec.log.as_ref().expect("the log's settings");
        assert_eq!((log.sync.as_str(), log.segment_size), ("group", 1 << 20));
        // Written as schema 4, it reads back the same.
        let again = upgraded(&mut serde_json::Deserializer::from_str(&serde_json::to_string(&spec).expect("json"))).expect("reads");
        assert_eq!(again, spec);
    }
}
