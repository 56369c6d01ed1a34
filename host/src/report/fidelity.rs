//! Does the sandbox change the answer? For every variant that has a
//! native twin in the same run (same strategies and settings, the other
//! runtime), the wasm/native row-rate ratio; and for every pair of such
//! strategies, their ratio under wasm beside their ratio under native, so
//! a reader sees at a glance whether the ranking held. A ratio assumes
//! both builds do the same work: a pair whose boundary traffic per row
//! differs, or whose wasm build outruns its native one, is flagged, since
//! a native build is a second program that may do more (or less).
//! The rates are the verdicts' (`round_rate`: the steady window where a
//! run has one), so a ratio here and a verdict on the same run agree.

use std::fmt::Write as _;

use super::{by_variant, median, ok, thousands};
use crate::record::verdict::round_rate;
use crate::record::{BenchResult, Runtime, VariantResult, VariantSpec};

/// Everything but the name and the runtime: what a twin must share.
fn setup(v: &VariantSpec) -> String {
    let mut twin = v.clone();
    twin.name.clear();
    twin.runtime = Runtime::Wasm;
    twin.configurations.clear();
    serde_json::to_string(&twin).unwrap_or_default()
}

/// A label for a twin pair: the strategies, each by its plugin's name
/// (a path's last part, however the config spelled the path).
fn label(v: &VariantSpec) -> String {
    let shards = if v.shards > 1 { format!(" x{}", v.shards) } else { String::new() };
    let plugins: Vec<String> = v.strategies.values().map(|s| super::plugin_name(&s.plugin)).collect();
    format!("{}{shards}, {}", plugins[0], plugins[1..].join(", "))
}

fn median_rate(runs: &[&VariantResult]) -> Option<f64> {
    median(ok(runs).into_iter().map(round_rate).collect())
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

/// A variant and its native twin in one run.
#[derive(Debug, Clone)]
pub struct Twin {
    /// The strategies both builds ran.
    pub label: String,
    /// Median steady row rates.
    pub wasm: f64,
    /// Median steady row rates.
    pub native: f64,
    /// Why the two builds may not do the same work, if they may not.
    pub flag: Option<&'static str>,
}

/// Two twins' row-rate ratio under each runtime.
#[derive(Debug, Clone)]
pub struct Ranking {
    /// `a / b`.
    pub label: String,
    /// The ratio under wasm.
    pub wasm: f64,
    /// The ratio natively.
    pub native: f64,
}

impl Ranking {
    /// Whether the faster of the two is the same under both runtimes.
    pub fn kept(&self) -> bool {
        (self.wasm >= 1.0) == (self.native >= 1.0)
    }

    /// Whether the wasm ratio carries over (within [`TRANSFER`]).
    pub fn close(&self) -> bool {
        transfers(self.wasm, self.native)
    }
}

/// The Fidelity section's figures: every twin pair, and every ranking
/// between two of them.
#[derive(Debug, Clone)]
pub struct Fidelity {
    /// In config order of the wasm side.
    pub twins: Vec<Twin>,
}

impl Fidelity {
    /// The run's twins, or `None` when no variant has one.
    pub fn of(result: &BenchResult) -> Option<Self> {
        let groups = by_variant(result);
        let mut twins = Vec::new();
        for (_, runs) in &groups {
            let Some(first) = runs.first().filter(|f| f.variant.runtime == Runtime::Wasm) else { continue };
            let key = setup(&first.variant);
            let twin = groups.iter().find(|(_, r)| r.first().is_some_and(|t| t.variant.runtime == Runtime::Native && setup(&t.variant) == key));
            let Some((_, native_runs)) = twin else { continue };
            if let (Some(wasm), Some(native)) = (median_rate(runs), median_rate(native_runs)) {
                twins.push(Twin { label: label(&first.variant), wasm, native, flag: differs(runs, native_runs, wasm / native) });
            }
        }
        (!twins.is_empty()).then_some(Fidelity { twins })
    }

    /// Every pair of twins' ratios, the first over the second.
    pub fn rankings(&self) -> Vec<Ranking> {
        let mut all = Vec::new();
        for (i, a) in self.twins.iter().enumerate() {
            for b in &self.twins[i + 1..] {
                all.push(Ranking { label: format!("{} / {}", a.label, b.label), wasm: a.wasm / b.wasm, native: a.native / b.native });
            }
        }
        all
    }

    /// The one line a reader takes away.
    pub fn tally(&self) -> Option<String> {
        let rankings = self.rankings();
        let within = rankings.iter().filter(|r| r.close()).count();
        (!rankings.is_empty()).then(|| format!("{within} of {} pairs' wasm ratios are within {:.0}% of their native ratios", rankings.len(), TRANSFER * 100.0))
    }
}

/// What a ratio assumes, said under every Fidelity table.
pub const ASSUMES: &str = "These ratios assume both builds do the same work; the host measures the rates and the boundary traffic, not the work inside.";

/// The Fidelity section as text, or nothing when no variant has a native
/// twin.
pub fn fidelity(result: &BenchResult) -> String {
    let Some(f) = Fidelity::of(result) else { return String::new() };
    let width = f.twins.iter().map(|t| t.label.len()).max().unwrap_or(0).max(20);
    let mut s = String::from("\nFidelity: the same strategies as wasm components and as native twins (median steady row/s)\n");
    let _ = writeln!(s, "{:<width$} | {:>12} | {:>12} | {:>11}", "strategies", "wasm", "native", "wasm/native");
    for t in &f.twins {
        let mark = if t.flag.is_some() { "  (!)" } else { "" };
        let _ = writeln!(s, "{:<width$} | {:>12} | {:>12} | {:>11.2}{mark}", t.label, thousands(t.wasm), thousands(t.native), t.wasm / t.native);
    }
    let _ = writeln!(s, "{ASSUMES}");
    if let Some(warning) = super::verdict::not_steady(result) {
        let _ = writeln!(s, "{warning}");
    }
    for t in f.twins.iter().filter(|t| t.flag.is_some()) {
        let _ = writeln!(s, "(!) `{}`: {}: its ratio, and every ratio of a pair with it, may not carry over", t.label, t.flag.unwrap_or_default());
    }
    let rankings = f.rankings();
    if !rankings.is_empty() {
        let pw = (2 * width + 3).min(72);
        let _ = writeln!(s, "\n{:<pw$} | {:>8} | {:>8} | {:>10} | within 10% | ranking", "ratio of row rates", "wasm", "native", "wasm/native");
        for r in &rankings {
            let (close, kept) = (if r.close() { "yes" } else { "NO" }, if r.kept() { "kept" } else { "CHANGED" });
            let _ = writeln!(s, "{:<pw$} | {:>8.2} | {:>8.2} | {:>10.2} | {close:>10} | {kept}", r.label, r.wasm, r.native, r.wasm / r.native);
        }
        let _ = writeln!(s, "{}", f.tally().unwrap_or_default());
    }
    s
}
