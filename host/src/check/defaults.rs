//! Types contract 7: `describe()` lists every parameter as applied,
//! defaults included. A plugin created again with exactly what it
//! described must describe the same and behave the same on one fixed
//! workload of the generator's rows, shaped as a bench sends them (the
//! same answers, counters, memory and bytes written); one that describes
//! a default it does not use shows a difference.

use std::sync::Arc;
use std::time::{Duration, Instant};

use memlab_sdk::{Description, Entry, Packed};

use super::{Property, ShardSubject};
use crate::plugin::{Plugin, PluginHost};
use crate::seam::{Kind, KindSpecs, Unprobed};

/// The property that a plugin created with what it described behaves the same.
pub(crate) const DEFAULTS: &str = "defaults";
/// The property that each described number or boolean changes what it does.
pub(crate) const EFFECT: &str = "params-effect";

/// The parameters a description lists, sorted, as a plugin receives them.
pub(crate) fn described(d: &Description) -> Vec<(String, String)> {
    let mut params = d.params.clone();
    params.sort();
    params
}

/// Rows of a bench-shaped workload drawn from the process's secret,
/// under router sort keys, with their keys and timestamps, in key order:
/// the same for every probe of one process.
pub(super) fn workload() -> Vec<(Vec<u8>, Vec<u8>, u64)> {
    // Drawn from the process's secret: a plugin cannot know the probe's
    // rows in advance and behave its described way on those alone.
    let mut source = super::bench_like::BenchLike::new(crate::seam::secret() ^ 0xdefa_0001);
    let mut rows: Vec<(Vec<u8>, Vec<u8>, u64)> = (0..2_000)
        .map(|_| {
            let row = source.next_row();
            (row.key, row.bytes, row.timestamp)
        })
        .collect();
    rows.sort();
    rows.dedup_by(|a, b| a.0 == b.0);
    rows
}

/// What a shard shows after the fixed workload: what it described, its
/// counters and the memory it holds.
pub(super) fn shard_trace(subject: &ShardSubject<'_>, params: &[(String, String)]) -> Result<String, String> {
    let mut shard = subject.shard(params).map_err(|e| e.to_string())?;
    let (m, a) = shard.describe().map_err(|e| e.to_string())?;
    let own = if subject.kind() == Kind::Allocator { a } else { m };
    for batch in workload().chunks(50) {
        let mut rows = Packed::new();
        batch.iter().for_each(|(_, r, _)| rows.push(r));
        let refs = shard.store_rows(&mut rows).map_err(|e| e.to_string())?;
        let mut entries = Packed::new();
        for ((k, _, timestamp), r) in batch.iter().zip(refs) {
            entries.push_with(|buf| Entry { key: k, timestamp: *timestamp, reference: r }.encode(buf));
        }
        shard.insert(&mut entries).map_err(|e| e.to_string())?;
    }
    let (ms, al) = shard.stats().map_err(|e| e.to_string())?;
    let stats = if subject.kind() == Kind::Allocator { al } else { ms };
    Ok(format!("describes {:?}; {}", described(&own), behaviour(&format!("counters {stats:?}; memory {} bytes", shard.guest_memory_bytes()))))
}

/// Marks where a trace's behaviour starts, after what it described.
const BEHAVIOUR: &str = "behaves: ";

pub(super) fn behaviour(text: &str) -> String {
    format!("{BEHAVIOUR}{text}")
}

/// A trace's behaviour alone, without its description.
fn behaviour_of(trace: &str) -> &str {
    trace.split_once(BEHAVIOUR).map_or(trace, |(_, b)| b)
}

/// Creates the plugin as configured, then with what it described, and
/// holds the two to the same trace (`super::trace`, per kind).
pub(super) fn property(host: &Arc<PluginHost>, plugin: &Arc<Plugin>, configured: &[(String, String)]) -> Property {
    let params = match super::describe(host, plugin, configured) {
        Ok(d) => described(&d),
        Err(e) => return Property::fail(DEFAULTS, e.to_string()),
    };
    compare(&params, super::trace(host, plugin, configured), super::trace(host, plugin, &params))
}

/// The property for one strategy as a bench configures it: the bench's
/// preflight holds each wasm strategy to it, so a default described but
/// not used is refused before any figure is measured.
pub(crate) fn holds(host: &Arc<PluginHost>, kind: Kind, plugin: &str, params: &[(String, String)]) -> Result<(), crate::seam::SeamError> {
    let loaded = host.load_as(plugin, kind)?;
    let property = property(host, &loaded, params);
    match property.failure {
        None => Ok(()),
        Some(detail) => Err(crate::seam::SeamError::contract(plugin, kind.spec().describe, 0, detail)),
    }
}

