//! A run against a baseline run: variants matched by name, by position
//! or as told, each figure side by side with Welch's test on the rounds'
//! steady rates (two records cannot be paired round by round).

use std::fmt::Write as _;

use super::{by_variant, ok};
use crate::record::verdict::round_rate;
use crate::record::{BenchResult, VariantResult, stats};

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
        for figure in super::figures::shown(runs.iter().copied().chain(base.iter().copied())) {
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
