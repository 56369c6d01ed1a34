//! The verdict block that opens the comparison: how many rounds ran and
//! why they stopped, each variant's paired verdict against the first with
//! its interval, and the winner where one is decided.

use std::fmt::Write as _;

use super::advice::Need;
use crate::record::BenchResult;
use crate::record::VariantResult;
use crate::record::verdict::{CONFIDENCE, Decision, Verdict, by_variant, failed_variants, verdicts, winner};

/// The verdict's first line and what to do about it.
#[derive(Debug, Clone, PartialEq)]
pub struct Headline {
    /// The winner, if one is decided.
    pub winner: Option<String>,
    /// Who won and by how much, or why no one did.
    pub text: String,
    /// What to run instead, when the run could not decide.
    pub advice: Option<String>,
    /// Why the winner won: where its time per row went, against the
    /// variant it beat by the least.
    pub why: Option<String>,
}

/// The best ratio among the variants decided faster than the baseline.
fn leader<'a>(all: &[(&'a str, Option<Verdict>)]) -> Option<(&'a str, Verdict)> {
    all.iter().filter_map(|(n, v)| v.filter(|v| v.decision == Decision::Faster).map(|v| (*n, v))).max_by(|a, b| a.1.ratio.total_cmp(&b.1.ratio))
}

fn list(all: &[(&str, Option<Verdict>)], keep: impl Fn(&Verdict) -> bool) -> String {
    let shown: Vec<String> =
        all.iter().filter_map(|(name, v)| v.filter(|v| keep(v)).map(|v| format!("`{name}` {:.2}x [{:.2}, {:.2}]", v.ratio, v.low, v.high))).collect();
    shown.join(", ")
}

/// How a failed variant's first failed round reads: its round, class,
/// plugin and operation, and the message.
pub fn failed_text(run: &VariantResult) -> String {
    let Some(f) = run.failure() else { return String::new() };
    let place = match (&f.plugin, &f.operation) {
        (Some(p), Some(op)) => format!(" (plugin `{p}`, `{op}`)"),
        (Some(p), None) => format!(" (plugin `{p}`)"),
        _ => String::new(),
    };
    format!("failed round {} [{}]{place}: {}", run.repeat, f.class, f.message)
}

/// The headline of a bench of two or more variants (`None` for one).
pub fn headline(result: &BenchResult) -> Option<Headline> {
    let mut headline = decided(result)?;
    let failed = failed_variants(result);
    let baseline = result.variants.first().map(|v| v.variant.name.as_str())?;
    if failed.iter().any(|(n, _)| *n == baseline) {
        return Some(Headline {
            winner: None,
            text: format!("No verdict: the baseline `{baseline}` failed, so nothing is compared against it, and a failed variant publishes no figure."),
            advice: None,
            why: None,
        });
    }
    if !failed.is_empty() {
        let names: Vec<String> = failed.iter().map(|(n, r)| format!("`{n}` ({})", r.failure().map_or("", |f| f.class.name()))).collect();
        let _ = write!(headline.text, " Failed, so they publish no figure: {}.", names.join(", "));
    }
    Some(headline)
}

