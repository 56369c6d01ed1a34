//! The seed experiments' machinery: every seed config loads and quotes
//! its ticket; `[sweep]` is checked value by value; a sweep runs each
//! point into its own record, and `memlab show` merges points recorded
//! apart, refusing points of another sweep or the same point twice; the
//! heap a flush allocates is measured for native twins and reported for
//! wasm, and naive allocates more than lean.

use std::path::{Path, PathBuf};
use std::process::Command;

use memlab::bench;
use memlab::config::{BenchConfig, Knob, ParamValue};
use memlab::record::BenchResult;
use memlab::record::sweep::{SweepError, merge};

use crate::support::{host, options, scratch};
use memlab::seam::Kind;

fn workspace() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("workspace")
}

#[test]
fn every_seed_config_loads_and_quotes_its_ticket() {
    let seeds = workspace().join("benches/seeds");
    let mut tickets = Vec::new();
    for entry in std::fs::read_dir(&seeds).expect("benches/seeds") {
        let path = entry.expect("entry").path();
        let config = BenchConfig::load(&path).unwrap_or_else(|e| panic!("{e}"));
        let text = std::fs::read_to_string(&path).expect("read");
        let ticket = path.file_name().and_then(|n| n.to_str()).and_then(|n| n.split('-').next()).expect("NNNN-name.toml").to_string();
        assert!(text.contains(&format!("CASSANDRA-{ticket}")), "{}: its header names its ticket", path.display());
        assert!(text.contains("cannot model"), "{}: its header says what memlab cannot model", path.display());
        assert!(config.bench.decide.is_some(), "{}: a seed decides", path.display());
        let stem = path.file_stem().and_then(|n| n.to_str()).expect("a name").to_string();
        tickets.push((stem, config));
    }
    tickets.sort_by(|a, b| a.0.cmp(&b.0));
    let names: Vec<&str> = tickets.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(
        names,
        [
            "19429-concurrent",
            "19429-lock",
            "20226-allocator",
            "20226-concurrent",
            "21083-flush",
            "8457-coalescing",
            "8457-coalescing-sync",
            "8457-concurrent-sync"
        ]
    );
    let config = |t: &str| &tickets.iter().find(|(n, _)| n == t).expect("ticket").1;
    // 20226's chain, in the ticket's order.
    let chain: Vec<String> = config("20226-allocator").variants.iter().map(|v| format!("{} {}", v.pool, v.plugin(Kind::Allocator))).collect();
    assert_eq!(chain, ["cas-loop per-cell", "fetch-add per-cell", "striped-packed per-cell", "striped per-cell", "striped per-row"]);
    assert!(config("20226-allocator").variants.iter().all(|v| v.shards == 32 && v.flush_writers == 4));
    assert_eq!(config("20226-allocator").workload.threads, 100);
    // The thread sweeps reach far past the cores.
    for t in ["20226-allocator", "8457-coalescing", "20226-concurrent"] {
        let sweep = config(t).sweep.as_ref().expect("a thread sweep");
        assert_eq!(sweep.knob, Knob::Threads);
        let values: Vec<String> = sweep.values.iter().map(ToString::to_string).collect();
        assert_eq!(values, ["1", "2", "8", "32", "100"], "{t}");
    }
    let modes: Vec<String> = config("8457-coalescing").variants.iter().map(|v| v.coalescing.to_string()).collect();
    assert_eq!(modes, ["none", "window 20 µs", "adaptive"]);
    // 8457 again once writes wait for a sync: every variant logs, paired
    // against `batch` without coalescing.
    let synced = &tickets.iter().find(|(n, _)| n == "8457-coalescing-sync").expect("8457 with a log").1;
    let modes: Vec<String> = synced.variants.iter().map(|v| format!("{:?} {}", v.log.sync, v.coalescing)).collect();
    assert_eq!(modes, ["Batch none", "Batch group", "Batch adaptive", "Group(1ms) none", "Group(1ms) adaptive"]);
    // And once the memtable takes writers at once: under the lock, grouped
    // or not, against without it, every variant logging.
    let concurrent = config("8457-concurrent-sync");
    let modes: Vec<String> = concurrent.variants.iter().map(|v| format!("{:?} {:?} {}", v.unlocked(), v.log.sync, v.coalescing)).collect();
    assert_eq!(modes, ["Some(false) Batch none", "Some(false) Batch group", "Some(true) Batch none", "Some(true) Group(1ms) none"]);
    assert!(synced.variants.iter().all(|v| v.plugin(Kind::CommitLog) == "plain" && v.shards == 1));
    let values: Vec<String> = synced.sweep.as_ref().expect("a thread sweep").values.iter().map(ToString::to_string).collect();
    assert_eq!(values, ["1", "8", "32", "100"]);
    let serializers: Vec<&str> = config("21083-flush").variants.iter().map(|v| v.plugin(Kind::Serializer)).collect();
    assert_eq!(serializers, ["naive", "lean", "naive", "lean"]);
    let shards: Vec<usize> = config("19429-lock").variants.iter().map(|v| v.shards).collect();
    assert_eq!(shards, [1, 32]);
    // The concurrent baselines: natively, with the shard lock and without.
    let unlocked: Vec<Option<bool>> = config("19429-concurrent").variants.iter().map(|v| v.unlocked()).collect();
    assert_eq!(unlocked, [Some(false), None]);
    let unlocked: Vec<Option<bool>> = config("20226-concurrent").variants.iter().map(|v| v.unlocked()).collect();
    assert_eq!(unlocked, [None, None, Some(false), None]);
    assert!(config("20226-concurrent").variants.iter().all(|v| v.runtime == memlab::config::Runtime::Native));
}

