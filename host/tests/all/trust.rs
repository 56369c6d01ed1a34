//! Plugins that lie, one numbered contract at a time, by the classes an
//! outside adversary found: bugs that show only at size (1), the budget
//! cheat (2), counters and metadata that contradict what the host saw
//! (3), and wrong read answers (4). Each is caught by `memlab check`, and
//! classes 2-4 also by the bench, which then publishes no figures.

use memlab::bench;
use memlab::check::{CheckOptions, check};
use memlab::config::BenchConfig;
use memlab::record::FailureClass::{self, Budget, Contract, Verification};

use crate::support::{hostile_plugin, liar_plugin, options, scratch, strict_host};

/// Big enough to pass 65,536 entries and 100,000 inserts; the CLI's
/// default is 1M.
const SIZE: u64 = 150_000;

/// Checks `plugin` with `params`; the failing properties' text.
fn failures(plugin: &str, params: &[(&str, &str)], size: u64) -> String {
    let params = params.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let report = check(&strict_host(), plugin, CheckOptions { ops: 5_000, size, flips: 20, ..CheckOptions::new(params, 7) }).expect("check runs");
    assert!(!report.passed(), "{plugin} passed check:\n{}", report.render());
    report.render().lines().filter(|l| l.contains("FAIL") || l.starts_with("          ")).collect::<Vec<_>>().join("\n")
}

#[test]
fn liars_at_size_fail_check() {
    let hostile = hostile_plugin();
    for (mode, expected) in [("drop-every", "is missing"), ("swap-past", "cursor entry 65536")] {
        let text = failures(&hostile, &[("mode", mode)], SIZE);
        assert!(text.contains("FAIL  at-size") && text.contains(expected), "{mode}: {text}");
    }
    let text = failures(&liar_plugin("liar-alloc"), &[("mode", "alias")], SIZE);
    assert!(text.contains("FAIL  at-size") && text.contains("row 9999"), "alias: {text}");
    let flush = liar_plugin("liar-flush");
    let text = failures(&flush, &[("mode", "rows-past")], SIZE);
    assert!(text.contains("FAIL  at-size") && text.contains("rows = 150001"), "rows-past: {text}");
    let text = failures(&flush, &[("mode", "checksum-skip")], SIZE);
    assert!(text.contains("FAIL  at-size") && text.contains("flip"), "checksum-skip: {text}");
}

#[test]
fn the_honest_liars_pass_check() {
    // Their honest modes pass: what fails above is the lie, not the plugin.
    for plugin in [liar_plugin("liar-alloc"), liar_plugin("liar-flush")] {
        let report = check(&strict_host(), &plugin, CheckOptions { ops: 5_000, size: 20_000, flips: 10, ..CheckOptions::new(Vec::new(), 7) }).expect("check");
        assert!(report.passed(), "{}", report.render());
    }
}

/// A plugin, its parameters, and words its failure must contain.
type Case<'a> = (&'a str, &'a [(&'a str, &'a str)], &'a str);

#[test]
fn lies_the_host_can_see_fail_check() {
    let hostile = hostile_plugin();
    let alloc = liar_plugin("liar-alloc");
    let flush = liar_plugin("liar-flush");
    let cases: [Case<'_>; 15] = [
        (&alloc, &[("mode", "stop-reserving")], "has reserved only"),
        (&alloc, &[("mode", "under-reserve")], "has reserved only"),
        (&alloc, &[("mode", "hidden-copies"), ("after", "0")], "its linear memory grew"),
        (&alloc, &[("mode", "halve-used")], "`bytes-used`"),
        (&alloc, &[("mode", "few-reservations")], "`reservations` = "),
        // Honest only in a pool that grants 1.5 GiB at once.
        (&alloc, &[("mode", "pool-sniff")], "differ"),
        // Past `defaults`' 2,000 rows only: the at-size twin shows it.
        (&alloc, &[("mode", "late-default-lie")], "it differs at size"),
        (&alloc, &[("mode", "default-lie")], "created with what it described (after = 1000, mode = default-lie, pad = 0), it differs"),
        (&hostile, &[("mode", "index-lie")], "`index-bytes` = 1 "),
        (&flush, &[("mode", "tombstones-per-partition")], "tombstones"),
        (&flush, &[("mode", "min-gt-max")], "min-timestamp"),
        // Keys it recognises rebuilt from rows: some hold another key's row.
        (&flush, &[("mode", "key-fallback")], "read back differs"),
        (&hostile, &[("mode", "clamp-after"), ("after", "1000")], "configured as `1000`"),
        (&hostile, &[("mode", "scan-extra")], "for a limit of"),
        (&hostile, &[("mode", "get-neighbour")], "answered with key"),
    ];
    for (plugin, params, expected) in cases {
        let text = failures(plugin, params, 20_000);
        assert!(text.contains(expected), "{params:?}: {text}");
    }
}