fn compare(params: &[(String, String)], configured: Result<String, String>, explicit: Result<String, String>) -> Property {
    let shown: Vec<String> = params.iter().map(|(k, v)| format!("{k} = {v}")).collect();
    match (configured, explicit) {
        (Ok(a), Ok(b)) if a == b => {
            Property::pass(DEFAULTS, format!("created again with what it described ({}), it describes and behaves the same", shown.join(", ")))
        }
        (Ok(a), Ok(b)) => Property::fail(
            DEFAULTS,
            format!("created with what it described ({}), it differs: as configured it {a}; with its description it {b}", shown.join(", ")),
        ),
        (Err(e), _) => Property::fail(DEFAULTS, e),
        (_, Err(e)) => Property::fail(DEFAULTS, format!("refused what it described ({}): {e}", shown.join(", "))),
    }
}

/// Values to try instead of `value`, where it is a number or a boolean.
pub(crate) fn changed(value: &str) -> Vec<String> {
    if let Ok(b) = value.parse::<bool>() {
        return vec![(!b).to_string()];
    }
    if let Ok(n) = value.parse::<u64>() {
        return [n.checked_mul(2).unwrap_or(n / 2), n / 2, n + 1].into_iter().filter(|&m| m != n).map(|m| m.to_string()).collect();
    }
    match value.parse::<f64>() {
        Ok(x) if x.is_finite() && x != 0.0 => vec![(x * 2.0).to_string(), (x / 2.0).to_string()],
        _ => Vec::new(),
    }
}

/// The parameters `plugin` describes whose change (a number doubled or
/// halved, a boolean flipped) changes nothing it does on the fixed
/// workload of generator rows: "has no effect here". Not a failure: some
/// parameters matter only at sizes a check does not reach. Each entry is
/// `name` and the value tried.
pub(crate) fn without_effect(host: &Arc<PluginHost>, kind: Kind, plugin: &str, params: &[(String, String)]) -> Probe {
    host.load_as(plugin, kind).map(|loaded| without_effect_of(host, &loaded, params)).unwrap_or_default()
}

/// A bench's parameter probe of one plugin may take this long at least...
const PROBE_FLOOR: Duration = Duration::from_secs(5);
/// ...and this many times a bundled plugin's trace of the same kind: room
/// for every described parameter, twice, four times slower than it.
const PROBE_TRACES: u32 = 4 * 2 * (crate::seam::MAX_DESCRIBED_PARAMS as u32 + 1);

/// How long a bench's probe of a plugin of `kind` may take, and the
/// bundled stand-in's time for one trace of the same work: timed once a
/// process (a kind's stand-in is the same in every bench), its load left
/// out of the clock.
pub(crate) fn probe_budget(host: &Arc<PluginHost>, kind: Kind) -> (Duration, Duration) {
    static REFERENCE: std::sync::Mutex<Vec<(Kind, Duration)>> = std::sync::Mutex::new(Vec::new());
    let known = REFERENCE.lock().unwrap_or_else(std::sync::PoisonError::into_inner).iter().find(|(k, _)| *k == kind).map(|(_, d)| *d);
    let reference = known.unwrap_or_else(|| {
        let timed = host.load_as(kind.spec().stand_in, kind).map(|p| {
            let started = Instant::now();
            let _ = super::trace(host, &p, &[]);
            started.elapsed()
        });
        let reference = timed.unwrap_or_default();
        REFERENCE.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push((kind, reference));
        reference
    });
    (PROBE_FLOOR + reference * PROBE_TRACES, reference)
}

/// `without_effect` within `budget`: on a budgeted twin whose calls all
/// trap once the budget is spent, so a plugin slow only where the probe
/// looks cannot hold a bench silent. `Err` with the time spent when it
/// ran past the budget.
pub(crate) fn without_effect_within(
    host: &Arc<PluginHost>,
    kind: Kind,
    plugin: &str,
    params: &[(String, String)],
    budget: Duration,
) -> Result<Probe, Duration> {
    // Loaded first, off the clock: a crate's build and a component's
    // compile are not what the probe times (a cold build took 20 s).
    let loaded = host.load_as(plugin, kind).ok();
    let started = Instant::now();
    // An engine that cannot be made (the address space, say) leaves the
    // probe on the bench's own engine, its budget held only after the fact.
    let probe = match host.budgeted(started + budget) {
        // A twin on the same engine (check's) runs the plugin as loaded.
        Ok(budgeted) => match loaded.as_ref().and_then(|l| budgeted.adopt(l)) {
            Some(adopted) => without_effect_of(&budgeted, &adopted, params),
            None => without_effect(&budgeted, kind, plugin, params),
        },
        Err(_) => without_effect(host, kind, plugin, params),
    };
    if started.elapsed() >= budget { Err(started.elapsed()) } else { Ok(probe) }
}

