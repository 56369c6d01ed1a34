//! Size and count distributions of a profile, as cassandra-stress has
//! them: fixed, uniform, gaussian, exponential, zipf. Written in TOML as a
//! bare integer (fixed) or `{ dist = "uniform", min = 8, max = 16 }`.

use serde::{Deserialize, Deserializer, Serialize};

use super::SplitMix;

/// A distribution of non-negative integers, clamped to `min..=max`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "dist", rename_all = "kebab-case", deny_unknown_fields)]
pub enum DistSpec {
    /// Always `value`.
    Fixed {
        /// The value.
        value: u64,
    },
    /// Every value in `min..=max` equally likely.
    Uniform {
        /// The smallest value drawn.
        min: u64,
        /// The largest value drawn.
        max: u64,
    },
    /// Normal around `mean`, clamped.
    Gaussian {
        /// The mean.
        mean: f64,
        /// The standard deviation.
        stddev: f64,
        /// The smallest value drawn.
        min: u64,
        /// The largest value drawn.
        max: u64,
    },
    /// Exponential with `mean`, shifted to start at `min`, clamped.
    Exponential {
        /// The mean.
        mean: f64,
        /// The smallest value drawn.
        min: u64,
        /// The largest value drawn.
        max: u64,
    },
    /// Zipf over `min..=max` with exponent `s`: `min` most likely.
    Zipf {
        /// The smallest value drawn.
        min: u64,
        /// The largest value drawn.
        max: u64,
        /// The exponent.
        s: f64,
    },
}

/// A validated distribution.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(transparent)]
pub struct Dist(DistSpec);

impl<'de> Deserialize<'de> for Dist {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Fixed(u64),
            Spec(toml::Value),
        }
        let spec = match Raw::deserialize(d)? {
            Raw::Fixed(value) => DistSpec::Fixed { value },
            Raw::Spec(value @ toml::Value::Table(_)) => DistSpec::deserialize(value).map_err(|e| serde::de::Error::custom(e.message().trim_end()))?,
            Raw::Spec(other) => {
                let shown = crate::util::text::clean(&other.to_string());
                return Err(serde::de::Error::custom(format!(
                    "{shown} is not a distribution: give a whole number (`64`), or a table such as `{{ dist = \"uniform\", min = 16, max = 64 }}` (dist: fixed, uniform, gaussian, exponential, zipf); sizes are bytes, with no unit"
                )));
            }
        };
        Dist::new(spec).map_err(serde::de::Error::custom)
    }
}

impl Dist {
    /// Checks the parameters.
    pub fn new(spec: DistSpec) -> Result<Self, String> {
        let (min, max) = spec.bounds();
        if min > max {
            return Err(format!("min {min} is above max {max}"));
        }
        match spec {
            DistSpec::Gaussian { stddev, mean, .. } if !(stddev >= 0.0 && mean.is_finite() && stddev.is_finite()) => {
                Err(format!("gaussian needs a finite mean and stddev >= 0 (mean {mean}, stddev {stddev})"))
            }
            DistSpec::Exponential { mean, .. } if !(mean > 0.0 && mean.is_finite()) => Err(format!("exponential needs mean > 0 (got {mean})")),
            DistSpec::Zipf { s, .. } if !(s > 0.0 && s.is_finite()) => Err(format!("zipf needs s > 0 (got {s})")),
            _ => Ok(Dist(spec)),
        }
    }

    /// A fixed value.
    pub const fn fixed(value: u64) -> Self {
        Dist(DistSpec::Fixed { value })
    }

    /// Uniform over `min..=max` (min <= max).
    pub const fn uniform(min: u64, max: u64) -> Self {
        Dist(DistSpec::Uniform { min, max })
    }

    /// The parameters.
    pub fn spec(&self) -> DistSpec {
        self.0
    }

    /// The smallest and largest value it yields.
    pub fn bounds(&self) -> (u64, u64) {
        self.0.bounds()
    }

    /// One value.
    pub fn sample(&self, rng: &mut SplitMix) -> u64 {
        let (min, max) = self.bounds();
        let clamp = |x: f64| if x.is_nan() { min } else { (x.round().max(min as f64) as u64).clamp(min, max) };
        match self.0 {
            DistSpec::Fixed { value } => value,
            DistSpec::Uniform { min, max } => min + rng.below(max - min + 1),
            DistSpec::Gaussian { mean, stddev, .. } => {
                // Box-Muller.
                let (u1, u2) = (rng.unit().max(f64::MIN_POSITIVE), rng.unit());
                clamp(mean + stddev * (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos())
            }
            DistSpec::Exponential { mean, .. } => clamp(min as f64 - mean * (1.0 - rng.unit()).ln()),
            DistSpec::Zipf { s, .. } => min + zipf_rank(rng.unit(), max - min + 1, s) - 1,
        }
    }
}

impl DistSpec {
    fn bounds(&self) -> (u64, u64) {
        match *self {
            DistSpec::Fixed { value } => (value, value),
            DistSpec::Uniform { min, max } | DistSpec::Gaussian { min, max, .. } | DistSpec::Exponential { min, max, .. } | DistSpec::Zipf { min, max, .. } => {
                (min, max)
            }
        }
    }
}

/// A rank in `1..=n` with P(k) ~ k^-s, by inverting the CDF of the
/// continuous (bounded Pareto) approximation: O(1) for any `n`.
pub fn zipf_rank(u: f64, n: u64, s: f64) -> u64 {
    let n1 = n as f64 + 1.0;
    let x = if (s - 1.0).abs() < 1e-9 {
        n1.powf(u)
    } else {
        let a = 1.0 - s;
        ((n1.powf(a) - 1.0) * u + 1.0).powf(1.0 / a)
    };
    (x.floor() as u64).clamp(1, n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn samples(d: Dist, n: usize) -> Vec<u64> {
        let mut rng = SplitMix::new(&[42]);
        (0..n).map(|_| d.sample(&mut rng)).collect()
    }

    #[test]
    fn every_distribution_stays_in_bounds_and_has_its_shape() {
        let mean = |v: &[u64]| v.iter().sum::<u64>() as f64 / v.len() as f64;
        let u = samples(Dist::uniform(8, 16), 20_000);
        assert!(u.iter().all(|&x| (8..=16).contains(&x)) && (mean(&u) - 12.0).abs() < 0.1);
        let g = samples(Dist::new(DistSpec::Gaussian { mean: 100.0, stddev: 10.0, min: 0, max: 1000 }).expect("valid"), 20_000);
        assert!((mean(&g) - 100.0).abs() < 0.5);
        let e = samples(Dist::new(DistSpec::Exponential { mean: 50.0, min: 10, max: 100_000 }).expect("valid"), 20_000);
        assert!(e.iter().all(|&x| x >= 10) && (mean(&e) - 60.0).abs() < 2.0, "{}", mean(&e));
        let z = samples(Dist::new(DistSpec::Zipf { min: 1, max: 1000, s: 1.2 }).expect("valid"), 20_000);
        let ones = z.iter().filter(|&&x| x == 1).count();
        let tens = z.iter().filter(|&&x| x == 10).count();
        assert!(z.iter().all(|&x| (1..=1000).contains(&x)) && ones > 5 * tens, "{ones} vs {tens}");
    }

    #[test]
    fn bad_parameters_are_refused() {
        assert!(Dist::new(DistSpec::Uniform { min: 9, max: 8 }).is_err());
        assert!(Dist::new(DistSpec::Zipf { min: 1, max: 8, s: 0.0 }).is_err());
        assert!(Dist::new(DistSpec::Exponential { mean: -1.0, min: 1, max: 8 }).is_err());
    }
}