const SMALL: &str = r#"
[bench]
name = "tiny-sweep"

[workload]
seed = 5
ops = 600
threads = 2
partitions = { count = 200 }

[[variant]]
name = "skiplist"
memtable = "skiplist"
allocator = "per-row"
serializer = "lean"
memtable_space = "1MiB"

[[variant]]
name = "trie"
memtable = "trie"
allocator = "per-row"
serializer = "lean"
memtable_space = "1MiB"
"#;

fn sweep_error(sweep: &str) -> String {
    BenchConfig::parse("s.toml", &format!("{SMALL}\n[sweep]\n{sweep}\n")).expect_err("refused").to_string()
}

#[test]
fn a_sweep_is_checked_value_by_value() {
    let message = sweep_error("over = \"thraeds\"\nvalues = [1, 2]");
    assert!(message.contains("s.toml") && message.contains("thraeds") && message.contains("rows_per_batch"), "{message}");
    let message = sweep_error("over = \"threads\"\nvalues = [1, 0]");
    assert!(message.contains("sweep.values") && message.contains("threads = 0") && message.contains("1..=1024"), "{message}");
    let message = sweep_error("over = \"threads\"\nvalues = [2, 2]");
    assert!(message.contains("twice"), "{message}");
    let message = sweep_error("over = \"threads\"\nvalues = []");
    assert!(message.contains("1 to 32 values"), "{message}");
    let message = sweep_error("over = \"memtable_space\"\nvalues = [\"64KiB\"]");
    assert!(message.contains("1MiB"), "{message}");
    let message = sweep_error("over = \"memtable.\"\nvalues = [1]");
    assert!(message.contains("names no parameter"), "{message}");
    let message = sweep_error("over = \"shards\"\nvalues = [1]\nstep = 2");
    assert!(message.contains("step"), "{message}");
    for message in [sweep_error("over = \"thraeds\"\nvalues = [1]"), sweep_error("over = \"threads\"\nvalues = [0]")] {
        assert_eq!(message.lines().count(), 1, "{message}");
        assert!(message.contains("line "), "{message}");
    }
    // Each knob lands where it belongs; a plugin parameter in every variant.
    let parsed = |sweep: &str| BenchConfig::parse("s.toml", &format!("{SMALL}\n[sweep]\n{sweep}\n")).expect("config");
    let config = parsed("over = \"allocator.chunk_size\"\nvalues = [4096, 65536]");
    let sweep = config.sweep.as_ref().expect("sweep");
    let point = sweep.point(&config, &sweep.values[1]).expect("point");
    assert!(point.variants.iter().all(|v| v.strategy(Kind::Allocator).params.get("chunk_size") == Some(&ParamValue::Integer(65536))));
    assert_eq!(point.point.as_ref().map(|p| (p.index, p.value.as_str())), Some((1, "65536")));
    let config = parsed("over = \"rows_per_batch\"\nvalues = [1, 7]");
    let sweep = config.sweep.as_ref().expect("sweep");
    assert_eq!(sweep.point(&config, &sweep.values[1]).expect("point").workload.rows_per_batch.bounds(), (7, 7));
    // The identity ignores the values, and nothing else.
    let other = parsed("over = \"rows_per_batch\"\nvalues = [3]");
    assert_eq!(config.sweep.as_ref().map(|s| &s.id), other.sweep.as_ref().map(|s| &s.id));
    let seed = BenchConfig::parse("s.toml", &format!("{}\n[sweep]\nover = \"rows_per_batch\"\nvalues = [3]\n", SMALL.replace("seed = 5", "seed = 6")))
        .expect("config");
    assert_ne!(config.sweep.as_ref().map(|s| &s.id), seed.sweep.as_ref().map(|s| &s.id));
}

