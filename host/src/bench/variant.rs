//! One run of one variant, in steps: `set_up` loads the strategies,
//! describes each once and starts generation 0; `run` spawns the client,
//! flush, sampler and watchdog threads and joins them, each handing back
//! its own typed result (failures travel on their own channel);
//! `assemble` folds what came back into the record's `VariantResult`.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use crossbeam::channel::Receiver;

use super::client::{self, ClientOutcome};
use super::failures::Failures;
use super::flush_writer::FlushWriter;
use super::strategies::{self, Strategies};
use super::{BenchOptions, breakdown, live, resources, tally};
use crate::config::{BenchConfig, Variant, VerifyRounds, params};
use crate::flush::{self, FlushReport};
use crate::pool::MemoryPool;
use crate::read_probe::{self, ReadProbe};
use crate::record::{Failure, FailureClass, IntervalSample, Resources, RoundChecks, Steady, VariantResult, VariantSpec};
use crate::router::Router;
use crate::seam::{self, Kind, SeamError};
use crate::verify::{self, State};
use crate::workload::Stream;
use crate::write_path::{CallTimes, FlushJob, PathSettings, WriteCounters, WritePath};

/// The round number of the profiled round (`--profile`), after the
/// measured ones: it is not verified, and no verdict counts it.
pub(super) const PROFILED_ROUND: usize = 0;

/// What every variant of a bench shares.
pub(super) struct Bench<'a> {
    pub(super) host: &'a Arc<crate::plugin::PluginHost>,
    pub(super) config: &'a BenchConfig,
    pub(super) stream: &'a Stream,
    /// The stream routed ahead, when it was replayed from memory.
    pub(super) prepared: Option<&'a crate::router::Prepared>,
    pub(super) expected: Option<&'a State>,
    pub(super) options: &'a BenchOptions,
    /// What a crossing and a clock read cost, measured once per bench.
    pub(super) calibration: breakdown::Calibration,
}

/// A variant set up and ready to run.
pub(super) struct VariantRun<'a> {
    bench: &'a Bench<'a>,
    variant: &'a Variant,
    dir: &'a Path,
    pool: Arc<MemoryPool>,
    plugins: Vec<crate::record::PluginInfo>,
    serializer: Box<flush::SerializerFactory>,
    reader: Box<verify::ReaderFactory<'static>>,
    path: WritePath,
    jobs: Receiver<FlushJob>,
    descriptions: BTreeMap<Kind, memlab_sdk::Description>,
    setup: Duration,
    /// Creates the log format that reads the log back after the run.
    commitlog_format: Option<Box<strategies::CommitLogFactory>>,
    /// A secret shard's calls, and its twins (`described.rs`).
    tape: seam::Tape,
    twin: Box<strategies::TwinFactory>,
}

/// What the run's threads handed back.
struct Joined {
    clients: Vec<ClientOutcome>,
    flushes: Vec<FlushReport>,
    intervals: Vec<IntervalSample>,
    reads: ReadProbe,
    counters: WriteCounters,
    calls: CallTimes,
    elapsed: Duration,
    steady: Option<Steady>,
    resources: Resources,
}

/// Runs `variant` once: set up, run, assemble; a set-up failure is the
/// result.
pub(super) fn run_variant(bench: &Bench<'_>, variant: &Variant, dir: &Path, round: usize) -> VariantResult {
    let started = Instant::now();
    let _ = std::fs::remove_dir_all(dir);
    let pool = Arc::new(MemoryPool::new(variant.memtable_space, variant.pool));
    let strategies = match strategies::strategies(bench.host, variant, &pool) {
        Ok(s) => s,
        Err(e) => return VariantResult::failed(VariantSpec::from(variant), Failure::from(&e)),
    };
    let plugins = strategies.plugins.clone();
    match VariantRun::set_up(bench, variant, dir, pool, strategies, started) {
        Ok(run) => run.run(round),
        Err(e) => with_sha256(VariantResult { plugins, ..VariantResult::failed(VariantSpec::from(variant), Failure::from(&e)) }),
    }
}

