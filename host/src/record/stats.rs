//! Is a difference real? The statistics behind the verdicts: Student's t
//! quantiles for their intervals (`verdict.rs`), paired within a bench
//! and Welch's for two records that cannot be paired.

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
        assert!((t_p(3.491, 7.72) - 0.00865).abs() < 1e-4);
        assert!(t_p(0.0, 5.0) > 0.999);
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