fn memlab(args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_memlab"))
        .args(args)
        .env("MEMLAB_CACHE_DIR", Path::new(env!("CARGO_TARGET_TMPDIR")).join("memlab-cache"))
        .output()
        .expect("memlab runs");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(!text.contains("panicked"), "memlab {args:?} panicked:\n{text}");
    (out.status.success(), text)
}

/// The one directory `memlab bench --out` made under `out`.
fn made(out: &Path) -> PathBuf {
    let dirs: Vec<PathBuf> = std::fs::read_dir(out).expect("out").map(|e| e.expect("entry").path()).collect();
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    dirs[0].clone()
}

#[test]
fn a_sweep_records_each_point_and_show_merges_points_run_apart() {
    let dir = scratch("sweep-cli");
    let config = dir.join("sweep.toml");
    std::fs::write(&config, format!("{SMALL}\n[sweep]\nover = \"threads\"\nvalues = [1, 3, 4]\n")).expect("write");
    let config = config.to_str().expect("utf-8");
    let (ok, text) = memlab(&["bench", config, "--out", dir.join("a").to_str().expect("path"), "--quiet", "--points", "1,3"]);
    assert!(ok, "{text}");
    assert!(text.contains("Sweep over `threads`: 2 of 3 point(s), 2 variant(s)") && text.contains("Not recorded: threads = 4"), "{text}");
    let a = made(&dir.join("a"));
    assert!(a.join("report.html").is_file());
    let mut ids = Vec::new();
    for (point, threads) in [("threads-1", 1), ("threads-3", 3)] {
        let record = BenchResult::load(&a.join(point).join("run.json")).expect("a point's record");
        let spec = record.config.sweep.clone().expect("marked as a point");
        assert_eq!((spec.over.as_str(), spec.value.as_str()), ("threads", threads.to_string().as_str()));
        assert_eq!(record.config.profile().expect("profile").threads, threads);
        assert_eq!(record.variants.len(), 2);
        ids.push(spec.id);
    }
    assert_eq!(ids[0], ids[1]);
    assert!(!a.join("threads-4").exists(), "--points ran only the points asked for");
    // The last point on "another machine", then everything merged.
    let (ok, text) = memlab(&["bench", config, "--out", dir.join("b").to_str().expect("path"), "--quiet", "--points", "4"]);
    assert!(ok, "{text}");
    let b = made(&dir.join("b"));
    let html = dir.join("merged.html");
    let (ok, text) = memlab(&[
        "show",
        a.join("threads-1").to_str().expect("path"),
        a.join("threads-3").to_str().expect("path"),
        b.to_str().expect("path"),
        "--html",
        html.to_str().expect("path"),
    ]);
    assert!(ok, "{text}");
    assert!(text.contains("3 of 3 point(s)") && !text.contains("Not recorded"), "{text}");
    let rows: Vec<&str> = text.lines().skip_while(|l| !l.starts_with("steady row rate (row/s)")).skip(2).take(3).collect();
    let firsts: Vec<&str> = rows.iter().filter_map(|l| l.split_whitespace().next()).collect();
    assert_eq!(firsts, ["1", "3", "4"], "points in the config's order:\n{text}");
    let page = std::fs::read_to_string(&html).expect("html");
    assert_eq!(page.matches("<svg").count(), 5, "a chart of the gap and one per figure");
    // The same point twice, and a point of another sweep, are refused.
    let (ok, text) = memlab(&["show", a.to_str().expect("path"), a.join("threads-1").to_str().expect("path")]);
    assert!(!ok && text.contains("both hold the point threads = 1"), "{text}");
    let (ok, text) = memlab(&["bench", config, "--out", dir.join("c").to_str().expect("path"), "--points", "2"]);
    assert!(!ok && text.contains("--points 2") && text.contains("1, 3, 4"), "{text}");
}