impl<'a> VariantRun<'a> {
    fn set_up(
        bench: &'a Bench<'a>,
        variant: &'a Variant,
        dir: &'a Path,
        pool: Arc<MemoryPool>,
        strategies: Strategies,
        started: Instant,
    ) -> Result<Self, SeamError> {
        let descriptions = checked_descriptions(variant, strategies.describe()?)?;
        let Strategies { plugins, shard, serializer, reader, log: commitlog_format, tape, twin } = strategies;
        // Past `describe`'s shard: the run's own shard is taped.
        tape.open();
        let (jobs_tx, jobs) = crossbeam::channel::unbounded::<FlushJob>();
        let settings = PathSettings {
            cleanup_threshold: variant.threshold(),
            flush_writers: variant.flush_writers,
            coalescing: variant.coalescing,
            clients: bench.stream.threads(),
            concurrent: variant.unlocked(),
        };
        let mut path = WritePath::new(Router::new(variant.shards), shard, Arc::clone(&pool), settings, jobs_tx)?;
        if let Some(log) = super::log::open(variant, dir, commitlog_format.as_deref(), bench.options.interrupt.clone(), path.log_lanes())? {
            path = path.with_log(log);
        }
        path.prepare_next_generation();
        let setup = started.elapsed();
        Ok(VariantRun { bench, variant, dir, pool, plugins, serializer, reader, path, jobs, descriptions, setup, commitlog_format, tape, twin })
    }

    fn run(self, round: usize) -> VariantResult {
        let (failures, failed) = Failures::new();
        let joined = self.run_threads(&failures);
        let failure = failed.try_iter().next();
        let (failure, on_rows) = match failure {
            Some(failure) => (Some(failure), None),
            None => match super::described::hold(self.variant, &self.descriptions, &self.tape, &self.twin) {
                Ok(on_rows) => (None, on_rows),
                Err(e) => (Some(Failure::from(&e)), None),
            },
        };
        // The profiled round is never verified: its profile is the run's.
        let verify = round == 1 || (round != PROFILED_ROUND && self.bench.config.bench.verify_rounds == VerifyRounds::All);
        let mut result = self.assemble(joined, failure, (verify, round));
        if let Some(on_rows) = on_rows {
            result.no_effect = Some(on_rows.idle);
            result.not_probed = on_rows.unprobed;
            result.params_rows = on_rows.rows;
        }
        result
    }

