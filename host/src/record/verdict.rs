//! The paired verdict: each variant against the first, round by round.
//! Rounds alternate the variants (A B C A B C ...), so the runs of one
//! round share the machine's state; the verdict is taken on the per-round
//! ratios of steady-state row rates, as tango pairs its samples, so a
//! noisy neighbour that slows a whole round cancels in its ratio. The
//! ratio is the geometric mean, with a Student-t interval on the logs.

use std::fmt;

use super::stats::t_quantile;
use super::{BenchResult, VariantResult};

/// The interval's confidence.
pub const CONFIDENCE: f64 = 0.95;

/// What the interval says.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Decision {
    /// The interval lies above 1 and the ratio beyond the threshold.
    Faster,
    /// The interval lies below 1 and the ratio beyond the threshold.
    Slower,
    /// The interval lies within the threshold around 1.
    Same,
    /// The interval excludes 1, but the ratio is within the threshold: a
    /// real difference too small to count.
    BelowThreshold,
    /// The interval is too wide to say; about this many more rounds
    /// would narrow it enough at the noise seen.
    Undecided {
        /// Rounds to add.
        more_rounds: usize,
    },
}

impl Decision {
    /// `more_rounds` where no count of rounds would decide (across runs,
    /// whose spread from run to run rounds cannot narrow).
    pub const NO_ROUNDS_SUFFICE: usize = usize::MAX;

    /// Whether more rounds are needed.
    pub fn decided(self) -> bool {
        !matches!(self, Decision::Undecided { .. })
    }
}

/// A variant against the baseline, from their paired rounds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Verdict {
    /// Geometric mean of the per-round ratios.
    pub ratio: f64,
    /// The interval's ends.
    pub low: f64,
    /// The interval's upper end.
    pub high: f64,
    /// Rounds paired.
    pub rounds: usize,
    /// Relative standard error of the ratio.
    pub rse: f64,
    /// What a ratio within this of 1 counts as: the same.
    pub threshold: f64,
    /// The decision.
    pub decision: Decision,
}

impl Verdict {
    /// The verdict on per-round ratios (candidate over baseline); `None`
    /// under two rounds or for a ratio that is not a positive number.
    pub fn of(ratios: &[f64], threshold: f64) -> Option<Verdict> {
        let logs = logs(ratios)?;
        let n = logs.len() as f64;
        let (mean, var) = moments(&logs);
        let (se, t) = ((var / n).sqrt(), t_quantile(CONFIDENCE, n - 1.0));
        // Rounds for an interval of half-width `target` at this noise.
        let needed = |target: f64| (t * t * var / (target * target)).ceil().min(1e12) as usize;
        Some(Verdict::decide(mean, se, t, logs.len(), threshold, needed))
    }

    /// The verdict on two records' rounds, which cannot be paired (a run
    /// against a baseline run): the ratio of their geometric mean rates,
    /// with Welch's interval on the logs, widened by `between`, the
    /// spread of one run's mean log rate from run to run that no round
    /// of either record can show (a run's rounds share its machine's
    /// state). The same rules decide as in a bench. `rounds` is the fewer
    /// side's count.
    pub fn unpaired(baseline: &[f64], run: &[f64], threshold: f64, between: f64) -> Option<Verdict> {
        let (a, b) = (logs(baseline)?, logs(run)?);
        let ((ma, va), (mb, vb)) = (moments(&a), moments(&b));
        let (na, nb) = (a.len() as f64, b.len() as f64);
        let (sa, sb) = (va / na, vb / nb);
        let runs = 2.0 * between * between;
        let se = (sa + sb + runs).sqrt();
        // Welch-Satterthwaite, the known run-to-run part with no degrees
        // of freedom to lose; identical rounds on both sides leave no noise.
        let rounds = sa * sa / (na - 1.0) + sb * sb / (nb - 1.0);
        let df = if rounds > 0.0 { ((sa + sb + runs).powi(2) / rounds).min(1e6) } else { na + nb - 2.0 };
        let t = t_quantile(CONFIDENCE, df);
        // Rounds per side for that half-width, both sides alike; none
        // suffice where the spread between runs alone is wider.
        let needed = |target: f64| match target * target - t * t * runs {
            room if room > 0.0 => (t * t * (va + vb) / room).ceil() as usize,
            _ => Decision::NO_ROUNDS_SUFFICE,
        };
        Some(Verdict::decide(mb - ma, se, t, a.len().min(b.len()), threshold, needed))
    }