/// One variant per lie the bench can see, then an honest one.
#[test]
fn lies_the_host_can_see_fail_the_bench_and_publish_nothing() {
    let (hostile, alloc, flush) = (hostile_plugin(), liar_plugin("liar-alloc"), liar_plugin("liar-flush"));
    let lies = [
        (
            "budget cheat",
            "btree",
            String::new(),
            alloc.as_str(),
            r#"{ mode = "stop-reserving", after = 2000 }"#,
            "lean",
            "{}",
            ("has reserved only", Budget, "allocator"),
        ),
        (
            "half reserved",
            "btree",
            String::new(),
            &alloc,
            r#"{ mode = "under-reserve", after = 500 }"#,
            "lean",
            "{}",
            ("has reserved only", Budget, "allocator"),
        ),
        (
            "hidden copies",
            "btree",
            String::new(),
            &alloc,
            r#"{ mode = "hidden-copies", after = 0 }"#,
            "lean",
            "{}",
            ("its linear memory grew", Budget, "allocator"),
        ),
        ("grown in create", "btree", String::new(), &alloc, r#"{ mode = "grow-in-create" }"#, "lean", "{}", ("its linear memory grew", Budget, "allocator")),
        ("halved bytes-used", "btree", String::new(), &alloc, r#"{ mode = "halve-used" }"#, "lean", "{}", ("`bytes-used`", Contract, "allocator")),
        (
            "undercounted reservations",
            "btree",
            String::new(),
            &alloc,
            r#"{ mode = "few-reservations" }"#,
            "lean",
            "{}",
            ("but the pool granted", Contract, "allocator"),
        ),
        (
            "invented pool-full",
            "btree",
            String::new(),
            &alloc,
            r#"{ mode = "fake-pool-full", after = 500 }"#,
            "lean",
            "{}",
            ("the pool refused no reservation", Contract, "allocator"),
        ),
        ("index-bytes 1", &hostile, r#"{ mode = "index-lie" }"#.into(), "per-row", "{}", "lean", "{}", ("`index-bytes` = 1 ", Contract, "memtable")),
        (
            "a flood of counters",
            &hostile,
            r#"{ mode = "stats-flood" }"#.into(),
            "per-row",
            "{}",
            "lean",
            "{}",
            ("at most 64 are allowed", Contract, "memtable"),
        ),
        (
            "tombstones per partition",
            "btree",
            String::new(),
            "per-row",
            "{}",
            &flush,
            r#"{ mode = "tombstones-per-partition" }"#,
            ("tombstones", Contract, "serializer"),
        ),
        ("min > max", "btree", String::new(), "per-row", "{}", &flush, r#"{ mode = "min-gt-max" }"#, ("min-timestamp", Contract, "serializer")),
        (
            "reads by key absent",
            "btree",
            String::new(),
            "per-row",
            "{}",
            &flush,
            r#"{ mode = "get-absent" }"#,
            ("which the segment holds", Contract, "serializer"),
        ),
        (
            "checksum of a prefix",
            "btree",
            String::new(),
            "per-row",
            "{}",
            &flush,
            r#"{ mode = "checksum-skip" }"#,
            ("reported no damage", Contract, "serializer"),
        ),
        (
            "keys rebuilt from rows",
            "btree",
            String::new(),
            "per-row",
            "{}",
            &flush,
            r#"{ mode = "key-from-row" }"#,
            ("its format interprets keys", Contract, "serializer"),
        ),
        (
            "keys rebuilt where router-shaped",
            "btree",
            String::new(),
            "per-row",
            "{}",
            &flush,
            r#"{ mode = "key-fallback" }"#,
            ("its format interprets keys", Contract, "serializer"),
        ),
        (
            "clamped parameter",
            &hostile,
            r#"{ mode = "clamp-after", after = 1000 }"#.into(),
            "per-row",
            "{}",
            "lean",
            "{}",
            ("configured as `1000`", Contract, "memtable"),
        ),
        ("scan limit + 1", &hostile, r#"{ mode = "scan-extra" }"#.into(), "per-row", "{}", "lean", "{}", ("for a limit of", Contract, "memtable")),
        ("neighbour's answer", &hostile, r#"{ mode = "get-neighbour" }"#.into(), "per-row", "{}", "lean", "{}", ("answered with key", Contract, "memtable")),
        ("every get absent", &hostile, r#"{ mode = "get-miss" }"#.into(), "per-row", "{}", "lean", "{}", ("answered absent for", Contract, "memtable")),
        ("short scans", &hostile, r#"{ mode = "short-scan" }"#.into(), "per-row", "{}", "lean", "{}", ("stopped before key", Contract, "memtable")),
    ];
    let mut config = String::from(
        r#"
[bench]
call_deadline_ms = 5000

[workload]
seed = 5
ops = 6000
threads = 1
rows_per_batch = { dist = "uniform", min = 5, max = 10 }
tombstone_ratio = 0.05
partitions = { count = 2000 }
clustering = { rows = { dist = "uniform", min = 1, max = 40 } }

[workload.mix]
insert = 80
read = 15
scan = 5
scan_limit = 20
"#,
    );
    for (name, memtable, mparams, allocator, aparams, serializer, sparams, _) in &lies {
        let mparams = if mparams.is_empty() { "{}" } else { mparams.as_str() };
        config.push_str(&format!(
            "\n[[variant]]\nname = {name:?}\nmemtable = {memtable:?}\nmemtable_params = {mparams}\nallocator = {allocator:?}\nallocator_params = {aparams}\nserializer = {serializer:?}\nserializer_params = {sparams}\nmemtable_space = \"16MiB\"\nverify_sample = 1\n"
        ));
    }
    config.push_str("\n[[variant]]\nname = \"honest\"\nmemtable = \"btree\"\nallocator = \"per-row\"\nserializer = \"lean\"\nmemtable_space = \"16MiB\"\n");
    let config = BenchConfig::parse("liars.toml", &config).expect("config");
    let result = bench::run(&strict_host(), &config, &options(scratch("liars-bench")), |_| {}).expect("bench");
    for (lie, run) in lies.iter().zip(&result.variants) {
        let failure = run.failure().unwrap_or_else(|| panic!("`{}` was published:\n{}", lie.0, memlab::report::summary(run)));
        let (words, class, liar) = lie.7;
        assert_eq!(failure.class, class, "{}: {failure}", lie.0);
        assert!(failure.message.contains(words), "{}: {failure}", lie.0);
        // The plugin that lied is named, with its sha256.
        let named = run.variant.plugin(liar.parse().expect("a kind"));
        assert_eq!(failure.plugin.as_deref(), Some(named), "{}: {failure:?}", lie.0);
        assert!(failure.sha256.as_ref().is_some_and(|s| s.len() == 64), "{}: {failure:?}", lie.0);
        assert!(memlab::report::summary(run).contains("not valid"), "{}", lie.0);
    }
    let honest = result.variants.last().expect("the honest run");
    assert_eq!(honest.failure(), None);
    assert!(honest.verified.is_some());
}

/// A file that describes itself as a bundled plugin (here: the bundled
/// btree's own component, copied) is refused by the bench and by check:
/// its figures would be published under our name.
#[test]
fn a_file_that_calls_itself_a_bundled_plugin_is_refused() {
    let path = scratch("impersonator").join("btree-copy.wasm");
    let bundled = memlab::registry::find_kind("btree", memlab::seam::Kind::Memtable).expect("bundled btree");
    std::fs::write(&path, bundled.component).expect("write the copy");
    let path = path.display().to_string();
    let config = format!("[workload]\nops = 200\n\n[[variant]]\nname = \"copy\"\nmemtable = {path:?}\nallocator = \"per-row\"\nserializer = \"lean\"\n");
    let config = BenchConfig::parse("impersonator.toml", &config).expect("config");
    let result = bench::run(&strict_host(), &config, &options(scratch("impersonator-bench")), |_| {}).expect("bench");
    let failure = result.variants[0].failure().expect("refused");
    assert_eq!((failure.class, failure.operation.as_deref()), (Contract, Some("memtable.describe")), "{failure:?}");
    assert!(failure.message.contains("the bundled memtable") && failure.plugin.as_deref() == Some(path.as_str()), "{failure:?}");
    let report = check(&strict_host(), &path, CheckOptions { ops: 500, size: 1000, flips: 2, ..CheckOptions::new(Vec::new(), 7) }).expect("check runs");
    assert!(!report.passed() && report.render().contains("the bundled memtable"), "{}", report.render());
}

/// A serializer's memory grown in its `create` is the flush's growth:
/// the figure counts from before `create`.
#[test]
fn memory_a_serializer_grows_in_create_is_counted() {
    let flush = liar_plugin("liar-flush");
    let config = format!(
        "[workload]\nops = 400\n\n[[variant]]\nname = \"grower\"\nmemtable = \"btree\"\nallocator = \"per-row\"\nserializer = {flush:?}\nserializer_params = {{ mode = \"grow-in-create\" }}\n"
    );
    let config = BenchConfig::parse("grower.toml", &config).expect("config");
    let result = bench::run(&strict_host(), &config, &options(scratch("grower-bench")), |_| {}).expect("bench");
    let run = &result.variants[0];
    assert_eq!(run.failure(), None);
    let grew = run.flushes.iter().map(|f| f.serializer_grew).max().unwrap_or(0);
    assert!(grew >= 32 << 20, "the serializer grew {grew} bytes by the record");
}

/// A memtable that lies only on input shaped like a bench's (router sort
/// keys) fails `memlab check`: check's odd-seeded rounds are bench-shaped.
#[test]
fn a_liar_on_bench_shaped_keys_alone_fails_check() {
    let text = failures(&hostile_plugin(), &[("mode", "drop-bench-keys")], 20_000);
    assert!(text.contains("FAIL"), "{text}");
}

/// A variant of btree, `alloc` in `mode` and lean.
fn alloc_variant(name: &str, alloc: &str, mode: &str) -> String {
    format!("\n[[variant]]\nname = {name:?}\nmemtable = \"btree\"\nallocator = {alloc:?}\nallocator_params = {{ mode = {mode:?} }}\nserializer = \"lean\"\n")
}

/// The bench's preflight holds each wasm strategy to the defaults it
/// describes: created again with them, it must behave the same.
#[test]
fn a_default_described_but_not_used_is_refused_before_the_bench() {
    let alloc = liar_plugin("liar-alloc");
    let variant = |name: &str, mode: &str| alloc_variant(name, &alloc, mode);
    let honest = BenchConfig::parse("defaults.toml", &format!("[workload]\nops = 100\n{}", variant("honest", "none"))).expect("config");
    bench::preflight(&strict_host(), &honest, None).expect("the honest liar passes");
    let config = BenchConfig::parse("defaults.toml", &format!("[workload]\nops = 100\n{}", variant("lies", "default-lie"))).expect("config");
    let err = bench::preflight(&strict_host(), &config, None).expect_err("refused");
    let text = err.to_string();
    assert!(text.contains("variant `lies`") && text.contains(&alloc) && text.contains("allocator.describe") && text.contains("pad = 0"), "{text}");
}

/// A default it uses only past the preflight's fixed workload passes the
/// preflight; the bench's own calls, replayed into a twin created with
/// what it described, show it, and the variant publishes nothing.
#[test]
fn a_default_used_only_on_the_bench_rows_fails_the_variant() {
    let alloc = liar_plugin("liar-alloc");
    let variant = |name: &str, mode: &str| alloc_variant(name, &alloc, mode) + "shards = 1\n";
    let workload = "[workload]\nops = 3000\nthreads = 1\nrows_per_batch = { dist = \"uniform\", min = 5, max = 10 }\n";
    let honest = "\n[[variant]]\nname = \"honest\"\nmemtable = \"btree\"\nallocator = \"heap\"\nserializer = \"lean\"\nshards = 1\n";
    let text = format!("{workload}{honest}{}", variant("late", "late-default-lie"));
    let config = BenchConfig::parse("late-default.toml", &text).expect("config");
    bench::preflight(&strict_host(), &config, None).expect("the preflight's workload never sees the lie");
    let result = bench::run(&strict_host(), &config, &options(scratch("late-default")), |_| {}).expect("bench");
    assert_eq!(result.variants[0].failure(), None, "the honest control is published");
    let failure = result.variants[1].failure().expect("the late lie fails its variant");
    assert_eq!(failure.class, Contract, "{failure}");
    assert_eq!(failure.plugin.as_deref(), Some(alloc.as_str()), "{failure:?}");
    assert!(failure.message.contains("behaves differently on") && failure.message.contains("pad = 0"), "{failure}");
}

/// A parameter honoured on the preflight's workload alone: the probe
/// there saw it work, but changed on the bench's own taped rows it changes
/// nothing, and the record says so, where it was probed, instead of
/// "changes what its plugin does". The honest control's parameters are
/// probed on the same rows, and change what it does.
#[test]
fn a_parameter_idle_on_the_bench_rows_is_published_as_idle_there() {
    use memlab::record::{NoEffect, Site};
    let alloc = liar_plugin("liar-alloc");
    let workload = "[workload]\nops = 3000\nthreads = 1\nrows_per_batch = { dist = \"uniform\", min = 5, max = 10 }\n";
    let honest = "\n[[variant]]\nname = \"honest\"\nmemtable = \"btree\"\nallocator = \"per-row\"\nserializer = \"lean\"\nshards = 1\n";
    let text = format!("{workload}{honest}{}shards = 1\n", alloc_variant("probe-pad", &alloc, "probe-pad"));
    let config = BenchConfig::parse("probe-pad.toml", &text).expect("config");
    let result = bench::run(&strict_host(), &config, &options(scratch("probe-pad")), |_| {}).expect("bench");
    let [honest, liar] = [&result.variants[0], &result.variants[1]];
    assert_eq!((honest.failure(), liar.failure()), (None, None), "neither breaks a contract");
    assert!(liar.params_rows > 2_048 && honest.params_rows > 2_048, "probed on the taped rows: {} and {}", honest.params_rows, liar.params_rows);
    let idle = |v: &memlab::record::VariantResult| v.no_effect.clone().expect("probed");
    let pad: Vec<NoEffect> = idle(liar).into_iter().filter(|n| n.param == "pad").collect();
    assert!(matches!(pad[..], [NoEffect { on: Site::BenchRows, .. }]), "`pad` idle on the bench's rows: {:?}", idle(liar));
    assert!(idle(honest).iter().all(|n| n.on != Site::BenchRows), "the honest allocator's and memtable's parameters work: {:?}", idle(honest));
    let summary = memlab::report::summary(liar);
    assert!(summary.contains("allocator `pad` (tried 128, on this bench's own rows)"), "{summary}");
}

/// A lie: its name, memtable, allocator and serializer with their
/// parameters, and how it must fail (class, the plugin's kind, words).
type Lie<'a> = (&'a str, &'a str, &'a str, &'a str, &'a str, &'a str, &'a str, (FailureClass, &'a str, &'a str));

/// Round 3's classes: lies a read-back of one round misses (a coin drawn
/// from the timestamps' order, a lie gated on racing writers, hollow rows,
/// rewritten row bytes) and scans cut at a partition's end. Every round is
/// held to the host's ledger and every segment read back, so each fails
/// the variant in whichever round it lies, and the variant publishes
/// nothing; the honest control is published.
#[test]
fn round_three_liars_fail_in_any_round_and_publish_nothing() {
    let (hostile, alloc, flush) = (hostile_plugin(), liar_plugin("liar-alloc"), liar_plugin("liar-flush"));
    let lies: [Lie<'_>; 6] = [
        ("framing unreserved", "btree", "{}", &alloc, r#"{ mode = "bare-reserve" }"#, "lean", "{}", (Budget, "allocator", "bytes of framing each")),
        ("coin cursor", &hostile, r#"{ mode = "coin-cursor" }"#, "per-row", "{}", "lean", "{}", (Contract, "memtable", "the host's ledger")),
        ("racing drop", &hostile, r#"{ mode = "racing-drop" }"#, "per-row", "{}", "lean", "{}", (Contract, "memtable", "the host's ledger")),
        ("hollow rows", "btree", "{}", &alloc, r#"{ mode = "hollow" }"#, "lean", "{}", (Contract, "allocator", "not the bytes the host stored")),
        ("scans cut at the partition", &hostile, r#"{ mode = "partition-scan" }"#, "per-row", "{}", "lean", "{}", (Contract, "memtable", "a scan from")),
        (
            "rewritten rows",
            "btree",
            "{}",
            "per-row",
            "{}",
            &flush,
            r#"{ mode = "wrong-row" }"#,
            (Verification, "serializer", "does not hold what the host handed"),
        ),
    ];
    let mut config = String::from(
        r#"
[bench]
call_deadline_ms = 5000
verify_rounds = "first"
repeats = 3

[workload]
seed = 11
ops = 6000
threads = 2
rows_per_batch = { dist = "uniform", min = 5, max = 10 }
partitions = { count = 2000 }
clustering = { rows = { dist = "uniform", min = 1, max = 40 } }

[workload.mix]
insert = 90
scan = 10
scan_limit = 20
"#,
    );
    // The honest control first: the baseline every liar would be paired with.
    let honest = [("honest", "btree", "{}", "per-row", "{}", "lean", "{}"), ("idle parameter", &hostile, "{ after = 7 }", "per-row", "{}", "lean", "{}")];
    let variants = honest.into_iter().chain(lies.iter().map(|l| (l.0, l.1, l.2, l.3, l.4, l.5, l.6)));
    for (name, memtable, mparams, allocator, aparams, serializer, sparams) in variants {
        // The coin lies in 1 instance of 4. A round in which no instance
        // lied ends tainted by `racing drop` (the same binary), and a
        // tainted variant is not run again; 32 shards make the coin come
        // up in its first round all but surely ((3/4)^n, n instances).
        let shards = if name == "coin cursor" { 32 } else { 8 };
        config.push_str(&format!(
            "\n[[variant]]\nname = {name:?}\nmemtable = {memtable:?}\nmemtable_params = {mparams}\nallocator = {allocator:?}\nallocator_params = {aparams}\nserializer = {serializer:?}\nserializer_params = {sparams}\nshards = {shards}\nmemtable_space = \"4MiB\"\nverify_sample = 1\n"
        ));
    }
    let config = BenchConfig::parse("round-3.toml", &config).expect("config");
    let result = bench::run(&strict_host(), &config, &options(scratch("round-3-bench")), |_| {}).expect("bench");
    let verdicts = memlab::record::verdict::verdicts(&result);
    let comparison = memlab::report::comparison(&result);
    for (name, .., (class, liar, words)) in &lies {
        let runs: Vec<_> = result.variants.iter().filter(|v| v.variant.name == *name).collect();
        // Its own failure, in whichever round it lied: a round where its
        // coin came up honest is failed only by the taint of another
        // variant that loads the same binary.
        let own = |f: &&memlab::record::Failure| f.class != FailureClass::Tainted;
        let failure = runs
            .iter()
            .filter_map(|r| r.failure())
            .find(own)
            .unwrap_or_else(|| panic!("`{name}` was caught in no round: {:?}", runs.iter().map(|r| (r.repeat, r.failure())).collect::<Vec<_>>()));
        assert!(runs.iter().all(|r| r.failure().is_some()), "{name}: a round of a caught plugin published");
        assert_eq!(failure.class, *class, "{name}: {failure}");
        assert!(failure.message.contains(words), "{name}: {failure}");
        let lied = runs[0].variant.plugin(liar.parse().expect("a kind"));
        assert_eq!(failure.plugin.as_deref(), Some(lied), "{name}: {failure:?}");
        // Nothing of it is published: no verdict, FAILED in the verdict block.
        assert!(verdicts.iter().any(|(n, v)| n == name && v.is_none()), "{name} kept a verdict");
        assert!(comparison.lines().any(|l| l.contains(name) && l.contains("FAILED")), "{name}:\n{comparison}");
    }
    let honest: Vec<_> = result.variants.iter().filter(|v| v.variant.name == "honest").collect();
    assert_eq!(honest.len(), 3);
    for run in &honest {
        assert_eq!(run.failure(), None);
        let checked = run.checked.expect("every round is checked");
        assert!(checked.ledger_rows > 0 && checked.segments > 0 && checked.tallied == checked.segments, "{checked:?}");
        assert_eq!(checked.final_state, run.repeat == 1, "{checked:?}");
        assert_eq!(run.no_effect.as_deref(), Some(&[][..]), "{:?}", run.no_effect);
    }
    // `after` does nothing in the hostile memtable's honest mode: flagged.
    // Its honest run publishes nothing all the same, since the same binary
    // lied in the variants above (issue 49's taint).
    let idle = result.variants.iter().find(|v| v.variant.name == "idle parameter").expect("ran");
    assert_eq!(idle.failure().map(|f| f.class), Some(FailureClass::Tainted), "{:?}", idle.failure());
    assert!(idle.no_effect.iter().flatten().any(|n| n.kind == memlab::seam::Kind::Memtable && n.param == "after"), "{:?}", idle.no_effect);
    // Had it not been tainted, its summary would flag the idle parameter.
    let mut untainted = idle.clone();
    untainted.outcome = memlab::record::Outcome::Completed;
    let summary = memlab::report::summary(&untainted);
    assert!(summary.contains("has no effect here: memtable `after`"), "{summary}");
    // `mode` is text, which the probe does not change: the summary says
    // so, and claims nothing of it (issue 49, class 3).
    let mode = memlab::record::NotProbed { kind: memlab::seam::Kind::Memtable, param: "mode".into(), why: memlab::seam::Unprobed::Text };
    assert!(idle.not_probed.contains(&mode), "{:?}", idle.not_probed);
    assert!(summary.contains("; not probed: memtable `mode` (text is not probed)"), "{summary}");
}

/// A plugin's name and version are printable ASCII without confusables.
#[test]
fn an_identity_with_a_hidden_character_is_refused() {
    use memlab::seam::Kind;
    let described = |name: &str, version: &str| memlab_sdk::Description { name: name.into(), version: version.into(), params: Vec::new() };
    assert!(memlab::plugin::check_identity(Kind::Memtable, "x", &described("my-table_2.b", "0.1.0")).is_ok());
    for (name, version) in [("btree\u{200b}", "0.1.0"), ("tab\tle", "1"), ("", "1"), ("ok", "1 0"), ("ok", "")] {
        let err = memlab::plugin::check_identity(Kind::Memtable, "x", &described(name, version)).expect_err("refused");
        assert!(matches!(err.fault(), Some(memlab::seam::Fault::Contract(_))), "{err}");
        assert!(!err.to_string().chars().any(|c| c.is_control() || c == '\u{200b}'), "shown escaped: {err}");
    }
}

/// Check's bench-shaped rounds race their client threads (a key may
/// arrive older than the newest seen) and draw the shard count from 1 to
/// 64, so lies gated on either fail check: a memtable that drops keys
/// once timestamps arrive out of order, and one that drops them only
/// when its keys span one shard of a count no shipped config uses.
#[test]
fn liars_gated_on_racing_or_the_shard_count_fail_check() {
    let hostile = hostile_plugin();
    let text = failures(&hostile, &[("mode", "racing-drop")], 20_000);
    assert!(text.contains("FAIL"), "racing-drop: {text}");
    // Seeded, so deterministic: 200,000 ops are ten rounds, five of them
    // bench-shaped, each drawing its own shard count.
    let report = check(
        &strict_host(),
        &hostile,
        CheckOptions { ops: 200_000, size: 20_000, flips: 10, ..CheckOptions::new(vec![("mode".into(), "span-drop".into())], 7) },
    )
    .expect("check runs");
    assert!(!report.passed(), "span-drop passed check:\n{}", report.render());
    // Its honest mode shows `after` as a parameter with no effect, and passes.
    let honest = check(&strict_host(), &hostile, CheckOptions { ops: 20_000, size: 20_000, flips: 10, ..CheckOptions::new(Vec::new(), 7) }).expect("check");
    assert!(honest.passed(), "{}", honest.render());
    assert!(honest.render().contains("has no effect here: `after`"), "{}", honest.render());
    assert!(honest.render().contains("not probed: `mode` (text is not probed)"), "{}", honest.render());
}
