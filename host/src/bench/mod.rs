//! Runs the variants of a bench config on one stream, one after another
//! (repeats interleaved: A B A B ...), and collects the figures the report
//! prints.

mod client;
mod live;
mod resources;
mod slots;
mod strategies;
mod tally;

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::time::{Duration, Instant};

pub use crate::record::{BenchResult, IntervalSample, Latency, Resources, VariantResult};
pub use slots::instance_slots;
pub use strategies::reader;
pub(crate) use tally::histogram;

use crate::config::{BenchConfig, Variant, params};
use crate::flush::{self, FlushReport, SerializerFactory};
use crate::plugin::PluginHost;
use crate::pool::MemoryPool;
use crate::read_probe;
use crate::record::{Provenance, SCHEMA_VERSION};
use crate::router::Router;
use crate::seam::{self, SeamError};
use crate::verify::{self, State};
use crate::workload::{Stream, StreamFileError};
use crate::write_path::{FlushJob, PathSettings, WritePath};

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
    /// Overrides `bench.repeats`.
    pub repeats: Option<usize>,
    /// Set (by Ctrl-C) to stop the run: the running variant stops and is
    /// marked interrupted, and no further variant starts.
    pub interrupt: Option<Arc<AtomicBool>>,
    /// Ends the run when a plugin call makes no progress for too long.
    pub watchdog: Option<Watchdog>,
}

/// A call that never returns cannot be interrupted without the epoch
/// deadline (which costs every call): the watchdog sees it stall, fails
/// the variant naming the plugin and the operation, and hands the message
/// to `on_stall`, which keeps what finished and ends the process.
#[derive(Clone)]
pub struct Watchdog {
    /// How long a call may go without finishing.
    pub limit: Duration,
    /// Called once with the variant and the failure; the CLI saves the
    /// finished runs and exits, since the stuck thread cannot be stopped.
    pub on_stall: Arc<OnStall>,
}

/// What the watchdog calls with the stuck variant and the failure.
pub type OnStall = dyn Fn(&Variant, &str) + Send + Sync;

impl std::fmt::Debug for Watchdog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watchdog").field("limit", &self.limit).finish_non_exhaustive()
    }
}

/// What a stall is reported as: the plugin, the operation, the shard.
fn stall_message(variant: &Variant, stall: seam::watch::Stall) -> String {
    let plugin = match stall.call.kind() {
        seam::Kind::Memtable => &variant.memtable,
        seam::Kind::Allocator => &variant.allocator,
        seam::Kind::Serializer => &variant.serializer,
    };
    format!(
        "plugin `{plugin}` made no progress for {:.0} s in `{}` on shard {} (a call that never returns; with no per-call deadline it cannot be interrupted, so the run was ended)",
        stall.for_.as_secs_f64(),
        stall.call.name(),
        stall.shard
    )
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
    let stream = Stream::of(&config.workload)?;
    let counts: Option<Vec<u64>> = (0..stream.threads()).map(|t| stream.ops_for(t)).collect();
    let expected = counts.as_ref().map(|counts| {
        progress(&format!("computing the stream's final state ({} ops)", counts.iter().sum::<u64>()));
        verify::expected(&stream, counts, &HashSet::new())
    });
    let repeats = options.repeats.unwrap_or(config.bench.repeats).max(1);
    let record = |variants: &[VariantResult]| BenchResult {
        schema: SCHEMA_VERSION,
        provenance: Provenance::collect(host, config, variants),
        config: config.clone(),
        variants: variants.to_vec(),
    };
    let mut variants = Vec::new();
    'runs: for repeat in 1..=repeats {
        for (i, variant) in config.variants.iter().enumerate() {
            if options.interrupted() {
                break 'runs;
            }
            let of = if repeats > 1 { format!(" (repeat {repeat}/{repeats})") } else { String::new() };
            progress(&format!("variant {}/{}: {}{of}", i + 1, config.variants.len(), variant.name));
            // Numbered: two names that sanitize alike keep their own folders.
            let folder = format!("{:02}-{}-{repeat}", i + 1, sanitize(&variant.name));
            let dir = options.run_dir.join(&folder);
            let mut result = run_variant(host, config, &stream, variant, &dir, options, expected.as_ref());
            result.repeat = repeat;
            if options.interrupted() {
                result.fail("interrupted (Ctrl-C): this run was stopped before its end");
            }
            if options.keep_segments && dir.exists() {
                result.segments = Some(folder);
            } else {
                let _ = std::fs::remove_dir_all(&dir);
            }
            variants.push(result);
            finished(&record(&variants));
        }
    }
    Ok(record(&variants))
}

