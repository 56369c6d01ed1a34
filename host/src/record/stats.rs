//! Is a difference real? The statistics behind the verdicts: Student's t
//! quantiles for the paired interval (`verdict.rs`), and Welch's t-test
//! for two runs that cannot be paired (a run against a baseline run).

/// Mean and sample variance.
fn moments(x: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    let var = x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, var)
}

/// The outcome of a two-sample test.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Welch {
    /// Mean of `b` over mean of `a`.
    pub ratio: f64,
    /// Two-sided p-value.
    pub p: f64,
}

/// Welch's unequal-variance t-test of `b` against `a`; `None` with fewer
/// than two samples on a side.
pub fn welch(a: &[f64], b: &[f64]) -> Option<Welch> {
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let ((ma, va), (mb, vb)) = (moments(a), moments(b));
    let (sa, sb) = (va / a.len() as f64, vb / b.len() as f64);
    let ratio = if ma != 0.0 { mb / ma } else { f64::NAN };
    if sa + sb == 0.0 {
        return Some(Welch { ratio, p: if ma == mb { 1.0 } else { 0.0 } });
    }
    let t = (mb - ma) / (sa + sb).sqrt();
    let df = (sa + sb).powi(2) / (sa.powi(2) / (a.len() as f64 - 1.0) + sb.powi(2) / (b.len() as f64 - 1.0));
    let p = t_p(t, df);
    Some(Welch { ratio, p: p.clamp(0.0, 1.0) })
}

/// Fewer samples than this on a side make any verdict a guess.
const MIN_SAMPLES: usize = 2;

/// A verdict line for `b` against `a` at 5% significance.
pub fn verdict(a: &[f64], b: &[f64]) -> String {
    if a.len().min(b.len()) < MIN_SAMPLES {
        return "n/a (too few rounds)".into();
    }
    match welch(a, b) {
        None => "n/a (too few rounds)".into(),
        Some(w) if w.p < 0.05 && w.ratio > 1.0 => format!("faster, p={:.3}", w.p),
        Some(w) if w.p < 0.05 => format!("slower, p={:.3}", w.p),
        Some(w) => format!("same (noise), p={:.2}", w.p),
    }
}

fn ln_gamma(x: f64) -> f64 {
    // Lanczos, g = 7.
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        return (std::f64::consts::PI / (std::f64::consts::PI * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let t = x + 7.5;
    let sum = C[1..].iter().enumerate().fold(C[0], |acc, (i, c)| acc + c / (x + i as f64 + 1.0));
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

/// The two-sided p-value of Student's t with `df` degrees of freedom.
fn t_p(t: f64, df: f64) -> f64 {
    incomplete_beta(df / 2.0, 0.5, df / (df + t * t))
}

/// The t value a two-sided interval of `confidence` uses at `df` degrees
/// of freedom (0.95 gives 12.706 at df 1, 2.776 at df 4, 1.96 at df ∞).
pub fn t_quantile(confidence: f64, df: f64) -> f64 {
    let alpha = 1.0 - confidence;
    // p(t) falls from 1 at t = 0: bisect for p(t) = alpha.
    let (mut lo, mut hi) = (0.0, 1e3);
    for _ in 0..200 {
        let mid = (lo + hi) / 2.0;
        if t_p(mid, df) > alpha { lo = mid } else { hi = mid }
    }
    (lo + hi) / 2.0
}

/// The regularized incomplete beta function I_x(a, b).
fn incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front = (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    if x < (a + 1.0) / (a + b + 2.0) { front * continued_fraction(a, b, x) / a } else { 1.0 - front * continued_fraction(b, a, 1.0 - x) / b }
}

/// Lentz's method for the incomplete beta's continued fraction.
fn continued_fraction(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let (mut c, mut d) = (1.0, 1.0 - (a + b) * x / (a + 1.0));
    d = 1.0 / if d.abs() < TINY { TINY } else { d };
    let mut h = d;
    for m in 1..300 {
        let m = m as f64;
        for numerator in [m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m)), -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0))] {
            d = 1.0 + numerator * d;
            d = 1.0 / if d.abs() < TINY { TINY } else { d };
            c = 1.0 + numerator / c;
            if c.abs() < TINY {
                c = TINY;
            }
            h *= d * c;
        }
        if (d * c - 1.0).abs() < 1e-12 {
            break;
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn p_values_match_reference_t_tests() {
        // t = 3.491, df = 7.72; p by integrating the t density: 0.00865.
        let a = [10.0, 11.0, 12.0, 11.5, 10.5];
        let b = [12.0, 13.0, 12.5, 13.5, 12.0];
        let w = welch(&a, &b).expect("enough samples");
        assert!((w.p - 0.00865).abs() < 1e-4, "{w:?}");
        // Identical samples: no difference at all.
        assert!(welch(&a, &a).expect("enough").p > 0.99);
        assert_eq!(verdict(&a, &b), format!("faster, p={:.3}", w.p));
        assert!(verdict(&a, &[11.0, 11.2, 10.8]).starts_with("same"));
        assert!(verdict(&a, &[11.0]).starts_with("n/a"));
    }

    #[test]
    fn t_quantiles_match_the_tables() {
        for (df, t) in [(1.0, 12.706), (2.0, 4.303), (4.0, 2.776), (9.0, 2.262), (29.0, 2.045), (1e6, 1.960)] {
            assert!((t_quantile(0.95, df) - t).abs() < 2e-3, "df {df}: {}", t_quantile(0.95, df));
        }
        assert!((t_quantile(0.99, 4.0) - 4.604).abs() < 2e-3);
    }

    #[test]
    fn incomplete_beta_matches_known_values() {
        assert!((incomplete_beta(2.0, 3.0, 0.4) - 0.5248).abs() < 1e-4);
        assert!((incomplete_beta(0.5, 0.5, 0.5) - 0.5).abs() < 1e-9);
    }
}
