//! The config file as written, before named configurations resolve:
//! serde's shapes, with range checks on each key as it is read.

use std::collections::BTreeMap;
use std::marker::PhantomData;

use serde::de::value::MapAccessDeserializer;
use serde::de::{DeserializeSeed, IntoDeserializer, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};

use super::log::RawSync;
use super::shape::{AccessSetting, CoalescingSetting, PoolSetting};
use super::{BenchInfo, DEFAULT_SAMPLE, ParamValue, Runtime, sweep};
use crate::seam::Kind;

/// The file as written: variants may name configurations. Each kind's
/// named configurations (`[memtable.NAME]`) are read by the table of
/// kinds (`by_kind`), beside the tables serde reads here.
#[derive(Debug)]
pub(super) struct RawConfig {
    pub(super) tables: RawTables,
    /// `[KIND.NAME]`, by kind.
    pub(super) named: BTreeMap<Kind, BTreeMap<String, Named>>,
}

/// The config's tables that are not a kind's.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawTables {
    #[serde(default)]
    pub(super) bench: BenchInfo,
    pub(super) workload: RawWorkload,
    #[serde(rename = "variant", default)]
    pub(super) variants: Vec<RawVariant>,
    #[serde(default)]
    pub(super) sweep: Option<sweep::RawSweep>,
}

impl<'de> Deserialize<'de> for RawConfig {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut named = NamedTables(BTreeMap::new());
        let tables = by_kind(d, &mut named)?;
        Ok(RawConfig { tables, named: named.0 })
    }
}

/// Claims `[KIND.NAME]` tables.
struct NamedTables(BTreeMap<Kind, BTreeMap<String, Named>>);

impl<'de> Claim<'de> for NamedTables {
    fn owns(key: &str) -> bool {
        key.parse::<Kind>().is_ok()
    }

    fn kinds_keys() -> String {
        Kind::ALL.iter().map(|k| format!("`[{k}.NAME]`")).collect::<Vec<_>>().join(", ")
    }

    fn take<A: MapAccess<'de>>(&mut self, key: &str, map: &mut A) -> Result<(), A::Error> {
        if let Ok(kind) = key.parse::<Kind>() {
            self.0.insert(kind, map.next_value()?);
        }
        Ok(())
    }
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

/// One `[[variant]]` as written: each kind's strategy (`KIND = "..."`,
/// `KIND_params = {...}`), read by the table of kinds, and the host's
/// settings.
#[derive(Debug)]
pub(super) struct RawVariant {
    pub(super) strategies: BTreeMap<Kind, RawChoice>,
    pub(super) settings: RawSettings,
}

/// A kind's keys in a variant.
#[derive(Debug, Default)]
pub(super) struct RawChoice {
    /// `KIND = "..."`: a plugin or a named configuration.
    pub(super) plugin: Option<toml::Spanned<String>>,
    /// `KIND_params = {...}`, over the configuration's.
    pub(super) params: BTreeMap<String, ParamValue>,
}

impl<'de> Deserialize<'de> for RawVariant {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut choices = Choices(BTreeMap::new());
        let settings = by_kind(d, &mut choices)?;
        Ok(RawVariant { strategies: choices.0, settings })
    }
}

/// Claims a variant's `KIND` and `KIND_params` keys.
struct Choices(BTreeMap<Kind, RawChoice>);

impl Choices {
    /// The kind a key names, and whether it is its `_params`.
    fn parse(key: &str) -> Option<(Kind, bool)> {
        let (name, params) = key.strip_suffix("_params").map_or((key, false), |name| (name, true));
        Some((name.parse().ok()?, params))
    }
}

impl<'de> Claim<'de> for Choices {
    fn owns(key: &str) -> bool {
        Choices::parse(key).is_some()
    }

    fn kinds_keys() -> String {
        Kind::ALL.iter().map(|k| format!("`{k}`, `{k}_params`")).collect::<Vec<_>>().join(", ")
    }