    /// Spawns every thread of the run and joins them in order: clients,
    /// sampler, the read probe and the drain, flush writers, watchdog.
    fn run_threads(&self, failures: &Failures) -> Joined {
        let threads = self.bench.stream.threads();
        let live = live::Live::new(threads);
        let start = Barrier::new(threads + 1);
        let (done, watched) = (AtomicBool::new(false), AtomicBool::new(false));
        let meter = resources::Meter::start();
        let run_started = Instant::now();
        let plan = self.plan();
        let switches = || self.path.switches();
        let warmup = live::WarmupWatch { rule: self.bench.config.bench.warmup, switches: &switches };
        // This run's own board: the probe and the drain run on this thread.
        let board = seam::watch::Board::new();
        let _watched = board.enter();
        std::thread::scope(|scope| {
            let watchdog = self.bench.options.watchdog.as_ref().map(|dog| scope.spawn(|| watch(dog, &board, self.variant, &watched, failures)));
            let flushers: Vec<_> = (0..self.variant.flush_writers)
                .map(|_| {
                    let writer = FlushWriter {
                        jobs: self.jobs.clone(),
                        serializer: self.serializer.as_ref(),
                        dir: self.dir,
                        pool: &self.pool,
                        run_started,
                        log: self.bench.options.log_flushes,
                    };
                    let board = &board;
                    scope.spawn(move || {
                        let _watched = board.enter();
                        writer.run(failures)
                    })
                })
                .collect();
            let sampler = scope.spawn(|| live::sample(&live, &self.pool, self.interval(), &done, &self.display(), &warmup));
            let clients: Vec<_> = (0..threads)
                .map(|t| {
                    scope.spawn({
                        let (live, plan, start, board) = (&live, &plan, &start, &board);
                        move || {
                            let _watched = board.enter();
                            self.client(t, live, plan, start, failures)
                        }
                    })
                })
                .collect();
            start.wait();
            let began = Instant::now();
            let clients: Vec<ClientOutcome> = clients.into_iter().filter_map(|c| c.join().ok().flatten()).collect();
            let end = End { at: Instant::now(), cpu: live::process_cpu(), switches: self.path.switches(), rows: clients.iter().map(|c| c.rows).sum() };
            let elapsed = end.at - began;
            done.store(true, Ordering::Release);
            let (intervals, warm) = sampler.join().unwrap_or_else(|panic| {
                failures.report(Failure::new(FailureClass::Panic, format!("the interval sampler panicked: {}", crate::util::panic_message(panic.as_ref()))));
                (Vec::new(), None)
            });
            let steady = warm.and_then(|w| steady(began, w, &end));
            let reads = self.probe_and_drain(failures);
            let (counters, calls) = (self.path.counters(), self.path.call_times());
            let flushes = flushers.into_iter().flat_map(|f| join_flusher(f, failures)).collect();
            watched.store(true, Ordering::Release);
            if let Some(dog) = watchdog {
                let _ = dog.join();
            }
            Joined { clients, flushes, intervals, reads, counters, calls, elapsed, steady, resources: meter.stop() }
        })
    }

    /// One client thread; a panic is reported as the failure.
    fn client(&self, t: usize, live: &live::Live, plan: &client::Plan, start: &Barrier, failures: &Failures) -> Option<ClientOutcome> {
        start.wait();
        let feed = self.bench.prepared.map_or(client::Feed::Live(self.bench.stream), client::Feed::Prepared);
        let run = std::panic::AssertUnwindSafe(|| client::run(feed, t, &self.path, live, plan, failures));
        std::panic::catch_unwind(run)
            .map_err(|panic| {
                failures.report(Failure::new(FailureClass::Panic, format!("client thread {t} panicked: {}", crate::util::panic_message(panic.as_ref()))))
            })
            .ok()
    }

    /// Point reads from the live memtables, then the final drain.
    fn probe_and_drain(&self, failures: &Failures) -> ReadProbe {
        let expected = self.bench.expected.map(|e| (e, self.variant.plugin(Kind::Memtable)));
        let reads = read_probe::probe(self.bench.stream, &self.path, self.bench.config.workload.read_probe, expected);
        if let Err(e) = &reads {
            failures.report(Failure::from(e));
        }
        let mut reads = reads.unwrap_or_default();
        match self.path.drain() {
            Ok(generation) => reads.drained = Some(generation),
            Err(e) => failures.report(Failure::from(&e)),
        }
        reads
    }

    fn plan(&self) -> client::Plan {
        let (profile, threads) = (&self.bench.config.workload, self.bench.stream.threads());
        client::Plan {
            duration: profile.duration.filter(|_| profile.stream.is_none()),
            rate: profile.target_rate.map(|r| r / threads as f64),
            interrupt: self.bench.options.interrupt.clone(),
        }
    }

    fn interval(&self) -> Duration {
        Duration::from_secs_f64(self.bench.config.bench.interval)
    }

    fn display(&self) -> live::Display {
        let (profile, stream) = (&self.bench.config.workload, self.bench.stream);
        live::Display {
            lines: self.bench.options.intervals,
            total: match profile.duration {
                Some(d) if profile.stream.is_none() => Some((d.as_millis() as u64, false)),
                _ => Some(((0..stream.threads()).filter_map(|t| stream.ops_for(t)).sum(), true)),
            },
            label: self.variant.name.clone(),
        }
    }

