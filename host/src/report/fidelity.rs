//! Does the sandbox change the answer? For every variant that has a
//! native twin in the same run (same strategies and settings, the other
//! runtime), the wasm/native row-rate ratio; and for every pair of such
//! strategies, their ratio under wasm beside their ratio under native, so
//! a reader sees at a glance whether the ranking held. A ratio assumes
//! both builds do the same work: a pair whose boundary traffic per row
//! differs, or whose wasm build outruns its native one, is flagged, since
//! a native build is a second program that may do more (or less).

use std::fmt::Write as _;

use super::{Rates, by_variant, median, ok, thousands};
use crate::record::{BenchResult, Runtime, VariantResult, VariantSpec};

/// Everything but the name and the runtime: what a twin must share.
fn setup(v: &VariantSpec) -> String {
    let mut twin = v.clone();
    twin.name.clear();
    twin.runtime = Runtime::Wasm;
    twin.configurations.clear();
    serde_json::to_string(&twin).unwrap_or_default()
}

/// A label for a twin pair: the strategies.
fn label(v: &VariantSpec) -> String {
    let shards = if v.shards > 1 { format!(" x{}", v.shards) } else { String::new() };
    let plugins: Vec<&str> = v.strategies.values().map(|s| s.plugin.as_str()).collect();
    format!("{}{shards}, {}", plugins[0], plugins[1..].join(", "))
}

fn median_rate(runs: &[&VariantResult]) -> Option<f64> {
    median(ok(runs).into_iter().map(|v| Rates::of(v).rows).collect())
}

/// Boundary calls and bytes (in, out) per row, over a variant's runs.
fn traffic(runs: &[&VariantResult]) -> Option<[f64; 3]> {
    let runs = ok(runs);
    let rows = runs.iter().map(|v| v.rows).sum::<u64>() as f64;
    let sum = |f: fn(&VariantResult) -> u64| runs.iter().map(|v| f(v)).sum::<u64>() as f64 / rows;
    (rows > 0.0).then(|| [sum(|v| v.boundary.calls), sum(|v| v.boundary.bytes_in), sum(|v| v.boundary.bytes_out)])
}

/// How far a twin's boundary traffic per row may sit from its wasm
/// build's (thread timing moves batch boundaries a little).
const SAME_TRAFFIC: f64 = 0.02;

/// Why a pair's builds may not do the same work, if they may not.
fn differs(wasm: &[&VariantResult], native: &[&VariantResult], ratio: f64) -> Option<&'static str> {
    let (w, n) = (traffic(wasm)?, traffic(native)?);
    let apart = w.iter().zip(&n).any(|(w, n)| (w - n).abs() > SAME_TRAFFIC * w.max(*n));
    if apart {
        Some("boundary traffic per row differs between the builds")
    } else if ratio > 1.0 + TRANSFER {
        Some("the wasm build outruns its native one")
    } else {
        None
    }
}

/// How far a pair's wasm ratio may sit from its native one and still
/// carry over to a native engine.
pub const TRANSFER: f64 = 0.10;

/// Whether a wasm ratio is within [`TRANSFER`] of the native one.
pub fn transfers(wasm: f64, native: f64) -> bool {
    (wasm / native - 1.0).abs() <= TRANSFER
}

/// The Fidelity section, or nothing when no variant has a native twin.
pub fn fidelity(result: &BenchResult) -> String {
    let groups = by_variant(result);
    // (label, wasm rate, native rate), in config order of the wasm side.
    let mut pairs: Vec<(String, f64, f64)> = Vec::new();
    let mut flagged: Vec<(String, &str)> = Vec::new();
    for (_, runs) in &groups {
        let Some(first) = runs.first() else { continue };
        if first.variant.runtime != Runtime::Wasm {
            continue;
        }
        let key = setup(&first.variant);
        let twin = groups.iter().find(|(_, r)| r.first().is_some_and(|t| t.variant.runtime == Runtime::Native && setup(&t.variant) == key));
        let Some((_, native_runs)) = twin else { continue };
        if let (Some(wasm), Some(native)) = (median_rate(runs), median_rate(native_runs)) {
            if let Some(why) = differs(runs, native_runs, wasm / native) {
                flagged.push((label(&first.variant), why));
            }
            pairs.push((label(&first.variant), wasm, native));
        }
    }
    if pairs.is_empty() {
        return String::new();
    }
    let width = pairs.iter().map(|p| p.0.len()).max().unwrap_or(0).max(20);
    let mut s = String::from("\nFidelity: the same strategies as wasm components and as native twins (median row/s)\n");
    let _ = writeln!(s, "{:<width$} | {:>12} | {:>12} | {:>11}", "strategies", "wasm", "native", "wasm/native");
    for (name, wasm, native) in &pairs {
        let mark = if flagged.iter().any(|(f, _)| f == name) { "  (!)" } else { "" };
        let _ = writeln!(s, "{name:<width$} | {:>12} | {:>12} | {:>11.2}{mark}", thousands(*wasm), thousands(*native), wasm / native);
    }
    s.push_str("These ratios assume both builds do the same work; the host measures the rates and the boundary traffic, not the work inside.\n");
    for (name, why) in &flagged {
        let _ = writeln!(s, "(!) `{name}`: {why}: its ratio, and every ratio of a pair with it, may not carry over");
    }
    if pairs.len() > 1 {
        let pw = (2 * width + 3).min(72);
        let _ = writeln!(s, "\n{:<pw$} | {:>8} | {:>8} | {:>10} | within 10% | ranking", "ratio of row rates", "wasm", "native", "wasm/native");
        let (mut within, mut all) = (0, 0);
        for (i, a) in pairs.iter().enumerate() {
            for b in &pairs[i + 1..] {
                let (wasm, native) = (a.1 / b.1, a.2 / b.2);
                let kept = if (wasm >= 1.0) == (native >= 1.0) { "kept" } else { "CHANGED" };
                let close = transfers(wasm, native);
                (within, all) = (within + usize::from(close), all + 1);
                let name = format!("{} / {}", a.0, b.0);
                let _ = writeln!(s, "{name:<pw$} | {wasm:>8.2} | {native:>8.2} | {:>10.2} | {:>10} | {kept}", wasm / native, if close { "yes" } else { "NO" });
            }
        }
        let _ = writeln!(s, "{within} of {all} pairs' wasm ratios are within {:.0}% of their native ratios", TRANSFER * 100.0);
    }
    s
}
