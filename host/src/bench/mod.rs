//! Runs the variants of a bench config on one stream, one after another
//! (repeats interleaved: A B A B ...), and collects the figures the report
//! prints.

mod breakdown;
mod client;
mod described;
mod failures;
mod flush_writer;
mod live;
mod log;
mod preflight;
mod profile;
mod progress;
mod resources;
mod rounds;
mod slots;
mod strategies;
mod tally;
mod variant;

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

pub use crate::record::{BenchResult, IntervalSample, Latency, Resources, VariantResult};
pub use preflight::{PreflightError, preflight, preflight_watched, watched};
pub use slots::instance_slots;
pub use strategies::{commitlog_format, reader};
pub(crate) use tally::histogram;

use crate::config::{BenchConfig, Variant};
use crate::plugin::PluginHost;
use crate::record::{ConfigSpec, Failure, NoEffect, NotProbed, Provenance, SCHEMA_VERSION, Site, Stop, StopReason};
use crate::seam::Kind;
use crate::verify;
use crate::workload::{Stream, StreamFileError};

/// Where and how to run.
#[derive(Debug, Clone)]
pub struct BenchOptions {
    /// Segments go to `<run_dir>/<variant>/`.
    pub run_dir: PathBuf,
    /// Keep segment files after verification.
    pub keep_segments: bool,
    /// Print each flush's "Completed flushing" line to stderr.
    pub log_flushes: bool,
    /// Print interval lines (and a progress bar on a terminal).
    pub intervals: bool,
    /// Overrides `bench.repeats` (and `[bench.decide]`): fixed rounds.
    pub repeats: Option<usize>,
    /// Overrides `[bench.decide]`: rounds until decided.
    pub decide: Option<crate::config::Decide>,
    /// Set (by Ctrl-C) to stop the run: the running variant stops and is
    /// marked interrupted, and no further variant starts.
    pub interrupt: Option<Arc<AtomicBool>>,
    /// Ends the run when a plugin call makes no progress for too long.
    pub watchdog: Option<Watchdog>,
    /// After the measured rounds, a profiled round of each variant: wasm
    /// variants run on this engine, built with `EngineSettings::profile`.
    pub profile: Option<Arc<PluginHost>>,
    /// The stream's salt (`--salt`, to replay a run); none draws a fresh
    /// secret one. A stream file is replayed unsalted.
    pub salt: Option<crate::workload::Salt>,
}

/// A call that never returns cannot be interrupted without the epoch
/// deadline (which costs every call): the watchdog sees it stall, fails
/// the variant naming the plugin and the operation, and hands the message
/// to `on_stall`, which keeps what finished and ends the process.
#[derive(Clone)]
pub struct Watchdog {
    /// How long a call may go without finishing.
    pub limit: Duration,
    /// Set by Ctrl-C or SIGTERM: from then on a call that makes no
    /// progress for `INTERRUPT_GRACE` is a stall, so one signal ends a
    /// wait on a call that never returns.
    pub interrupt: Option<Arc<AtomicBool>>,
    /// Called once with the variant and the failure; the session saves the
    /// finished runs and its sink exits, since the stuck thread cannot be
    /// stopped.
    pub on_stall: Arc<OnStall>,
}

/// What the watchdog calls with the stuck variant and the failure.
pub type OnStall = dyn Fn(&Variant, &Failure) + Send + Sync;

/// How long a call may go on after Ctrl-C or SIGTERM before the run is
/// ended around it.
pub const INTERRUPT_GRACE: Duration = Duration::from_secs(2);

impl Watchdog {
    /// The limit in force now: shortened once the run is interrupted.
    pub fn limit_now(&self) -> Duration {
        let interrupted = self.interrupt.as_ref().is_some_and(|i| i.load(Ordering::Relaxed));
        if interrupted { self.limit.min(INTERRUPT_GRACE) } else { self.limit }
    }
}

impl std::fmt::Debug for Watchdog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watchdog").field("limit", &self.limit).finish_non_exhaustive()
    }
}

impl BenchOptions {
    fn interrupted(&self) -> bool {
        self.interrupt.as_ref().is_some_and(|i| i.load(Ordering::Relaxed))
    }
}