fn sanitize(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect()
}

fn run_variant(
    host: &Arc<PluginHost>,
    config: &BenchConfig,
    stream: &Stream,
    variant: &Variant,
    dir: &std::path::Path,
    options: &BenchOptions,
    expected: Option<&State>,
) -> VariantResult {
    let profile = &config.workload;
    let setup_started = Instant::now();
    let _ = std::fs::remove_dir_all(dir);
    let pool = Arc::new(MemoryPool::new(variant.memtable_space, variant.pool));
    let strategies = match strategies::strategies(host, variant, &pool) {
        Ok(s) => s,
        Err(e) => return VariantResult::failed(variant, e.to_string()),
    };
    let (jobs_tx, jobs_rx) = crossbeam::channel::unbounded::<FlushJob>();
    let router = Router::new(variant.shards);
    let settings = PathSettings {
        cleanup_threshold: variant.threshold(),
        flush_writers: variant.flush_writers,
        coalescing: variant.coalescing,
        clients: stream.threads(),
    };
    let path = match WritePath::new(router, strategies.shard, Arc::clone(&pool), settings, jobs_tx) {
        Ok(p) => p,
        Err(e) => return VariantResult::failed(variant, e.to_string()),
    };
    let descriptions = match described(&path, strategies.serializer.as_ref(), variant) {
        Ok(d) => d,
        Err(e) => return VariantResult::failed(variant, e.to_string()),
    };
    path.prepare_next_generation();
    let setup = setup_started.elapsed();

    let threads = stream.threads();
    let stop = AtomicBool::new(false);
    let done = AtomicBool::new(false);
    let failure = FirstFailure::default();
    let flushes: Mutex<Vec<FlushReport>> = Mutex::new(Vec::new());
    let serializer_description = Mutex::new(None);
    let live = live::Live::new(threads);
    let start = Barrier::new(threads + 1);
    let resources = resources::Meter::start();
    let plan = client::Plan {
        duration: profile.duration.filter(|_| profile.stream.is_none()),
        rate: profile.target_rate.map(|r| r / threads as f64),
        interrupt: options.interrupt.clone(),
    };
    let display = live::Display {
        lines: options.intervals,
        total: match profile.duration {
            Some(d) if profile.stream.is_none() => Some((d.as_millis() as u64, false)),
            _ => Some(((0..threads).filter_map(|t| stream.ops_for(t)).sum(), true)),
        },
        label: variant.name.clone(),
    };
    let run_started = Instant::now();
    let watched = AtomicBool::new(false);
    let (outcomes, counters, reads, intervals, elapsed) = std::thread::scope(|scope| {
        let watchdog = options.watchdog.as_ref().map(|dog| {
            let (watched, failure, stop) = (&watched, &failure, &stop);
            scope.spawn(move || {
                let mut watch = seam::watch::Watch::default();
                while !watched.load(Ordering::Acquire) {
                    std::thread::sleep(Duration::from_millis(100));
                    if let Some(stall) = watch.stalled(dog.limit) {
                        let message = stall_message(variant, stall);
                        failure.record(message.clone());
                        stop.store(true, Ordering::Relaxed);
                        (dog.on_stall)(variant, &message);
                        break;
                    }
                }
            })
        });
        let flushers: Vec<_> = (0..variant.flush_writers)
            .map(|_| {
                let writer =
                    FlushWriter { jobs: jobs_rx.clone(), serializer: strategies.serializer.as_ref(), dir, pool: &pool, run_started, log: options.log_flushes };
                let (flushes, failure, stop, description) = (&flushes, &failure, &stop, &serializer_description);
                scope.spawn(move || writer.run(flushes, failure, stop, description))
            })
            .collect();
        drop(jobs_rx);
        let interval = Duration::from_secs_f64(config.bench.interval);
        let sampler = {
            let (live, pool, done, display) = (&live, &pool, &done, &display);
            scope.spawn(move || live::sample(live, pool, interval, done, display))
        };
        let clients: Vec<_> = (0..threads)
            .map(|t| {
                let (path, stop, failure, start, live, plan) = (&path, &stop, &failure, &start, &live, &plan);
                scope.spawn(move || {
                    start.wait();
                    let run = std::panic::AssertUnwindSafe(|| client::run(stream, t, path, live, plan, stop, failure));
                    std::panic::catch_unwind(run).map_err(|panic| {
                        failure.record(format!("client thread {t} panicked: {}", flush::panic_message(panic.as_ref())));
                        stop.store(true, Ordering::Relaxed);
                    })
                })
            })
            .collect();
        start.wait();
        let began = Instant::now();
        // A client's panic was caught and recorded as the failure.
        let outcomes: Vec<client::ClientOutcome> = clients.into_iter().filter_map(|c| c.join().ok().and_then(Result::ok)).collect();
        let elapsed = began.elapsed();
        done.store(true, Ordering::Release);
        let intervals = sampler.join().unwrap_or_else(|panic| {
            failure.record(format!("the interval sampler panicked: {}", flush::panic_message(panic.as_ref())));
            Vec::new()
        });
        let reads = read_probe::probe(stream, &path, profile.read_probe, expected.map(|e| (e, variant.memtable.as_str())));
        if let Err(e) = &reads {
            failure.record(e.to_string());
        }
        if let Err(e) = path.drain() {
            failure.record(e.to_string());
        }
        let counters = path.counters();
        for f in flushers {
            // `flush` catches a flush's panic; this is one between flushes.
            if let Err(panic) = f.join() {
                failure.record(format!("a flush writer panicked: {}", flush::panic_message(panic.as_ref())));
            }
        }
        watched.store(true, Ordering::Release);
        if let Some(dog) = watchdog {
            let _ = dog.join();
        }
        (outcomes, counters, reads.unwrap_or_default(), intervals, elapsed)
    });

    let mut result = VariantResult { variant: variant.clone(), ..VariantResult::default() };
    if let Some(reason) = failure.into_inner() {
        result.fail(reason);
    }
    result.resources = resources.stop();
    let tally = tally::clients(&mut result, &outcomes);
    result.plugins = strategies.plugins;
    result.descriptions =
        descriptions.into_iter().chain(serializer_description.into_inner().unwrap_or_else(|p| p.into_inner())).map(|d| (d.name, d.version, d.params)).collect();
    result.elapsed = elapsed;
    result.setup = setup;
    result.paced = profile.target_rate.is_some();
    result.intervals = intervals;
    result.counters = counters;
    result.reads = reads;
    tally::flushes(&mut result, flushes.into_inner().unwrap_or_else(|p| p.into_inner()));
    if options.interrupted() {
        result.fail("interrupted (Ctrl-C): this run was stopped before its end");
    }
    if result.failure().is_none() && variant.verify {
        match verify_run(stream, expected, &tally, dir, strategies.reader.as_ref(), variant) {
            Ok(v) => result.verified = Some(v),
            Err(e) => result.fail(e),
        }
    }
    result
}

