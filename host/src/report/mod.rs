//! The text report: a cassandra-stress-style summary per variant, then a
//! side-by-side table with each figure's ratio to the first variant.

use std::fmt::Write as _;
use std::time::Duration;

mod breakdown;
mod charts;
mod counters;
mod fidelity;
pub mod figures;
pub mod html;
pub mod sweep;
mod verdict;
mod verified;

use figures::FIGURES;

pub use fidelity::fidelity;
pub use verdict::{Headline, headline, verdict_block};

pub use crate::record::verdict::by_variant;
use crate::record::verdict::{round_rate, verdicts};
use crate::record::{BenchResult, Stat, VariantResult, stats};

pub(crate) fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

fn thousands(n: f64) -> String {
    let whole = n.round().abs() as u64;
    let digits = whole.to_string();
    let mut out = String::from(if n.round() < 0.0 { "-" } else { "" });
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn ms(ns: f64) -> String {
    format!("{:.3} ms", ns / 1e6)
}

fn hms(d: Duration) -> String {
    let s = d.as_secs();
    format!("{:02}:{:02}:{:02}.{:03}", s / 3600, s / 60 % 60, s % 60, d.subsec_millis())
}

/// Figures derived from a variant's raw numbers.
#[derive(Debug, Clone, Copy)]
pub struct Rates {
    /// Ops per second.
    pub ops: f64,
    /// Partitions per second.
    pub partitions: f64,
    /// Rows per second.
    pub rows: f64,
    /// Flushed rows per second of flush wall time.
    pub flushed_rows: f64,
    /// Flush wall time in all.
    pub flush_wall: Duration,
    /// Flush thread CPU time in all.
    pub flush_cpu: Duration,
    /// Bytes flushed in all.
    pub flush_bytes: u64,
    /// Rows flushed in all.
    pub flush_rows: u64,
}

impl Rates {
    /// Derives the rates.
    pub fn of(v: &VariantResult) -> Self {
        let secs = v.elapsed.as_secs_f64().max(1e-9);
        let flush_wall = total_time(v.flushes.iter().map(|f| f.wall));
        let flush_rows = total(v.flushes.iter().map(|f| f.rows));
        Rates {
            ops: v.ops as f64 / secs,
            partitions: v.partitions as f64 / secs,
            rows: v.rows as f64 / secs,
            flushed_rows: flush_rows as f64 / flush_wall.as_secs_f64().max(1e-9),
            flush_wall,
            flush_cpu: total_time(v.flushes.iter().map(|f| f.cpu)),
            flush_bytes: total(v.flushes.iter().map(|f| f.bytes)),
            flush_rows,
        }
    }
}

fn stat(map: &std::collections::BTreeMap<String, u64>, stat: Stat) -> u64 {
    map.get(stat.name()).copied().unwrap_or(0)
}

/// One variant's summary.
pub fn summary(v: &VariantResult) -> String {
    let mut s = String::new();
    let c = &v.variant;
    let repeat = if v.repeat > 1 { format!(" (round {})", v.repeat) } else { String::new() };
    let _ = writeln!(s, "Results: {}{repeat}", c.name);
    let _ = writeln!(
        s,
        "  memtable {}, allocator {}, serializer {}; {:?} runtime; {} shard(s); pool {}; coalescing {}; memtable_space {:.0} MiB, switch at {:.0}%; {} flush writer(s)",
        c.memtable,
        c.allocator,
        c.serializer,
        c.runtime,
        c.shards,
        c.pool,
        c.coalescing,
        mib(c.memtable_space),
        c.threshold() * 100.0,
        c.flush_writers
    );
    if let Some(failure) = v.failure() {
        let _ = writeln!(s, "FAILED: {failure}");
        let _ = writeln!(s, "(figures of a failed variant are not valid and are not shown)");
        return s;
    }
    let r = Rates::of(v);
    let mut rows = rate_lines(v, &r);
    rows.extend(write_path_lines(v));
    rows.extend(flush_and_memory_lines(v, &r));
    rows.extend(run_lines(v));
    for (name, value) in rows {
        let _ = writeln!(s, "{name:<26}: {value}");
    }
    s
}

/// Rates, latency, totals and the op mix.
fn rate_lines(v: &VariantResult, r: &Rates) -> Vec<(&'static str, String)> {
    let l = &v.latency;
    let mut rows = vec![
        ("Op rate", format!("{} op/s", thousands(r.ops))),
        ("Partition rate", format!("{} pk/s", thousands(r.partitions))),
        ("Row rate", format!("{} row/s", thousands(r.rows))),
        ("Latency mean", ms(l.mean)),
        ("Latency median", ms(l.p50 as f64)),
        ("Latency 95th percentile", ms(l.p95 as f64)),
        ("Latency 99th percentile", ms(l.p99 as f64)),
        ("Latency 99.9th percentile", ms(l.p999 as f64)),
        ("Latency max", ms(l.max as f64)),
        ("Total partitions", thousands(v.partitions as f64)),
        (
            "Total errors",
            match &v.first_error {
                Some(first) if v.errors > 0 => format!("{} (the first: {first})", thousands(v.errors as f64)),
                _ => thousands(v.errors as f64),
            },
        ),
        ("Total operation time", hms(v.elapsed)),
        ("Steady state", steady_line(v)),
        ("CPU time", cpu_line(v)),
        ("Op mix", op_mix(v)),
        (
            "Latency measured",
            if v.paced { "from each op's intended start (target rate; no coordinated omission)".into() } else { "from each op's start".into() },
        ),
    ];
    if v.latencies.len() > 1 {
        for (kind, l) in v.latencies.iter().rev() {
            let line = format!("mean {}, p50 {}, p99 {}, max {}", ms(l.mean), ms(l.p50 as f64), ms(l.p99 as f64), ms(l.max as f64));
            rows.insert(9, (latency_label(kind), line));
        }
    }
    rows
}

/// Coalescing, switches, contention, backpressure and the pool.
fn write_path_lines(v: &VariantResult) -> Vec<(&'static str, String)> {
    let c = &v.variant;
    vec![
        (
            "Coalescing",
            if v.counters.groups == 0 {
                format!("{} (one store and one insert call per client batch)", c.coalescing)
            } else {
                format!(
                    "{}, {} groups, {:.2} client batches per group, {:.1} us queue wait per batch",
                    c.coalescing,
                    thousands(v.counters.groups as f64),
                    if v.counters.groups > 0 { v.partitions as f64 / v.counters.groups as f64 } else { 1.0 },
                    v.counters.coalesce_wait_ns as f64 / 1e3 / v.partitions.max(1) as f64
                )
            },
        ),
        ("Memtable switches", switches_line(&v.counters)),
        (
            "Contended puts",
            format!(
                "{} of {} (lock wait {:.1} ms)",
                thousands(v.counters.contended as f64),
                thousands(v.counters.contended as f64 + v.counters.uncontended as f64),
                v.counters.lock_wait_ns as f64 / 1e6
            ),
        ),
        ("Backpressure", format!("{:.1} ms blocked on a full pool", v.counters.backpressure_ns as f64 / 1e6)),
        (
            "Pool",
            format!("{}, {} CAS retries, {} cell sums", c.pool, thousands(v.counters.pool_cas_retries as f64), thousands(v.counters.pool_sum_checks as f64)),
        ),
    ]
}

/// Heap bytes allocated per flush: the host's count of the flush
/// thread's heap (CASSANDRA-21083's figure), and a wasm serializer's own,
/// as the SDK counted and the plugin reported it.
pub(crate) fn heap_per_flush(v: &VariantResult) -> Option<f64> {
    per_flush(v, |f| f.heap_allocated)
}

/// Of that, the serializer's calls.
pub(crate) fn serializer_heap_per_flush(v: &VariantResult) -> Option<f64> {
    per_flush(v, |f| f.serializer_heap)
}

fn per_flush(v: &VariantResult, get: fn(&crate::record::FlushFigures) -> Option<u64>) -> Option<f64> {
    let measured: Vec<u64> = v.flushes.iter().filter_map(get).collect();
    (!measured.is_empty() && measured.len() == v.flushes.len()).then(|| total(measured.iter().copied()) as f64 / measured.len() as f64)
}

/// The SDK's count per flush, as the plugin reported it.
pub(crate) fn reported_heap_per_flush(v: &VariantResult) -> Option<f64> {
    let total = v.serializer_stats.get(HEAP_STAT)?;
    (!v.flushes.is_empty()).then(|| *total as f64 / v.flushes.len() as f64)
}

/// The serializer counter the SDK adds in wasm.
const HEAP_STAT: &str = "heap-allocated-bytes";

fn allocated_line(v: &VariantResult) -> String {
    let measured = match heap_per_flush(v) {
        Some(bytes) => format!(
            "{:.1} MiB per flush on the host heap (measured: the flush thread's allocations), {:.1} MiB of it in the serializer's calls",
            mib(bytes as u64),
            mib(serializer_heap_per_flush(v).unwrap_or(0.0) as u64)
        ),
        None if v.flushes.is_empty() => "no flush".to_string(),
        None => "not measured (an older record)".to_string(),
    };
    match reported_heap_per_flush(v) {
        Some(bytes) => format!("{measured}; reported by the plugin (the SDK's count): {:.1} MiB per flush in its own memory", mib(bytes as u64)),
        None => measured,
    }
}

/// Flushes, the allocator, reads, the memtable index and the boundary.
fn flush_and_memory_lines(v: &VariantResult, r: &Rates) -> Vec<(&'static str, String)> {
    let raw = total(v.flushes.iter().map(|f| f.raw_bytes));
    let mut rows = vec![
        (
            "Flushes",
            format!(
                "{}, time spent {} ms, {} rows ({} rows/s), {}, cpu {} ms, serializer grew up to {:.1} MiB",
                v.flushes.len(),
                r.flush_wall.as_millis(),
                thousands(r.flush_rows as f64),
                thousands(r.flushed_rows),
                match raw {
                    0 if r.flush_rows > 0 => "row bytes not recorded (an older record)".to_string(),
                    _ => format!("{:.1} MiB of rows in ({:.1} MiB/s)", mib(raw), mib(raw) / r.flush_wall.as_secs_f64().max(1e-9)),
                },
                r.flush_cpu.as_millis(),
                mib(v.flushes.iter().map(|f| f.serializer_grew).max().unwrap_or(0))
            ),
        ),
        ("Allocated", allocated_line(v)),
        (
            "On disk",
            format!(
                "{:.1} MiB (data, index and metadata; measured by the host), {:.1} B a row, {}",
                mib(r.flush_bytes),
                r.flush_bytes as f64 / r.flush_rows.max(1) as f64,
                match raw {
                    0 if r.flush_rows > 0 => "no compression figure (an older record kept no row bytes)".to_string(),
                    0 => "no rows".to_string(),
                    _ => format!("{:.2}x compression of the rows' {:.1} MiB", raw as f64 / r.flush_bytes.max(1) as f64, mib(raw)),
                }
            ),
        ),
        (
            "Allocator",
            format!(
                "reserved {:.1} MiB (= the pool's count), used {:.1} MiB (held to the row bytes), waste {:.1} MiB, {} reservations (= the host's count); reported by the plugin: {} regions",
                mib(stat(&v.allocator_stats, Stat::BytesReserved)),
                mib(stat(&v.allocator_stats, Stat::BytesUsed)),
                mib(stat(&v.allocator_stats, Stat::Waste)),
                thousands(stat(&v.allocator_stats, Stat::Reservations) as f64),
                thousands(stat(&v.allocator_stats, Stat::Regions) as f64)
            ),
        ),
        (
            "Point reads",
            format!(
                "{} keys from the live memtables, {} found, {} gets/s",
                thousands(v.reads.keys as f64),
                thousands(v.reads.hits as f64),
                thousands(v.reads.rate())
            ),
        ),
        (
            "Memtable index",
            format!(
                "{} entries (= the cursor's keys); reported by the plugin: {:.1} MiB of index (held to 16 B an entry and its memory){}",
                thousands(stat(&v.memtable_stats, Stat::Entries) as f64),
                mib(stat(&v.memtable_stats, Stat::IndexBytes)),
                match v.flushes.iter().map(|f| f.shard_memory).max().unwrap_or(0) {
                    0 => String::new(),
                    memory => format!("; measured: {:.1} MiB of shard memory at the largest flush", mib(memory)),
                }
            ),
        ),
        (
            "Boundary",
            format!(
                "{} calls, {} write calls (store + insert), {:.1} rows per write call, {:.1} MiB in, {:.1} MiB out",
                thousands(v.boundary.calls as f64),
                thousands(write_calls(v) as f64),
                v.rows as f64 / write_calls(v).max(1) as f64,
                mib(v.boundary.bytes_in),
                mib(v.boundary.bytes_out)
            ),
        ),
    ];
    if !v.serializer_stats.is_empty() {
        let shown: Vec<String> =
            v.serializer_stats.iter().map(|(k, n)| format!("{} {}", k.chars().take(40).collect::<String>(), thousands(*n as f64))).collect();
        rows.push(("Serializer", format!("reported by the plugin: {}", shown.join(", "))));
    }
    if !v.time.is_empty() {
        rows.push(("Where the time went", breakdown::line(&v.time)));
    }
    rows
}

/// Set-up, the stream, verification and resources.
fn run_lines(v: &VariantResult) -> Vec<(&'static str, String)> {
    let c = &v.variant;
    let mut rows = vec![
        (
            "Setup",
            format!(
                "{} ms ({})",
                v.setup.as_millis(),
                v.plugins
                    .iter()
                    .map(|p| format!("{} {:.1} ms{}", p.name, p.load.as_secs_f64() * 1e3, if p.cache_hit { " cached" } else { "" }))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ),
        ("Stream fingerprint", v.fingerprint.clone()),
        ("Verified", verified::verified_line(v, c.verify)),
    ];
    if let Some(idle) = &v.no_effect {
        rows.push(("Parameters", verified::idle_line(idle)));
    }
    let r = &v.resources;
    let mut resources = format!("cpu user {:.2} s, system {:.2} s; peak RSS {:.1} MiB", r.user_cpu.as_secs_f64(), r.system_cpu.as_secs_f64(), mib(r.peak_rss));
    // Runs saved before the start was recorded have none.
    if r.start_rss > 0 {
        let added = mib(r.peak_rss.saturating_sub(r.start_rss));
        let _ = write!(
            resources,
            ", {added:.1} MiB above the run's start, {:.1} MiB beyond the {:.0} MiB memtable budget",
            beyond_budget_mib(v),
            mib(v.variant.memtable_space)
        );
    }
    rows.push(("Resources", resources));
    rows
}

/// The window verdicts compare, and what the warm-up left out.
fn steady_line(v: &VariantResult) -> String {
    let Some(s) = v.steady else {
        return "none: the warm-up lasted the whole run (no memtable switch); verdicts use the whole run's rate".into();
    };
    let few = if s.switches < 2 { "; fewer than 2 generations switched in it: lengthen `ops` for a steady state" } else { "" };
    format!(
        "{} row/s over {:.2} s, after a {:.2} s warm-up ({} rows left out); {} switches in the window{few} (measured by the host)",
        thousands(s.rows as f64 / s.secs.max(1e-9)),
        s.secs,
        s.warmup_secs,
        thousands(s.warmup_rows as f64),
        s.switches
    )
}

/// CPU on the threads' own clocks, and the machine share of the window.
fn cpu_line(v: &VariantResult) -> String {
    let mut line = format!(
        "clients {:.2} s, flushes {:.2} s (their own clocks, measured by the host); {} rows per CPU-second",
        v.client_cpu.as_secs_f64(),
        Rates::of(v).flush_cpu.as_secs_f64(),
        thousands(rows_per_cpu_second(v))
    );
    if let Some(s) = v.steady.filter(|s| s.cpu > 0.0) {
        let _ = write!(line, "; the process kept {:.2} cores busy in the steady window", s.cpu / s.secs.max(1e-9));
    }
    line
}

fn latency_label(kind: &str) -> &'static str {
    match kind {
        "insert" => "Latency insert",
        "read" => "Latency read",
        _ => "Latency scan",
    }
}

/// Store and insert calls: two per client batch, or per coalesced group.
fn write_calls(v: &VariantResult) -> u64 {
    2 * if v.counters.groups > 0 { v.counters.groups } else { v.partitions }
}

fn op_mix(v: &VariantResult) -> String {
    let count = |k: &str| v.op_counts.get(k).copied().unwrap_or(0);
    let mut parts = vec![format!("insert {}", thousands(count("insert") as f64))];
    if count("read") > 0 {
        parts.push(format!("read {} ({} found in live memtables)", thousands(count("read") as f64), thousands(v.read_hits as f64)));
    }
    if count("scan") > 0 {
        parts.push(format!("scan {} ({} rows)", thousands(count("scan") as f64), thousands(v.scan_rows as f64)));
    }
    parts.join(", ")
}

pub(crate) fn median(mut x: Vec<f64>) -> Option<f64> {
    if x.is_empty() {
        return None;
    }
    x.sort_by(f64::total_cmp);
    let mid = x.len() / 2;
    Some(if x.len() % 2 == 1 { x[mid] } else { (x[mid - 1] + x[mid]) / 2.0 })
}

fn switches_line(c: &crate::record::WriteFigures) -> String {
    let per_shard = |ns: u64, shards: u64| ns as f64 / 1e3 / shards.max(1) as f64;
    let mut line = format!(
        "{} (the last is the drain at the end); a new generation took {:.1} us per shard on the switching writer",
        c.switches,
        per_shard(c.generation_start_ns, c.generation_shards)
    );
    // Runs saved before generations were started ahead have no CPU figure.
    if c.generation_started_shards > 0 {
        let _ = write!(
            line,
            " ({} of {} shards started ahead by a flush writer); starting a shard cost {:.0} us of CPU",
            c.generation_ahead_shards,
            c.generation_shards,
            per_shard(c.generation_start_cpu_ns, c.generation_started_shards)
        );
    }
    line
}

/// What the run added to RSS beyond its memtable budget (issue 6's P7).
fn beyond_budget_mib(v: &VariantResult) -> f64 {
    v.resources.beyond_budget(v.variant.memtable_space) as f64 / (1024.0 * 1024.0)
}

/// A record's counts summed without overflow: a record is untrusted, and
/// a crafted one may hold any number.
pub(crate) fn total(counts: impl Iterator<Item = u64>) -> u64 {
    counts.fold(0, u64::saturating_add)
}

/// `total` for durations.
pub(crate) fn total_time(times: impl Iterator<Item = Duration>) -> Duration {
    times.fold(Duration::ZERO, Duration::saturating_add)
}

pub(crate) fn ok<'a>(runs: &[&'a VariantResult]) -> Vec<&'a VariantResult> {
    // One failed round fails the variant: none of its rounds is shown.
    if crate::record::verdict::failed_run(runs).is_some() {
        return Vec::new();
    }
    runs.to_vec()
}

