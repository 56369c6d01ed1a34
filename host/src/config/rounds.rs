//! How long a bench runs and when it has decided: the warm-up each run
//! leaves out of its steady-state rate, and the rounds (A B A B ...)
//! added until every variant's paired verdict against the first is
//! decided, within a floor and ceilings.

use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize};

use crate::workload::parse_duration;

/// What each run leaves out of its steady-state rate.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Warmup {
    /// Until the first memtable switch: the first generation fills
    /// before any flush competes for the cores.
    #[default]
    FirstSwitch,
    /// A stated time from the run's start.
    #[serde(untagged)]
    Time(#[serde(serialize_with = "secs")] Duration),
}

fn secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&format!("{}s", d.as_secs_f64()))
}

impl<'de> Deserialize<'de> for Warmup {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        if text == "first-switch" {
            return Ok(Warmup::FirstSwitch);
        }
        let time = parse_duration(&text).map_err(|e| serde::de::Error::custom(format!("{e}; or \"first-switch\"")))?;
        if time > MAX_TIME {
            return Err(serde::de::Error::custom(format!("`{text}` is longer than the {} s maximum", MAX_TIME.as_secs())));
        }
        Ok(Warmup::Time(time))
    }
}

/// Which rounds read their segments back and compare them with the
/// stream's final state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum VerifyRounds {
    /// Every round.
    #[default]
    All,
    /// Each variant's first round only. Every round runs the same stream
    /// on fresh instances, and a plugin has no clock and no state across
    /// instances, so it cannot tell the first round from the others;
    /// reading back costs about as much as the run.
    First,
}

/// The longest time any of these settings takes: a day.
pub const MAX_TIME: Duration = Duration::from_secs(86_400);

/// Rounds until decided (`[bench.decide]`): after each round past
/// `min_rounds`, the bench stops once every variant's paired verdict
/// against the first is decided, or known to within `rse`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Decide {
    /// The floor: rounds always run (2 to 100).
    #[serde(deserialize_with = "rounds")]
    pub min_rounds: usize,
    /// A ceiling: rounds at most (2 to 100).
    #[serde(deserialize_with = "rounds")]
    pub max_rounds: usize,
    /// A ceiling on the bench's wall time: no round starts that would
    /// end past it, by the last round's length.
    #[serde(deserialize_with = "max_time", serialize_with = "opt_secs", skip_serializing_if = "Option::is_none")]
    pub max_time: Option<Duration>,
    /// The target relative standard error of each verdict's ratio: a
    /// pair known this well stops asking for rounds, decided or not.
    pub rse: f64,
}

impl Default for Decide {
    fn default() -> Self {
        Decide { min_rounds: 3, max_rounds: 12, max_time: None, rse: 0.005 }
    }
}

/// A round count for `min_rounds` or `max_rounds` (the command line's too).
pub fn round_count(n: usize) -> Result<usize, String> {
    if !(2..=100).contains(&n) {
        return Err(format!("{n} is outside 2..=100 (a paired verdict needs two rounds)"));
    }
    Ok(n)
}

/// A `max_time` as written, e.g. "80s" (the command line's too).
pub fn time_ceiling(text: &str) -> Result<Duration, String> {
    let time = parse_duration(text)?;
    if time.is_zero() || time > MAX_TIME {
        return Err(format!("`{text}` must lie in (0, {} s]", MAX_TIME.as_secs()));
    }
    Ok(time)
}

/// A target relative standard error (the command line's too).
pub fn rse_target(x: f64) -> Result<f64, String> {
    if x > 0.0 && x < 1.0 { Ok(x) } else { Err(format!("`bench.decide.rse` = {x} must lie strictly between 0 and 1 (0.01 is 1%)")) }
}

fn rounds<'de, D: Deserializer<'de>>(d: D) -> Result<usize, D::Error> {
    round_count(usize::deserialize(d)?).map_err(serde::de::Error::custom)
}

fn max_time<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
    time_ceiling(&String::deserialize(d)?).map(Some).map_err(serde::de::Error::custom)
}

fn opt_secs<S: serde::Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
    match d {
        Some(d) => secs(d, s),
        None => s.serialize_none(),
    }
}

impl Decide {
    /// Checks what serde cannot: the floor under the ceiling, a usable
    /// target. An error names its key.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        if self.min_rounds > self.max_rounds {
            return Err(("min_rounds", format!("`bench.decide.min_rounds` = {} is above `max_rounds` = {}", self.min_rounds, self.max_rounds)));
        }
        rse_target(self.rse).map_err(|e| ("rse", e))?;
        Ok(())
    }
}