    /// Folds the threads' results into the record, then verifies.
    fn assemble(mut self, joined: Joined, failure: Option<Failure>, (verify, round): (bool, usize)) -> VariantResult {
        let variant = self.variant;
        let mut result = VariantResult { variant: VariantSpec::from(variant), ..VariantResult::default() };
        if let Some(failure) = failure {
            result.fail(failure);
        }
        let tally = tally::clients(&mut result, &joined.clients);
        result.resources = joined.resources;
        result.plugins = self.plugins;
        result.descriptions = self.descriptions.into_iter().map(|(kind, d)| (kind, (d.name, d.version, d.params))).collect();
        (result.elapsed, result.setup, result.steady) = (joined.elapsed, self.setup, joined.steady);
        result.paced = self.bench.config.workload.target_rate.is_some();
        result.intervals = joined.intervals;
        result.counters = joined.counters.into();
        result.reads = (&joined.reads).into();
        let crossing = variant.runtime == crate::config::Runtime::Wasm;
        result.time = breakdown::breakdown(&joined.clients, &joined.counters, &joined.calls, &joined.flushes, self.bench.calibration.for_runtime(crossing));
        let tallies: HashMap<(u64, usize), seam::ledger::Tally> = joined.flushes.iter().filter_map(|f| f.digest.map(|d| ((f.generation, f.part), d))).collect();
        let ledger_rows = joined.flushes.iter().filter(|f| f.digest.is_some()).map(|f| f.rows).sum();
        tally::flushes(&mut result, joined.flushes);
        if self.bench.options.interrupted() {
            result.fail(Failure::interrupted());
        }
        if let (Some(log), Some(format)) = (self.path.log(), &self.commitlog_format) {
            let read_back = (variant.verify && result.failure().is_none()).then_some(round as u64);
            let (figures, failure) = super::log::close(log, format.as_ref(), variant.plugin(Kind::CommitLog), (&joined.counters, &joined.calls), read_back);
            result.commitlog = Some(figures);
            match self.path.log_stats() {
                Ok(stats) => drop(result.stats.insert(Kind::CommitLog, stats)),
                Err(e) => result.fail(Failure::from(&e)),
            }
            if let Some(failure) = failure {
                result.fail(failure);
            }
        }
        if result.failure().is_none() && variant.verify {
            let missed: HashMap<u64, &[u8]> = joined.reads.missed.iter().map(|k| (seam::ledger::hash(k), k.as_slice())).collect();
            let spot = verify::Spot { every: variant.verify_sample, writer: Some(self.serializer.as_ref()) };
            let how = Check { dir: self.dir, spot, tallies: &tallies, final_state: verify, round: round as u64, drained: joined.reads.drained };
            match verify_run(self.bench, &tally, how, self.reader.as_ref(), &missed) {
                Ok((v, found)) => {
                    result.checked = Some(RoundChecks { ledger_rows, segments: found.segments, tallied: found.tallied, final_state: v.is_some() });
                    if v.is_none() {
                        result.not_verified =
                            Some("`verify_rounds = \"first\"`: the final state against the stream was checked in this variant's first round".into());
                    }
                    result.verified = v.map(Into::into);
                    if let Err(failure) = misses_hold(&missed, &found.held, joined.reads.keys, variant.plugin(Kind::Memtable)) {
                        result.fail(failure);
                    }
                }
                Err(e) => {
                    // A segment that is not what its serializer was handed is the serializer's.
                    let serializer = matches!(e, verify::VerifyError::Tally { .. }).then(|| variant.plugin(Kind::Serializer).to_string());
                    let failure = Failure::from(&e);
                    let ran: Vec<String> = variant.strategies().map(|(kind, s)| format!("{kind} `{}`", s.plugin)).collect();
                    result.fail(Failure { message: format!("{e} ({})", ran.join(", ")), plugin: serializer.or(failure.plugin.clone()), ..failure });
                }
            }
        }
        with_sha256(result)
    }
}