fn shown(x: f64) -> String {
    match x.abs() {
        a if a >= 100.0 => thousands(x),
        a if a >= 10.0 => format!("{x:.1}"),
        a if a >= 1.0 => format!("{x:.2}"),
        _ => format!("{x:.3}"),
    }
}

/// The comparison, verdict first: the verdict block, then the table of
/// figures (which way is better, the best marked, ratios where they mean
/// something), the plugins' own counters, and where the time went.
pub fn comparison(result: &BenchResult) -> String {
    let groups = by_variant(result);
    let mut s = String::new();
    if groups.len() < 2 && groups.first().is_none_or(|(_, runs)| runs.len() < 2) {
        return s;
    }
    let block = verdict_block(result);
    if !block.is_empty() {
        let _ = writeln!(s, "{block}");
    }
    let repeats = groups.iter().map(|(_, r)| r.len()).max().unwrap_or(1);
    let width = groups.iter().map(|(name, _)| name.len()).max().unwrap_or(0).max(22);
    let title = if repeats > 1 { format!("Comparison ({repeats} runs, medians; * best)") } else { "Comparison (* best)".to_string() };
    let counters = counters::rows(&groups);
    let lw = counters.iter().map(|(label, _)| label.chars().count()).chain([title.len(), 34]).max().unwrap_or(34);
    let _ = write!(s, "{title:<lw$} | better");
    for (name, _) in &groups {
        let _ = write!(s, " | {name:>width$}");
    }
    s.push('\n');
    for figure in &FIGURES {
        let row = figure.row(&groups);
        let _ = write!(s, "{:<lw$} | {:<6}", figure.name, figure.better.word());
        for (i, best) in row.best.iter().enumerate() {
            let text = match figure.cell(&row, i) {
                (value, Some(r)) => format!("{value} ({r:.2}x)"),
                (value, None) => value,
            };
            let mark = if *best { "*" } else { " " };
            let _ = write!(s, " | {:>w$}{mark}", text, w = width - 1);
        }
        s.push('\n');
    }
    if repeats > 1 {
        let _ = write!(s, "{:<lw$} | {:<6}", "row rate min..max", "");
        for (_, runs) in &groups {
            let rates: Vec<f64> = ok(runs).into_iter().map(|v| Rates::of(v).rows).collect();
            let lo = rates.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = rates.iter().copied().fold(0.0, f64::max);
            let cell = if rates.is_empty() { "FAILED".into() } else { format!("{}..{}", thousands(lo), thousands(hi)) };
            let _ = write!(s, " | {cell:>width$}");
        }
        s.push('\n');
    }
    let _ = write!(s, "{:<lw$} | {:<6}", "vs first (paired rounds)", "higher");
    let all = verdicts(result);
    let failed = crate::record::verdict::failed_variants(result);
    for (i, _) in groups.iter().enumerate() {
        let cell = match i.checked_sub(1).and_then(|i| all.get(i)) {
            None => "baseline".to_string(),
            Some((name, None)) if failed.iter().any(|(n, _)| n == name) => "FAILED".to_string(),
            Some((_, None)) => "n/a (under 2 rounds)".to_string(),
            Some((_, Some(v))) => short_verdict(v),
        };
        let _ = write!(s, " | {cell:>width$}");
    }
    s.push('\n');
    if !counters.is_empty() {
        let _ = writeln!(s, "\nThe plugins' own counters (medians; each label says what the host makes of it)");
        for (label, cells) in &counters {
            let _ = write!(s, "{label:<lw$} | {:<6}", "");
            for cell in cells {
                let text = cell.map_or("-".to_string(), |x| thousands(x as f64));
                let _ = write!(s, " | {text:>width$}");
            }
            s.push('\n');
        }
    }
    s.push_str(&breakdown::table(&groups, lw, width));
    s
}

