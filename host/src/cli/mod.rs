//! The command line.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::{Parser, Subcommand};

use crate::bench::{self, BenchOptions, BenchResult};
use crate::config::{BenchConfig, DEFAULT_CONFIG};
use crate::plugin::{self, EngineSettings, PluginHost};
use crate::{registry, report};

// Output that may carry a plugin's or a record's strings goes through
// `for_terminal`: no raw control character reaches the terminal. A closed
// pipe (`memlab show | head`) is not an error: a bench keeps running and
// saving, it only stops printing.
macro_rules! say {
    ($($t:tt)*) => { $crate::cli::emit(&mut std::io::stdout(), &format!($($t)*), false) };
}
macro_rules! sayln {
    ($($t:tt)*) => { $crate::cli::emit(&mut std::io::stdout(), &format!($($t)*), true) };
}
macro_rules! warnln {
    ($($t:tt)*) => { $crate::cli::emit(&mut std::io::stderr(), &format!($($t)*), true) };
}

pub(crate) fn emit(out: &mut impl std::io::Write, text: &str, newline: bool) {
    let _ = out.write_all(crate::seam::text::for_terminal(text).as_bytes());
    let _ = if newline { out.write_all(b"\n") } else { out.flush() };
}

mod sweep;
mod verify;

/// Try out the write path of an LSM engine, with its strategies as
/// sandboxed WebAssembly components.
#[derive(Debug, Parser)]
#[command(name = "memlab", version)]
pub struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Runs a bench config (the built-in default comparison without one);
    /// writes run.json and report.html into the run's directory.
    Bench {
        /// A bench config (TOML).
        config: Option<PathBuf>,
        /// Where run directories go.
        #[arg(long, default_value = "memlab-runs")]
        out: PathBuf,
        /// Keep segment files after verification.
        #[arg(long)]
        keep_segments: bool,
        /// Do not print a line per flush.
        #[arg(long)]
        quiet: bool,
        /// Rounds of every variant, interleaved, exactly this many
        /// (overrides `bench.repeats` and `[bench.decide]`).
        #[arg(long, value_parser = repeats)]
        repeats: Option<usize>,
        /// Rounds until decided, at most this many (sets
        /// `bench.decide.max_rounds`; 2 to 100).
        #[arg(long, value_parser = max_rounds)]
        max_rounds: Option<usize>,
        /// Rounds until decided, starting no round that would end past
        /// this time, e.g. "80s" (sets `bench.decide.max_time`).
        #[arg(long, value_parser = max_time)]
        max_time: Option<std::time::Duration>,
        /// Rounds until decided, stopping once every ratio is known to
        /// this relative standard error (sets `bench.decide.rse`).
        #[arg(long, value_parser = rse)]
        rse: Option<f64>,
        /// Do not print interval lines.
        #[arg(long)]
        no_intervals: bool,
        /// An epoch deadline per plugin call in milliseconds, 1 to 3600000
        /// (overrides `bench.call_deadline_ms`).
        #[arg(long, value_parser = deadline)]
        deadline_ms: Option<f64>,
        /// Without a per-call deadline, the watchdog ends the run when a
        /// plugin call makes no progress for this many seconds.
        #[arg(long, default_value_t = 60, value_parser = positive)]
        stall_s: u64,
        /// Build plugins the config names as crate folders: runs their
        /// build scripts and proc-macros on this machine, outside the sandbox.
        #[arg(long)]
        build: bool,
        /// After the measured rounds, run each variant once more with its
        /// stacks sampled, for flame graphs (sets `bench.profile`).
        #[arg(long)]
        profile: bool,
        /// With a `[sweep]`: run only these of its values (`--points 1,8`),
        /// to split a sweep across machines; `memlab show` merges them.
        #[arg(long, value_delimiter = ',')]
        points: Vec<String>,
    },
    /// Writes a profile's stream to a file that a bench can replay
    /// (`stream = "file"` in the workload).
    Stream {
        /// A profile (TOML).
        profile: PathBuf,
        /// The stream file to write.
        #[arg(short, long)]
        output: PathBuf,
    },
    /// Prints a saved run, or compares it with a baseline run; given a
    /// sweep's directory or several sweep points, merges them into one
    /// table.
    Show {
        /// A run: its directory, or its `run.json`; or a sweep's
        /// directory, or several points' (`memlab show a/ b/ c/`).
        #[arg(required = true, num_args = 1..)]
        runs: Vec<PathBuf>,
        /// A baseline run (directory or `run.json`) to compare against, variant by variant.
        #[arg(short, long)]
        baseline: Option<PathBuf>,
        /// With -b: match variants by name (the default) or by position.
        #[arg(long, value_enum, default_value_t = MatchBy::Name, requires = "baseline")]
        by: MatchBy,
        /// With -b: pair the run's variant RUN with the baseline's BASE
        /// (`--pair RUN=BASE`, repeatable; names may hold `=` themselves:
        /// the split that names a variant on each side is taken); overrides --by.
        #[arg(long, requires = "baseline")]
        pair: Vec<String>,
        /// Also write the run's HTML report here.
        #[arg(long)]
        html: Option<PathBuf>,
    },
    /// Checks a plugin against the host's reference, property by property,
    /// with the sandbox's limits on; a failure prints a shrunk case.
    Check {
        /// A bundled name, a `.wasm` file, or a plugin crate's folder (built first).
        plugin: String,
        /// Operations in all, in rounds of small fresh instances (1 to
        /// 1,000,000,000).
        #[arg(long, default_value_t = 1_000_000, value_parser = check_ops)]
        ops: u64,
        /// Distinct keys, rows or records the one big instance grows to (1
        /// to 20,000,000: about 7 GiB for an allocator).
        #[arg(long, default_value_t = 1_000_000, value_parser = check_size)]
        size: u64,
        /// The seed, decimal or `0x` hex (a failure prints its round's).
        #[arg(long, default_value = "0x6d656d6c6162", value_parser = seed)]
        seed: u64,
        /// The epoch deadline per call, in milliseconds, 1 to 3600000.
        #[arg(long, default_value_t = 10_000.0, value_parser = deadline)]
        deadline_ms: f64,
        /// A parameter for the plugin, `key=value` (repeatable).
        #[arg(long = "param", value_parser = key_value)]
        params: Vec<(String, String)>,
        /// Build the plugin if it is a crate folder: runs its build scripts
        /// and proc-macros on this machine, outside the sandbox.
        #[arg(long)]
        build: bool,
    },
    /// Re-reads a run's kept segments (`bench --keep-segments`) through
    /// their serializers and checks them against the run's record: every
    /// checksum, every row count, and the digest of the state they hold.
    Verify {
        /// The run: its directory, or its `run.json`.
        run_dir: PathBuf,
    },
    /// Writes a new plugin crate, outside memlab's tree: its strategy, a
    /// README and a bench config against the bundled strategies.
    New {
        /// `memtable`, `allocator` or `serializer`.
        kind: crate::seam::Kind,
        /// The plugin's name (lowercase, digits, `-`).
        name: String,
        /// Where to put the crate's folder.
        #[arg(default_value = ".")]
        dir: PathBuf,
    },
    /// Writes C bindings for a kind's world (`<world>.h`, `<world>.c` and
    /// `<world>_component_type.o`), from the WIT built into memlab; see
    /// examples/c-sorted-array.
    Bindings {
        /// The language: only `c` for now.
        #[arg(value_parser = ["c"])]
        language: String,
        /// `memtable`, `allocator` or `serializer`.
        kind: crate::seam::Kind,
        /// Where to write them.
        dir: PathBuf,
    },
    /// Lists the bundled plugins: name, kind, version, sha256.
    List,
    /// Wraps a core wasm module into a component: any module that carries
    /// the component type of a memlab world (memlab-sdk's, wit-bindgen's
    /// from Rust or C), with no WASI.
    Componentize {
        /// The core module (`target/wasm32-unknown-unknown/release/*.wasm`).
        input: PathBuf,
        /// Where to write the component.
        #[arg(short, long)]
        output: PathBuf,
    },
}