/// A point read that missed must be a key the live memtables did not
/// hold: the segment the drain wrote from them (`held`, of the `missed`
/// keys) must not have it either. A memtable that answers "absent" would
/// otherwise publish a get rate without the gets.
fn misses_hold(missed: &HashMap<u64, &[u8]>, held: &[u64], probed: u64, memtable: &str) -> Result<(), Failure> {
    let Some(first) = held.iter().filter_map(|h| missed.get(h)).min() else { return Ok(()) };
    let detail = format!(
        "answered absent for {} of {probed} probed keys that the live memtable held (its generation's segment has them), the first {}",
        held.len(),
        seam::show_key(first)
    );
    Err(Failure::from(&SeamError::contract(memtable, seam::Op::MemtableGet, 0, detail)))
}

/// The run's state when its last client finished.
struct End {
    at: Instant,
    cpu: Duration,
    switches: u64,
    rows: u64,
}

/// The window from the warm-up's end to the last op; none when the
/// warm-up lasted the whole run.
fn steady(began: Instant, warm: live::WarmupEnd, end: &End) -> Option<Steady> {
    let from = warm.at.max(began);
    let secs = end.at.checked_duration_since(from)?.as_secs_f64();
    (secs > 0.0 && end.rows > warm.rows).then(|| Steady {
        warmup_secs: (from - began).as_secs_f64(),
        warmup_rows: warm.rows,
        secs,
        rows: end.rows - warm.rows,
        cpu: end.cpu.saturating_sub(warm.cpu).as_secs_f64(),
        switches: end.switches.saturating_sub(warm.switches),
    })
}

/// A failed plugin's sha256, from the plugins the run loaded.
fn with_sha256(mut result: VariantResult) -> VariantResult {
    let plugins = result.plugins.clone();
    if let crate::record::Outcome::Failed(f) = &mut result.outcome
        && f.sha256.is_none()
        && let Some(p) = f.plugin.as_ref().and_then(|name| plugins.iter().find(|p| &p.name == name))
    {
        f.sha256 = Some(p.sha256.clone());
    }
    result
}

/// Joins a flush writer; a panic between flushes is reported.
fn join_flusher(f: std::thread::ScopedJoinHandle<'_, Vec<FlushReport>>, failures: &Failures) -> Vec<FlushReport> {
    f.join().unwrap_or_else(|panic| {
        failures.report(Failure::new(FailureClass::Panic, format!("a flush writer panicked: {}", crate::util::panic_message(panic.as_ref()))));
        Vec::new()
    })
}

/// Watches the run's plugin calls until `watched`; a stall fails the run
/// and is handed to the watchdog's `on_stall`.
fn watch(dog: &super::Watchdog, board: &Arc<seam::watch::Board>, variant: &Variant, watched: &AtomicBool, failures: &Failures) {
    let mut watch = board.watch();
    while !watched.load(Ordering::Acquire) {
        std::thread::sleep(Duration::from_millis(100));
        if let Some(stall) = watch.stalled(dog.limit_now()) {
            let failure = stall_failure(variant, stall);
            failures.report(failure.clone());
            (dog.on_stall)(variant, &failure);
            break;
        }
    }
}

/// What a stall is reported as: the plugin, the operation, the shard.
pub(super) fn stall_failure(variant: &Variant, stall: seam::watch::Stall) -> Failure {
    let plugin = variant.strategy(stall.call.kind()).plugin;
    let message = format!(
        "plugin `{plugin}` made no progress for {:.0} s in `{}` on shard {} (a call that never returns; with no per-call deadline it cannot be interrupted, so the run was ended)",
        stall.for_.as_secs_f64(),
        stall.call,
        stall.shard
    );
    Failure {
        plugin: Some(plugin.to_string()),
        operation: Some(stall.call.name().into()),
        shard: Some(stall.shard),
        ..Failure::new(FailureClass::Stall, message)
    }
}