/// A verdict in a table cell.
fn short_verdict(v: &crate::record::verdict::Verdict) -> String {
    use crate::record::verdict::Decision;
    let word = match v.decision {
        Decision::Faster => "faster",
        Decision::Slower => "slower",
        Decision::Same => "same",
        Decision::BelowThreshold => "under threshold",
        Decision::Undecided { .. } => "undecided",
    };
    format!("{:.2}x [{:.2}, {:.2}] {word}", v.ratio, v.low, v.high)
}

/// Rows per second of CPU on the threads' own clocks (clients and
/// flushes): what a busy neighbour moves less than wall time.
fn rows_per_cpu_second(v: &VariantResult) -> f64 {
    v.rows as f64 / v.client_cpu.saturating_add(Rates::of(v).flush_cpu).as_secs_f64().max(1e-9)
}

/// How a run's variants are matched with a baseline's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pairing {
    /// Variants of the same name.
    ByName,
    /// The first with the first, the second with the second, ...
    ByPosition,
    /// These pairs, (the run's variant, the baseline's).
    Explicit(Vec<(String, String)>),
}

/// A pairing that names a variant neither record has.
#[derive(Debug, thiserror::Error)]
#[error("--pair {pair}: {side} has no variant `{name}` (it has: {known})")]
pub struct PairingError {
    /// The pair as given.
    pub pair: String,
    /// Which record: "the run" or "the baseline".
    pub side: &'static str,
    /// The name it lacks.
    pub name: String,
    /// The names it has.
    pub known: String,
}

