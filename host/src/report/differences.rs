//! What differs between two records' variants beyond their figures: the
//! stream, the workload, the variant's settings and parameters, the
//! plugins' bytes, and the machine their rounds ran on. Each is a reason
//! a ratio between the two is not a verdict on one change.

use std::collections::BTreeMap;
use std::fmt;

use serde_json::Value;

use crate::record::Kind;
use crate::record::{BenchResult, Machine, VariantResult};

/// One way two records' variants differ.
#[derive(Debug, Clone, PartialEq)]
pub enum Difference {
    /// The streams' shape prints (or, in older records, fingerprints):
    /// not the same ops.
    Stream {
        /// The baseline's print, named.
        baseline: String,
        /// The run's.
        run: String,
    },
    /// A workload key or a variant setting (`workload.threads`,
    /// `memtable_params.capacity`, `shards`, ...).
    Setting {
        /// The key, dotted.
        key: String,
        /// The baseline's value, `(none)` where unset.
        baseline: String,
        /// The run's.
        run: String,
    },
    /// A plugin of the same kind with other bytes (or another plugin).
    Plugin {
        /// Its kind.
        kind: Kind,
        /// The baseline's, as `name sha256`.
        baseline: String,
        /// The run's.
        run: String,
    },
    /// The machine the rounds ran on.
    Machine {
        /// The baseline's rounds, on average.
        baseline: Machine,
        /// The run's.
        run: Machine,
    },
}

impl Difference {
    /// Whether it is about what ran (not where it ran).
    pub fn of_what_ran(&self) -> bool {
        !matches!(self, Difference::Machine { .. })
    }
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Difference::Stream { baseline, run } => write!(f, "the stream: {baseline} vs {run}"),
            Difference::Setting { key, baseline, run } => write!(f, "`{key}` {baseline} vs {run}"),
            Difference::Plugin { kind, baseline, run } => write!(f, "the {kind} plugin: {baseline} vs {run}"),
            Difference::Machine { baseline, run } => write!(
                f,
                "the machine: the baseline's rounds got {:.1} cores beside {:.1} busy elsewhere, the run's {:.1} beside {:.1}",
                baseline.cores,
                baseline.others(),
                run.cores,
                run.others()
            ),
        }
    }
}

/// The differences between the two records' workloads and streams, which
/// every pair shares.
pub fn of_records(baseline: &BenchResult, run: &BenchResult) -> Vec<Difference> {
    let mut out = Vec::new();
    // Two runs of one config share a shape, not bytes: each salts its
    // content with its own secret.
    let (a, b) = (baseline.provenance.stream_print(), run.provenance.stream_print());
    if a != b {
        out.push(Difference::Stream { baseline: a, run: b });
    }
    out.extend(settings("workload", &baseline.config.workload, &run.config.workload));
    out
}

/// Cores, got or busy elsewhere, by which two runs' machines differ
/// enough that a ratio between them is not a verdict on the strategies.
/// Set with `BETWEEN_RUNS` by A/A pairs (`benches/aa-runs`): at 0.5 a
/// pair 0.8 and 1.1 cores apart was judged 0.71x; at 0.3, with the
/// spread between runs, under 1 pair in 20 reports a difference.
pub(super) const MACHINES_APART: f64 = 0.3;

/// The differences between a baseline variant's rounds and a run's:
/// settings, parameters and plugins' bytes, then the machine.
pub fn of_variants(baseline: &[&VariantResult], run: &[&VariantResult]) -> Vec<Difference> {
    let (Some(a), Some(b)) = (baseline.first(), run.first()) else { return Vec::new() };
    let spec = |v: &VariantResult| {
        let mut value = serde_json::to_value(&v.variant).unwrap_or(Value::Null);
        if let Value::Object(fields) = &mut value {
            // Names and the configurations' labels are how it was called,
            // not what ran.
            fields.remove("name");
            fields.remove("configurations");
            // Each strategy under the config's own keys: `memtable`,
            // `memtable_params.capacity`.
            if let Some(Value::Object(strategies)) = fields.remove("strategies") {
                for (kind, mut s) in strategies {
                    fields.insert(format!("{kind}_params"), s.get_mut("params").map(Value::take).unwrap_or(Value::Null));
                    fields.insert(kind, s.get_mut("plugin").map(Value::take).unwrap_or(Value::Null));
                }
            }
            // A plugin is what ran, its bytes, however its path was spelled
            // ("." or "../my-table"): its name and sha256 where recorded.
            for p in &v.plugins {
                fields.insert(p.kind.name().to_string(), Value::String(format!("{} {}", p.name, short(&p.sha256))));
            }
        }
        value
    };
    let plugin = |d: Difference| match d {
        Difference::Setting { key, baseline, run } => match Kind::ALL.into_iter().find(|k| k.name() == key) {
            Some(kind) => Difference::Plugin { kind, baseline, run },
            None => Difference::Setting { key, baseline, run },
        },
        other => other,
    };
    let mut out: Vec<Difference> = settings("", &spec(a), &spec(b)).into_iter().map(plugin).collect();
    // Another runtime runs other bytes of one plugin by design: `runtime`
    // differs, the plugin named alike does not.
    if a.variant.runtime != b.variant.runtime {
        out.retain(|d| !matches!(d, Difference::Plugin { kind, .. } if a.variant.plugin(*kind) == b.variant.plugin(*kind)));
    }
    if let (Some(x), Some(y)) = (machine(baseline), machine(run))
        && ((x.cores - y.cores).abs() > MACHINES_APART || (x.others() - y.others()).abs() > MACHINES_APART)
    {
        out.push(Difference::Machine { baseline: x, run: y });
    }
    out
}