/// Reads the segments back and compares them with the stream's final
/// state. Failed ops were never acknowledged, and a run for a duration
/// took as many ops as it had time for: the state holds exactly the
/// acknowledged ops taken. A mismatch names the strategies and the first
/// wrong key.
fn verify_run(
    stream: &Stream,
    expected: Option<&State>,
    tally: &tally::Tally,
    dir: &std::path::Path,
    reader: &verify::ReaderFactory<'static>,
    variant: &Variant,
) -> Result<verify::Verified, String> {
    let computed;
    let expected = match expected {
        // The precomputed state is for the whole stream, every op acknowledged.
        Some(e) if tally.failed_ops.is_empty() && (0..stream.threads()).all(|t| stream.ops_for(t) == tally.taken.get(t).copied()) => e,
        _ => {
            computed = verify::expected(stream, &tally.taken, &tally.failed_ops);
            &computed
        }
    };
    let (found, read) = verify::read_back(dir, reader).map_err(|e| e.to_string())?;
    verify::compare(expected, &found, read).map_err(|e| {
        let e = match e {
            verify::VerifyError::Mismatch { missing, extra, different, expected: n, found: f, expected_digest, found_digest, .. } => {
                let first = verify::explain(stream, &tally.taken, &tally.failed_ops, dir, reader, expected, &found);
                verify::VerifyError::Mismatch { missing, extra, different, expected: n, found: f, expected_digest, found_digest, first }
            }
            other => other,
        };
        format!("{e} (memtable `{}`, allocator `{}`, serializer `{}`)", variant.memtable, variant.allocator, variant.serializer)
    })
}