/// The (run's, baseline's) variant pairs `pairing` makes.
pub fn pairs(baseline: &BenchResult, run: &BenchResult, pairing: &Pairing) -> Result<Vec<(String, String)>, PairingError> {
    let names = |r: &BenchResult| by_variant(r).into_iter().map(|(n, _)| n.to_string()).collect::<Vec<_>>();
    let (old, new) = (names(baseline), names(run));
    match pairing {
        Pairing::ByName => Ok(new.iter().filter(|n| old.contains(n)).map(|n| (n.clone(), n.clone())).collect()),
        Pairing::ByPosition => Ok(new.into_iter().zip(old).collect()),
        Pairing::Explicit(given) => given
            .iter()
            .map(|(a, b)| {
                let lacks = |side, name: &str, known: &[String]| PairingError {
                    pair: format!("{a}={b}"),
                    side,
                    name: name.to_string(),
                    known: known.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", "),
                };
                if !new.contains(a) {
                    return Err(lacks("the run", a, &new));
                }
                if !old.contains(b) {
                    return Err(lacks("the baseline", b, &old));
                }
                Ok((a.clone(), b.clone()))
            })
            .collect(),
    }
}

/// A run against a baseline run, variant by variant (matched by name):
/// each figure's median in both, the ratio, and a verdict on row rates.
pub fn against_baseline(baseline: &BenchResult, run: &BenchResult) -> String {
    // By name, a pairing cannot fail.
    against_baseline_paired(baseline, run, &pairs(baseline, run, &Pairing::ByName).unwrap_or_default())
}

