//! The verdict block that opens the comparison: how many rounds ran and
//! why they stopped, each variant's paired verdict against the first with
//! its interval, and the winner where one is decided.

use std::fmt::Write as _;

use crate::record::BenchResult;
use crate::record::verdict::{CONFIDENCE, Decision, Verdict, verdicts};

/// The winner: the variant decided faster than every other, if any.
fn winner<'a>(baseline: &'a str, all: &[(&'a str, Option<Verdict>)]) -> Option<(&'a str, Option<Verdict>)> {
    let faster: Vec<_> = all.iter().filter(|(_, v)| v.is_some_and(|v| v.decision == Decision::Faster)).collect();
    match faster.as_slice() {
        // Every other variant decided slower: the baseline wins.
        [] if !all.is_empty() && all.iter().all(|(_, v)| v.is_some_and(|v| v.decision == Decision::Slower)) => Some((baseline, None)),
        [] => None,
        [(name, v)] => Some((name, *v)),
        // Several beat the baseline: the best ratio wins only if its
        // interval clears the others' ratios.
        many => {
            let (name, best) = many.iter().max_by(|a, b| a.1.map(|v| v.ratio).partial_cmp(&b.1.map(|v| v.ratio)).unwrap_or(std::cmp::Ordering::Equal))?;
            let low = best.map(|v| v.low)?;
            many.iter().filter(|(n, _)| n != name).all(|(_, v)| v.is_some_and(|v| v.ratio < low)).then_some((name, *best))
        }
    }
}

/// The block, or nothing for a single variant.
pub fn verdict_block(result: &BenchResult) -> String {
    let all = verdicts(result);
    let Some(baseline) = result.variants.first().map(|v| v.variant.name.as_str()) else { return String::new() };
    if all.is_empty() {
        return String::new();
    }
    let mut s = String::new();
    let rounds = result.variants.iter().map(|v| v.repeat).max().unwrap_or(0);
    let why = result.stop.map_or(String::new(), |stop| format!("; stopped: {}", stop.reason.describe()));
    let _ =
        writeln!(s, "Verdict ({rounds} rounds{why}): steady-state row rate against `{baseline}`, paired round by round, {:.0}% intervals", CONFIDENCE * 100.0);
    let width = all.iter().map(|(n, _)| n.len()).max().unwrap_or(0).max(24);
    for (name, v) in &all {
        let text = v.map_or_else(|| "no verdict (fewer than two paired rounds completed)".to_string(), |v| v.to_string());
        let _ = writeln!(s, "  {name:<width$}  {text}");
    }
    let _ = match winner(baseline, &all) {
        Some((name, Some(v))) => writeln!(s, "Winner: `{name}`, {:.2}x [{:.2}, {:.2}] the baseline's rate", v.ratio, v.low, v.high),
        Some((name, None)) => writeln!(s, "Winner: `{name}` (the baseline): every other variant is decided slower"),
        None if all.iter().any(|(_, v)| v.is_some_and(|v| !v.decision.decided())) => {
            writeln!(s, "Winner: not decided yet; run more rounds (`--max-rounds`) or on a quieter machine")
        }
        None => writeln!(s, "Winner: none: no variant is decided faster than all the others"),
    };
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
