//! A run against a baseline run: variants matched by name, by position
//! or as told, each figure side by side, each run's machine, what differs
//! between them, and a verdict by the bench's own interval rules on the
//! rounds' steady rates (unpaired: two records' rounds share no machine
//! state, so the interval is Welch's, wider than a bench's paired one).
//! A pair whose variants differ in what ran, or ran on different
//! machines, gets no verdict unless asked.

use std::fmt::Write as _;

use super::by_variant;
use super::differences::{self, Difference};
use crate::record::verdict::{Verdict, failed_run, round_rate};
use crate::record::{BenchResult, Machine, VariantResult};

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

/// The two records ran different workloads or streams.
#[derive(Debug, thiserror::Error)]
#[error(
    "the baseline and the run ran different workloads: {}; their figures are not comparable op for op (--across-differences shows them side by side anyway)",
    list(.0)
)]
pub struct WorkloadsDiffer(pub Vec<Difference>);

fn list(differences: &[Difference]) -> String {
    differences.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
}

/// A run against a baseline run, variant by variant (matched by name).
pub fn against_baseline(baseline: &BenchResult, run: &BenchResult) -> Result<String, WorkloadsDiffer> {
    // By name, a pairing cannot fail.
    against_baseline_paired(baseline, run, &pairs(baseline, run, &Pairing::ByName).unwrap_or_default(), false)
}

/// A run against a baseline run, for the given (run's, baseline's) pairs.
/// With `across`, pairs that differ are judged anyway, their differences
/// listed, and records of different workloads are shown at all.
pub fn against_baseline_paired(baseline: &BenchResult, run: &BenchResult, pairs: &[(String, String)], across: bool) -> Result<String, WorkloadsDiffer> {
    let shared = differences::of_records(baseline, run);
    if !shared.is_empty() && !across {
        return Err(WorkloadsDiffer(shared));
    }
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
    if !shared.is_empty() {
        let _ = writeln!(s, "The workloads differ, so no figure below compares one change: {}", list(&shared));
    }
    let _ = writeln!(
        s,
        "Verdicts take the bench's rules (a {:.0}% interval, ±{:.0}% counts as the same) on unpaired rounds: two records share no round's machine, so the interval is wider than in one bench.",
        crate::record::verdict::CONFIDENCE * 100.0,
        run.config.bench.threshold * 100.0
    );
    for (name, runs) in &new {
        let Some((base_name, base)) = pairs.iter().find(|(n, _)| n == name).and_then(|(_, b)| old.iter().find(|(n, _)| n == b)) else {
            let _ = writeln!(s, "\n{name}: not paired with a baseline variant");
            continue;
        };
        let title = if base_name != name { format!("{name} (against the baseline's `{base_name}`)") } else { name.to_string() };
        pair(&mut s, &title, base, runs, run.config.bench.threshold, across);
    }
    for (name, _) in &old {
        if !pairs.iter().any(|(_, b)| b == name) {
            let _ = writeln!(s, "\n{name}: only in the baseline (not paired)");
        }
    }
    Ok(s)
}

/// One pair: figures, machines, differences, verdict.
fn pair(s: &mut String, title: &str, base: &[&VariantResult], runs: &[&VariantResult], threshold: f64, across: bool) {
    // A variant that failed any round publishes nothing.
    for (side, rounds) in [("the baseline's", base), ("the run's", runs)] {
        if let Some(failed) = failed_run(rounds) {
            let _ = writeln!(
                s,
                "\n{title}: {side} variant failed round {}: {}; it publishes no figure",
                failed.repeat,
                failed.failure().map(ToString::to_string).unwrap_or_default()
            );
            return;
        }
    }
    let _ = writeln!(s, "\n{title:<34} | better | {:>16} | {:>16} | ratio", "baseline", "run");
    for figure in super::figures::shown(runs.iter().copied().chain(base.iter().copied())) {
        let row = figure.row(&[("baseline", base.to_vec()), ("run", runs.to_vec())]);
        let ((was, _), (now, ratio)) = (figure.cell(&row, 0), figure.cell(&row, 1));
        let ratio = ratio.map_or("-".into(), |x| format!("{x:.2}x"));
        let _ = writeln!(s, "{:<34} | {:<6} | {was:>16} | {now:>16} | {ratio}", figure.name, figure.better.word());
    }
    let machine = |m: Option<Machine>| {
        m.map_or("not recorded".into(), |m| format!("{:.1} of {} cores, {:.1} busy elsewhere, load {:.1}", m.cores, m.cpus, m.others(), m.load))
    };
    let _ = writeln!(s, "{:<24} | baseline {} | run {}", "machine", machine(differences::machine(base)), machine(differences::machine(runs)));
    let differ = differences::of_variants(base, runs);
    if !differ.is_empty() {
        let _ = writeln!(s, "{:<24} | {}", "differs", list(&differ));
    }
    let rates = |runs: &[&VariantResult]| runs.iter().copied().map(round_rate).collect::<Vec<_>>();
    let verdict = match Verdict::unpaired(&rates(base), &rates(runs), threshold) {
        _ if !across && differ.iter().any(Difference::of_what_ran) => {
            "not judged: the variants differ in what ran (above), so a ratio is not a verdict on one of them; --across-differences judges the pair anyway".into()
        }
        _ if !across && !differ.is_empty() => "not judged: the runs saw different machines (above); for a verdict on the strategies alone, run both as variants of one bench, whose interleaved rounds share the machine".into(),
        None => format!("none: {} and {} rounds (a verdict needs two a side)", base.len(), runs.len()),
        Some(v) => format!("{v} ({} and {} rounds{})", base.len(), runs.len(), if differ.is_empty() { "" } else { ", across the differences above" }),
    };
    let _ = writeln!(s, "{:<24} | {verdict}", "row rate verdict");
}
