//! `memlab check`: a plugin against the host's reference, property by
//! property, with seeded operations. A failing property prints the seed
//! and a shrunk case that reproduces it. `SUITES` is the layer's table of
//! kinds: each kind's module above and its row below; nothing else here
//! matches on a kind.

mod allocator;
mod at_size;
mod bench_like;
mod commitlog;
mod defaults;

pub(crate) use defaults::described as described_params;
pub(crate) use defaults::holds as defaults_hold;
pub(crate) use defaults::{Probe, changed as changed_values, probe_budget, without_effect_within};
mod memtable;
mod property;
mod race;
mod serializer;
mod subject;
mod twin;

use std::sync::Arc;
use std::time::Instant;

use crate::plugin::{Plugin, PluginHost};
use memlab_sdk::Description;

use crate::seam::{Kind, SeamError, Strategy};
use crate::workload::SplitMix;

pub use property::{Properties, Property};
pub use subject::BENCH_POOLS;
pub(crate) use subject::{ROUND_NEED, ShardSubject};

/// What to check and how hard.
#[derive(Debug, Clone)]
pub struct CheckOptions {
    /// Parameters for the plugin under check.
    pub params: Vec<(String, String)>,
    /// Operations in all, spread over rounds of fresh instances.
    pub ops: u64,
    /// The seed; a failure names the round's own seed.
    pub seed: u64,
    /// How big the one big instance grows: distinct keys (memtable), rows
    /// (allocator) or records (serializer).
    pub size: u64,
    /// Single-bit flips across the big segment (serializer).
    pub flips: u32,
    /// The same plugin built for this machine (`--native`): checked again
    /// through the native twins' side of the seam.
    pub native: Option<Strategy>,
    /// Run only this property (a replay line's `--only`), not every one.
    pub only: Option<String>,
    /// The whole budget of the plugin's calls, counted once it is loaded:
    /// its build and compilation are not its calls (`memlab check
    /// --budget-s`).
    pub budget: Option<std::time::Duration>,
}

impl CheckOptions {
    /// The defaults `memlab check` runs with: 1M ops in rounds, one
    /// instance grown to 1M, 100 flips.
    pub fn new(params: Vec<(String, String)>, seed: u64) -> Self {
        CheckOptions { params, ops: 1_000_000, seed, size: 1_000_000, flips: 100, native: None, only: None, budget: None }
    }
}

/// Every property of a plugin's kind.
#[derive(Debug, Clone)]
pub struct CheckReport {
    /// The plugin as loaded.
    pub plugin: String,
    /// Its kind.
    pub kind: Kind,
    /// Its sha256.
    pub sha256: String,
    /// In the order they ran.
    pub properties: Vec<Property>,
    /// Those run again on the crate built for this machine (`--native`).
    pub native: Vec<Property>,
    /// Every property the kind offered, run or not.
    pub offered: Vec<&'static str>,
    /// Wall time.
    pub seconds: f64,
}

impl CheckReport {
    /// True when every property held.
    pub fn passed(&self) -> bool {
        self.failed() == 0
    }

    /// Properties that failed, either way.
    pub fn failed(&self) -> usize {
        self.properties.iter().chain(&self.native).filter(|p| p.failure.is_some()).count()
    }

    /// Properties run, either way.
    pub fn total(&self) -> usize {
        self.properties.len() + self.native.len()
    }

    /// The report as lines: one per property, failures with their case.
    pub fn render(&self) -> String {
        let mut out = format!("memlab check: {} ({} plugin, component sha256 {:.12}, as memlab wrapped it)\n", self.plugin, self.kind, self.sha256);
        render_properties(&mut out, &self.properties);
        if !self.native.is_empty() {
            out.push_str("natively (the crate built for this machine and loaded into memlab, through the seam's same checks):\n");
            render_properties(&mut out, &self.native);
        }
        let failed = self.failed();
        out.push_str(&format!("{} of {} properties passed in {:.1} s\n", self.total() - failed, self.total(), self.seconds));
        out
    }
}

fn render_properties(out: &mut String, properties: &[Property]) {
    {
        for p in properties {
            match &p.failure {
                None => out.push_str(&format!("  PASS  {:<22} {}\n", p.name, p.detail)),
                Some(f) => {
                    out.push_str(&format!("  FAIL  {:<22} {}\n", p.name, f.lines().next().unwrap_or("")));
                    for line in f.lines().skip(1) {
                        out.push_str(&format!("          {line}\n"));
                    }
                }
            }
        }
    }
}

