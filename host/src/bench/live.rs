//! What a run looks like while it runs: counters the clients bump, an
//! interval histogram per client, and a sampler thread that turns them
//! into cassandra-stress-like interval lines and a progress bar.

use std::io::IsTerminal;
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
    let bar = display.total.filter(|_| std::io::stderr().is_terminal()).map(|(len, is_ops)| {
        let bar = indicatif::ProgressBar::new(len);
        let unit = if is_ops { "ops" } else { "ms" };
        bar.set_style(
            indicatif::ProgressStyle::with_template(&format!("{{prefix}} [{{bar:40}}] {{pos}}/{{len}} {unit} {{msg}}"))
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        bar.set_prefix(crate::seam::text::for_terminal(&display.label));
        bar
    });
    // Each line ends with its variant, so lines of many variants can be
    // told apart (and grepped).
    let variant = crate::seam::text::clean(&display.label);
    let say = |line: String, tail: &str| {
        let line = format!("{line}  {tail}");
        match &bar {
            Some(bar) => bar.println(line),
            // A closed stdout stops the lines, not the run.
            None => {
                let _ = std::io::Write::write_all(&mut std::io::stdout(), format!("{line}\n").as_bytes());
            }
        }
    };
    if display.lines {
        say(
            format!(
                "{:<10} {:>10} {:>9} {:>10} {:>7} {:>7} {:>7} {:>7} {:>7} {:>8} {:>7} {:>6} {:>8} {:>5}",
                "type", "total ops", "op/s", "row/s", "mean", "med", ".95", ".99", ".999", "max", "time", "errors", "mem MiB", "cpu%"
            ),
            "variant",
        );
    }
    let started = Instant::now();
    let mut samples = Vec::new();
    let (mut last_ops, mut last_rows, mut last_errors) = (0, 0, 0);
    let mut last_at = started;
    let mut last_cpu = process_cpu();
    let mut merged = histogram();
    let mut warm: Option<WarmupEnd> = None;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    loop {
        let finished = done.load(Ordering::Acquire);
        if !finished {
            let next = last_at + interval;
            // Short sleeps, so the end of a run (and of its warm-up) is
            // noticed quickly.
            while Instant::now() < next && !done.load(Ordering::Acquire) {
                if warm.is_none() && warmup.ended(started.elapsed()) {
                    let rows = live.rows.load(Ordering::Relaxed);
                    warm = Some(WarmupEnd { at: Instant::now(), rows, cpu: process_cpu(), switches: (warmup.switches)() });
                }
                std::thread::sleep(Duration::from_millis(5).min(next.saturating_duration_since(Instant::now())));
            }
        }
        let now = Instant::now();
        let cpu = process_cpu();
        merged.reset();
        for h in &live.histograms {
            let mut h = h.lock().unwrap_or_else(|p| p.into_inner());
            let _ = merged.add(&*h);
            h.reset();
        }
        let (ops, rows, errors) = (live.ops.load(Ordering::Relaxed), live.rows.load(Ordering::Relaxed), live.errors.load(Ordering::Relaxed));
        let secs = now.duration_since(last_at).as_secs_f64().max(1e-9);
        let s = IntervalSample {
            at: now.duration_since(started).as_secs_f64(),
            secs,
            ops: ops - last_ops,
            rows: rows - last_rows,
            op_rate: (ops - last_ops) as f64 / secs,
            row_rate: (rows - last_rows) as f64 / secs,
            latency: Latency::from(&merged),
            errors: errors - last_errors,
            memory: pool.owns(),
            cpu: cpu.saturating_sub(last_cpu).as_secs_f64(),
            warmup: warm.is_none(),
        };
        if s.ops > 0 || !finished {
            if display.lines {
                let ms = |ns: u64| ns as f64 / 1e6;
                say(
                    format!(
                        "{:<10} {:>10} {:>9.0} {:>10.0} {:>7.3} {:>7.3} {:>7.3} {:>7.3} {:>7.3} {:>8.3} {:>7.1} {:>6} {:>8.1} {:>5.0}",
                        if s.warmup { "warmup," } else { "total," },
                        ops,
                        s.op_rate,
                        s.row_rate,
                        s.latency.mean / 1e6,
                        ms(s.latency.p50),
                        ms(s.latency.p95),
                        ms(s.latency.p99),
                        ms(s.latency.p999),
                        ms(s.latency.max),
                        s.at,
                        errors,
                        s.memory as f64 / (1 << 20) as f64,
                        100.0 * s.cpu / (s.secs * cores)
                    ),
                    &variant,
                );
            }
            samples.push(s);
        }
        if let Some(bar) = &bar {
            match display.total {
                Some((_, true)) => bar.set_position(ops),
                _ => bar.set_position(now.duration_since(started).as_millis() as u64),
            }
            bar.set_message(format!("{:.0} row/s", s.row_rate));
        }
        (last_ops, last_rows, last_errors, last_at, last_cpu) = (ops, rows, errors, now, cpu);
        if finished {
            break;
        }
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    (samples, warm)
}
