//! `[sweep]`: every variant over a list of values of one parameter, each
//! value a point that runs as a bench of its own, with its own record. A
//! point names its sweep by an identity (the config without the values),
//! so points run on different machines merge into one table.

use serde::Deserialize;
use sha2::{Digest, Sha256};

use super::{BenchConfig, ParamValue, parse_bytes};
use crate::seam::Kind;
use crate::workload::Dist;

/// The most points a sweep may have.
pub const MAX_POINTS: usize = 32;

/// `[sweep]` as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSweep {
    over: String,
    values: Vec<ParamValue>,
}

/// What a sweep varies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Knob {
    /// The workload's client threads.
    Threads,
    /// Rows in each client batch.
    RowsPerBatch,
    /// Every variant's shard count.
    Shards,
    /// Every variant's flush writers.
    FlushWriters,
    /// Every variant's memtable budget.
    MemtableSpace,
    /// A parameter every variant passes to its plugin of this kind.
    Param(Kind, String),
}

impl Knob {
    fn parse(over: &str) -> Result<Knob, String> {
        Ok(match over {
            "threads" => Knob::Threads,
            "rows_per_batch" => Knob::RowsPerBatch,
            "shards" => Knob::Shards,
            "flush_writers" => Knob::FlushWriters,
            "memtable_space" => Knob::MemtableSpace,
            _ => {
                let param = |kind, name: &str| {
                    (!name.is_empty()).then(|| Knob::Param(kind, name.to_string())).ok_or_else(|| format!("`sweep.over = {over:?}` names no parameter"))
                };
                match over.split_once('.').and_then(|(kind, name)| Some((kind.parse::<Kind>().ok()?, name))) {
                    Some((kind, name)) => param(kind, name)?,
                    None => {
                        let kinds: Vec<String> = crate::seam::KINDS.iter().map(|k| format!("{}.NAME", k.name)).collect();
                        return Err(format!(
                            "`sweep.over = {over:?}`: sweep one of threads, rows_per_batch, shards, flush_writers, memtable_space, or a plugin parameter as {}",
                            kinds.join(", ")
                        ));
                    }
                }
            }
        })
    }
}

/// A sweep: the knob, its values, and the identity its points share.
#[derive(Debug, Clone)]
pub struct Sweep {
    /// What `over` names, parsed.
    pub knob: Knob,
    /// `over` as written.
    pub over: String,
    /// The values, in the config's order.
    pub values: Vec<ParamValue>,
    /// sha256 of the config without the sweep's values: points with the
    /// same identity come from the same experiment.
    pub id: String,
    /// Variants a plugin parameter's sweep leaves as they are: their
    /// plugin has no such parameter (found by asking it, before any runs).
    pub not_applied: Vec<String>,
}

/// Which point of a sweep a config is.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepPoint {
    /// What the sweep varies, as written.
    pub over: String,
    /// This point's value, as text.
    pub value: String,
    /// Its place among the sweep's values.
    pub index: usize,
    /// Every value of the sweep, as text.
    pub values: Vec<String>,
    /// The sweep's identity.
    pub id: String,
    /// Variants the sweep's parameter was not applied to.
    pub not_applied: Vec<String>,
}

impl Sweep {
    /// Checks `[sweep]` against the config it sweeps: every value must
    /// make a config that could run.
    pub(super) fn parse(raw: RawSweep, base: &BenchConfig, text: &str) -> Result<Sweep, String> {
        let knob = Knob::parse(&raw.over)?;
        if raw.values.is_empty() || raw.values.len() > MAX_POINTS {
            return Err(format!("`sweep.values` needs 1 to {MAX_POINTS} values (has {})", raw.values.len()));
        }
        let shown: Vec<String> = raw.values.iter().map(ToString::to_string).collect();
        if let Some(twice) = shown.iter().enumerate().find_map(|(i, v)| shown[..i].contains(v).then_some(v)) {
            return Err(format!("`sweep.values` holds {twice} twice"));
        }
        let sweep = Sweep { knob, over: raw.over, values: raw.values, id: identity(text, base), not_applied: Vec::new() };
        for value in &sweep.values {
            sweep.apply(base.clone(), value).map_err(|e| format!("`sweep.values`: {} = {value}: {e}", sweep.over))?;
        }
        Ok(sweep)
    }

    /// The point a value names, as a directory name: `threads-8`.
    pub fn dir_name(&self, value: &ParamValue) -> String {
        let text = format!("{}-{value}", self.over);
        text.chars().map(|c| if c.is_ascii_alphanumeric() || "-_.".contains(c) { c } else { '_' }).collect()
    }

    /// The config of one point: `base` with the value applied, marked as
    /// this sweep's point.
    pub fn point(&self, base: &BenchConfig, value: &ParamValue) -> Result<BenchConfig, String> {
        let mut config = self.apply(base.clone(), value)?;
        config.sweep = None;
        config.point = Some(SweepPoint {
            over: self.over.clone(),
            value: value.to_string(),
            index: self.values.iter().position(|v| v == value).unwrap_or(0),
            values: self.values.iter().map(ToString::to_string).collect(),
            id: self.id.clone(),
            not_applied: self.not_applied.clone(),
        });
        Ok(config)
    }

    fn apply(&self, mut config: BenchConfig, value: &ParamValue) -> Result<BenchConfig, String> {
        let count = |min: u64, max: u64| match value {
            ParamValue::Integer(n) if (min as i64..=max as i64).contains(n) => Ok(*n as u64),
            _ => Err(format!("must be an integer in {min}..={max}")),
        };
        match &self.knob {
            Knob::Threads => config.workload.threads = count(1, 1024)? as usize,
            Knob::RowsPerBatch => config.workload.rows_per_batch = Dist::fixed(count(1, 65536)?),
            Knob::Shards => {
                let n = count(1, 1024)? as usize;
                config.variants.iter_mut().for_each(|v| v.shards = n);
            }
            Knob::FlushWriters => {
                let n = count(1, 64)? as usize;
                config.variants.iter_mut().for_each(|v| v.flush_writers = n);
            }
            Knob::MemtableSpace => {
                let bytes = match value {
                    ParamValue::Text(t) => parse_bytes(t)?,
                    ParamValue::Integer(n) if *n >= 0 => *n as u64,
                    _ => return Err("must be a size such as \"64MiB\"".into()),
                };
                if bytes < 1 << 20 {
                    return Err("is below the 1MiB minimum".into());
                }
                config.variants.iter_mut().for_each(|v| v.memtable_space = bytes);
            }
            Knob::Param(kind, name) => {
                for v in config.variants.iter_mut().filter(|v| !self.not_applied.contains(&v.name)) {
                    if let Some(params) = v.params_mut(*kind) {
                        params.insert(name.clone(), value.clone());
                    }
                }
            }
        }
        config.workload.validate().map_err(|e| e.to_string())?;
        Ok(config)
    }
}

/// The sweep's identity: the config's tables without `sweep.values`, and
/// the workload as resolved (a profile file's contents, not its name).
fn identity(text: &str, base: &BenchConfig) -> String {
    let mut table: toml::Table = toml::from_str(text).unwrap_or_default();
    if let Some(sweep) = table.get_mut("sweep").and_then(toml::Value::as_table_mut) {
        sweep.remove("values");
    }
    table.remove("workload");
    let mut hash = Sha256::new();
    hash.update(serde_json::to_string(&table).unwrap_or_default());
    hash.update(serde_json::to_string(&base.workload).unwrap_or_default());
    hex::encode(hash.finalize())
}
