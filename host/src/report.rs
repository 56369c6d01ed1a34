//! The text report: a cassandra-stress-style summary per variant, then a
//! side-by-side table with each figure's ratio to the first variant.

use std::fmt::Write as _;
use std::time::Duration;

use crate::bench::{BenchResult, VariantResult};
use crate::flush::mib;

fn thousands(n: f64) -> String {
    let whole = n.round() as u64;
    let digits = whole.to_string();
    let mut out = String::new();
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
        let flush_wall: Duration = v.flushes.iter().map(|f| f.wall).sum();
        let flush_rows: u64 = v.flushes.iter().map(|f| f.rows).sum();
        Rates {
            ops: v.ops as f64 / secs,
            partitions: v.partitions as f64 / secs,
            rows: v.rows as f64 / secs,
            flushed_rows: flush_rows as f64 / flush_wall.as_secs_f64().max(1e-9),
            flush_wall,
            flush_cpu: v.flushes.iter().map(|f| f.cpu).sum(),
            flush_bytes: v.flushes.iter().map(|f| f.bytes).sum(),
            flush_rows,
        }
    }
}

fn stat(map: &std::collections::BTreeMap<String, u64>, name: &str) -> u64 {
    map.get(name).copied().unwrap_or(0)
}

/// One variant's summary.
pub fn summary(v: &VariantResult) -> String {
    let mut s = String::new();
    let c = &v.variant;
    let _ = writeln!(s, "Results: {}", c.name);
    let _ = writeln!(
        s,
        "  memtable {}, allocator {}, serializer {}; {:?} runtime; {} shard(s); pool {}; memtable_space {:.0} MiB, switch at {:.0}%; {} flush writer(s)",
        c.memtable,
        c.allocator,
        c.serializer,
        c.runtime,
        c.shards,
        c.pool,
        mib(c.memtable_space),
        c.threshold() * 100.0,
        c.flush_writers
    );
    if let Some(failure) = &v.failure {
        let _ = writeln!(s, "FAILED: {failure}");
        let _ = writeln!(s, "(figures of a failed variant are not valid and are not shown)");
        return s;
    }
    let r = Rates::of(v);
    let l = &v.latency;
    let rows: Vec<(&str, String)> = vec![
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
        ("Total errors", thousands(v.errors as f64)),
        ("Total operation time", hms(v.elapsed)),
        ("Memtable switches", format!("{} (the last is the drain at the end)", v.counters.switches)),
        (
            "Contended puts",
            format!(
                "{} of {} (lock wait {:.1} ms)",
                thousands(v.counters.contended as f64),
                thousands((v.counters.contended + v.counters.uncontended) as f64),
                v.counters.lock_wait_ns as f64 / 1e6
            ),
        ),
        ("Backpressure", format!("{:.1} ms blocked on a full pool", v.counters.backpressure_ns as f64 / 1e6)),
        (
            "Pool",
            format!(
                "{}, {} CAS retries, {} cell sums",
                c.pool,
                thousands(v.counters.pool_cas_retries as f64),
                thousands(v.counters.pool_sum_checks as f64)
            ),
        ),
        (
            "Flushes",
            format!(
                "{}, time spent {} ms, {:.1} MiB ({:.1} MiB/s), {} rows ({} rows/s), cpu {} ms, serializer grew up to {:.1} MiB",
                v.flushes.len(),
                r.flush_wall.as_millis(),
                mib(r.flush_bytes),
                mib(r.flush_bytes) / r.flush_wall.as_secs_f64().max(1e-9),
                thousands(r.flush_rows as f64),
                thousands(r.flushed_rows),
                r.flush_cpu.as_millis(),
                mib(v.flushes.iter().map(|f| f.serializer_grew).max().unwrap_or(0))
            ),
        ),
        (
            "Allocator",
            format!(
                "reserved {:.1} MiB, used {:.1} MiB, waste {:.1} MiB, {} reservations, {} regions",
                mib(stat(&v.allocator_stats, "bytes-reserved")),
                mib(stat(&v.allocator_stats, "bytes-used")),
                mib(stat(&v.allocator_stats, "waste")),
                thousands(stat(&v.allocator_stats, "reservations") as f64),
                thousands(stat(&v.allocator_stats, "regions") as f64)
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
                "{} entries, {:.1} MiB",
                thousands(stat(&v.memtable_stats, "entries") as f64),
                mib(stat(&v.memtable_stats, "index-bytes"))
            ),
        ),
        (
            "Boundary",
            format!(
                "{} calls, {:.1} rows per write call, {:.1} MiB in, {:.1} MiB out",
                thousands(v.boundary.calls as f64),
                v.rows as f64 / (2 * v.ops).max(1) as f64,
                mib(v.boundary.bytes_in),
                mib(v.boundary.bytes_out)
            ),
        ),
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
        (
            "Verified",
            v.verified.map_or_else(
                || "no".into(),
                |x| format!("{} keys, digest {:032x}, {} rows read back", thousands(x.keys as f64), x.digest, thousands(x.rows_read as f64)),
            ),
        ),
    ];
    for (name, value) in rows {
        let _ = writeln!(s, "{name:<26}: {value}");
    }
    s
}

/// The side-by-side table: each figure, per variant, with its ratio to
/// the first variant.
pub fn comparison(result: &BenchResult) -> String {
    let variants = &result.variants;
    let mut s = String::new();
    if variants.len() < 2 {
        return s;
    }
    type Figure = (&'static str, fn(&VariantResult) -> f64);
    let figures: [Figure; 11] = [
        ("op rate (op/s)", |v| Rates::of(v).ops),
        ("row rate (row/s)", |v| Rates::of(v).rows),
        ("latency mean (ms)", |v| v.latency.mean / 1e6),
        ("latency p99 (ms)", |v| v.latency.p99 as f64 / 1e6),
        ("latency p99.9 (ms)", |v| v.latency.p999 as f64 / 1e6),
        ("memtable switches", |v| v.counters.switches as f64),
        ("point gets/s", |v| v.reads.rate()),
        ("flushed rows/s", |v| Rates::of(v).flushed_rows),
        ("flush cpu (ms)", |v| Rates::of(v).flush_cpu.as_secs_f64() * 1e3),
        ("contended puts", |v| v.counters.contended as f64),
        ("boundary calls", |v| v.boundary.calls as f64),
    ];
    let width = variants.iter().map(|v| v.variant.name.len()).max().unwrap_or(0).max(22);
    let _ = write!(s, "{:<22}", "Comparison");
    for v in variants {
        let _ = write!(s, " | {:>width$}", v.variant.name);
    }
    s.push('\n');
    for (name, get) in figures {
        let _ = write!(s, "{name:<22}");
        let base = variants.first().filter(|v| v.failure.is_none()).map(get);
        for v in variants {
            let cell = if v.failure.is_some() {
                "FAILED".to_string()
            } else {
                let x = get(v);
                let shown = if x.abs() >= 100.0 { thousands(x) } else { format!("{x:.3}") };
                match base {
                    Some(b) if b != 0.0 => format!("{shown} ({:.2}x)", x / b),
                    _ => shown,
                }
            };
            let _ = write!(s, " | {cell:>width$}");
        }
        s.push('\n');
    }
    s
}