/// What `plugin` says of itself, created with `params` (a memtable or an
/// allocator beside a bundled partner of the other kind).
pub fn describe(host: &Arc<PluginHost>, plugin: &Arc<Plugin>, params: &[(String, String)]) -> Result<Description, SeamError> {
    (of(plugin.kind).describe)(host, plugin, params)
}

/// What `plugin` does on `defaults`' fixed workload created with
/// `params`, and what it described: `defaults` and `params-effect` compare
/// two of these.
fn trace(host: &Arc<PluginHost>, plugin: &Arc<Plugin>, params: &[(String, String)]) -> Result<String, String> {
    (of(plugin.kind).trace)(host, plugin, params)
}

/// Checks `plugin` (a bundled name or a path) on `host`.
pub fn check(host: &Arc<PluginHost>, plugin: &str, options: CheckOptions) -> Result<CheckReport, SeamError> {
    let started = Instant::now();
    let mut loaded = host.load(plugin)?;
    let budgeted;
    let host = match options.budget {
        Some(budget) => {
            // A twin knows the crates this host built, so none is built
            // again; one that shares the engine runs the plugin as loaded.
            budgeted = host.budgeted(Instant::now() + budget)?;
            loaded = match budgeted.adopt(&loaded) {
                Some(adopted) => adopted,
                None => budgeted.load(plugin)?,
            };
            &budgeted
        }
        None => host,
    };
    let suite = of(loaded.kind);
    let in_wasm = CheckOptions { native: None, ..options.clone() };
    let wasm = (suite.properties)(host, &loaded, &in_wasm);
    let native = options.native.as_ref().map_or_else(Properties::default, |n| (suite.natively)(host, &loaded, n, &options));
    let (mut properties, mut native_ran) = (wasm.ran, native.ran);
    for p in properties.iter_mut().chain(&mut native_ran) {
        let args = replay_args(plugin, &options, p.name);
        p.failure = p.failure.take().map(|f| with_replay(f, &args, &options));
    }
    let mut offered = wasm.offered;
    offered.extend(native.offered.into_iter().filter(|n| !offered.contains(n)).collect::<Vec<_>>());
    Ok(CheckReport {
        plugin: loaded.name.clone(),
        kind: loaded.kind,
        sha256: loaded.sha256.clone(),
        properties,
        native: native_ran,
        offered,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// A failure with its replay line: a round's names its own seed and ops;
/// any other failure replays the whole property with check's seed.
fn with_replay(failure: String, args: &str, options: &CheckOptions) -> String {
    if failure.contains(PLUGIN_ARGS) {
        return failure.replace(PLUGIN_ARGS, args);
    }
    let (first, rest) = failure.split_once('\n').map_or((failure.as_str(), String::new()), |(f, r)| (f, format!("\n{r}")));
    format!("{first}\nreplay: memlab check {args} --seed {:#x} --ops {}{rest}", options.seed, options.ops)
}

/// What a replay line gives `memlab check` before its seed: the plugin,
/// `--build` for a crate folder (and `--native` where it was checked so),
/// the parameters, shell-quoted, a small `--size` so the replay does not
/// grow the one big instance again (at-size's own size, where that
/// failed), and the property that failed.
fn replay_args(plugin: &str, options: &CheckOptions, property: &str) -> String {
    let quoted = |s: String| shlex::try_quote(&s).map_or(s.clone(), |q| q.into_owned());
    let mut args = vec![quoted(plugin.to_string())];
    if std::path::Path::new(plugin).is_dir() {
        args.push("--build".into());
    }
    if options.native.is_some() {
        args.push("--native".into());
    }
    args.extend(options.params.iter().map(|(k, v)| format!("--param {}={}", quoted(k.clone()), quoted(v.clone()))));
    args.push(format!("--size {}", if property == AT_SIZE { options.size } else { 1000 }));
    args.push(format!("--only {}", quoted(property.to_string())));
    args.join(" ")
}

/// A key for checks: a small space of short keys (overwrites), keys over
/// a few byte values that prefix one another, the empty key, and rare
/// 64 KiB keys.
pub(crate) fn key(rng: &mut SplitMix) -> Vec<u8> {
    match rng.below(1000) {
        0 => Vec::new(),
        1 => {
            let mut k = vec![b'L'; 64 << 10];
            k.push(rng.below(8) as u8);
            k
        }
        2..=250 => (0..rng.below(6)).map(|_| [0x00, 0x01, 0x41, 0x7f, 0x80, 0xfe, 0xff][rng.below(7) as usize]).collect(),
        _ => format!("k{:05}", rng.below(3000)).into_bytes(),
    }
}

/// The property that `create` refuses an unknown parameter by name.
pub(crate) const UNKNOWN_PARAMS: &str = "rejects-unknown-params";
/// The property that one instance grown to `--size` still holds.
pub(crate) const AT_SIZE: &str = "at-size";
/// The property that a plugin describes itself truly.
pub(crate) const DESCRIBE: &str = "describe";

/// Whether `Params` rejection works: `create` with an unknown parameter
/// must fail with a message naming it.
pub(crate) fn unknown_param_result(result: Result<(), SeamError>) -> Property {
    const NAME: &str = UNKNOWN_PARAMS;
    match result {
        Err(e) if matches!(e.guest_error(), Some(memlab_sdk::Error::BadParam(m)) if m.contains("memlab_check_unknown")) => {
            Property::pass(NAME, "`memlab_check_unknown = 1` refused by name")
        }
        Err(e) => Property::fail(NAME, format!("refused, but without naming the parameter: {e}")),
        Ok(()) => Property::fail(NAME, "accepted `memlab_check_unknown = 1`"),
    }
}

/// `params` plus one that must be refused.
pub(crate) fn unknown_params(params: &[(String, String)]) -> Vec<(String, String)> {
    let mut all = params.to_vec();
    all.push(("memlab_check_unknown".into(), "1".into()));
    all
}

/// A description must name the plugin and its version.
pub(crate) fn describe_result(plugin: &Plugin, configured: &[(String, String)], d: Result<Description, SeamError>) -> Property {
    const NAME: &str = DESCRIBE;
    match d {
        Ok(d) if !d.name.is_empty() && !d.version.is_empty() => match crate::seam::check_description(plugin.kind, &plugin.name, configured, &d)
            .and_then(|()| crate::plugin::check_identity(plugin.kind, &plugin.name, &d))
        {
            Ok(()) => Property::pass(NAME, format!("{} {} ({} parameters applied, the configured ones echoed)", d.name, d.version, d.params.len())),
            Err(e) => Property::fail(NAME, e.to_string()),
        },
        Ok(d) => Property::fail(NAME, format!("`{}` describes itself with name {:?}, version {:?}", plugin.name, d.name, d.version)),
        Err(e) => Property::fail(NAME, e.to_string()),
    }
}

/// Stands for the plugin and its parameters in a replay command, until
/// `check` knows them.
const PLUGIN_ARGS: &str = "\u{0}plugin-args\u{0}";

/// Runs `rounds` of `per_round` ops each, seeded `(seed, round)`; stops at
/// the first failing round.
pub(crate) fn rounds(options: &CheckOptions, per_round: u64, mut round: impl FnMut(u64, u64) -> Result<(), String>) -> Result<String, String> {
    let count = options.ops.div_ceil(per_round).max(1);
    for r in 0..count {
        // Round 0 runs the seed as given, so a round's printed seed, given
        // back with its ops, replays that round alone.
        let seed = if r == 0 { options.seed } else { crate::workload::mix(options.seed ^ r.wrapping_mul(0x9e37_79b9_7f4a_7c15)) };
        let ops = per_round.min(options.ops - r * per_round).max(1);
        round(seed, ops).map_err(|e| {
            let (first, rest) = e.split_once('\n').unwrap_or((&e, ""));
            let rest = if rest.is_empty() { String::new() } else { format!("\n{rest}") };
            format!("round {r} (seed {seed:#x}, {ops} ops): {first}\nreplay: memlab check {PLUGIN_ARGS} --seed {seed:#x} --ops {ops}{rest}")
        })?;
    }
    Ok(format!("{} ops in {count} rounds", options.ops))
}

type Params<'a> = &'a [(String, String)];
type DescribeFn = fn(&Arc<PluginHost>, &Arc<Plugin>, Params<'_>) -> Result<Description, SeamError>;
type TraceFn = fn(&Arc<PluginHost>, &Arc<Plugin>, Params<'_>) -> Result<String, String>;

/// One kind's row of the table.
pub(super) struct Suite {
    pub kind: Kind,
    /// Every property, in the order they run.
    pub properties: fn(&Arc<PluginHost>, &Arc<Plugin>, &CheckOptions) -> Properties,
    /// `describe()` of an instance created with the parameters.
    pub describe: DescribeFn,
    /// What the instance does on `defaults`' fixed workload.
    pub trace: TraceFn,
    /// The crate built for this machine, checked against its wasm build.
    pub natively: fn(&Arc<PluginHost>, &Arc<Plugin>, &Strategy, &CheckOptions) -> Properties,
}

/// Every kind's row, in `Kind::ALL`'s order.
pub(super) const SUITES: [Suite; Kind::COUNT] = [
    Suite { kind: Kind::Memtable, properties: memtable::check, describe: in_shard, trace: shard_trace, natively: whole_suite },
    Suite { kind: Kind::Allocator, properties: allocator::check, describe: in_shard, trace: shard_trace, natively: whole_suite },
    Suite {
        kind: Kind::Serializer,
        properties: serializer::check,
        describe: |host, plugin, params| host.strategy(plugin).serializer(params, 0)?.describe(),
        trace: |host, plugin, params| serializer::trace(host, plugin, params),
        natively: |host, plugin, native, options| {
            agreeing(options, || agree(serializer::trace(host, plugin, &options.params), serializer::trace_of(native.serializer(&options.params, 0))))
        },
    },
    Suite {
        kind: Kind::CommitLog,
        properties: commitlog::check,
        describe: |host, plugin, params| host.strategy(plugin).commitlog_format(params, 0)?.describe(),
        trace: |host, plugin, params| commitlog::trace(host, plugin, params),
        natively: |host, plugin, native, options| {
            agreeing(options, || agree(commitlog::trace(host, plugin, &options.params), commitlog::trace_of(native.commitlog_format(&options.params, 0))))
        },
    },
];

/// `kind`'s row.
pub(super) fn of(kind: Kind) -> &'static Suite {
    let suite = &SUITES[kind as usize];
    debug_assert_eq!(suite.kind, kind, "SUITES is in Kind::ALL's order");
    suite
}

/// A memtable or allocator describes itself from a shard, beside its
/// bundled partner.
fn in_shard(host: &Arc<PluginHost>, plugin: &Arc<Plugin>, params: Params<'_>) -> Result<Description, SeamError> {
    let options = CheckOptions::new(params.to_vec(), crate::seam::secret());
    ShardSubject::with_partner(host, plugin, &options)?.described(params)
}

/// The trace's pool is drawn by the process's secret: the same for the
/// two traces `defaults` compares, unknown to the plugin.
fn shard_trace(host: &Arc<PluginHost>, plugin: &Arc<Plugin>, params: Params<'_>) -> Result<String, String> {
    let options = CheckOptions::new(params.to_vec(), crate::seam::secret());
    let subject = ShardSubject::new(host, plugin, &options).map_err(|p| p.failure.unwrap_or_default())?;
    defaults::shard_trace(&subject, params)
}

/// A memtable's or allocator's native build runs the whole suite again,
/// through native shards (`options.native` is set), and a concurrent one
/// races writers against a reader as well.
fn whole_suite(host: &Arc<PluginHost>, plugin: &Arc<Plugin>, _: &Strategy, options: &CheckOptions) -> Properties {
    let mut properties = (of(plugin.kind).properties)(host, plugin, options);
    if let Ok(subject) = ShardSubject::new(host, plugin, options) {
        properties.maybe(race::RACES, || race::property(&subject, options));
    }
    properties
}

const AGREES: &str = "native-agrees";

/// The one property of a serializer's or log format's native build.
fn agreeing(options: &CheckOptions, agree: impl FnOnce() -> Property) -> Properties {
    let mut properties = Properties::new(options.only.as_deref());
    properties.run(AGREES, agree);
    properties
}

/// A serializer's or log format's native build must write the wasm
/// build's bytes on `defaults`' workload.
fn agree(wasm: Result<String, String>, native: Result<String, String>) -> Property {
    match (wasm, native) {
        (Ok(w), Ok(n)) if w == n => Property::pass(AGREES, "the native build describes itself and writes the same bytes as the wasm build"),
        (Ok(w), Ok(n)) => Property::fail(AGREES, format!("the wasm build {w}; the native build {n}")),
        (Err(e), _) => Property::fail(AGREES, format!("the wasm build: {e}")),
        (_, Err(e)) => Property::fail(AGREES, format!("the native build: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::{Kind, SUITES};

    #[test]
    fn the_table_has_every_kind_in_order() {
        assert_eq!(SUITES.map(|s| s.kind), Kind::ALL);
    }
}
