//! `memlab check`: every bundled plugin passes; each hostile behaviour
//! fails it with the right classification; a lost row shrinks to a tiny
//! case with its seed.

use memlab::check::{CheckOptions, check};
use memlab::registry;

use crate::support::{hostile_plugin, strict_host};

/// `ops` in rounds and one instance of `size`; the suite runs smaller than
/// `memlab check` (1M and 1M), on every plugin.
fn options(ops: u64, size: u64, params: &[(&str, &str)]) -> CheckOptions {
    CheckOptions { ops, size, flips: 10, ..CheckOptions::new(params.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(), 42) }
}

#[test]
fn every_bundled_plugin_passes() {
    // `null` strategies keep nothing: they measure the harness and fail
    // `check` by design.
    for b in registry::all().iter().filter(|b| b.name != "null") {
        // `memlab check` runs 1M ops; the suite runs fewer, on every plugin.
        let report = check(&strict_host(), b.name, options(30_000, 20_000, &[])).expect("check");
        assert!(report.passed(), "{}", report.render());
        assert!(report.properties.len() >= 4, "{}", report.render());
    }
}

#[test]
fn each_hostile_plugin_fails_with_its_classification() {
    for (mode, expected) in [
        ("loop", "deadline exceeded"),
        ("memory-bomb", "out of memory"),
        ("panic", "panic"),
        ("deep-recursion", "stack overflow"),
        ("huge-return", "broke its contract in `cursor.next`"),
    ] {
        let report = check(&strict_host(), &hostile_plugin(), options(2_000, 1_000, &[("mode", mode), ("after", "40")])).expect("check");
        assert!(!report.passed(), "{mode} passed");
        let text = report.render();
        assert!(text.contains("FAIL  differential+cursor") && text.contains(expected), "{mode}: {text}");
    }
}

#[test]
fn a_lost_row_shrinks_to_a_tiny_case_with_its_seed() {
    let report = check(&strict_host(), &hostile_plugin(), options(20_000, 1_000, &[("mode", "drop-row")])).expect("check");
    let text = report.render();
    let failure = report.properties.iter().find(|p| p.name == "differential+cursor").and_then(|p| p.failure.clone()).expect("fails");
    assert!(failure.contains("seed 0x"), "{text}");
    let steps: usize = failure.split("shrunk to ").nth(1).and_then(|s| s.split(' ').next()).and_then(|n| n.parse().ok()).expect("a shrunk case");
    assert!(steps <= 3, "{text}");
}

/// A plugin slow on check's own inputs cannot keep `check` running for
/// hours: past the whole check's budget every call traps as a deadline,
/// and the failures name the budget (issue 49, class 5). With the default
/// budget (scaled by the work) a bundled plugin passes.
#[test]
fn a_check_past_its_budget_fails_every_later_call_and_says_why() {
    let (ok, text) = crate::support::memlab(&["check", &hostile_plugin(), "--param", "mode=slow", "--budget-s", "3"]);
    assert!(!ok && text.contains("FAIL") && text.contains("the whole budget for its calls is spent"), "{text}");
    let (ok, text) = crate::support::memlab(&["check", "btree", "--ops", "20000", "--size", "20000"]);
    assert!(ok, "{text}");
    let (ok, text) = crate::support::memlab(&["check", "btree", "--budget-s", "1e9"]);
    assert!(!ok && text.contains("outside 0..=604800"), "{text}");
}