    fn take<A: MapAccess<'de>>(&mut self, key: &str, map: &mut A) -> Result<(), A::Error> {
        let Some((kind, params)) = Choices::parse(key) else { return Ok(()) };
        let choice = self.0.entry(kind).or_default();
        if params {
            choice.params = map.next_value()?;
        } else {
            choice.plugin = Some(map.next_value()?);
        }
        Ok(())
    }
}

/// A variant's settings that are the host's, not a kind's.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSettings {
    pub(super) name: String,
    /// `log.rs` reads these; the format is the commit-log kind's key.
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
    #[serde(default)]
    pub(super) shard_lock: Option<bool>,
    #[serde(default = "yes")]
    pub(super) verify: bool,
    #[serde(default = "default_sample")]
    pub(super) verify_sample: u64,
}

/// Takes the keys a kind owns out of a table, by the table of kinds: they
/// are never listed by hand.
trait Claim<'de> {
    /// Whether `key` is a kind's.
    fn owns(key: &str) -> bool;
    /// The keys kinds own, for an error.
    fn kinds_keys() -> String;
    /// Reads the value of `key`, one it owns, from `map`.
    fn take<A: MapAccess<'de>>(&mut self, key: &str, map: &mut A) -> Result<(), A::Error>;
}

/// Reads a table into `T` (serde's shape for every key no kind claims),
/// handing each claimed key to `claims`. Values are read in place, not
/// buffered, so spans and errors keep their lines.
fn by_kind<'de, D: Deserializer<'de>, T: Deserialize<'de>, C: Claim<'de>>(d: D, claims: &mut C) -> Result<T, D::Error> {
    struct Visit<'c, T, C>(&'c mut C, PhantomData<T>);
    impl<'de, T: Deserialize<'de>, C: Claim<'de>> Visitor<'de> for Visit<'_, T, C> {
        type Value = T;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a table")
        }
        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
            T::deserialize(MapAccessDeserializer::new(Claimed { map, claims: self.0 }))
        }
    }
    d.deserialize_map(Visit(claims, PhantomData))
}

/// A table's map with the claimed keys taken out.
struct Claimed<'c, A, C> {
    map: A,
    claims: &'c mut C,
}

/// A key as read: one a kind owns, or one of serde's shape.
enum Key<F> {
    Owned(String),
    Field(F),
}

/// Reads a key, handing those no kind owns to serde's own seed.
struct KeySeed<'s, K, C>(&'s mut Option<K>, PhantomData<C>);

impl<'de, K: DeserializeSeed<'de>, C: Claim<'de>> DeserializeSeed<'de> for KeySeed<'_, K, C> {
    type Value = Key<K::Value>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        let key = String::deserialize(d)?;
        if C::owns(&key) {
            return Ok(Key::Owned(key));
        }
        let seed = self.0.take().ok_or_else(|| serde::de::Error::custom("a key read twice"))?;
        // serde lists the keys of its shape; the kinds' keys are named too.
        seed.deserialize(IntoDeserializer::<D::Error>::into_deserializer(key)).map(Key::Field).map_err(|e: D::Error| match e.to_string() {
            m if m.starts_with("unknown field") => serde::de::Error::custom(format!("{}, or {}", m.trim_end(), C::kinds_keys())),
            _ => e,
        })
    }
}

impl<'de, A: MapAccess<'de>, C: Claim<'de>> MapAccess<'de> for Claimed<'_, A, C> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, A::Error> {
        let mut seed = Some(seed);
        loop {
            // The key is read through the inner map, so an unknown one is
            // refused at its own line, not the table's.
            let Some(key) = self.map.next_key_seed(KeySeed::<K, C>(&mut seed, PhantomData))? else { return Ok(None) };
            match key {
                Key::Owned(name) => self.claims.take(&name, &mut self.map)?,
                Key::Field(field) => return Ok(Some(field)),
            }
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        self.map.next_value_seed(seed)
    }
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