/// A command's failure, for `main` to print.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    #[error(transparent)]
    Plugin(#[from] crate::seam::SeamError),
    #[error(transparent)]
    Load(#[from] crate::seam::LoadError),
    #[error(transparent)]
    Stream(#[from] crate::workload::StreamFileError),
    #[error("{path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error(transparent)]
    Record(#[from] crate::record::RecordError),
    #[error(transparent)]
    Scaffold(#[from] crate::scaffold::ScaffoldError),
    #[error(transparent)]
    Pairing(#[from] report::PairingError),
    #[error("{0} of {1} runs failed")]
    VariantsFailed(usize, usize),
    #[error("--out {path}: cannot create the run's directory: {detail}")]
    Out { path: String, detail: String },
    #[error("{broken} of {checked} runs' segments no longer hold what was verified")]
    VerifyFailed { broken: usize, checked: usize },
    #[error("memlab verify: {0}")]
    Verify(String),
    /// The run completed, but its record is not where it was to go.
    #[error("the run completed, but {path} could not be written ({why}); its record was saved to {saved}")]
    NotSaved { path: String, why: String, saved: String },
    #[error("preflight, before any variant ran: {0}")]
    Preflight(#[from] bench::PreflightError),
    #[error("interrupted: {kept} of {planned} runs are recorded in {path} (a run stopped midway is marked failed)")]
    Interrupted { kept: usize, planned: usize, path: String },
    #[error("{plugin}: {failed} of {total} properties failed")]
    CheckFailed { plugin: String, failed: usize, total: usize },
    #[error(transparent)]
    Sweep(Box<crate::record::sweep::SweepError>),
    #[error("{0}")]
    Points(String),
}

/// A deadline in milliseconds: finite, 1 ms to an hour.
fn deadline(text: &str) -> Result<f64, String> {
    let ms: f64 = text.parse().map_err(|e| format!("`{text}` is not a number of milliseconds: {e}"))?;
    if !(1.0..=3_600_000.0).contains(&ms) {
        return Err(format!("`{text}` ms is outside 1..=3600000 (an hour); a deadline cannot be turned off from here"));
    }
    Ok(ms)
}

fn max_rounds(text: &str) -> Result<usize, String> {
    crate::config::round_count(text.parse().map_err(|_| format!("`{text}` is not a whole number"))?)
}

fn max_time(text: &str) -> Result<std::time::Duration, String> {
    crate::config::time_ceiling(text)
}

fn rse(text: &str) -> Result<f64, String> {
    crate::config::rse_target(text.parse().map_err(|_| format!("`{text}` is not a number"))?)
}

fn repeats(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(n) if (1..=100).contains(&n) => Ok(n),
        Ok(n) => Err(format!("{n} is outside 1..=100")),
        Err(e) => Err(format!("`{text}`: {e}")),
    }
}

fn positive(text: &str) -> Result<u64, String> {
    match text.parse::<u64>() {
        Ok(0) => Err("0 would check nothing; give at least 1".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(format!("`{text}`: {e}")),
    }
}

fn at_most(text: &str, max: u64) -> Result<u64, String> {
    positive(text).and_then(|n| if n > max { Err(format!("{n} is above the most check takes ({max})")) } else { Ok(n) })
}

fn check_ops(text: &str) -> Result<u64, String> {
    at_most(text, 1_000_000_000)
}

fn check_size(text: &str) -> Result<u64, String> {
    at_most(text, 20_000_000)
}

fn seed(text: &str) -> Result<u64, String> {
    let parsed = match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => text.parse(),
    };
    parsed.map_err(|e| format!("`{text}` is not a seed (decimal, or hex with 0x): {e}"))
}

fn key_value(text: &str) -> Result<(String, String), String> {
    text.split_once('=').map(|(k, v)| (k.trim().to_string(), v.trim().to_string())).ok_or_else(|| format!("`{text}` is not key=value"))
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> CliError + '_ {
    move |source| CliError::Io { path: path.display().to_string(), source }
}

/// A run named by its directory or by its record: the record's path
/// (`run.json`, or `run.json.gz` kept compressed).
fn run_json(path: &Path) -> PathBuf {
    crate::record::file_in(path)
}

fn read_run(path: &Path) -> Result<BenchResult, CliError> {
    Ok(BenchResult::load(&run_json(path))?)
}

/// How `show -b` matches variants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum MatchBy {
    /// Variants of the same name.
    Name,
    /// The first with the first, and so on.
    Position,
}

/// `--pair RUN=BASE`, split where the run's variant and the baseline's
/// are both names: a name may hold `=` itself.
fn pair(text: &str, run: &BenchResult, base: &BenchResult) -> Result<(String, String), CliError> {
    let named = |r: &BenchResult, n: &str| r.variants.iter().any(|v| v.variant.name == n);
    let splits: Vec<(&str, &str)> =
        text.match_indices('=').map(|(i, _)| (&text[..i], &text[i + 1..])).filter(|(a, b)| named(run, a) && named(base, b)).collect();
    match splits.as_slice() {
        [(a, b)] => Ok((a.to_string(), b.to_string())),
        [] => Err(CliError::Points(format!(
            "--pair `{text}`: no split at a `=` names a variant of the run on its left and one of the baseline on its right, e.g. `--pair \"trie x32=trie\"`"
        ))),
        _ => Err(CliError::Points(format!("--pair `{text}`: more than one split at a `=` names variants on both sides; rename one of them"))),
    }
}

/// `memlab bench`'s flags.
/// The command line's overrides of `[bench.decide]`.
#[derive(Debug, Clone, Copy, Default)]
struct DecideFlags {
    max_rounds: Option<usize>,
    max_time: Option<std::time::Duration>,
    rse: Option<f64>,
}

impl DecideFlags {
    /// The config's rule with these flags over it; any flag turns the
    /// rule on, with defaults for what neither sets.
    fn over(self, config: Option<crate::config::Decide>) -> Option<crate::config::Decide> {
        if self.max_rounds.is_none() && self.max_time.is_none() && self.rse.is_none() {
            return config;
        }
        let mut d = config.unwrap_or_default();
        d.max_rounds = self.max_rounds.unwrap_or(d.max_rounds);
        d.min_rounds = d.min_rounds.min(d.max_rounds);
        d.max_time = self.max_time.or(d.max_time);
        d.rse = self.rse.unwrap_or(d.rse);
        Some(d)
    }
}

struct BenchFlags {
    out: PathBuf,
    keep_segments: bool,
    quiet: bool,
    repeats: Option<usize>,
    decide: DecideFlags,
    no_intervals: bool,
    deadline_ms: Option<f64>,
    stall_s: u64,
    build: bool,
    profile: bool,
    points: Vec<String>,
}

/// The watchdog's action: save the finished runs plus the stuck one,
/// failed, and end the process (the stuck thread cannot be stopped).
fn stall_watchdog(
    host: &Arc<PluginHost>,
    config: &BenchConfig,
    json: &Path,
    saved: &Arc<std::sync::Mutex<Vec<crate::record::VariantResult>>>,
    limit: std::time::Duration,
) -> bench::Watchdog {
    let (host, config, json, saved) = (Arc::clone(host), config.clone(), json.to_path_buf(), Arc::clone(saved));
    let on_stall = move |variant: &crate::config::Variant, failure: &crate::record::Failure| {
        let mut variants = saved.lock().unwrap_or_else(|p| p.into_inner()).clone();
        variants.push(crate::record::VariantResult::failed(variant.into(), failure.clone()));
        let record = BenchResult {
            schema: crate::record::SCHEMA_VERSION,
            provenance: crate::record::Provenance::collect(&host, &config, &variants),
            config: (&config).into(),
            variants,
            stop: None,
            profiles: Vec::new(),
        };
        let kept = match record.save(&json) {
            Ok(()) => format!("the {} finished runs and this failure are in {}", record.variants.len() - 1, json.display()),
            Err(e) => format!("and saving the record failed: {e}"),
        };
        warnln!("error: variant `{}`: {}; {kept}", variant.name, failure.message);
        std::process::exit(3);
    };
    bench::Watchdog { limit, on_stall: Arc::new(on_stall) }
}

/// The version a bundled plugin's `describe()` gives (its own crate's).
fn described_version(host: &Arc<PluginHost>, plugin: &Arc<plugin::Plugin>) -> Result<String, CliError> {
    use crate::seam::Kind;
    let pool = || Arc::new(crate::pool::MemoryPool::new(1 << 30, crate::pool::PoolMode::FetchAdd));
    let description = match plugin.kind {
        Kind::Memtable => host.shard(plugin, &[], &host.load_as("per-row", Kind::Allocator)?, &[], pool(), 0)?.describe()?.0,
        Kind::Allocator => host.shard(&host.load_as("btree", Kind::Memtable)?, &[], plugin, &[], pool(), 0)?.describe()?.1,
        Kind::Serializer => host.serializer(plugin, &[], 0)?.describe()?,
    };
    Ok(description.version)
}

/// Where a run keeps the components of its plugins that are not bundled,
/// by sha256: `memlab verify` reads segments back with these bytes, never
/// with a file or a crate the record names.
pub(super) const KEPT_COMPONENTS: &str = "components";

/// Copies every non-bundled plugin's component into the run's directory.
fn keep_components(host: &Arc<PluginHost>, config: &BenchConfig, run_dir: &Path) -> Result<(), CliError> {
    use crate::seam::Kind;
    for v in config.variants.iter().filter(|v| v.runtime == crate::config::Runtime::Wasm) {
        for (kind, spec) in [(Kind::Memtable, &v.memtable), (Kind::Allocator, &v.allocator), (Kind::Serializer, &v.serializer)] {
            if registry::find_kind(spec, kind).is_some() {
                continue;
            }
            let plugin = host.load_as(spec, kind)?;
            let dir = run_dir.join(KEPT_COMPONENTS);
            std::fs::create_dir_all(&dir).map_err(io(&dir))?;
            let path = dir.join(format!("{}.wasm", plugin.sha256));
            std::fs::write(&path, &plugin.component).map_err(io(&path))?;
        }
    }
    Ok(())
}

/// `<out>/<name>-<unix seconds>`, or with `-2`, `-3`... when a run in the
/// same second took it; created here, so an unwritable `out` fails first.
fn create_run_dir(out: &Path, name: &str) -> Result<PathBuf, CliError> {
    std::fs::create_dir_all(out).map_err(|e| CliError::Out { path: out.display().to_string(), detail: e.to_string() })?;
    let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    for n in 1..1000 {
        let dir = out.join(if n == 1 { format!("{name}-{stamp}") } else { format!("{name}-{stamp}-{n}") });
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(CliError::Out { path: dir.display().to_string(), detail: e.to_string() }),
        }
    }
    Err(CliError::Out { path: out.display().to_string(), detail: "a thousand runs of this name started this second".into() })
}

fn bench(config: Option<PathBuf>, flags: BenchFlags) -> Result<(), CliError> {
    let mut config = match &config {
        Some(path) => BenchConfig::load(path)?,
        None => BenchConfig::parse("(built-in default config)", DEFAULT_CONFIG)?,
    };
    config.bench.profile |= flags.profile;
    let interrupt = Arc::new(std::sync::atomic::AtomicBool::new(false));
    // A second Ctrl-C ends the process at once; the first stops cleanly.
    let _ = signal_hook::flag::register_conditional_shutdown(signal_hook::consts::SIGINT, 130, Arc::clone(&interrupt));
    let _ = signal_hook::flag::register(signal_hook::consts::SIGINT, Arc::clone(&interrupt));
    if let Some(sweep) = config.sweep.clone() {
        return sweep::bench_sweep(&config, &sweep, &flags, &interrupt);
    }
    if !flags.points.is_empty() {
        return Err(CliError::Points("--points picks values of a `[sweep]`, and this config has none".into()));
    }
    let name = if config.bench.name.is_empty() { "bench".to_string() } else { config.bench.name.clone() };
    // The run's directory first: an unwritable `--out` is found before
    // anything runs, and two runs never share a directory.
    let run_dir = create_run_dir(&flags.out, &name)?;
    let (result, json) = bench_in(&config, &flags, run_dir, &interrupt)?;
    ended(&config, &flags, &result, &json, &interrupt)
}

/// How a finished bench ends: interrupted, with failed variants, or well.
fn ended(config: &BenchConfig, flags: &BenchFlags, result: &BenchResult, json: &Path, interrupt: &std::sync::atomic::AtomicBool) -> Result<(), CliError> {
    if interrupt.load(std::sync::atomic::Ordering::Relaxed) {
        let planned = config.variants.len() * flags.repeats.unwrap_or(config.bench.repeats);
        return Err(CliError::Interrupted { kept: result.variants.len(), planned, path: json.display().to_string() });
    }
    let failed = result.variants.iter().filter(|v| v.failure().is_some()).count();
    if failed > 0 {
        return Err(CliError::VariantsFailed(failed, result.variants.len()));
    }
    Ok(())
}

/// Runs one bench (a config, or one point of a sweep) into `run_dir`,
/// saving its record and report there.
fn bench_in(
    config: &BenchConfig,
    flags: &BenchFlags,
    run_dir: PathBuf,
    interrupt: &Arc<std::sync::atomic::AtomicBool>,
) -> Result<(BenchResult, PathBuf), CliError> {
    let BenchFlags { keep_segments, quiet, repeats, decide, no_intervals, deadline_ms, stall_s, build, .. } = *flags;
    let stall = std::time::Duration::from_secs(stall_s);
    let deadline = deadline_ms.or(config.bench.call_deadline_ms).map(|ms| std::time::Duration::from_secs_f64(ms / 1e3));
    let settings = EngineSettings { call_deadline: deadline, instance_slots: bench::instance_slots(config), build_crates: build, ..EngineSettings::default() };
    // The profiled round's wasm variants run on an engine of their own:
    // its epoch checks would otherwise cost every measured call.
    let profiling = if config.bench.profile { Some(PluginHost::new(EngineSettings { profile: true, ..settings.clone() })?) } else { None };
    let host = PluginHost::new(settings)?;
    let name = if config.bench.name.is_empty() { "bench".to_string() } else { config.bench.name.clone() };
    let json = run_dir.join("run.json");
    let saved: Arc<std::sync::Mutex<Vec<crate::record::VariantResult>>> = Arc::default();
    let watchdog = if deadline.is_none() { Some(stall_watchdog(&host, config, &json, &saved, stall)) } else { None };
    if let Err(e) = bench::preflight(&host, config, watchdog.as_ref()).map_err(CliError::from).and_then(|()| keep_components(&host, config, &run_dir)) {
        // Nothing ran: no empty run directory is left to be taken for one.
        let _ = std::fs::remove_dir_all(&run_dir);
        return Err(e);
    }
    let options = BenchOptions {
        run_dir: run_dir.clone(),
        keep_segments,
        log_flushes: !quiet,
        intervals: !no_intervals,
        repeats,
        decide: decide.over(config.bench.decide),
        interrupt: Some(Arc::clone(interrupt)),
        watchdog,
        profile: profiling,
    };
    sayln!("memlab bench: {name} — {}", config.bench.description);
    sayln!("{}", engine_line(host.settings()));
    if deadline.is_none() {
        sayln!("Watchdog: a plugin call that makes no progress for {stall_s} s ends the run, keeping the finished variants");
    }
    let mut record = Saving::new(json.clone(), &name);
    let result = bench::run_saving(
        &host,
        config,
        &options,
        |line| warnln!("memlab: {line}"),
        |so_far| {
            // Each finished variant is shown and saved at once, whole or
            // not at all; a disk that fills moves the record elsewhere.
            if let Some(v) = so_far.variants.last() {
                // The last variant alone: the final call repeats none.
                let mut kept = saved.lock().unwrap_or_else(|p| p.into_inner());
                if kept.len() < so_far.variants.len() {
                    kept.push(v.clone());
                    sayln!("\n{}", report::summary(v));
                }
            }
            record.save_progress(so_far);
        },
    )?;
    say!("{}", report::comparison(&result));
    say!("{}", report::fidelity(&result));
    record.save(&result);
    if let Some(lost) = record.lost() {
        return Err(lost);
    }
    let html = run_dir.join("report.html");
    std::fs::write(&html, report::html::render_in(&result, Some(&run_dir))).map_err(io(&html))?;
    sayln!("\nSaved: {} and {}", json.display(), html.display());
    Ok((result, json))
}

impl From<crate::record::sweep::SweepError> for CliError {
    fn from(e: crate::record::sweep::SweepError) -> Self {
        // Boxed: its variants carry two paths and two identities.
        CliError::Sweep(Box::new(e))
    }
}

impl CliError {
    /// The process's exit status: 4 when a run completed but its record
    /// is not where it was to go, 1 for any other failure.
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::NotSaved { .. } => 4,
            _ => 1,
        }
    }
}

/// Where a run's record goes: `run.json` in its directory, or, once that
/// cannot be written (a full disk, a removed directory), a file in the
/// temporary directory, said at once; if that fails too, the record is
/// printed whole at the end.
struct Saving {
    path: PathBuf,
    fallback: PathBuf,
    failed: Option<String>,
    last: Option<String>,
}

impl Saving {
    fn new(path: PathBuf, name: &str) -> Self {
        let fallback = std::env::temp_dir().join(format!("memlab-{}-{}.json", name.replace(['/', '\\'], "_"), std::process::id()));
        Saving { path, fallback, failed: None, last: None }
    }

    /// Saves after a variant: the variant alone, and `run.json` whole
    /// while the run is short or as its count doubles (linear in all).
    fn save_progress(&mut self, record: &BenchResult) {
        let n = record.variants.len();
        if self.failed.is_none()
            && n > 64
            && !n.is_power_of_two()
            && let Some(v) = record.variants.last()
            && BenchResult::save_variant(&self.path, n - 1, v).is_ok()
        {
            return;
        }
        self.save(record);
    }

    fn save(&mut self, record: &BenchResult) {
        if self.failed.is_none() {
            match record.save(&self.path) {
                Ok(()) => return,
                Err(e) => {
                    warnln!("memlab: {e}; the record goes to {} instead", self.fallback.display());
                    self.failed = Some(e.to_string());
                }
            }
        }
        self.last = match record.save(&self.fallback) {
            Ok(()) => None,
            Err(_) => serde_json::to_string_pretty(record).ok(),
        };
    }

    /// The error to end with when `run.json` could not be written.
    fn lost(self) -> Option<CliError> {
        let why = self.failed?;
        let saved = match self.last {
            None => self.fallback.display().to_string(),
            Some(json) => {
                sayln!("{json}");
                "standard output, above (the temporary directory could not be written either)".to_string()
            }
        };
        Some(CliError::NotSaved { path: self.path.display().to_string(), why, saved })
    }
}

/// The sandbox's limits as a run had them.
fn engine_line(settings: &EngineSettings) -> String {
    format!(
        "Sandbox: epoch deadline {} per call; memory cap {:.0} MiB per instance; wasm stack {:.1} MiB; {}",
        settings.call_deadline.map_or("off".to_string(), |d| format!("{:.0} ms", d.as_secs_f64() * 1e3)),
        report::mib(settings.memory_cap),
        report::mib(settings.stack_limit as u64),
        match (settings.instance_slots, settings.compact_memories) {
            (_, true) => "address space limited: instances allocated on demand, compact bounds-checked memories".to_string(),
            (0, false) => "instances allocated on demand".to_string(),
            (n, false) => format!("pooling allocator, {n} instance slots"),
        }
    )
}

/// Runs the parsed command line.
pub fn run(cli: Cli) -> Result<(), CliError> {
    let default = Command::Bench {
        config: None,
        out: "memlab-runs".into(),
        keep_segments: false,
        quiet: false,
        repeats: None,
        max_rounds: None,
        max_time: None,
        rse: None,
        no_intervals: false,
        deadline_ms: None,
        stall_s: 60,
        build: false,
        profile: false,
        points: Vec::new(),
    };
    match cli.command.unwrap_or(default) {
        Command::Bench {
            config,
            out,
            keep_segments,
            quiet,
            repeats,
            max_rounds,
            max_time,
            rse,
            no_intervals,
            deadline_ms,
            stall_s,
            build,
            profile,
            points,
        } => {
            let decide = DecideFlags { max_rounds, max_time, rse };
            bench(config, BenchFlags { out, keep_segments, quiet, repeats, decide, no_intervals, deadline_ms, stall_s, build, profile, points })
        }
        Command::Stream { profile, output } => {
            let profile = crate::config::load_profile(&profile)?;
            let (fingerprint, ops) = crate::workload::write_stream_file(&profile, &output)?;
            sayln!("{}: {} ops of profile `{}` over {} threads, fingerprint {fingerprint}", output.display(), ops, profile.name, profile.threads);
            Ok(())
        }
        Command::Verify { run_dir } => verify::verify(&run_dir),
        Command::Show { runs, baseline, html, by, pair } => {
            // One run: a path that is no directory, or a directory with a run.json.
            let single = runs.len() == 1 && (!runs[0].is_dir() || run_json(&runs[0]).is_file());
            if !single {
                if baseline.is_some() {
                    return Err(CliError::Points("-b compares one run with one baseline; a sweep's points merge with `memlab show a/ b/ c/`".into()));
                }
                return sweep::show(&runs, html.as_deref());
            }
            let run = &runs[0];
            let result = read_run(run)?;
            match baseline {
                None => {
                    // The verdict and the comparison first: the first
                    // screen says who won; each run's summary follows.
                    let comparison = report::comparison(&result);
                    say!("{comparison}");
                    for v in &result.variants {
                        sayln!("\n{}", report::summary(v));
                    }
                    if !comparison.is_empty() {
                        let again = report::headline(&result).map(|h| h.text).unwrap_or_default();
                        sayln!("\n{again}");
                    }
                    say!("{}", report::fidelity(&result));
                }
                Some(path) => {
                    let base = read_run(&path)?;
                    let pairing = match (pair.is_empty(), by) {
                        (false, _) => report::Pairing::Explicit(pair.iter().map(|p| self::pair(p, &result, &base)).collect::<Result<_, _>>()?),
                        (true, MatchBy::Name) => report::Pairing::ByName,
                        (true, MatchBy::Position) => report::Pairing::ByPosition,
                    };
                    let pairs = report::pairs(&base, &result, &pairing)?;
                    say!("{}", report::against_baseline_paired(&base, &result, &pairs));
                }
            }
            if let Some(path) = html {
                let json = run_json(run);
                std::fs::write(&path, report::html::render_in(&result, json.parent())).map_err(io(&path))?;
            }
            Ok(())
        }
        Command::Check { plugin, ops, size, seed, deadline_ms, params, build } => {
            let settings =
                EngineSettings { call_deadline: Some(std::time::Duration::from_secs_f64(deadline_ms / 1e3)), build_crates: build, ..EngineSettings::default() };
            let host = PluginHost::new(settings)?;
            sayln!("{}", engine_line(host.settings()));
            let result = crate::check::check(&host, &plugin, crate::check::CheckOptions { ops, size, ..crate::check::CheckOptions::new(params, seed) })?;
            say!("{}", result.render());
            let failed = result.properties.iter().filter(|p| p.failure.is_some()).count();
            if failed > 0 {
                return Err(CliError::CheckFailed { plugin: result.plugin, failed, total: result.properties.len() });
            }
            Ok(())
        }
        Command::New { kind, name, dir } => {
            let root = crate::scaffold::scaffold(kind, &name, &dir)?;
            sayln!("Wrote {}. Then, in it (`--build`: memlab builds the crate, running its build scripts on this machine):", root.display());
            sayln!("  memlab check . --build");
            sayln!("  memlab bench bench.toml --build");
            Ok(())
        }
        Command::Bindings { language: _, kind, dir } => {
            for path in crate::scaffold::c_bindings(kind, &dir)? {
                sayln!("Wrote {}", path.display());
            }
            Ok(())
        }
        Command::List => {
            let host: Arc<PluginHost> = PluginHost::new(EngineSettings::default())?;
            sayln!("{:<12} {:<11} {:<8} component sha256", "name", "kind", "version");
            for b in registry::all() {
                let plugin = host.load_as(b.name, b.kind)?;
                sayln!("{:<12} {:<11} {:<8} {}", b.name, b.kind.to_string(), described_version(&host, &plugin)?, plugin.sha256);
            }
            Ok(())
        }
        Command::Componentize { input, output } => {
            let bytes = crate::seam::read_bounded(&input, plugin::MAX_PLUGIN_BYTES, "plugin file").map_err(io(&input))?;
            let component = plugin::to_component(&input.display().to_string(), &bytes)?;
            let host = PluginHost::new(EngineSettings { cache_dir: None, ..EngineSettings::default() })?;
            let checked = host.load_bytes(&input.display().to_string(), plugin::Source::File(input.display().to_string()), &component)?;
            std::fs::write(&output, &component).map_err(io(&output))?;
            sayln!("{}: {} plugin, sha256 {}", output.display(), checked.kind, checked.sha256);
            Ok(())
        }
    }
}