    /// The bench's rule on a mean log ratio, its standard error and its
    /// t quantile.
    fn decide(mean: f64, se: f64, t: f64, rounds: usize, threshold: f64, needed: impl Fn(f64) -> usize) -> Verdict {
        let (low, high) = ((mean - t * se).exp(), (mean + t * se).exp());
        let band = (1.0 + threshold).ln();
        let decision = if low > 1.0 && mean >= band {
            Decision::Faster
        } else if high < 1.0 && mean <= -band {
            Decision::Slower
        } else if (mean - t * se) >= -band && (mean + t * se) <= band {
            Decision::Same
        } else if low > 1.0 || high < 1.0 {
            Decision::BelowThreshold
        } else {
            // Narrow enough to exclude 1 (|mean|), or to fit in the band
            // (band - |mean|), whichever is nearer.
            let target = mean.abs().max(band - mean.abs()).max(1e-9);
            let more = match needed(target) {
                Decision::NO_ROUNDS_SUFFICE => Decision::NO_ROUNDS_SUFFICE,
                n => n.saturating_sub(rounds).max(1),
            };
            Decision::Undecided { more_rounds: more }
        };
        Verdict { ratio: mean.exp(), low, high, rounds, rse: se, threshold, decision }
    }
}

/// The logs of `ratios`, if there are two or more and each is a positive
/// number.
fn logs(ratios: &[f64]) -> Option<Vec<f64>> {
    (ratios.len() >= 2 && ratios.iter().all(|r| r.is_finite() && *r > 0.0)).then(|| ratios.iter().map(|r| r.ln()).collect())
}

/// Mean and sample variance.
fn moments(x: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    (mean, x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0))
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let interval = format!("{:.2}x [{:.2}, {:.2}]", self.ratio, self.low, self.high);
        let pct = self.threshold * 100.0;
        match self.decision {
            Decision::Faster => write!(f, "{interval} faster"),
            Decision::Slower => write!(f, "{interval} slower"),
            Decision::Same => write!(f, "{interval} same (within ±{pct:.0}%)"),
            Decision::BelowThreshold => write!(f, "{interval} differs by under {pct:.0}%"),
            Decision::Undecided { more_rounds: Decision::NO_ROUNDS_SUFFICE } => {
                let noise = (self.high / self.ratio - 1.0) * 100.0;
                write!(f, "no decision: {interval}, ±{noise:.0}% noise, mostly the spread between runs, which more rounds cannot narrow")
            }
            Decision::Undecided { more_rounds } => {
                let noise = (self.high / self.ratio - 1.0) * 100.0;
                write!(f, "no decision: {interval}, ±{noise:.0}% noise; needs about {more_rounds} more round{}", if more_rounds == 1 { "" } else { "s" })
            }
        }
    }
}

/// A run's rate for the verdict: steady-state rows per second where the
/// run has a steady window, else rows (or ops) per second of the whole.
pub fn round_rate(v: &VariantResult) -> f64 {
    match v.steady {
        Some(s) if s.secs > 0.0 && s.rows > 0 => s.rows as f64 / s.secs,
        _ => {
            let secs = v.elapsed.as_secs_f64().max(1e-9);
            if v.rows > 0 { v.rows as f64 / secs } else { v.ops as f64 / secs }
        }
    }
}

/// Per-round ratios of `runs` over `baseline`, paired by round number;
/// a round where either failed is left out.
pub fn paired_ratios(baseline: &[&VariantResult], runs: &[&VariantResult]) -> Vec<f64> {
    // A variant that failed any round publishes nothing: its other rounds
    // were not shown honest by the one that failed.
    if failed_run(baseline).is_some() || failed_run(runs).is_some() {
        return Vec::new();
    }
    runs.iter()
        .filter_map(|r| {
            let b = baseline.iter().find(|b| b.repeat == r.repeat)?;
            Some(round_rate(r) / round_rate(b))
        })
        .collect()
}

/// A variant's first failed run, if any: then none of its runs counts.
pub fn failed_run<'a>(runs: &[&'a VariantResult]) -> Option<&'a VariantResult> {
    runs.iter().copied().find(|r| r.failure().is_some())
}

/// The variants that failed a round, each with its first failed run, in
/// config order.
pub fn failed_variants(result: &BenchResult) -> Vec<(&str, &VariantResult)> {
    by_variant(result).into_iter().filter_map(|(name, runs)| failed_run(&runs).map(|r| (name, r))).collect()
}

/// Every variant's runs, in config order (rounds grouped).
pub fn by_variant(result: &BenchResult) -> Vec<(&str, Vec<&VariantResult>)> {
    let mut groups: Vec<(&str, Vec<&VariantResult>)> = Vec::new();
    for v in &result.variants {
        match groups.iter_mut().find(|(name, _)| *name == v.variant.name) {
            Some((_, runs)) => runs.push(v),
            None => groups.push((&v.variant.name, vec![v])),
        }
    }
    groups
}