/// A plugin parameter's sweep applies to the variants whose plugin has
/// it, says which it leaves as they are, and records that (issue 36); one
/// no variant's plugin has is refused before anything runs.
#[test]
fn a_plugin_parameters_sweep_applies_only_where_the_plugin_has_it() {
    let dir = scratch("sweep-param");
    let variants = "[workload]\nseed = 5\nops = 400\nthreads = 1\npartitions = { count = 200 }\n\n[[variant]]\nname = \"vector\"\nmemtable = \"vector\"\nallocator = \"per-row\"\nserializer = \"lean\"\n\n[[variant]]\nname = \"skiplist\"\nmemtable = \"skiplist\"\nallocator = \"per-row\"\nserializer = \"lean\"\n";
    let config = dir.join("sweep.toml");
    std::fs::write(&config, format!("{variants}\n[sweep]\nover = \"memtable.capacity\"\nvalues = [1024, 4096]\n")).expect("write");
    let (ok, text) = memlab(&["bench", config.to_str().expect("utf-8"), "--out", dir.join("a").to_str().expect("path"), "--quiet", "--no-intervals"]);
    assert!(ok, "{text}");
    assert!(text.contains("not applied to `skiplist`, whose plugin has no such parameter"), "{text}");
    assert!(text.contains("Not applied to `skiplist`: its plugin has no such parameter"), "the sweep's table says so too: {text}");
    let a = made(&dir.join("a"));
    for value in [1024, 4096] {
        let record = BenchResult::load(&a.join(format!("memtable.capacity-{value}")).join("run.json")).expect("a point's record");
        assert_eq!(record.config.sweep.as_ref().expect("a point").not_applied, ["skiplist"]);
        let params = |name: &str| record.config.variants.iter().find(|v| v.name == name).expect("variant").params(Kind::Memtable).clone();
        assert_eq!(params("vector").get("capacity").map(ToString::to_string), Some(value.to_string()));
        assert!(params("skiplist").is_empty(), "skiplist ran as configured");
    }
    std::fs::write(&config, format!("{variants}\n[sweep]\nover = \"memtable.nope\"\nvalues = [1, 2]\n")).expect("write");
    let (ok, text) = memlab(&["bench", config.to_str().expect("utf-8"), "--out", dir.join("b").to_str().expect("path"), "--quiet"]);
    assert!(!ok && text.contains("no variant's memtable plugin has a parameter `nope`"), "{text}");
    assert!(!text.contains("=== sweep point 1"), "{text}");
}