/// The headline among the variants that did not fail.
fn decided(result: &BenchResult) -> Option<Headline> {
    let failed = failed_variants(result);
    let all: Vec<_> = verdicts(result).into_iter().filter(|(n, _)| !failed.iter().any(|(f, _)| f == n)).collect();
    let baseline = result.variants.first().map(|v| v.variant.name.as_str())?;
    if verdicts(result).is_empty() {
        return None;
    }
    if all.is_empty() {
        return Some(Headline { winner: None, text: "No verdict: every variant but the baseline failed.".into(), advice: None, why: None });
    }
    let rounds = result.variants.iter().map(|v| v.repeat).max().unwrap_or(0);
    let pct = result.config.bench.threshold * 100.0;
    let of = format!("the steady row rate of `{baseline}`, {:.0}% interval over {rounds} paired rounds", CONFIDENCE * 100.0);
    if all.iter().all(|(_, v)| v.is_none()) {
        return Some(Headline {
            winner: None,
            text: format!("No verdict: each variant ran {rounds} time(s), and one round cannot tell a difference from noise."),
            why: None,
            advice: Some(super::advice::advice(result, Need::of(rounds, 0))),
        });
    }
    if let Some((name, v)) = winner(baseline, &all) {
        return Some(won(result, (name, v), &all, &of));
    }
    let undecided: Vec<(usize, &str)> = all
        .iter()
        .filter_map(|(name, v)| v.and_then(|v| if let Decision::Undecided { more_rounds } = v.decision { Some((more_rounds, *name)) } else { None }))
        .collect();
    if let Some(&(more, _)) = undecided.iter().max() {
        let names: Vec<String> = undecided.iter().map(|(_, n)| format!("`{n}`")).collect();
        return Some(Headline {
            winner: None,
            why: None,
            text: format!(
                "Undecided: the noise is wider than the difference for {} against `{baseline}` after {rounds} rounds ({}).{}",
                names.join(", "),
                list(&all, |v| !v.decision.decided()),
                leader(&all).map_or(String::new(), |(n, v)| format!(" Leading so far: `{n}`, {:.2}x [{:.2}, {:.2}].", v.ratio, v.low, v.high))
            ),
            advice: Some(super::advice::advice(result, Need::of(rounds, more))),
        });
    }
    if crate::record::verdict::contested(baseline, &all) {
        let leader = leader(&all).map_or(baseline, |l| l.0);
        return Some(Headline {
            winner: None,
            why: None,
            text: format!(
                "No single winner yet: {} all beat `{baseline}`, but no interval clears the others (`{leader}` leads).",
                list(&all, |v| v.decision == Decision::Faster)
            ),
            advice: Some(format!(
                "{} Or pair them directly: put `{leader}` first in the config, so each is held to it.",
                super::advice::advice(result, Need::Contested)
            )),
        });
    }
    let text = if all.iter().all(|(_, v)| v.is_some_and(|v| matches!(v.decision, Decision::Same | Decision::BelowThreshold))) {
        format!("No winner: every variant runs within ±{pct:.0}% of `{baseline}` ({}): on this workload they are equivalent.", list(&all, |_| true))
    } else {
        format!("No winner: none is decided faster than every other ({}).", list(&all, |_| true))
    };
    Some(Headline { winner: None, text, advice: None, why: None })
}

/// The headline of a winner, with why it won against the closest
/// variant that differs from it in one strategy.
fn won(result: &BenchResult, (name, v): (&str, Option<Verdict>), all: &[(&str, Option<Verdict>)], of: &str) -> Headline {
    let baseline = result.variants.first().map_or("", |v| v.variant.name.as_str());
    let rounds = result.variants.iter().map(|v| v.repeat).max().unwrap_or(0);
    let text = match v {
        Some(v) => format!("Winner: `{name}`, {:.2}x [{:.2}, {:.2}] {of}.", v.ratio, v.low, v.high),
        None => format!(
            "Winner: `{name}` (the baseline): every other variant is slower, {:.0}% intervals over {rounds} paired rounds: {}.",
            CONFIDENCE * 100.0,
            list(all, |_| true)
        ),
    };
    // Against the closest: the baseline, or the runner-up.
    let closest = all.iter().filter(|(n, _)| *n != name).filter_map(|(n, v)| v.map(|v| (*n, v.ratio))).max_by(|a, b| a.1.total_cmp(&b.1));
    let other = match (v, closest) {
        (Some(_), Some((n, r))) if r > 1.0 => n,
        (Some(_), _) => baseline,
        (None, c) => c.map_or(baseline, |c| c.0),
    };
    // The closest and the baseline first; then the rest by ratio, so a
    // variant differing in one strategy can be found.
    let mut against = vec![other, baseline];
    let mut rest: Vec<(&str, f64)> = all.iter().filter_map(|(n, v)| v.map(|v| (*n, v.ratio))).collect();
    rest.sort_by(|a, b| b.1.total_cmp(&a.1));
    against.extend(rest.into_iter().map(|(n, _)| n));
    let why = super::why::why(&by_variant(result), name, &against);
    Headline { winner: Some(name.to_string()), text, advice: None, why }
}

/// Why a record is not a whole run, where it ended before its rounds
/// rule stopped it (killed, or crashed): which configured variants never
/// ran, or which ran a round fewer. `None` for a whole run.
pub fn cut_short(result: &BenchResult) -> Option<String> {
    if result.stop.is_some() {
        return None;
    }
    let configured: Vec<&str> = result.config.variants.iter().map(|v| v.name.as_str()).collect();
    let ran = |name: &str| result.variants.iter().filter(|v| v.variant.name == name).map(|v| v.repeat).max();
    let never: Vec<String> = configured.iter().filter(|n| ran(n).is_none()).map(|n| format!("`{n}`")).collect();
    if !never.is_empty() {
        return Some(format!(
            "This run was cut short: its record ends after {} of its {} variants ({} never ran); what is shown is what finished, not the whole run.",
            configured.len() - never.len(),
            configured.len(),
            never.join(", ")
        ));
    }
    // Variants skipped after a failure stop at their failed round.
    let rounds = |n: &&str| (ran(n), result.variants.iter().any(|v| v.variant.name == **n && v.failure().is_some()));
    let counts: Vec<usize> = configured
        .iter()
        .filter_map(|n| match rounds(n) {
            (Some(r), false) => Some(r),
            _ => None,
        })
        .collect();
    let (least, most) = (counts.iter().min()?, counts.iter().max()?);
    (least < most).then(|| {
        format!(
            "This run was cut short in round {most}: some variants ran {most} rounds and others {least}; what is shown is what finished, not the whole run."
        )
    })
}