/// A run against a baseline run, for the given (run's, baseline's) pairs.
pub fn against_baseline_paired(baseline: &BenchResult, run: &BenchResult, pairs: &[(String, String)]) -> String {
    let mut s = String::new();
    let (old, new) = (by_variant(baseline), by_variant(run));
    let _ = writeln!(
        s,
        "Baseline: {} ({}, fingerprint {})\nRun:      {} ({}, fingerprint {})",
        baseline.config.bench.name,
        baseline.provenance.git_commit,
        baseline.provenance.stream_fingerprint,
        run.config.bench.name,
        run.provenance.git_commit,
        run.provenance.stream_fingerprint
    );
    if baseline.provenance.stream_fingerprint != run.provenance.stream_fingerprint {
        let _ = writeln!(s, "warning: the streams differ; figures are not comparable op for op");
    }
    for (name, runs) in &new {
        let Some((_, base)) = pairs.iter().find(|(n, _)| n == name).and_then(|(_, b)| old.iter().find(|(n, _)| n == b)) else {
            let _ = writeln!(s, "\n{name}: not paired with a baseline variant");
            continue;
        };
        let title = match old.iter().find(|(_, r)| std::ptr::eq(r, base)).map(|(n, _)| *n) {
            Some(b) if b != *name => format!("{name} (against the baseline's `{b}`)"),
            _ => name.to_string(),
        };
        let _ = writeln!(s, "\n{title:<34} | better | {:>16} | {:>16} | ratio", "baseline", "run");
        for figure in &FIGURES {
            let row = figure.row(&[("baseline", base.clone()), ("run", runs.clone())]);
            let ((was, _), (now, ratio)) = (figure.cell(&row, 0), figure.cell(&row, 1));
            let ratio = ratio.map_or("-".into(), |x| format!("{x:.2}x"));
            let _ = writeln!(s, "{:<34} | {:<6} | {was:>16} | {now:>16} | {ratio}", figure.name, figure.better.word());
        }
        // Two records cannot be paired round by round: Welch's test on
        // their rounds' steady-state rates.
        let rates = |runs: &[&VariantResult]| ok(runs).into_iter().map(round_rate).collect::<Vec<_>>();
        let _ = writeln!(s, "{:<24} | {}", "row rate verdict", stats::verdict(&rates(base), &rates(runs)));
    }
    for (name, _) in &old {
        if !pairs.iter().any(|(_, b)| b == name) {
            let _ = writeln!(s, "\n{name}: only in the baseline (not paired)");
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::thousands;

    #[test]
    fn thousands_groups_digits_and_keeps_the_sign() {
        assert_eq!(thousands(1_234_567.4), "1,234,567");
        assert_eq!(thousands(-235.2), "-235");
        assert_eq!(thousands(-1_000.0), "-1,000");
        assert_eq!(thousands(0.0), "0");
    }
}