/// Each variant after the first, with its verdict against the first
/// (`None` with fewer than two paired rounds).
pub fn verdicts(result: &BenchResult) -> Vec<(&str, Option<Verdict>)> {
    let groups = by_variant(result);
    let Some((_, baseline)) = groups.first() else { return Vec::new() };
    let threshold = result.config.bench.threshold;
    groups.iter().skip(1).map(|(name, runs)| (*name, Verdict::of(&paired_ratios(baseline, runs), threshold))).collect()
}

/// The winner among `all` (each variant's verdict against `baseline`):
/// the variant decided faster than every other, if any; the baseline when
/// every other is decided slower.
pub fn winner<'a>(baseline: &'a str, all: &[(&'a str, Option<Verdict>)]) -> Option<(&'a str, Option<Verdict>)> {
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

/// Whether two or more variants beat the baseline and none of them clears
/// the others: a contest more rounds may still settle.
pub fn contested(baseline: &str, all: &[(&str, Option<Verdict>)]) -> bool {
    let faster = all.iter().filter(|(_, v)| v.is_some_and(|v| v.decision == Decision::Faster)).count();
    faster > 1 && winner(baseline, all).is_none()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ratios(center: f64, spread: &[f64]) -> Vec<f64> {
        spread.iter().map(|s| center * (1.0 + s)).collect()
    }

    #[test]
    fn a_clear_difference_is_faster_with_its_interval() {
        // Logs of 1.16 +- 1%: mean ln 1.16, sd ~0.0082, t(4) = 2.776.
        let v = Verdict::of(&ratios(1.16, &[-0.01, 0.0, 0.01, -0.005, 0.005]), 0.02).expect("five rounds");
        assert_eq!(v.decision, Decision::Faster);
        assert!((v.ratio - 1.16).abs() < 0.002, "{v:?}");
        assert!(v.low > 1.145 && v.low < 1.16 && v.high > 1.16 && v.high < 1.175, "{v:?}");
        assert_eq!(v.to_string(), format!("1.16x [{:.2}, {:.2}] faster", v.low, v.high));
        let slow = Verdict::of(&[1.0 / 1.16, 1.0 / 1.17, 1.0 / 1.15], 0.02).expect("three");
        assert_eq!(slow.decision, Decision::Slower);
    }

    #[test]
    fn the_interval_matches_a_hand_computed_t_interval() {
        // ln ratios 0.1, 0.2, 0.3: mean 0.2, sd 0.1, se 0.0577; t(2) = 4.303.
        let r = [0.1f64.exp(), 0.2f64.exp(), 0.3f64.exp()];
        let v = Verdict::of(&r, 0.02).expect("three");
        let half = 4.303 * 0.1 / 3f64.sqrt();
        assert!((v.low - (0.2 - half).exp()).abs() < 1e-3 && (v.high - (0.2 + half).exp()).abs() < 1e-3, "{v:?}");
        assert!(matches!(v.decision, Decision::Undecided { .. }), "the interval reaches below 1: {v:?}");
    }

    #[test]
    fn a_tight_interval_around_one_is_the_same() {
        let v = Verdict::of(&ratios(1.0, &[-0.003, 0.002, 0.001, -0.001, 0.0, 0.002]), 0.02).expect("six");
        assert_eq!(v.decision, Decision::Same);
        assert!(v.to_string().ends_with("same (within ±2%)"), "{v}");
        // Within the band, even if it excludes 1: the same.
        let v = Verdict::of(&ratios(1.01, &[-0.001, 0.001, 0.0, 0.0005, -0.0005]), 0.02).expect("five");
        assert_eq!(v.decision, Decision::Same);
        // A real but small difference: the interval excludes 1 and reaches
        // past the band, but the ratio is under 2%.
        let v = Verdict::of(&ratios(1.017, &[-0.003, 0.003, 0.0, 0.002, -0.002]), 0.02).expect("five");
        assert!(v.low > 1.0 && v.high > 1.02 && v.ratio < 1.02, "{v:?}");
        assert_eq!(v.decision, Decision::BelowThreshold);
    }

    #[test]
    fn noise_asks_for_more_rounds_and_more_rounds_decide() {
        let noisy = [1.25, 0.95, 1.30, 1.0];
        let v = Verdict::of(&noisy, 0.02).expect("four");
        let Decision::Undecided { more_rounds } = v.decision else { panic!("{v:?}") };
        assert!(more_rounds >= 1 && v.to_string().starts_with("no decision:"), "{v}");
        // The same spread, repeated past the estimate, decides.
        let many: Vec<f64> = noisy.iter().copied().cycle().take(4 + more_rounds + 4).collect();
        let v = Verdict::of(&many, 0.02).expect("many");
        assert!(v.decision.decided(), "{v:?}");
    }

    #[test]
    fn too_few_or_bad_ratios_give_no_verdict() {
        assert!(Verdict::of(&[1.2], 0.02).is_none());
        assert!(Verdict::of(&[1.2, f64::NAN], 0.02).is_none());
        assert!(Verdict::of(&[1.2, 0.0], 0.02).is_none());
    }

    #[test]
    fn several_faster_with_none_clearing_the_others_is_contested() {
        let v = |ratio: f64, low: f64| Some(Verdict { ratio, low, high: ratio * 1.1, rounds: 5, rse: 0.01, threshold: 0.02, decision: Decision::Faster });
        // 2.04x [1.81, ..] does not clear 2.02x: no winner yet.
        assert!(contested("a", &[("b", v(2.04, 1.81)), ("c", v(2.02, 1.83))]));
        // 1.60x [1.50, ..] clears 1.20x: b wins, and the rounds may stop.
        assert!(!contested("a", &[("b", v(1.6, 1.5)), ("c", v(1.2, 1.1))]));
        assert_eq!(winner("a", &[("b", v(1.6, 1.5)), ("c", v(1.2, 1.1))]).map(|w| w.0), Some("b"));
        // One faster is a winner, not a contest.
        assert!(!contested("a", &[("b", v(1.3, 1.2))]));
    }

    #[test]
    fn identical_rounds_decide_at_once() {
        assert_eq!(Verdict::of(&[1.5, 1.5], 0.02).expect("two").decision, Decision::Faster);
        assert_eq!(Verdict::of(&[1.0, 1.0], 0.02).expect("two").decision, Decision::Same);
    }

    #[test]
    fn two_records_are_judged_by_the_same_rules_on_a_wider_interval() {
        // ln rates: baseline 0, 0.02, -0.02; run ln 1.3 + the same: Welch
        // se = sqrt(2 * 0.0004 / 3), df 4, t 2.776.
        let base = [1.0, 0.02f64.exp(), (-0.02f64).exp()];
        let run: Vec<f64> = base.iter().map(|r| r * 1.3).collect();
        let v = Verdict::unpaired(&base, &run, 0.02, 0.0).expect("three a side");
        let half = 2.776 * (2.0 * 0.0004 / 3.0f64).sqrt();
        assert!((v.ratio - 1.3).abs() < 1e-9 && (v.low - (1.3f64.ln() - half).exp()).abs() < 1e-3, "{v:?}");
        assert_eq!(v.decision, Decision::Faster);
        // The identical rounds on both sides: the same once the interval
        // fits in the band (±0.2% rounds), undecided while it does not
        // (±2%), never faster.
        let tight = [1.0, 1.002, 0.998];
        assert_eq!(Verdict::unpaired(&tight, &tight, 0.02, 0.0).expect("same").decision, Decision::Same);
        assert!(matches!(Verdict::unpaired(&base, &base, 0.02, 0.0).expect("same").decision, Decision::Undecided { .. }));
        // Rounds that move by 15-30% between runs: no decision, and how
        // many rounds a side would settle it.
        let Decision::Undecided { more_rounds } = Verdict::unpaired(&[1.0, 1.3, 0.9], &[1.1, 1.4, 0.95], 0.02, 0.0).expect("noisy").decision else {
            panic!("noise decided")
        };
        assert!(more_rounds > 3, "{more_rounds}");
        assert!(Verdict::unpaired(&[1.0], &run, 0.02, 0.0).is_none(), "one round on a side");
        // A run-to-run spread of 6% widens the interval by it, however
        // many rounds: tight rounds 8% apart no longer decide, and no
        // count of rounds would.
        let many: Vec<f64> = (0..40).map(|i| 1.0 + 0.001 * f64::from(i % 3)).collect();
        let apart: Vec<f64> = many.iter().map(|r| r * 1.08).collect();
        assert_eq!(Verdict::unpaired(&many, &apart, 0.02, 0.0).expect("tight").decision, Decision::Faster);
        let v = Verdict::unpaired(&many, &apart, 0.02, 0.06).expect("tight");
        assert_eq!(v.decision, Decision::Undecided { more_rounds: Decision::NO_ROUNDS_SUFFICE }, "{v:?}");
        assert!(v.to_string().contains("more rounds cannot narrow"), "{v}");
        // A difference far beyond the spread still decides.
        let far: Vec<f64> = many.iter().map(|r| r * 1.5).collect();
        assert_eq!(Verdict::unpaired(&many, &far, 0.02, 0.06).expect("far").decision, Decision::Faster);
    }
}
