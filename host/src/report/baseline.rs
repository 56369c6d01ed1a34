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
use crate::record::verdict::{Verdict, failed_run, paired_ratios, round_rate};
use crate::record::{BenchResult, Machine, VariantResult};

/// How far one run's mean log rate strays from another's of the same
/// config, plugins and machine, beyond what their rounds show: a run's
/// rounds share its machine's state (neighbours, caches, the host's CPU
/// frequency), so Welch's interval on the rounds alone is too narrow
/// across runs. Calibrated by A/A pairs (`benches/aa-runs`, recorded in
/// `benches/runs/2026-12-06-rust-2c24g/aa-runs/`): 40 runs of one config
/// drifted by 17-21% (sd of a run's mean, less what its rounds explain)
/// with no sign in the cores they got. With `ANCHORED_BETWEEN_RUNS`, 2%
/// of their 780 pairs report a difference (44 at 15% and 4%; 3 of the
/// first 20 at 0% and the old 0.5-core machine rule).
pub const BETWEEN_RUNS: f64 = 0.18;

/// The same spread for a variant's rate relative to an anchor, a variant
/// both records ran alike, paired round by round within each record: the
/// machine's drift moves both and cancels (4% in the same A/A runs).
pub const ANCHORED_BETWEEN_RUNS: f64 = 0.05;

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
    let anchor = anchor(&old, &new);
    let _ = writeln!(
        s,
        "Verdicts take the bench's rules (a {:.0}% interval, ±{:.0}% counts as the same) on unpaired rounds, the interval widened by how far two runs stray apart that ran alike (by A/A pairs): ±{:.0}% for a rate alone, ±{:.0}% for a rate relative to a variant both runs ran alike, paired round by round within each run, which cancels the machine's drift.",
        crate::record::verdict::CONFIDENCE * 100.0,
        run.config.bench.threshold * 100.0,
        BETWEEN_RUNS * 100.0,
        ANCHORED_BETWEEN_RUNS * 100.0
    );
    let _ = match &anchor {
        Some(a) => writeln!(s, "Anchor: `{}`, which both runs ran alike; every other variant is judged relative to it.", a.name),
        None => writeln!(s, "No anchor: no variant ran alike in both runs, so each rate is judged alone, and only a large difference decides."),
    };
    for (name, runs) in &new {
        let Some((base_name, base)) = pairs.iter().find(|(n, _)| n == name).and_then(|(_, b)| old.iter().find(|(n, _)| n == b)) else {
            let _ = writeln!(s, "\n{name}: not paired with a baseline variant");
            continue;
        };
        let title = if base_name != name { format!("{name} (against the baseline's `{base_name}`)") } else { name.to_string() };
        pair(&mut s, &title, (base, runs), anchor.as_ref().filter(|a| a.name != *name), run.config.bench.threshold, across);
    }
    for (name, _) in &old {
        if !pairs.iter().any(|(_, b)| b == name) {
            let _ = writeln!(s, "\n{name}: only in the baseline (not paired)");
        }
    }
    Ok(s)
}

/// A variant both records ran alike (same name, settings and plugins'
/// bytes, no failed round): each other variant's rounds are taken
/// relative to it, within its own record.
struct Anchor<'a> {
    name: &'a str,
    base: Vec<&'a VariantResult>,
    run: Vec<&'a VariantResult>,
}

/// The first of the run's variants that the baseline ran alike.
fn anchor<'a>(old: &[(&'a str, Vec<&'a VariantResult>)], new: &[(&'a str, Vec<&'a VariantResult>)]) -> Option<Anchor<'a>> {
    new.iter().find_map(|(name, run)| {
        let (_, base) = old.iter().find(|(n, _)| n == name)?;
        let alike = failed_run(base).is_none() && failed_run(run).is_none() && !differences::of_variants(base, run).iter().any(Difference::of_what_ran);
        alike.then(|| Anchor { name, base: base.clone(), run: run.clone() })
    })
}

/// One pair's verdict: relative to the anchor where there is one, which
/// no machine difference withholds (each round's ratio shares its
/// machine); else the rates alone.
fn judged(sides: (&[&VariantResult], &[&VariantResult]), anchor: Option<&Anchor<'_>>, differ: &[Difference], threshold: f64, across: bool) -> String {
    let (base, runs) = sides;
    if !across && differ.iter().any(Difference::of_what_ran) {
        return "not judged: the variants differ in what ran (above), so a ratio is not a verdict on one of them; --across-differences judges the pair anyway"
            .into();
    }
    let rounds = format!("{} and {} rounds", base.len(), runs.len());
    let across_note = if differ.is_empty() { "" } else { ", across the differences above" };
    if let Some(a) = anchor {
        let (b, r) = (paired_ratios(&a.base, base), paired_ratios(&a.run, runs));
        return match Verdict::unpaired(&b, &r, threshold, ANCHORED_BETWEEN_RUNS) {
            None => format!("none: {} and {} rounds paired with `{}` (a verdict needs two a side)", b.len(), r.len(), a.name),
            Some(v) => format!("relative to `{}` in each run: {v} ({rounds}{across_note})", a.name),
        };
    }
    if !across && !differ.is_empty() {
        return "not judged: the runs saw different machines (above) and share no anchor; run both as variants of one bench, whose interleaved rounds share the machine".into();
    }
    let rates = |runs: &[&VariantResult]| runs.iter().copied().map(round_rate).collect::<Vec<_>>();
    match Verdict::unpaired(&rates(base), &rates(runs), threshold, BETWEEN_RUNS) {
        None => format!("none: {rounds} (a verdict needs two a side)"),
        Some(v) => format!("{v} ({rounds}{across_note})"),
    }
}

/// One pair: figures, machines, differences, verdict.
fn pair(s: &mut String, title: &str, sides: (&[&VariantResult], &[&VariantResult]), anchor: Option<&Anchor<'_>>, threshold: f64, across: bool) {
    let (base, runs) = sides;
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
    let verdict = judged(sides, anchor, &differ, threshold, across);
    let _ = writeln!(s, "{:<24} | {verdict}", "row rate verdict");
}