/// Runs every variant of `config`, `repeats` times interleaved. A failed
/// run is reported as such and the next one still runs.
pub fn run(host: &Arc<PluginHost>, config: &BenchConfig, options: &BenchOptions, progress: impl FnMut(&str)) -> Result<BenchResult, StreamFileError> {
    run_saving(host, config, options, progress, |_| {})
}

/// `run`, handing the record so far to `finished` after each variant, so
/// that a crash or an interrupt later keeps what finished.
pub fn run_saving(
    host: &Arc<PluginHost>,
    config: &BenchConfig,
    options: &BenchOptions,
    mut progress: impl FnMut(&str),
    mut finished: impl FnMut(&BenchResult),
) -> Result<BenchResult, StreamFileError> {
    let salt = salt_for(config, options)?;
    let stream = Stream::of(&crate::workload::Profile { salt, ..config.workload.clone() })?;
    // Off every client's clock, once for all variants.
    let prepared = crate::router::Prepared::of(&stream)?;
    match (&prepared, &stream) {
        (Some(p), _) => progress(&format!("routed the stream ahead, off the clock: {:.1} MiB held for the bench", p.bytes() as f64 / f64::from(1 << 20))),
        (None, Stream::Replayed(_)) => {
            progress(&format!("the stream is routed on the clock: routed ahead it would hold more than {} GiB", crate::router::MAX_PREPARED_BYTES >> 30))
        }
        (None, Stream::Generated(_)) => {}
    }
    let counts: Option<Vec<u64>> = (0..stream.threads()).map(|t| stream.ops_for(t)).collect();
    let expected = counts.as_ref().map(|counts| {
        progress(&format!("computing the stream's final state ({} ops)", counts.iter().sum::<u64>()));
        verify::expected(&stream, counts, &HashSet::new())
    });
    // One record, grown in place: each finished variant is one push, not
    // a copy of all before it (10,000 variants stay linear).
    let mut record = BenchResult {
        schema: SCHEMA_VERSION,
        provenance: Provenance::collect(engine_info(host), &[]),
        config: ConfigSpec::from(config),
        variants: Vec::new(),
        stop: None,
        profiles: Vec::new(),
    };
    let wasm = config.variants.iter().any(|v| v.runtime == crate::config::Runtime::Wasm);
    let calibration = breakdown::calibrate(host, wasm);
    let bench = variant::Bench { host, config, stream: &stream, prepared: prepared.as_ref(), expected: expected.as_ref(), options, calibration };
    rounds(&bench, &mut record, &mut progress, &mut finished);
    record.taint_shared_plugins();
    if let Some(profiling) = &options.profile {
        record.profiles = profile::profile_all(&bench, profiling, &record, &mut progress);
    }
    record.provenance = Provenance::collect(engine_info(host), &record.variants);
    // Only now, with every plugin done, does the record name the salt.
    record.provenance.stream_salt = salt.map(|s| s.to_string());
    finished(&record);
    Ok(record)
}

/// The salt that keys this run's content: the one asked for, else a fresh
/// secret; none for a stream file, whose bytes are the user's own.
fn salt_for(config: &BenchConfig, options: &BenchOptions) -> Result<Option<crate::workload::Salt>, StreamFileError> {
    match (&config.workload.stream, options.salt) {
        (Some(_), _) => Ok(None),
        (None, Some(salt)) => Ok(Some(salt)),
        (None, None) => crate::workload::Salt::fresh().map(Some).map_err(|e| StreamFileError::Unusable {
            path: "(the stream's salt)".into(),
            what: format!("the OS gave no randomness to salt the stream with: {e}"),
        }),
    }
}

