//! Rounds until decided: a bench adds rounds until every paired verdict
//! is decided, stops at its ceilings and says which ended it; each run's
//! steady-state window leaves the warm-up out.

use memlab::bench;
use memlab::config::BenchConfig;
use memlab::record::verdict::{Decision, verdicts};
use memlab::record::{StopReason, Verdict};

use crate::support::{host, hostile_plugin, options, scratch};

/// A memtable that spins on every insert against a real one: a
/// difference of several times, decided in the floor's rounds on any
/// machine, debug build or not.
const CONFIG: &str = r#"
[bench.decide]
min_rounds = 3
max_rounds = 6

[workload]
seed = 4
ops = 4000
threads = 1
rows_per_batch = 10
partitions = { count = 500 }

[[variant]]
name = "btree"
memtable = "btree"
allocator = "per-row"
serializer = "lean"
memtable_space = "1MiB"
# The rounds are under test, not verification: the debug host's checks
# would dilute the difference.
verify = false

[[variant]]
name = "slow"
memtable = "{hostile}"
memtable_params = { mode = "slow" }
allocator = "per-row"
serializer = "lean"
memtable_space = "1MiB"
verify = false
"#;

fn parse(text: &str) -> BenchConfig {
    BenchConfig::parse("rounds.toml", &text.replace("{hostile}", &hostile_plugin())).expect("config")
}

#[test]
fn rounds_stop_once_every_verdict_is_decided() {
    let config = parse(CONFIG);
    let result = bench::run(&host(), &config, &options(scratch("rounds-decided")), |_| {}).expect("bench");
    let stop = result.stop.expect("the record says what stopped it");
    // Decided at the floor on a quiet machine; a noisy one may need more.
    assert_eq!(stop.reason, StopReason::Decided, "{}", memlab::report::comparison(&result));
    assert!((3..6).contains(&stop.rounds), "{stop:?}");
    let [(name, Some(v))] = verdicts(&result)[..] else { panic!("one verdict") };
    assert_eq!((name, v.decision), ("slow", Decision::Slower), "{v}");
    assert!(v.high < 1.0 && v.rounds == stop.rounds, "{v:?}");
    // Every run's window leaves its warm-up out, and the two add up.
    for run in &result.variants {
        let s = run.steady.unwrap_or_else(|| panic!("{} round {}: no steady window", run.variant.name, run.repeat));
        assert!(s.warmup_rows > 0 && s.rows > 0 && s.warmup_rows + s.rows == run.rows, "{s:?}");
        assert!(s.secs > 0.0 && s.secs < run.elapsed.as_secs_f64(), "{s:?}");
    }
    let comparison = memlab::report::comparison(&result);
    assert!(comparison.contains("Winner: `btree` (the baseline)"));
    // Why, by the one strategy that differs: the memtable's own phases,
    // never the allocator's.
    let why = comparison.lines().find(|l| l.starts_with("Why:")).unwrap_or_default();
    assert!(why.contains("differs from `slow` in its memtable alone") && why.contains("memtable calls"), "{comparison}");
    assert!(!why.contains("allocator calls") && !why.contains("generating"), "{why}");
}

#[test]
fn a_ceiling_ends_the_rounds_and_is_named() {
    let timed = CONFIG.replace("max_rounds = 6", "max_rounds = 6\nmax_time = \"1ms\"");
    let config = parse(&timed);
    let result = bench::run(&host(), &config, &options(scratch("rounds-time")), |_| {}).expect("bench");
    // Under the floor the time ceiling still holds: no second round.
    assert_eq!(result.stop.map(|s| (s.rounds, s.reason)), Some((1, StopReason::MaxTime)));
    let two = CONFIG.replace("min_rounds = 3\nmax_rounds = 6", "min_rounds = 2\nmax_rounds = 2");
    let config = parse(&two);
    let result = bench::run(&host(), &config, &options(scratch("rounds-max")), |_| {}).expect("bench");
    let stop = result.stop.expect("stop");
    assert!(stop.rounds == 2 && matches!(stop.reason, StopReason::Decided | StopReason::MaxRounds), "{stop:?}");
}

#[test]
fn only_the_first_rounds_final_state_is_compared_when_asked() {
    let first = CONFIG.replace("verify = false\n", "").replace("[bench.decide]", "[bench]\nverify_rounds = \"first\"\n\n[bench.decide]");
    let config = parse(&first);
    let result = bench::run(&host(), &config, &options(scratch("rounds-verify")), |_| {}).expect("bench");
    for run in result.variants.iter().filter(|r| r.variant.name == "btree") {
        assert_eq!(run.verified.is_some(), run.repeat == 1, "round {}", run.repeat);
        assert_eq!(run.not_verified.is_some(), run.repeat > 1, "round {}", run.repeat);
        // Every round is still held to the ledger and read back whole.
        let checked = run.checked.expect("checked every round");
        assert!(checked.ledger_rows > 0 && checked.segments > 0 && checked.final_state == (run.repeat == 1), "{checked:?}");
    }
}

