//! What to run when the rounds ended without a verdict, from what ended
//! them: the limit that was hit (the record's `Stop`, the ceilings the
//! config set), the flag that lifts it, the rounds the noise seen so far
//! calls for, and the command as it would be typed (the config's path, or
//! none for the built-in default).

use crate::record::{BenchResult, StopReason};

/// The `--max-rounds` flag's own ceiling.
const MAX_ROUNDS_FLAG: usize = 100;

/// What the noise seen so far says about more rounds.
#[derive(Debug, Clone, Copy)]
pub(super) enum Need {
    /// Too few rounds to estimate the noise at all.
    Unknown,
    /// About this many more rounds would decide.
    More(usize),
    /// The leaders' intervals overlap: no estimate, only more rounds.
    Contested,
    /// More than the flag allows: the difference, if any, is below what
    /// this machine resolves.
    Beyond,
}

impl Need {
    /// From the rounds run and the verdicts' own estimate.
    pub(super) fn of(rounds: usize, more: usize) -> Need {
        match (rounds, more) {
            // No estimate at all (no verdict had two rounds) is no need of 0.
            (..3, _) | (_, 0) => Need::Unknown,
            (_, m) if rounds + m > MAX_ROUNDS_FLAG => Need::Beyond,
            (_, m) => Need::More(m),
        }
    }

    fn text(self, rounds: usize) -> String {
        match self {
            Need::Unknown => format!("{rounds} round(s) are too few to estimate the noise."),
            Need::More(m) => format!("The noise seen in {rounds} rounds calls for about {m} more."),
            Need::Contested => format!("After {rounds} rounds no leader's interval clears the others'."),
            Need::Beyond => format!(
                "The noise seen in {rounds} rounds calls for more than {MAX_ROUNDS_FLAG} in all: any difference is smaller than this machine resolves now; a quieter machine, or a longer `duration`, narrows it."
            ),
        }
    }

    /// The rounds to ask for.
    fn target(self, rounds: usize) -> usize {
        match self {
            Need::More(m) => rounds + m,
            Need::Unknown | Need::Beyond | Need::Contested => (rounds * 2).max(10),
        }
        .clamp(2, MAX_ROUNDS_FLAG)
    }
}

/// The command that ran this bench, as typed: `memlab bench`, then the
/// config's path when it came from a file.
fn command(result: &BenchResult) -> String {
    match &result.config.bench.file {
        Some(file) => format!("memlab bench {}", crate::util::text::clean(file)),
        None => "memlab bench".to_string(),
    }
}

/// The `[bench.decide]` ceilings the run had, as the record keeps them.
struct Ceilings {
    min_rounds: Option<u64>,
    max_rounds: Option<u64>,
    max_time_s: Option<f64>,
}

fn ceilings(result: &BenchResult) -> Ceilings {
    let decide = result.config.bench.decide.as_ref();
    let field = |k: &str| decide.and_then(|d| d.get(k));
    let max_time_s = field("max_time").and_then(|t| t.as_f64().or_else(|| t.as_str()?.strip_suffix('s')?.parse().ok()));
    Ceilings { min_rounds: field("min_rounds").and_then(|v| v.as_u64()), max_rounds: field("max_rounds").and_then(|v| v.as_u64()), max_time_s }
}

/// The cores the process got over the completed rounds (the machine each
/// recorded, else CPU time over wall time), and the wall seconds a round
/// took.
fn machine(result: &BenchResult, rounds: usize) -> (f64, f64) {
    let done: Vec<_> = result.variants.iter().filter(|v| v.failure().is_none()).collect();
    let wall: f64 = done.iter().map(|v| (v.elapsed + v.setup).as_secs_f64()).sum();
    let recorded: Vec<f64> = done.iter().filter_map(|v| v.resources.machine.map(|m| m.cores)).collect();
    let cores = if !recorded.is_empty() && recorded.len() == done.len() {
        recorded.iter().sum::<f64>() / recorded.len() as f64
    } else {
        done.iter().map(|v| (v.resources.user_cpu + v.resources.system_cpu).as_secs_f64()).sum::<f64>() / wall.max(1e-9)
    };
    (cores, wall / rounds.max(1) as f64)
}

/// What to run, when the rounds ended with a verdict undecided.
pub(super) fn advice(result: &BenchResult, need: Need) -> String {
    let rounds = result.variants.iter().map(|v| v.repeat).max().unwrap_or(0);
    let cmd = command(result);
    let target = need.target(rounds);
    let noise = need.text(rounds);
    let limits = ceilings(result);
    let Some(stop) = result.stop else {
        return format!("{noise} Let the bench add rounds until it decides: `{cmd} --max-rounds {target}`.");
    };
    match stop.reason {
        StopReason::Fixed => format!(
            "The rounds were fixed at {rounds} (`repeats`, or `--repeats`). {noise} Let the bench add rounds until it decides: `{cmd} --max-rounds {target}` (which replaces a fixed count)."
        ),
        StopReason::MaxRounds => {
            let max = limits.max_rounds.map_or(String::new(), |m| format!(" (`max_rounds` = {m})"));
            format!("The ceiling on rounds stopped them{max}. {noise} Lift it: `{cmd} --max-rounds {target}`.")
        }
        StopReason::MaxTime => max_time(result, rounds, need, &cmd, &limits),
        StopReason::Precise => format!(
            "Every ratio was known within the target relative standard error, and a difference is still inside the noise. {noise} A smaller target runs more rounds: `{cmd} --rse 0.002 --max-rounds {target}`."
        ),
        StopReason::Decided => format!("{noise} `{cmd} --max-rounds {target}`."),
        StopReason::Interrupted => format!("It was interrupted after {rounds} round(s). {noise} Run it again: `{cmd} --max-rounds {target}`."),
    }
}

