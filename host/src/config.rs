//! Bench configs (TOML): a workload plus the variants to compare. Unknown
//! keys and bad values are errors that name the file, the line and the key.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use serde::{Deserialize, Deserializer, Serialize};

use crate::workload::Profile;
use crate::pool::PoolMode;

/// The config `memlab bench` runs with no argument.
pub const DEFAULT_CONFIG: &str = include_str!("../../benches/default.toml");

/// A config that cannot be used; the message names file, line and key.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{file}: {source}")]
    Read { file: String, source: std::io::Error },
    #[error("{file}: {message}")]
    Invalid { file: String, message: String },
}

/// A whole bench config.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BenchConfig {
    /// Name and description.
    #[serde(default)]
    pub bench: BenchInfo,
    /// The write stream every variant receives.
    pub workload: Profile,
    /// The variants, run one after another on the same stream.
    #[serde(rename = "variant")]
    pub variants: Vec<Variant>,
}

/// What the bench is about.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BenchInfo {
    /// A short name, used for the run directory.
    #[serde(default)]
    pub name: String,
    /// What the comparison is meant to show.
    #[serde(default)]
    pub description: String,
}

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

/// A parameter value as TOML writes it; plugins receive it as a string.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ParamValue {
    /// A string.
    Text(String),
    /// An integer.
    Integer(i64),
    /// A float.
    Float(f64),
    /// A boolean.
    Bool(bool),
}

impl fmt::Display for ParamValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamValue::Text(s) => f.write_str(s),
            ParamValue::Integer(i) => write!(f, "{i}"),
            ParamValue::Float(x) => write!(f, "{x}"),
            ParamValue::Bool(b) => write!(f, "{b}"),
        }
    }
}

/// One configuration under test.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Variant {
    /// Shown in every table.
    pub name: String,
    /// Memtable plugin: a bundled name or a `.wasm` path.
    pub memtable: String,
    /// Its parameters.
    #[serde(default)]
    pub memtable_params: BTreeMap<String, ParamValue>,
    /// Allocator plugin.
    pub allocator: String,
    /// Its parameters.
    #[serde(default)]
    pub allocator_params: BTreeMap<String, ParamValue>,
    /// Flush serializer plugin.
    pub serializer: String,
    /// Its parameters.
    #[serde(default)]
    pub serializer_params: BTreeMap<String, ParamValue>,
    /// Shards, each owning an even token range (1 to 1024).
    #[serde(default = "one", deserialize_with = "shards")]
    pub shards: usize,
    /// The global memtable budget, e.g. `"64MiB"`.
    #[serde(default = "default_space", deserialize_with = "byte_size")]
    pub memtable_space: u64,
    /// Share of the budget at which the live generation is switched;
    /// default `1 / (flush_writers + 1)`, as in Cassandra.
    #[serde(default, deserialize_with = "threshold")]
    pub cleanup_threshold: Option<f64>,
    /// Flush writer threads (1 to 64).
    #[serde(default = "one", deserialize_with = "flush_writers")]
    pub flush_writers: usize,
    /// How the pool counts.
    #[serde(default)]
    pub pool: PoolMode,
    /// Wasm components or native twins.
    #[serde(default)]
    pub runtime: Runtime,
}

impl Variant {
    /// The cleanup threshold in force.
    pub fn threshold(&self) -> f64 {
        self.cleanup_threshold.unwrap_or(1.0 / (self.flush_writers as f64 + 1.0))
    }
}

/// Parameters as plugins receive them.
pub fn params(map: &BTreeMap<String, ParamValue>) -> Vec<(String, String)> {
    map.iter().map(|(k, v)| (k.clone(), v.to_string())).collect()
}

fn one() -> usize {
    1
}

fn default_space() -> u64 {
    64 << 20
}

fn ranged<'de, D: Deserializer<'de>>(d: D, min: usize, max: usize) -> Result<usize, D::Error> {
    let n = usize::deserialize(d)?;
    if !(min..=max).contains(&n) {
        return Err(serde::de::Error::custom(format!("{n} is outside {min}..={max}")));
    }
    Ok(n)
}

fn shards<'de, D: Deserializer<'de>>(d: D) -> Result<usize, D::Error> {
    ranged(d, 1, 1024)
}

fn flush_writers<'de, D: Deserializer<'de>>(d: D) -> Result<usize, D::Error> {
    ranged(d, 1, 64)
}

fn threshold<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    let x = f64::deserialize(d)?;
    if !(x > 0.0 && x < 1.0) {
        return Err(serde::de::Error::custom(format!("{x} must lie strictly between 0 and 1")));
    }
    Ok(Some(x))
}

/// Parses `"64MiB"`, `"1GiB"`, `"512KiB"`, `"1000B"` or a plain integer.
pub fn parse_bytes(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let split = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (digits, unit) = text.split_at(split);
    let n: u64 = digits.parse().map_err(|_| format!("`{text}` is not a size like \"64MiB\""))?;
    let scale = match unit.trim() {
        "" | "B" => 1,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        other => return Err(format!("unknown unit `{other}` in `{text}` (use B, KiB, MiB or GiB)")),
    };
    n.checked_mul(scale).ok_or_else(|| format!("`{text}` is too large"))
}

fn byte_size<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Raw {
        Number(u64),
        Text(String),
    }
    let bytes = match Raw::deserialize(d)? {
        Raw::Number(n) => n,
        Raw::Text(t) => parse_bytes(&t).map_err(serde::de::Error::custom)?,
    };
    if bytes < 1 << 20 {
        return Err(serde::de::Error::custom(format!("{bytes} bytes is below the 1MiB minimum")));
    }
    Ok(bytes)
}

impl BenchConfig {
    /// Reads and checks a config file.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read { file: file.clone(), source })?;
        Self::parse(&file, &text)
    }

    /// Parses and checks config text; `file` names it in errors.
    pub fn parse(file: &str, text: &str) -> Result<Self, ConfigError> {
        let invalid = |message: String| ConfigError::Invalid { file: file.to_string(), message };
        let config: BenchConfig = toml::from_str(text).map_err(|e| invalid(one_line(text, &e)))?;
        config.workload.validate().map_err(|e| invalid(e.to_string()))?;
        if config.variants.is_empty() {
            return Err(invalid("no `[[variant]]` to run".into()));
        }
        for (i, v) in config.variants.iter().enumerate() {
            if config.variants[..i].iter().any(|w| w.name == v.name) {
                return Err(invalid(format!("two variants are named `{}`", v.name)));
            }
        }
        Ok(config)
    }
}

/// toml's errors span several lines with a caret; keep the facts on one:
/// the line number, the line itself, and the message.
pub fn one_line(text: &str, e: &toml::de::Error) -> String {
    let message = e.message().trim_end();
    let Some(span) = e.span() else { return message.to_string() };
    let start = span.start.min(text.len());
    let line_no = text.get(..start).unwrap_or("").matches('\n').count() + 1;
    let line = text.lines().nth(line_no - 1).unwrap_or("").trim();
    format!("line {line_no} (`{line}`): {message}")
}
