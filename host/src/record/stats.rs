//! Is a difference real? The statistics behind the verdicts: Student's t
//! quantiles for their intervals (`verdict.rs`), paired within a bench
//! and Welch's for two records that cannot be paired.

use statrs::distribution::{ContinuousCDF, StudentsT};

/// The t value a two-sided interval of `confidence` uses at `df` degrees
/// of freedom (0.95 gives 12.706 at df 1, 2.776 at df 4, 1.96 at df ∞);
/// infinite, an interval that decides nothing, where `df` is no count.
pub fn t_quantile(confidence: f64, df: f64) -> f64 {
    StudentsT::new(0.0, 1.0, df).map_or(f64::INFINITY, |t| t.inverse_cdf((1.0 + confidence) / 2.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_quantiles_match_the_tables() {
        for (df, t) in [(1.0, 12.706), (2.0, 4.303), (4.0, 2.776), (9.0, 2.262), (29.0, 2.045), (1e6, 1.960)] {
            assert!((t_quantile(0.95, df) - t).abs() < 2e-3, "df {df}: {}", t_quantile(0.95, df));
        }
        assert!((t_quantile(0.99, 4.0) - 4.604).abs() < 2e-3);
    }

    #[test]
    fn no_degrees_of_freedom_decide_nothing() {
        assert!(t_quantile(0.95, 0.0).is_infinite() && t_quantile(0.95, f64::NAN).is_infinite());
    }
}
