//! When a bench stops adding rounds: after a fixed number (`repeats`),
//! or, with `[bench.decide]`, once every variant's paired verdict against
//! the first is decided and, where several beat it, one clears the others
//! (or every ratio is known within `rse`), past a floor of rounds and
//! under ceilings on rounds and time.

use std::time::Duration;

use crate::config::Decide;
use crate::record::verdict::{contested, verdicts};
use crate::record::{BenchResult, StopReason};

/// The rounds rule in force.
#[derive(Debug, Clone, Copy)]
pub(super) enum Rounds {
    /// Exactly this many.
    Fixed(usize),
    /// Until decided.
    Decide(Decide),
}

impl Rounds {
    /// The most rounds that can run.
    pub(super) fn max(self) -> usize {
        match self {
            Rounds::Fixed(n) => n,
            Rounds::Decide(d) => d.max_rounds,
        }
    }

    /// After round `round`: why to stop, if it is time. `elapsed` is the
    /// bench's time so far and `last` the round's, which a next round is
    /// expected to take again.
    pub(super) fn after(self, round: usize, so_far: &BenchResult, elapsed: Duration, last: Duration) -> Option<StopReason> {
        let d = match self {
            Rounds::Fixed(n) => return (round >= n).then_some(StopReason::Fixed),
            Rounds::Decide(d) => d,
        };
        if round >= d.min_rounds {
            let all = verdicts(so_far);
            let verdicts: Vec<_> = all.iter().filter_map(|(_, v)| *v).collect();
            // A variant with no verdict (it failed) has nothing to decide.
            // Several beating the baseline with none clearing the others is
            // not decided yet: the bench is run to name a winner.
            let baseline = so_far.variants.first().map_or("", |v| v.variant.name.as_str());
            if verdicts.iter().all(|v| v.decision.decided()) && !contested(baseline, &all) {
                return Some(StopReason::Decided);
            }
            if verdicts.iter().all(|v| v.rse <= d.rse) {
                return Some(StopReason::Precise);
            }
        }
        if round >= d.max_rounds {
            return Some(StopReason::MaxRounds);
        }
        match d.max_time {
            Some(max) if elapsed + last > max => Some(StopReason::MaxTime),
            _ => None,
        }
    }
}