#[test]
fn points_of_different_sweeps_do_not_merge() {
    let dir = scratch("sweep-merge");
    let run = |seed: u64, value: i64| {
        let text = format!("{}\n[sweep]\nover = \"threads\"\nvalues = [1, 2]\n", SMALL.replace("seed = 5", &format!("seed = {seed}")));
        let config = BenchConfig::parse("m.toml", &text).expect("config");
        let sweep = config.sweep.clone().expect("sweep");
        let point = sweep.point(&config, &ParamValue::Integer(value)).expect("point");
        bench::run(&host(), &point, &options(dir.join(format!("{seed}-{value}"))), |_| {}).expect("bench")
    };
    let (one, two) = (run(5, 1), run(5, 2));
    let merged = merge(vec![("two".into(), two.clone()), ("one".into(), one.clone())]).expect("one sweep");
    let values: Vec<&str> = merged.points.iter().map(|p| p.value.as_str()).collect();
    assert_eq!(values, ["1", "2"]);
    let other = run(6, 2);
    assert!(matches!(merge(vec![("one".into(), one.clone()), ("other".into(), other)]), Err(SweepError::Different { .. })));
    assert!(matches!(merge(vec![("one".into(), one.clone()), ("again".into(), one.clone())]), Err(SweepError::Twice { .. })));
    let mut plain = one;
    plain.config.sweep = None;
    assert!(matches!(merge(vec![("plain".into(), plain)]), Err(SweepError::NotAPoint(_))));
}

#[test]
fn a_flush_allocates_measured_natively_and_reported_in_wasm_and_naive_allocates_more() {
    let mut text = String::from(
        "[workload]\nseed = 21083\nops = 4000\nthreads = 1\npartitions = { count = 400 }\nclustering = { rows = 10, key = 8 }\ncolumn = [{ name = \"v\", size = 12 }]\n",
    );
    for (name, serializer, runtime) in
        [("naive", "naive", "wasm"), ("lean", "lean", "wasm"), ("naive native", "naive", "native"), ("lean native", "lean", "native")]
    {
        text.push_str(&format!(
            "\n[[variant]]\nname = \"{name}\"\nmemtable = \"skiplist\"\nallocator = \"per-row\"\nserializer = \"{serializer}\"\nruntime = \"{runtime}\"\nmemtable_space = \"2MiB\"\n"
        ));
    }
    let config = BenchConfig::parse("heap.toml", &text).expect("config");
    let result = bench::run(&host(), &config, &options(scratch("flush-heap")), |_| {}).expect("bench");
    let mut in_serializer = Vec::new();
    let mut reported = Vec::new();
    for v in &result.variants {
        assert_eq!(v.failure(), None, "{}", v.variant.name);
        assert!(v.flushes.len() >= 2, "{}: several flushes", v.variant.name);
        for f in &v.flushes {
            let (all, serializer) = (f.heap_allocated.expect("measured"), f.serializer_heap.expect("measured"));
            assert!(all >= serializer, "{}: the serializer's share is part of the flush's", v.variant.name);
            // At least the rows the flush copied out of the memtable.
            assert!(all >= f.raw_bytes, "{}: {all} bytes allocated for {} bytes of rows", v.variant.name, f.raw_bytes);
        }
        in_serializer.push(v.flushes.iter().map(|f| f.serializer_heap.unwrap_or(0)).sum::<u64>());
        // The writer's counters outlive `finish`: its rows are all there.
        let rows: u64 = v.flushes.iter().map(|f| f.rows).sum();
        assert_eq!(v.stats_of(Kind::Serializer).get("rows"), Some(&rows), "{}", v.variant.name);
        reported.push(v.stats_of(Kind::Serializer).get("heap-allocated-bytes").copied());
    }
    // Natively the serializer's own allocations are the host's to count.
    assert!(in_serializer[2] > in_serializer[3], "naive native allocates more than lean native: {in_serializer:?}");
    // In wasm the SDK counts, and the plugin reports it; natively not.
    let (naive, lean) = (reported[0].expect("reported"), reported[1].expect("reported"));
    assert!(naive > lean && lean > 0, "naive {naive} vs lean {lean}");
    assert_eq!(&reported[2..], [None, None]);
    let shown = memlab::report::comparison(&result);
    assert!(shown.contains("host heap per row flushed (B)") && shown.contains("heap-allocated-bytes per flush (reported by the plugin)"), "{shown}");
}