/// What the parameter probe found: the parameters without effect (with
/// the value tried), and those it did not reach.
#[derive(Debug, Clone, Default)]
pub(crate) struct Probe {
    pub idle: Vec<(String, String)>,
    pub unprobed: Vec<(String, Unprobed)>,
    /// Changes the plugin accepted when created, then failed on: each
    /// parameter, the value tried and the failure. `check` fails them.
    pub broke: Vec<(String, String, String)>,
    /// How many parameters it described.
    pub described: usize,
}

fn without_effect_of(host: &Arc<PluginHost>, loaded: &Arc<Plugin>, params: &[(String, String)]) -> Probe {
    let trace = |params: &[(String, String)]| super::trace(host, loaded, params).ok();
    let described = super::describe(host, loaded, params).ok();
    let (Some(described), Some(base)) = (described.map(|d| self::described(&d)), trace(params)) else { return Probe::default() };
    let mut probe = Probe { described: described.len(), ..Probe::default() };
    for (i, (name, value)) in described.iter().enumerate() {
        let changes = changed(value);
        if changes.is_empty() {
            probe.unprobed.push((name.clone(), Unprobed::Text));
            continue;
        }
        // The first change the plugin accepts decides. One it takes when
        // created and then fails on is no refusal: the plugin broke.
        let accepted = changes.into_iter().find_map(|other| {
            let mut tried = described.clone();
            tried[i].1.clone_from(&other);
            match super::trace(host, loaded, &tried) {
                Ok(now) => Some((other, Ok(now))),
                Err(e) if super::describe(host, loaded, &tried).is_ok() => Some((other, Err(e))),
                Err(_) => None,
            }
        });
        match accepted {
            Some((other, Ok(now))) if behaviour_of(&now) == behaviour_of(&base) => probe.idle.push((name.clone(), other)),
            Some((other, Err(e))) => probe.broke.push((name.clone(), other, e)),
            Some(_) => {}
            None => probe.unprobed.push((name.clone(), Unprobed::Refused)),
        }
    }
    probe
}

/// `without_effect` as check shows it: a property that always holds.
pub(super) fn effect_property(host: &Arc<PluginHost>, plugin: &Arc<Plugin>, params: &[(String, String)]) -> Property {
    let Probe { idle, unprobed, broke, described } = without_effect_of(host, plugin, params);
    if let Some((name, value, failure)) = broke.first() {
        return Property::fail(EFFECT, format!("created with `{name}` = {value}, it accepted the value, then failed: {failure}"));
    }
    let probed = described - unprobed.len();
    let unprobed: Vec<String> = unprobed.iter().map(|(k, why)| format!("`{k}` ({})", why.reason())).collect();
    let unprobed = if unprobed.is_empty() { String::new() } else { format!("; not probed: {}", unprobed.join(", ")) };
    if idle.is_empty() {
        let detail = match probed {
            0 if described == 0 => "it describes no parameters: nothing to probe".to_string(),
            0 => format!("no number or boolean to probe{unprobed}"),
            n => format!("each of the {n} numbers and booleans it describes changes what it does on generator rows{unprobed}"),
        };
        return Property::pass(EFFECT, detail);
    }
    let shown: Vec<String> = idle.iter().map(|(k, v)| format!("`{k}` (tried {v})")).collect();
    Property::pass(
        EFFECT,
        format!(
            "has no effect here: {}: changing it changed nothing on the bench-shaped workload (not a failure: it may matter only at a bench's size){unprobed}",
            shown.join(", ")
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugin::EngineSettings;

    /// A bench's probe loads its plugin once, off the clock; on an engine
    /// that checks epochs (a call deadline) its budgeted twin runs that
    /// load. Without epochs the twin is an engine of its own and must load
    /// the plugin again: one load more for the same probe (each trace
    /// loads its bundled partner on either).
    #[test]
    fn the_probe_runs_the_plugin_it_loaded_where_the_engine_is_shared() {
        let loads = |settings| {
            let host = PluginHost::new(settings).unwrap_or_else(|e| panic!("an engine: {e}"));
            let probe = without_effect_within(&host, Kind::Memtable, "skiplist", &[], Duration::from_secs(300));
            let probe = probe.unwrap_or_else(|spent| panic!("the probe ran past its budget: {spent:?}"));
            assert!(probe.described > 0 && probe.broke.is_empty(), "{probe:?}");
            host.loads()
        };
        let shared = loads(EngineSettings { call_deadline: Some(Duration::from_secs(5)), ..EngineSettings::default() });
        let own = loads(EngineSettings::default());
        assert_eq!(own.checked_sub(shared), Some(1), "loads: {shared} on a shared engine, {own} on one of its own");
    }
}
