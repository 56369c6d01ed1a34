//! The text report: a cassandra-stress-style summary per variant, then a
//! side-by-side table with each figure's ratio to the first variant.

use std::fmt::Write as _;
use std::time::Duration;

mod advice;
mod baseline;
mod breakdown;
mod charts;
mod counters;
mod differences;
mod fidelity;
pub mod figures;
pub mod html;
mod log;
mod machine;
mod summary;
pub mod sweep;
mod verdict;
mod verified;
mod why;

pub use baseline::{Pairing, PairingError, WorkloadsDiffer, against_baseline, against_baseline_paired, pairs};
pub use differences::Difference;
pub use fidelity::{Fidelity, Ranking, Twin, fidelity};
pub use summary::summary;
use summary::{HEAP_STAT, beyond_budget_mib};
pub(crate) use summary::{heap_per_row_flushed, reported_heap_per_flush, serializer_heap_per_row_flushed};
pub use verdict::{Headline, cut_short, headline, verdict_block};

pub use crate::record::verdict::by_variant;
use crate::record::verdict::verdicts;
use crate::record::{BenchResult, VariantResult};
use crate::util::{median, mib};

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

/// A record's counts summed without overflow: a record is untrusted, and
/// a crafted one may hold any number.
pub(crate) fn total(counts: impl Iterator<Item = u64>) -> u64 {
    counts.fold(0, u64::saturating_add)
}

/// `total` for durations.
pub(crate) fn total_time(times: impl Iterator<Item = Duration>) -> Duration {
    times.fold(Duration::ZERO, Duration::saturating_add)
}

/// A plugin as a reader names it: a bundled name as it is, a path by its
/// last part (a crate's folder, a `.wasm` file's stem), however the
/// config spelled the way there.
pub(crate) fn plugin_name(plugin: &str) -> String {
    let clean = path_clean::clean(plugin);
    clean.file_stem().map_or_else(|| clean.display().to_string(), |s| s.to_string_lossy().into_owned())
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
    for figure in figures::shown(result.variants.iter()) {
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
