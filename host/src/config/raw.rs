//! The config file as written, before named configurations resolve:
//! serde's shapes, with range checks on each key as it is read.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer};

use super::log::RawSync;
use super::shape::{AccessSetting, CoalescingSetting, PoolSetting};
use super::{BenchInfo, DEFAULT_SAMPLE, ParamValue, Runtime, sweep};

/// The file as written: variants may name configurations.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawConfig {
    #[serde(default)]
    pub(super) bench: BenchInfo,
    pub(super) workload: RawWorkload,
    #[serde(default)]
    pub(super) memtable: BTreeMap<String, Named>,
    #[serde(default)]
    pub(super) allocator: BTreeMap<String, Named>,
    #[serde(default)]
    pub(super) serializer: BTreeMap<String, Named>,
    #[serde(default)]
    pub(super) commitlog: BTreeMap<String, Named>,
    #[serde(rename = "variant", default)]
    pub(super) variants: Vec<RawVariant>,
    #[serde(default)]
    pub(super) sweep: Option<sweep::RawSweep>,
}

/// `[workload]`: a profile inline, or `profile = "file"` plus overrides.
#[derive(Debug, Deserialize)]
pub(super) struct RawWorkload {
    #[serde(default)]
    pub(super) profile: Option<String>,
    #[serde(flatten)]
    pub(super) rest: toml::Table,
}

/// A named strategy configuration, as Cassandra's
/// `memtable.configurations`: a plugin and parameters, or `inherits` from
/// another configuration of the same kind and override its parameters.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Named {
    #[serde(default)]
    pub(super) plugin: Option<String>,
    #[serde(default)]
    pub(super) inherits: Option<toml::Spanned<String>>,
    #[serde(default)]
    pub(super) params: BTreeMap<String, ParamValue>,
    /// Memtables only: the shard count variants get unless they set one.
    #[serde(default, deserialize_with = "opt_shards")]
    pub(super) shards: Option<usize>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawVariant {
    pub(super) name: String,
    pub(super) memtable: toml::Spanned<String>,
    #[serde(default)]
    pub(super) memtable_params: BTreeMap<String, ParamValue>,
    pub(super) allocator: toml::Spanned<String>,
    #[serde(default)]
    pub(super) allocator_params: BTreeMap<String, ParamValue>,
    pub(super) serializer: toml::Spanned<String>,
    #[serde(default)]
    pub(super) serializer_params: BTreeMap<String, ParamValue>,
    /// The commit-log format (none: no log); `log.rs` reads the rest.
    #[serde(default)]
    pub(super) commitlog: Option<toml::Spanned<String>>,
    #[serde(default)]
    pub(super) commitlog_params: BTreeMap<String, ParamValue>,
    #[serde(default)]
    pub(super) commitlog_sync: Option<RawSync>,
    #[serde(default)]
    pub(super) commitlog_sync_period_ms: Option<f64>,
    #[serde(default)]
    pub(super) commitlog_sync_group_window_ms: Option<f64>,
    #[serde(default)]
    pub(super) commitlog_disk_access_mode: AccessSetting,
    #[serde(default, deserialize_with = "super::log::opt_size")]
    pub(super) commitlog_segment_size: Option<u64>,
    #[serde(default, deserialize_with = "opt_shards")]
    pub(super) shards: Option<usize>,
    #[serde(default = "default_space", deserialize_with = "byte_size")]
    pub(super) memtable_space: u64,
    #[serde(default, deserialize_with = "threshold")]
    pub(super) cleanup_threshold: Option<f64>,
    #[serde(default = "one", deserialize_with = "flush_writers")]
    pub(super) flush_writers: usize,
    #[serde(default)]
    pub(super) pool: PoolSetting,
    #[serde(default)]
    pub(super) coalescing: CoalescingSetting,
    #[serde(default)]
    pub(super) runtime: Runtime,
    #[serde(default = "yes")]
    pub(super) verify: bool,
    #[serde(default = "default_sample")]
    pub(super) verify_sample: u64,
}

pub(super) fn default_sample() -> u64 {
    DEFAULT_SAMPLE
}

pub(super) fn yes() -> bool {
    true
}

pub(super) fn one() -> usize {
    1
}

pub(super) fn default_space() -> u64 {
    64 << 20
}

pub(super) fn ranged<'de, D: Deserializer<'de>>(d: D, min: usize, max: usize) -> Result<usize, D::Error> {
    let n = usize::deserialize(d)?;
    if !(min..=max).contains(&n) {
        return Err(serde::de::Error::custom(format!("{n} is outside {min}..={max}")));
    }
    Ok(n)
}

pub(super) fn opt_shards<'de, D: Deserializer<'de>>(d: D) -> Result<Option<usize>, D::Error> {
    ranged(d, 1, 1024).map(Some)
}

pub(super) fn repeats<'de, D: Deserializer<'de>>(d: D) -> Result<usize, D::Error> {
    ranged(d, 1, 100)
}

pub(super) fn flush_writers<'de, D: Deserializer<'de>>(d: D) -> Result<usize, D::Error> {
    ranged(d, 1, 64)
}

pub(super) fn threshold<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
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

pub(super) fn byte_size<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
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