/// How one round's segments are read back.
struct Check<'c> {
    dir: &'c Path,
    spot: verify::Spot<'c>,
    /// The host's tally of what each segment was handed.
    tallies: &'c HashMap<(u64, usize), seam::ledger::Tally>,
    /// Whether to compare the final state with the stream this round.
    final_state: bool,
    round: u64,
    /// The generation the drain froze right after the read probe.
    drained: Option<u64>,
}

/// Reads every segment back whole, each held to the host's tally of what
/// its serializer was handed, with the spot checks; in a round that
/// checks the final state, also compares it with the stream's. Failed
/// ops were never acknowledged, and a run for a duration took as many
/// ops as it had time for: the state holds exactly the acknowledged ops
/// taken. A mismatch names the first wrong key. The read-back also finds
/// which of the `missed` probe keys the newest generation holds.
fn verify_run(
    bench: &Bench<'_>,
    tally: &tally::Tally,
    how: Check<'_>,
    reader: &verify::ReaderFactory<'static>,
    missed: &HashMap<u64, &[u8]>,
) -> Result<(Option<verify::Verified>, verify::ReadBackFound), verify::VerifyError> {
    let watch = missed.keys().copied().collect();
    let read =
        verify::ReadBack { spot: how.spot, watch: &watch, watch_generation: how.drained, tallies: Some(how.tallies), state: how.final_state, round: how.round };
    let found = verify::read_back_all(how.dir, reader, read)?;
    if !how.final_state {
        return Ok((None, found));
    }
    let stream = bench.stream;
    let computed;
    let expected = match bench.expected {
        // The precomputed state is for the whole stream, every op acknowledged.
        Some(e) if tally.failed_ops.is_empty() && (0..stream.threads()).all(|t| stream.ops_for(t) == tally.taken.get(t).copied()) => e,
        _ => {
            computed = verify::expected(stream, &tally.taken, &tally.failed_ops);
            &computed
        }
    };
    let verified = verify::compare(expected, &found.state, found.rows).map_err(|e| match e {
        verify::VerifyError::Mismatch { missing, extra, different, expected: n, found: f, expected_digest, found_digest, .. } => {
            let first = verify::explain(stream, &tally.taken, &tally.failed_ops, how.dir, reader, expected, &found.state);
            verify::VerifyError::Mismatch { missing, extra, different, expected: n, found: f, expected_digest, found_digest, first }
        }
        other => other,
    })?;
    Ok((Some(verified), found))
}

/// What each of the variant's strategies says of itself, by kind, each
/// held to the variant's configured parameters and to its identity. A
/// strategy the variant runs with no description, or a description of a
/// kind it does not run, is refused.
pub(super) fn checked_descriptions(
    variant: &Variant,
    mut described: BTreeMap<Kind, memlab_sdk::Description>,
) -> Result<BTreeMap<Kind, memlab_sdk::Description>, SeamError> {
    let mut checked = BTreeMap::new();
    for (kind, strategy) in variant.strategies() {
        let d = described
            .remove(&kind)
            .ok_or_else(|| SeamError::Host { operation: "describe", detail: format!("the {kind} `{}` was never described", strategy.plugin) })?;
        seam::check_description(kind, strategy.plugin, &params(strategy.params), &d)?;
        crate::plugin::check_identity(kind, strategy.plugin, &d)?;
        checked.insert(kind, d);
    }
    if let Some(kind) = described.keys().next() {
        return Err(SeamError::Host { operation: "describe", detail: format!("a {kind} was described, but the variant runs none") });
    }
    Ok(checked)
}