/// Runs the bench's rounds, every variant once a round, until the rounds
/// rule or an interrupt ends them.
fn rounds(bench: &variant::Bench<'_>, record: &mut BenchResult, progress: &mut impl FnMut(&str), finished: &mut impl FnMut(&BenchResult)) {
    let (config, options) = (bench.config, bench.options);
    let rounds = match (options.repeats, options.decide.or(config.bench.decide)) {
        (Some(n), _) => rounds::Rounds::Fixed(n.max(1)),
        (None, Some(d)) => rounds::Rounds::Decide(d),
        (None, None) => rounds::Rounds::Fixed(config.bench.repeats.max(1)),
    };
    let idle = idle_params(bench.host, config);
    let started = Instant::now();
    let max = rounds.max();
    for repeat in 1..=max {
        let round_started = Instant::now();
        for (i, variant) in config.variants.iter().enumerate() {
            if options.interrupted() {
                record.stop = Some(Stop { rounds: repeat, reason: StopReason::Interrupted });
                return;
            }
            // A variant that failed a round publishes nothing: its later
            // rounds would only cost time.
            if let Some(failed) = record.variants.iter().find(|r| r.variant.name == variant.name && r.failure().is_some()) {
                let n = config.variants.len();
                progress(&format!("variant {}/{n}: {}: skipped, it failed round {} and publishes nothing", i + 1, variant.name, failed.repeat));
                continue;
            }
            let of = if max > 1 { format!(" (round {repeat}, at most {max})") } else { String::new() };
            progress(&format!("variant {}/{}: {}{of}", i + 1, config.variants.len(), variant.name));
            // A plugin past its probe's budget fails without a run.
            let mut result = match &idle[i].over_budget {
                Some(failure) => VariantResult { repeat, ..VariantResult::failed(crate::record::VariantSpec::from(variant), failure.clone()) },
                None => one_run(bench, (i, variant), repeat),
            };
            idle[i].merge_into(&mut result);
            record.variants.push(result);
            finished(record);
        }
        // Before the next round skips what failed, and before the rounds
        // rule reads the round: a plugin caught once taints its variants.
        record.taint_shared_plugins();
        if repeat == 1 && options.keep_segments {
            progress(&kept_note(&options.run_dir, max));
        }
        if let Some(reason) = rounds.after(repeat, record, started.elapsed(), round_started.elapsed()) {
            record.stop = Some(Stop { rounds: repeat, reason });
            return;
        }
    }
}

/// Variant `i`'s run in round `repeat`, in a folder of its own, kept
/// with `--keep-segments`.
fn one_run(bench: &variant::Bench<'_>, (i, variant): (usize, &Variant), repeat: usize) -> VariantResult {
    let options = bench.options;
    // Numbered: two names that sanitize alike keep their own folders.
    let folder = format!("{:02}-{}-{repeat}", i + 1, sanitize(&variant.name));
    let dir = options.run_dir.join(&folder);
    let mut result = variant::run_variant(bench, variant, &dir, repeat);
    result.repeat = repeat;
    if options.interrupted() {
        result.fail(Failure::interrupted());
    }
    if options.keep_segments && dir.exists() {
        result.segments = Some(crate::record::RunPath::new(folder));
    } else {
        let _ = std::fs::remove_dir_all(&dir);
    }
    result
}

/// The engine's settings, as the record keeps them.
pub fn engine_info(host: &PluginHost) -> crate::record::EngineInfo {
    let settings = host.settings();
    crate::record::EngineInfo {
        call_deadline_ms: settings.call_deadline.map(|d| d.as_secs_f64() * 1e3),
        memory_cap: settings.memory_cap,
        stack_limit: settings.stack_limit,
        cache: settings.cache_dir.is_some(),
    }
}

/// What `--keep-segments` keeps: the bytes round 1 left in the run's
/// directory, and what every round it may run would leave.
fn kept_note(run_dir: &std::path::Path, max_rounds: usize) -> String {
    let round = dir_bytes(run_dir) as f64 / (1024.0 * 1024.0);
    format!(
        "--keep-segments: round 1 kept {round:.1} MiB in {}; at most {max_rounds} round(s) keep up to about {:.0} MiB (`--repeats 1` keeps one round)",
        crate::util::text::clean(&run_dir.display().to_string()),
        round * max_rounds as f64
    )
}

/// The bytes of the regular files under `dir`; links are not followed.
fn dir_bytes(dir: &std::path::Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
    entries
        .filter_map(Result::ok)
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => dir_bytes(&e.path()),
            Ok(t) if t.is_file() => e.metadata().map_or(0, |m| m.len()),
            _ => 0,
        })
        .sum()
}