/// The time ceiling: the seconds that would let the rounds called for
/// run, and, when not even the floor of rounds fit, the machine named.
fn max_time(result: &BenchResult, rounds: usize, need: Need, cmd: &str, limits: &Ceilings) -> String {
    let (cores, per_round) = machine(result, rounds);
    let target = need.target(rounds);
    let secs = (per_round * target as f64 * 1.1).ceil().max(1.0);
    let max = limits.max_time_s.map_or(String::new(), |t| format!(" (`max_time` = {t} s)"));
    let mut text = format!(
        "The ceiling on time stopped them{max} after {rounds} round(s) of about {per_round:.0} s each. {} Lift it: `{cmd} --max-time {secs}s --max-rounds {target}`.",
        need.text(rounds)
    );
    let floor = limits.min_rounds.unwrap_or(0) as usize;
    let cpus = result.provenance.cpus;
    if rounds < floor && cores < 0.75 * cpus as f64 {
        text.push_str(&format!(
            " This machine is the cause: not even the floor of {floor} rounds (`min_rounds`) fit in the time, with the process getting {cores:.1} of {cpus} cores."
        ));
    } else if rounds < floor {
        text.push_str(&format!(" Not even the floor of {floor} rounds (`min_rounds`) fit in the time; the process got {cores:.1} of {cpus} cores."));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::{Need, advice};
    use crate::record::{BenchResult, Stop, StopReason, VariantResult};

    fn result(reason: StopReason, rounds: usize, decide: serde_json::Value, file: Option<&str>) -> BenchResult {
        let mut r = BenchResult::default();
        r.config.bench.decide = Some(decide);
        r.config.bench.file = file.map(str::to_string);
        r.provenance.cpus = 2;
        let mut v = VariantResult { repeat: rounds, ..VariantResult::default() };
        v.elapsed = std::time::Duration::from_secs(30);
        v.resources.user_cpu = std::time::Duration::from_secs(15);
        r.variants.push(v);
        r.stop = Some(Stop { rounds, reason });
        r
    }

    #[test]
    fn the_advice_names_the_limit_that_stopped_the_rounds_and_the_command() {
        let decide = serde_json::json!({"min_rounds": 3, "max_rounds": 12, "max_time": "64s", "rse": 0.005});
        let time = advice(&result(StopReason::MaxTime, 1, decide.clone(), None), Need::of(1, 0));
        assert!(time.contains("ceiling on time") && time.contains("`max_time` = 64 s"), "{time}");
        assert!(time.contains("`memlab bench --max-time") && !time.contains("<config>"), "{time}");
        assert!(time.contains("This machine is the cause") && time.contains("0.5 of 2 cores"), "{time}");
        assert!(!time.contains("[bench.decide]"), "{time}");

        let rounds = advice(&result(StopReason::MaxRounds, 7, decide.clone(), Some("my.toml")), Need::of(7, 5));
        assert!(rounds.contains("`max_rounds` = 12") && rounds.contains("about 5 more"), "{rounds}");
        assert!(rounds.contains("`memlab bench my.toml --max-rounds 12`"), "{rounds}");
        assert!(!rounds.contains("cannot estimate"), "{rounds}");

        let fixed = advice(&result(StopReason::Fixed, 1, decide.clone(), None), Need::of(1, 0));
        assert!(fixed.contains("fixed at 1") && fixed.contains("too few to estimate"), "{fixed}");

        let far = advice(&result(StopReason::MaxRounds, 12, decide.clone(), None), Need::of(12, 500));
        assert!(far.contains("smaller than this machine resolves") && far.contains("--max-rounds 24"), "{far}");

        // Rounds but no estimate: never "about 0 more".
        let none = advice(&result(StopReason::MaxRounds, 4, decide.clone(), None), Need::of(4, 0));
        assert!(none.contains("too few to estimate") && !none.contains("about 0"), "{none}");

        // The cores the machine line recorded, and a failed variant's
        // rounds left out of them.
        let mut busy = result(StopReason::MaxTime, 1, decide, None);
        busy.variants[0].resources.machine = Some(crate::record::Machine { cpus: 2, cores: 0.7, busy: 2.0, steal: 0.0, load: 6.0 });
        let mut failed = busy.variants[0].clone();
        failed.resources.machine = Some(crate::record::Machine { cpus: 2, cores: 1.9, busy: 2.0, steal: 0.0, load: 6.0 });
        failed.fail(crate::record::Failure::new(crate::record::FailureClass::Trap, "boom"));
        busy.variants.push(failed);
        let text = advice(&busy, Need::of(1, 0));
        assert!(text.contains("0.7 of 2 cores"), "{text}");
    }
}
