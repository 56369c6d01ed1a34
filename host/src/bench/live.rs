//! What a run looks like while it runs: counters the clients bump, an
//! interval histogram per client, and a sampler thread that turns them
//! into cassandra-stress-like interval lines and a progress bar.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use super::histogram;
use crate::config::Warmup;
use crate::pool::MemoryPool;
use crate::record::{IntervalSample, Latency};

/// Counters shared by the clients and the sampler.
pub(super) struct Live {
    ops: AtomicU64,
    rows: AtomicU64,
    errors: AtomicU64,
    histograms: Vec<Mutex<Histogram<u64>>>,
}

impl Live {
    pub(super) fn new(clients: usize) -> Self {
        Live { ops: AtomicU64::new(0), rows: AtomicU64::new(0), errors: AtomicU64::new(0), histograms: (0..clients).map(|_| Mutex::new(histogram())).collect() }
    }

    /// Counts one op of client `thread`.
    pub(super) fn record(&self, thread: usize, latency_ns: u64, rows: u64, failed: bool) {
        self.ops.fetch_add(1, Ordering::Relaxed);
        self.rows.fetch_add(rows, Ordering::Relaxed);
        if failed {
            self.errors.fetch_add(1, Ordering::Relaxed);
        }
        if let Some(h) = self.histograms.get(thread) {
            let _ = h.lock().unwrap_or_else(|p| p.into_inner()).record(latency_ns.max(1));
        }
    }
}

/// Where the warm-up ends: the run's state when it did.
#[derive(Debug, Clone, Copy)]
pub(super) struct WarmupEnd {
    /// When.
    pub at: Instant,
    /// Rows written by then.
    pub rows: u64,
    /// The process's CPU time then.
    pub cpu: Duration,
    /// Memtable switches by then.
    pub switches: u64,
}

/// What the sampler watches for the end of the warm-up.
pub(super) struct WarmupWatch<'a> {
    /// The rule.
    pub rule: Warmup,
    /// Memtable switches so far.
    pub switches: &'a (dyn Fn() -> u64 + Sync),
}

impl WarmupWatch<'_> {
    fn ended(&self, since_start: Duration) -> bool {
        match self.rule {
            Warmup::FirstSwitch => (self.switches)() >= 1,
            Warmup::Time(t) => since_start >= t,
        }
    }
}

/// The process's CPU time (all threads), zero where it cannot be read.
pub(super) fn process_cpu() -> Duration {
    cpu_time::ProcessTime::try_now().map(|t| t.as_duration()).unwrap_or_default()
}

/// How the sampler shows progress.
pub(super) struct Display {
    /// Print an interval line each interval.
    pub lines: bool,
    /// The progress bar's length: ops (count mode) or milliseconds.
    pub total: Option<(u64, bool)>,
    /// The variant's name, on the bar.
    pub label: String,
}

/// Samples `live` every `interval` until `done`; returns the samples and
/// where the warm-up ended, if it did (checked every few milliseconds).
pub(super) fn sample(
    live: &Live,
    pool: &MemoryPool,
    interval: Duration,
    done: &AtomicBool,
    display: &Display,
    warmup: &WarmupWatch<'_>,
) -> (Vec<IntervalSample>, Option<WarmupEnd>) {
    let printer = super::progress::Printer::new(display);
    let started = Instant::now();
    let mut samples = Vec::new();
    let mut last = Taken { ops: 0, rows: 0, errors: 0, at: started, cpu: process_cpu() };
    let mut merged = histogram();
    let mut warm: Option<WarmupEnd> = None;
    loop {
        let finished = done.load(Ordering::Acquire);
        if !finished {
            wait(last.at + interval, done, live, warmup, started, &mut warm);
        }
        let (s, now) = last.take(live, pool, &mut merged, started, warm.is_none());
        if s.ops > 0 || !finished {
            printer.line(&s, last.ops, last.errors);
            samples.push(s);
        }
        printer.progress(last.ops, now.duration_since(started), s.row_rate);
        if finished {
            break;
        }
    }
    printer.finish();
    (samples, warm)
}

/// Sleeps until `next` in short steps, so the end of a run (and of its
/// warm-up) is noticed quickly; notes where the warm-up ended.
fn wait(next: Instant, done: &AtomicBool, live: &Live, warmup: &WarmupWatch<'_>, started: Instant, warm: &mut Option<WarmupEnd>) {
    while Instant::now() < next && !done.load(Ordering::Acquire) {
        if warm.is_none() && warmup.ended(started.elapsed()) {
            let rows = live.rows.load(Ordering::Relaxed);
            *warm = Some(WarmupEnd { at: Instant::now(), rows, cpu: process_cpu(), switches: (warmup.switches)() });
        }
        std::thread::sleep(Duration::from_millis(5).min(next.saturating_duration_since(Instant::now())));
    }
}

/// The counters as the last sample took them.
struct Taken {
    ops: u64,
    rows: u64,
    errors: u64,
    at: Instant,
    cpu: Duration,
}

impl Taken {
    /// The interval since the last sample, the clients' histograms
    /// merged (and reset); `self` becomes now.
    fn take(&mut self, live: &Live, pool: &MemoryPool, merged: &mut Histogram<u64>, started: Instant, warming: bool) -> (IntervalSample, Instant) {
        let now = Instant::now();
        let cpu = process_cpu();
        merged.reset();
        for h in &live.histograms {
            let mut h = h.lock().unwrap_or_else(|p| p.into_inner());
            let _ = merged.add(&*h);
            h.reset();
        }
        let (ops, rows, errors) = (live.ops.load(Ordering::Relaxed), live.rows.load(Ordering::Relaxed), live.errors.load(Ordering::Relaxed));
        let secs = now.duration_since(self.at).as_secs_f64().max(1e-9);
        let s = IntervalSample {
            at: now.duration_since(started).as_secs_f64(),
            secs,
            ops: ops - self.ops,
            rows: rows - self.rows,
            op_rate: (ops - self.ops) as f64 / secs,
            row_rate: (rows - self.rows) as f64 / secs,
            latency: Latency::from(&*merged),
            errors: errors - self.errors,
            memory: pool.owns(),
            cpu: cpu.saturating_sub(self.cpu).as_secs_f64(),
            warmup: warming,
        };
        *self = Taken { ops, rows, errors, at: now, cpu };
        (s, now)
    }
}
