//! The bench session: everything `memlab bench` does around the bench
//! itself, as a library. Preflight, the rounds, the watchdog, saving the
//! record as variants finish (elsewhere when the disk fails), sweeps and
//! interruption. The CLI parses flags into [`SessionOptions`], implements
//! [`Progress`] for the terminal and prints; a test implements it to
//! collect the events.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::bench::{self, BenchOptions};
use crate::config::BenchConfig;
use crate::plugin::{EngineSettings, PluginHost};
use crate::record::{BenchResult, VariantResult};
use crate::report;

mod error;
pub mod pin;
mod run_dir;
mod saving;
mod sweep;
mod watchdog;

pub use error::SessionError;
use error::io;
pub use run_dir::KEPT_COMPONENTS;

/// How a session runs, beside its config.
#[derive(Debug, Clone)]
pub struct SessionOptions {
    /// Where run directories go.
    pub out: PathBuf,
    /// Keep segment files after verification.
    pub keep_segments: bool,
    /// Report each flush's "Completed flushing" line.
    pub log_flushes: bool,
    /// Report interval lines (and a progress bar on a terminal).
    pub intervals: bool,
    /// Rounds of every variant, exactly this many.
    pub repeats: Option<usize>,
    /// Overrides of `[bench.decide]`.
    pub decide: DecideOverrides,
    /// An epoch deadline per plugin call, over `bench.call_deadline_ms`.
    pub deadline: Option<Duration>,
    /// Without a deadline, how long a call may make no progress.
    pub stall: Duration,
    /// Build plugins named as crate folders (runs their build scripts).
    pub build: bool,
    /// Load crate folders built for the host (`runtime = "native"`):
    /// their code runs outside the sandbox.
    pub native: bool,
    /// A profiled round after the measured ones.
    pub profile: bool,
    /// With a `[sweep]`: only these of its values.
    pub points: Vec<String>,
    /// Pin the process to these CPUs before anything runs (`--cpus`);
    /// empty: wherever the kernel puts it.
    pub cpus: Vec<usize>,
    /// The stream's salt, to replay a run; none draws a secret one.
    pub salt: Option<crate::workload::Salt>,
}

impl Default for SessionOptions {
    fn default() -> Self {
        SessionOptions {
            out: "memlab-runs".into(),
            keep_segments: false,
            log_flushes: true,
            intervals: true,
            repeats: None,
            decide: DecideOverrides::default(),
            deadline: None,
            stall: Duration::from_secs(60),
            build: false,
            native: false,
            profile: false,
            points: Vec::new(),
            cpus: Vec::new(),
            salt: None,
        }
    }
}

/// The command line's overrides of `[bench.decide]`.
#[derive(Debug, Clone, Copy, Default)]
pub struct DecideOverrides {
    /// `bench.decide.max_rounds`.
    pub max_rounds: Option<usize>,
    /// `bench.decide.max_time`.
    pub max_time: Option<Duration>,
    /// `bench.decide.rse`.
    pub rse: Option<f64>,
}