/// The first thing that failed a run; later failures are its echoes.
#[derive(Default)]
pub(super) struct FirstFailure(Mutex<Option<String>>);

impl FirstFailure {
    /// Keeps `reason` unless a failure was already recorded.
    pub(super) fn record(&self, reason: String) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(reason);
    }

    fn into_inner(self) -> Option<String> {
        self.0.into_inner().unwrap_or_else(|p| p.into_inner())
    }
}

/// One flush writer thread: flushes the jobs it is handed until the write
/// path closes the queue.
struct FlushWriter<'a> {
    jobs: crossbeam::channel::Receiver<FlushJob>,
    serializer: &'a SerializerFactory,
    dir: &'a std::path::Path,
    pool: &'a MemoryPool,
    run_started: Instant,
    log: bool,
}

impl FlushWriter<'_> {
    fn run(self, flushes: &Mutex<Vec<FlushReport>>, failure: &FirstFailure, stop: &AtomicBool, description: &Mutex<Option<memlab_sdk::Description>>) {
        for job in self.jobs {
            job.next.start_ahead();
            match flush::flush(job, self.serializer, self.dir, self.pool, self.run_started) {
                Ok(report) => {
                    if self.log {
                        eprintln!("INFO  {}", report.log_line());
                    }
                    flushes.lock().unwrap_or_else(|p| p.into_inner()).push(report);
                }
                Err(e) => {
                    failure.record(e.to_string());
                    stop.store(true, Ordering::Relaxed);
                }
            }
        }
        let mut d = description.lock().unwrap_or_else(|p| p.into_inner());
        if d.is_none() {
            *d = (self.serializer)(0).and_then(|mut s| s.describe()).ok();
        }
    }
}

/// Loads every variant's plugins and creates each strategy once with its
/// parameters, before the first variant runs: a missing plugin, a bad
/// parameter or a `describe` that does not echo it is refused up front,
/// naming the variant, instead of after the variants before it ran.
pub fn preflight(host: &Arc<PluginHost>, config: &BenchConfig) -> Result<(), String> {
    for v in &config.variants {
        let fail = |e: SeamError| format!("variant `{}`: {e}", v.name);
        let pool = Arc::new(MemoryPool::new(v.memtable_space, v.pool));
        let strategies = strategies::strategies(host, v, &pool).map_err(fail)?;
        let shard = (strategies.shard)(0).and_then(|mut shard| shard.describe()).map_err(fail)?;
        checked_descriptions(v, shard, strategies.serializer.as_ref()).map_err(fail)?;
    }
    Ok(())
}

/// What the memtable and allocator say of themselves, each checked to
/// echo its configured parameters (the serializer's is checked likewise).
fn described(path: &WritePath, serializer: &SerializerFactory, variant: &Variant) -> Result<Vec<memlab_sdk::Description>, SeamError> {
    checked_descriptions(variant, path.describe()?, serializer)
}

/// The memtable's and allocator's descriptions, and a serializer's, each
/// held to the variant's configured parameters; the first two returned.
fn checked_descriptions(
    variant: &Variant,
    (m, a): (memlab_sdk::Description, memlab_sdk::Description),
    serializer: &SerializerFactory,
) -> Result<Vec<memlab_sdk::Description>, SeamError> {
    seam::check_description(&variant.memtable, &params(&variant.memtable_params), &m)?;
    seam::check_description(&variant.allocator, &params(&variant.allocator_params), &a)?;
    let s = serializer(0)?.describe()?;
    seam::check_description(&variant.serializer, &params(&variant.serializer_params), &s)?;
    Ok(vec![m, a])
}