/// Generations a round's steady window must switch to be a steady state.
const STEADY_SWITCHES: u64 = 2;

/// Variants with a round whose steady window switched fewer than
/// `STEADY_SWITCHES` generations (or had none): their rates lean on the
/// warm-up, so the verdicts on them say less than they seem to.
pub fn not_steady(result: &BenchResult) -> Option<String> {
    let mut short: Vec<&str> = Vec::new();
    for v in result.variants.iter().filter(|v| v.failure().is_none()) {
        if v.steady.is_none_or(|s| s.switches < STEADY_SWITCHES) && !short.contains(&v.variant.name.as_str()) {
            short.push(&v.variant.name);
        }
    }
    (!short.is_empty()).then(|| {
        let names = short.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ");
        format!(
            "Not a steady state: {names} switched fewer than {STEADY_SWITCHES} memtable generations after the warm-up in some round, so their rates lean on the warm-up; lengthen `ops` (or shrink `memtable_space`) before trusting these verdicts."
        )
    })
}

/// The block, headline first, or nothing for a single variant.
pub fn verdict_block(result: &BenchResult) -> String {
    let Some(headline) = headline(result) else { return String::new() };
    let all = verdicts(result);
    let mut s = format!("{}\n", headline.text);
    if let Some(why) = &headline.why {
        let _ = writeln!(s, "{why}");
    }
    if let Some(advice) = &headline.advice {
        let _ = writeln!(s, "What to run: {advice}");
    }
    let baseline = result.variants.first().map_or("", |v| v.variant.name.as_str());
    let rounds = result.variants.iter().map(|v| v.repeat).max().unwrap_or(0);
    let why = result.stop.map_or(String::new(), |stop| format!("; stopped: {}", stop.reason.describe()));
    let _ =
        writeln!(s, "Verdict ({rounds} rounds{why}): steady-state row rate against `{baseline}`, paired round by round, {:.0}% intervals", CONFIDENCE * 100.0);
    if let Some(warning) = not_steady(result) {
        let _ = writeln!(s, "{warning}");
    }
    let width = all.iter().map(|(n, _)| n.len()).max().unwrap_or(0).max(24);
    let failed = failed_variants(result);
    let groups = by_variant(result);
    for (name, v) in &all {
        let text = match failed.iter().find(|(n, _)| n == name) {
            Some((_, run)) => format!("FAILED: {}", failed_text(run)),
            None => v.map_or_else(|| "no verdict (fewer than two paired rounds completed)".to_string(), |v| v.to_string()),
        };
        let _ = writeln!(s, "  {name:<width$}  {text}");
        // Winner or not, what moved against the baseline, per row.
        if let Some(why) = failed.iter().all(|(n, _)| n != name).then(|| super::why::why(&groups, name, &[baseline])).flatten() {
            let _ = writeln!(s, "  {:<width$}  {why}", "");
        }
    }
    if let Some((_, run)) = failed.iter().find(|(n, _)| *n == baseline) {
        let _ = writeln!(s, "  {baseline:<width$}  FAILED (baseline): {}", failed_text(run));
    }
    if let Some(machine) = super::machine::line(result) {
        let _ = writeln!(s, "{machine}");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(ratio: f64, low: f64, decision: Decision) -> Option<Verdict> {
        Some(Verdict { ratio, low, high: ratio * 1.02, rounds: 5, rse: 0.01, threshold: 0.02, decision })
    }

    #[test]
    fn the_winner_clears_the_others() {
        let all = [("b", v(1.16, 1.13, Decision::Faster)), ("c", v(1.05, 1.03, Decision::Faster))];
        assert_eq!(winner("a", &all).map(|w| w.0), Some("b"));
        let close = [("b", v(1.16, 1.10, Decision::Faster)), ("c", v(1.12, 1.08, Decision::Faster))];
        assert_eq!(winner("a", &close), None, "b's interval does not clear c");
        let slower = [("b", v(0.8, 0.78, Decision::Slower))];
        assert_eq!(winner("a", &slower).map(|w| w.0), Some("a"));
        assert_eq!(winner("a", &[("b", v(1.0, 0.99, Decision::Same))]), None);
    }
}