/// A budgeted twin of a host whose engine checks epochs (a call deadline,
/// as `memlab check` has) shares the engine: a plugin loaded once runs
/// there as it is, not loaded (or compiled) again, and the budget still
/// ends its calls. A host without epochs gets a twin of its own.
#[test]
fn a_budgeted_twin_runs_what_its_host_loaded_and_keeps_the_budget() {
    use memlab::pool::{MemoryPool, PoolMode};
    use memlab::seam::Kind;
    use std::time::{Duration, Instant};
    let host = strict_host();
    let memtable = host.load_as("btree", Kind::Memtable).expect("btree");
    let allocator = host.load_as("per-row", Kind::Allocator).expect("per-row");
    let pool = || std::sync::Arc::new(MemoryPool::new(1 << 26, PoolMode::FetchAdd));
    let twin = host.budgeted(Instant::now() + Duration::from_secs(600)).expect("a twin");
    let (m, a) = (twin.adopt(&memtable).expect("the same engine"), twin.adopt(&allocator).expect("the same engine"));
    let mut shard = twin.strategy(&m).shard(&[], &twin.strategy(&a), &[], pool(), 0).expect("a shard within the budget");
    shard.stats().expect("a call within the budget");
    let spent = host.budgeted(Instant::now()).expect("a spent twin");
    let (m, a) = (spent.adopt(&memtable).expect("the same engine"), spent.adopt(&allocator).expect("the same engine"));
    let Err(error) = spent.strategy(&m).shard(&[], &spent.strategy(&a), &[], pool(), 1) else { panic!("a call past the budget ran") };
    assert!(error.to_string().contains("the whole budget for its calls is spent"), "{error}");
    let plain = memlab::plugin::PluginHost::new(Default::default()).expect("a host without epochs");
    let loaded = plain.load_as("btree", Kind::Memtable).expect("btree");
    assert!(plain.budgeted(Instant::now()).expect("a twin").adopt(&loaded).is_none(), "an engine of its own");
}

/// `params-effect` through the binary: a parameter change the plugin
/// accepts when created and then panics on fails the property, naming
/// the value; a plugin that describes no parameters is told so, not
/// that "every" one of them has an effect.
#[test]
fn params_effect_fails_a_change_that_breaks_the_plugin_and_says_when_there_is_none() {
    let plugin = hostile_plugin();
    let args = ["check", &plugin, "--param", "mode=param-panic", "--param", "after=1", "--ops", "2000", "--size", "1000"];
    // The plugin's own panic is in the output: not `memlab()`, which fails on one.
    let out = crate::support::command(&args).output().expect("memlab runs");
    let (ok, text) = (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned());
    let effect = text.lines().find(|l| l.contains("params-effect")).unwrap_or_else(|| panic!("{text}"));
    assert!(!ok && effect.contains("FAIL") && effect.contains("`after` = 2") && effect.contains("then failed"), "{effect}");
    let (ok, text) = crate::support::memlab(&["check", "lockfree", "--ops", "2000", "--size", "1000"]);
    let effect = text.lines().find(|l| l.contains("params-effect")).unwrap_or_else(|| panic!("{text}"));
    assert!(ok && effect.contains("PASS") && effect.contains("describes no parameters"), "{effect}");
}

/// A failure's replay line, pasted, reproduces it and runs only the
/// property that failed, `--only` naming it: a round's with that round's
/// seed, any other with check's (at-size at its own size); a name the
/// kind lacks is refused with the names it has.
#[test]
fn a_pasted_replay_line_runs_only_the_failing_property() {
    let plugin = hostile_plugin();
    // A seed whose first round meets the dropped row (not every one does).
    let args = ["check", &plugin, "--param", "mode=drop-row", "--ops", "20000", "--size", "1500", "--seed", "0x3bfe4df675ed17cd"];
    let (ok, text) = crate::support::memlab(&args);
    assert!(!ok, "{text}");
    for (property, size) in [("differential+cursor", "1000"), ("stats", "1000"), ("at-size", "1500")] {
        let failed = text.split("  FAIL  ").find(|f| f.starts_with(property)).unwrap_or_else(|| panic!("{property} passed:\n{text}"));
        let replay = failed.lines().find_map(|l| l.trim().strip_prefix("replay: memlab ")).unwrap_or_else(|| panic!("no replay line:\n{failed}"));
        assert!(replay.contains(&format!("--size {size} --only {property} --seed 0x")), "{replay}");
        let words = shlex::split(replay).expect("the replay line splits as a shell would");
        let (ok, again) = crate::support::memlab(&words.iter().map(String::as_str).collect::<Vec<_>>());
        let ran: Vec<&str> = again.lines().filter(|l| l.starts_with("  PASS") || l.starts_with("  FAIL")).collect();
        assert!(!ok && ran.len() == 1 && ran[0].starts_with(&format!("  FAIL  {property}")), "{ran:?}:\n{again}");
    }
    let (ok, text) = crate::support::memlab(&["check", "btree", "--only", "no-such", "--ops", "100", "--size", "100"]);
    assert!(!ok && text.contains("--only no-such") && text.contains("`differential+cursor`") && text.contains("`at-size`"), "{text}");
}