/// The rounds' machine on average, if they recorded it.
pub fn machine(runs: &[&VariantResult]) -> Option<Machine> {
    let seen: Vec<Machine> = runs.iter().filter_map(|v| v.resources.machine).collect();
    let first = *seen.first()?;
    let n = seen.len() as f64;
    let mean = |f: fn(&Machine) -> f64| seen.iter().map(f).sum::<f64>() / n;
    Some(Machine { cpus: first.cpus, cores: mean(|m| m.cores), busy: mean(|m| m.busy), steal: mean(|m| m.steal), load: mean(|m| m.load) })
}

fn short(sha: &str) -> String {
    let mut s: String = sha.chars().take(12).collect();
    if sha.chars().count() > 12 {
        s.push('…');
    }
    s
}

/// The keys whose values differ between `a` and `b`, flattened to dotted
/// paths under `prefix`.
fn settings(prefix: &str, a: &Value, b: &Value) -> Vec<Difference> {
    let (mut fa, mut fb) = (BTreeMap::new(), BTreeMap::new());
    flatten(prefix, a, &mut fa);
    flatten(prefix, b, &mut fb);
    let keys: std::collections::BTreeSet<&String> = fa.keys().chain(fb.keys()).collect();
    let value = |m: &BTreeMap<String, String>, k: &str| m.get(k).cloned().unwrap_or_else(|| "(none)".into());
    keys.into_iter().filter(|k| fa.get(*k) != fb.get(*k)).map(|k| Difference::Setting { key: k.clone(), baseline: value(&fa, k), run: value(&fb, k) }).collect()
}

fn flatten(prefix: &str, v: &Value, out: &mut BTreeMap<String, String>) {
    match v {
        Value::Object(fields) => {
            for (k, v) in fields {
                let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                flatten(&key, v, out);
            }
        }
        // An unset optional reads as absent, as on a record without it.
        Value::Null => {}
        Value::String(s) => {
            out.insert(prefix.to_string(), s.clone());
        }
        other => {
            out.insert(prefix.to_string(), other.to_string());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{Param, PluginInfo, StrategySpec};

    fn run(capacity: i64, sha: &str, cores: f64) -> VariantResult {
        let mut v = VariantResult::default();
        v.variant.name = format!("cap {capacity}");
        v.variant.strategies.insert(Kind::Memtable, StrategySpec { plugin: "skiplist".into(), params: [("capacity".into(), Param::Integer(capacity))].into() });
        v.plugins.push(PluginInfo { kind: Kind::Memtable, name: "skiplist".into(), sha256: sha.into(), load: Default::default(), cache_hit: false });
        v.resources.machine = Some(Machine { cpus: 2, cores, busy: cores + 0.2, steal: 0.0, load: 1.0 });
        v
    }

    #[test]
    fn parameters_bytes_and_machines_differ_by_name() {
        let (a, b) = (run(16384, "aa", 1.8), run(32768, "bb", 0.9));
        let found = of_variants(&[&a], &[&b]);
        let shown: Vec<String> = found.iter().map(ToString::to_string).collect();
        assert_eq!(shown[0], "the memtable plugin: skiplist aa vs skiplist bb", "{shown:?}");
        assert_eq!(shown[1], "`memtable_params.capacity` 16384 vs 32768", "{shown:?}");
        assert!(matches!(found[2], Difference::Machine { .. }) && !found[2].of_what_ran(), "{found:?}");
        assert_eq!(found.len(), 3, "the variants' names are not a difference: {shown:?}");
        // The same variant on a like machine: nothing to say.
        assert!(of_variants(&[&a], &[&run(16384, "aa", 1.6)]).is_empty());
    }

    /// One plugin's bytes, its folder spelled two ways: the same plugin.
    #[test]
    fn a_plugin_is_matched_by_its_bytes_not_its_path() {
        let (mut a, mut b) = (run(16384, "aa", 1.8), run(16384, "aa", 1.8));
        a.variant.strategies.get_mut(&Kind::Memtable).expect("memtable").plugin = ".".into();
        b.variant.strategies.get_mut(&Kind::Memtable).expect("memtable").plugin = "../cb-skipmap".into();
        assert!(of_variants(&[&a], &[&b]).is_empty(), "{:?}", of_variants(&[&a], &[&b]));
        b.plugins[0].sha256 = "bb".into();
        assert!(of_variants(&[&a], &[&b]).iter().any(|d| matches!(d, Difference::Plugin { .. })));
    }
}