impl DecideOverrides {
    /// The config's rule with these over it; any override turns the rule
    /// on, with defaults for what neither sets.
    pub fn over(self, config: Option<crate::config::Decide>) -> Option<crate::config::Decide> {
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

/// What a session tells as it goes, in order.
#[derive(Debug)]
pub enum Event<'a> {
    /// A bench (or a sweep's point) is about to run.
    Started {
        /// The bench's name.
        name: &'a str,
        /// Its description.
        description: &'a str,
        /// The sandbox it runs in.
        engine: &'a EngineSettings,
        /// The watchdog's limit, when no per-call deadline is set.
        watchdog: Option<Duration>,
    },
    /// A line from the bench itself (the stream's state, a warning).
    Note(&'a str),
    /// A variant's round finished.
    Variant(&'a VariantResult),
    /// Every round finished: the record, before it is saved.
    Finished(&'a BenchResult),
    /// The record and the report are saved.
    Saved {
        /// The record.
        record: &'a Path,
        /// The HTML report.
        html: &'a Path,
    },
    /// `run.json` cannot be written; the record goes elsewhere.
    RecordMoved {
        /// Why.
        why: &'a str,
        /// Where it goes instead.
        to: &'a Path,
    },
    /// Neither place could be written: the record, whole.
    RecordText(&'a str),
    /// A plugin call stalled; the record is saved as said. The stuck
    /// thread cannot be stopped: the sink should end the process.
    Stalled {
        /// The variant.
        variant: &'a str,
        /// The failure.
        message: &'a str,
        /// What was kept, and where.
        kept: &'a str,
    },
    /// A sweep starts, its points all checked.
    SweepStarted {
        /// The bench's name.
        name: &'a str,
        /// What it sweeps.
        over: &'a str,
        /// The values it runs.
        values: &'a [String],
        /// Variants a plugin parameter is not applied to (their plugin
        /// has none such).
        not_applied: &'a [String],
    },
    /// A sweep's point starts (`index` from 1).
    SweepPoint {
        /// Which point.
        index: usize,
        /// Of how many.
        of: usize,
        /// What it sweeps.
        over: &'a str,
        /// This point's value.
        value: &'a str,
    },
    /// The sweep's points, merged, and where its report went.
    SweepFinished {
        /// The merged sweep.
        sweep: &'a crate::record::sweep::Sweep,
        /// The sweep's directory.
        dir: &'a Path,
        /// Its HTML report.
        html: &'a Path,
    },
}

/// Where a session's events go: the terminal, or a test's list.
pub trait Progress: Send + Sync {
    /// One event, as it happens.
    fn event(&self, event: Event<'_>);
}

/// What a finished session ran.
#[derive(Debug)]
pub enum Ran {
    /// One bench: its record and where it is.
    Bench {
        /// The record.
        result: Box<BenchResult>,
        /// `run.json`.
        record: PathBuf,
    },
    /// A sweep: its directory and how many points ran.
    Sweep {
        /// The sweep's directory.
        dir: PathBuf,
        /// Points run.
        points: usize,
    },
}

/// Runs a config (or its `[sweep]`), saving every record as it goes.
/// A run that ended well is `Ok`; interrupted, or with failed variants,
/// it is the matching error, after everything that finished was saved.
pub fn run(mut config: BenchConfig, options: &SessionOptions, progress: &Arc<dyn Progress>, interrupt: &Arc<AtomicBool>) -> Result<Ran, SessionError> {
    config.bench.profile |= options.profile;
    if !options.cpus.is_empty() {
        let pinned = pin::pin(&options.cpus).map_err(SessionError::Points)?;
        config.bench.cpus = Some(pin::shown(&pinned));
    }
    if let Some(sweep) = config.sweep.clone() {
        return sweep::run(&config, &sweep, options, progress, interrupt);
    }
    if !options.points.is_empty() {
        return Err(SessionError::Points("--points picks values of a `[sweep]`, and this config has none".into()));
    }
    // The run's directory first: an unwritable `--out` is found before
    // anything runs, and two runs never share a directory.
    let run_dir = run_dir::create(&options.out, name_of(&config))?;
    let (result, record) = one(&config, options, run_dir, progress, interrupt)?;
    ended(&config, options, &result, &record, interrupt)?;
    Ok(Ran::Bench { result: Box::new(result), record })
}

fn name_of(config: &BenchConfig) -> &str {
    if config.bench.name.is_empty() { "bench" } else { &config.bench.name }
}

/// How a finished bench ends: interrupted, with failed variants, or well.
fn ended(config: &BenchConfig, options: &SessionOptions, result: &BenchResult, json: &Path, interrupt: &AtomicBool) -> Result<(), SessionError> {
    if interrupt.load(Ordering::Relaxed) {
        let planned = config.variants.len() * options.repeats.unwrap_or(config.bench.repeats);
        return Err(SessionError::Interrupted { kept: result.variants.len(), planned, path: json.display().to_string() });
    }
    let failed = result.variants.iter().filter(|v| v.failure().is_some()).count();
    if failed > 0 {
        return Err(SessionError::VariantsFailed(failed, result.variants.len()));
    }
    Ok(())
}

/// The engine a config runs on, with the session's deadline over its own.
fn settings(config: &BenchConfig, options: &SessionOptions) -> EngineSettings {
    let deadline = options.deadline.or(config.bench.call_deadline_ms.map(|ms| Duration::from_secs_f64(ms / 1e3)));
    EngineSettings {
        call_deadline: deadline,
        instance_slots: bench::instance_slots(config),
        build_crates: options.build,
        native_crates: options.native,
        ..EngineSettings::default()
    }
}

/// Runs one bench (a config, or one point of a sweep) into `run_dir`,
/// saving its record and report there.
fn one(
    config: &BenchConfig,
    options: &SessionOptions,
    run_dir: PathBuf,
    progress: &Arc<dyn Progress>,
    interrupt: &Arc<AtomicBool>,
) -> Result<(BenchResult, PathBuf), SessionError> {
    let settings = settings(config, options);
    let watched = settings.call_deadline.is_none();
    // The profiled round's wasm variants run on an engine of their own:
    // its epoch checks would otherwise cost every measured call.
    let profiling = if config.bench.profile { Some(PluginHost::new(EngineSettings { profile: true, ..settings.clone() })?) } else { None };
    let host = PluginHost::new(settings)?;
    let name = name_of(config);
    let json = run_dir.join(crate::record::RUN_FILE);
    let saved: Arc<Mutex<Vec<VariantResult>>> = Arc::default();
    // Always on: with a per-call deadline, past the deadline (a native
    // call knows none), so that one Ctrl-C or SIGTERM still ends a wait
    // on a call that never returns.
    let limit = host.settings().call_deadline.map_or(options.stall, |d| options.stall.max(d + Duration::from_secs(1)));
    let watchdog = Some(watchdog::on_stall(&host, config, &json, &saved, limit, progress, interrupt));
    let note = |line: &str| progress.event(Event::Note(line));
    let ready = bench::preflight_watched(&host, config, watchdog.as_ref(), Some(interrupt), &note).map_err(SessionError::from);
    if let Err(e) = ready.and_then(|()| run_dir::keep_components(&host, config, &run_dir)) {
        // Nothing ran: no empty run directory is left to be taken for one.
        let _ = std::fs::remove_dir_all(&run_dir);
        if interrupt.load(Ordering::Relaxed) {
            let planned = config.variants.len() * options.repeats.unwrap_or(config.bench.repeats);
            return Err(SessionError::Interrupted { kept: 0, planned, path: "nothing (stopped in preflight, before any variant ran)".into() });
        }
        return Err(e);
    }
    let bench_options = BenchOptions {
        run_dir: run_dir.clone(),
        keep_segments: options.keep_segments,
        log_flushes: options.log_flushes,
        intervals: options.intervals,
        repeats: options.repeats,
        decide: options.decide.over(config.bench.decide),
        interrupt: Some(Arc::clone(interrupt)),
        watchdog,
        profile: profiling,
        salt: options.salt,
    };
    let description = &config.bench.description;
    progress.event(Event::Started { name, description, engine: host.settings(), watchdog: watched.then_some(options.stall) });
    let mut record = saving::Saving::new(json.clone(), name, Arc::clone(progress));
    let result = bench::run_saving(
        &host,
        config,
        &bench_options,
        |line| progress.event(Event::Note(line)),
        |so_far| {
            // Each finished variant is told and saved at once, whole or
            // not at all; a disk that fills moves the record elsewhere.
            if let Some(v) = so_far.variants.last() {
                // The last variant alone: the final call repeats none.
                let mut kept = saved.lock().unwrap_or_else(|p| p.into_inner());
                if kept.len() < so_far.variants.len() {
                    kept.push(v.clone());
                    progress.event(Event::Variant(v));
                }
            }
            record.save_progress(so_far);
        },
    )?;
    progress.event(Event::Finished(&result));
    record.save(&result);
    if let Some(lost) = record.lost() {
        return Err(lost);
    }
    let html = run_dir.join("report.html");
    crate::util::files::write_whole(&html, report::html::render_in(&result, Some(&run_dir)).as_bytes()).map_err(io(&html))?;
    progress.event(Event::Saved { record: &json, html: &html });
    Ok((result, json))
}