/// A strategy as probed: its kind, plugin and parameters.
type Probed = (Kind, String, Vec<(String, String)>);

/// What the parameter probe found of one variant: its idle and unprobed
/// parameters, or the failure of a plugin that ran past its budget.
struct ProbeOutcome {
    idle: Vec<NoEffect>,
    unprobed: Vec<NotProbed>,
    over_budget: Option<Failure>,
}

impl ProbeOutcome {
    /// The preflight's findings, save for the kinds a run probed on its
    /// own rows (`params_rows`): those the run's own findings replace.
    fn merge_into(&self, result: &mut VariantResult) {
        let taped: Vec<Kind> = if result.params_rows > 0 { described::taped().collect() } else { Vec::new() };
        let (own, own_unprobed) = match taped.as_slice() {
            [] => (Vec::new(), Vec::new()),
            _ => (result.no_effect.take().unwrap_or_default(), std::mem::take(&mut result.not_probed)),
        };
        let preflight = |kind: &Kind| !taped.contains(kind);
        result.no_effect = Some(self.idle.iter().filter(|n| preflight(&n.kind)).cloned().chain(own).collect());
        result.not_probed = self.unprobed.iter().filter(|n| preflight(&n.kind)).cloned().chain(own_unprobed).collect();
    }
}

/// Each variant's described parameters that change nothing on check's
/// bench-shaped workload, probed once per strategy and parameters, each
/// probe within a budget relative to a bundled plugin of its kind.
fn idle_params(host: &Arc<PluginHost>, config: &BenchConfig) -> Vec<ProbeOutcome> {
    let mut budgets: HashMap<Kind, (Duration, Duration)> = HashMap::new();
    let mut seen: HashMap<Probed, Result<crate::check::Probe, Failure>> = HashMap::new();
    config
        .variants
        .iter()
        .map(|v| {
            let mut probed = ProbeOutcome { idle: Vec::new(), unprobed: Vec::new(), over_budget: None };
            for (kind, strategy) in v.strategies() {
                let params = crate::config::params(strategy.params);
                let plugin = strategy.plugin;
                let probe = seen.entry((kind, plugin.to_string(), params.clone())).or_insert_with(|| {
                    let (budget, reference) = *budgets.entry(kind).or_insert_with(|| crate::check::probe_budget(host, kind));
                    crate::check::without_effect_within(host, kind, plugin, &params, budget).map_err(|spent| probe_over(host, kind, plugin, spent, reference))
                });
                match probe {
                    Ok(probe) => {
                        probed.idle.extend(probe.idle.iter().map(|(param, tried)| NoEffect {
                            kind,
                            param: param.clone(),
                            tried: tried.clone(),
                            on: Site::Workload,
                        }));
                        probed.unprobed.extend(probe.unprobed.iter().map(|(param, why)| NotProbed { kind, param: param.clone(), why: *why }));
                    }
                    Err(failure) => probed.over_budget = probed.over_budget.take().or_else(|| Some(failure.clone())),
                }
            }
            probed
        })
        .collect()
}

/// A plugin whose parameter probe ran past its budget: a budget failure
/// naming it, the property, and what a bundled plugin takes.
fn probe_over(host: &Arc<PluginHost>, kind: Kind, plugin: &str, spent: Duration, reference: Duration) -> Failure {
    use crate::seam::KindSpecs as _;
    let message = format!(
        "its parameter probe (params-effect: each described number or boolean changed, on check's bench-shaped workload) ran past its budget after {:.1} s, where the bundled `{}` takes {:.0} ms a trace of the same work",
        spent.as_secs_f64(),
        kind.spec().stand_in,
        reference.as_secs_f64() * 1e3
    );
    let sha256 = host.load_as(plugin, kind).ok().map(|p| p.sha256.clone());
    Failure { plugin: Some(plugin.to_string()), sha256, ..Failure::new(crate::record::FailureClass::Budget, message) }
}

fn sanitize(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect()
}