#[test]
fn the_verdict_reads_its_interval() {
    let v = Verdict::of(&[1.16, 1.15, 1.17, 1.16], 0.02).expect("four rounds");
    assert!(v.to_string().starts_with("1.16x [1.1") && v.to_string().ends_with("faster"), "{v}");
}

/// The advice names what stopped the rounds, the flag that lifts it and
/// the command as typed, through the binary: the time ceiling (and the
/// machine, when not even the floor fit), then a fixed count.
#[test]
fn the_advice_names_the_limit_that_stopped_the_rounds() {
    let dir = scratch("rounds-advice");
    let path = dir.join("advice.toml");
    let timed = CONFIG.replace("max_rounds = 6", "max_rounds = 6\nmax_time = \"1ms\"").replace("{hostile}", &hostile_plugin());
    std::fs::write(&path, timed).expect("config");
    let (file, out) = (path.to_str().expect("path"), dir.join("runs"));
    let (ok, text) = crate::support::memlab(&["bench", file, "--quiet", "--no-intervals", "--out", out.to_str().expect("path")]);
    let advice = text.lines().find(|l| l.starts_with("What to run:")).unwrap_or_default();
    assert!(ok && advice.contains("ceiling on time") && advice.contains("`max_time` = 0.001 s"), "{text}");
    assert!(advice.contains(&format!("`memlab bench {file} --max-time ")) && advice.contains("This machine is the cause"), "{advice}");
    assert!(!advice.contains("[bench.decide]") && !advice.contains("<config>"), "{advice}");
    let (ok, text) = crate::support::memlab(&["bench", file, "--quiet", "--no-intervals", "--repeats", "1", "--out", out.to_str().expect("path")]);
    let advice = text.lines().find(|l| l.starts_with("What to run:")).unwrap_or_default();
    assert!(ok && advice.contains("fixed at 1") && advice.contains(&format!("`memlab bench {file} --max-rounds 10`")), "{text}");
}

/// `--cpus` pins the run, records the set and says so in the machine
/// line; a CPU the machine does not have is refused before anything runs.
#[test]
fn cpus_pins_the_run_and_the_record_says_so() {
    let dir = scratch("rounds-cpus");
    let path = dir.join("pinned.toml");
    std::fs::write(&path, CONFIG.replace("{hostile}", &hostile_plugin())).expect("config");
    let (file, out) = (path.to_str().expect("path"), dir.join("runs"));
    let (ok, text) =
        crate::support::memlab(&["bench", file, "--quiet", "--no-intervals", "--repeats", "2", "--cpus", "0", "--out", out.to_str().expect("path")]);
    assert!(ok && text.contains("pinned to CPUs 0,"), "{text}");
    let run = std::fs::read_dir(&out).expect("runs").filter_map(Result::ok).map(|e| e.path().join("run.json")).find(|p| p.is_file()).expect("a record");
    let record = memlab::record::BenchResult::load(&run).expect("record");
    assert_eq!(record.config.bench.cpus.as_deref(), Some("0"));
    // The process's own view of its CPUs (its affinity) is the one CPU.
    assert_eq!(record.provenance.cpus, 1, "the process was not pinned");
    let (ok, text) = crate::support::memlab(&["bench", file, "--cpus", "1023", "--out", dir.join("none").to_str().expect("path")]);
    assert!(!ok && text.contains("--cpus 1023") && text.contains("this machine has CPUs"), "{text}");
    assert!(!dir.join("none").exists(), "a refused pin made a run directory");
    // A range wider than the machine records the CPUs actually pinned.
    let wide = dir.join("wide");
    let (ok, text) =
        crate::support::memlab(&["bench", file, "--quiet", "--no-intervals", "--repeats", "1", "--cpus", "0-1023", "--out", wide.to_str().expect("path")]);
    assert!(ok, "{text}");
    let run = std::fs::read_dir(&wide).expect("runs").filter_map(Result::ok).map(|e| e.path().join("run.json")).find(|p| p.is_file()).expect("a record");
    let record = memlab::record::BenchResult::load(&run).expect("record");
    let pinned = record.config.bench.cpus.clone().expect("pinned");
    let count: usize =
        pinned.split(',').map(|part| part.split_once('-').map_or(1, |(a, b)| b.parse::<usize>().unwrap_or(0) + 1 - a.parse::<usize>().unwrap_or(0))).sum();
    assert!(pinned != "0-1023" && count == record.provenance.cpus, "recorded {pinned} for {} CPUs", record.provenance.cpus);
}
