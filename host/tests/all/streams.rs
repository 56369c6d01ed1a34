//! Identical streams, proven: the fingerprint does not depend on the
//! variant or the thread schedule; a stream file replays the generated
//! stream byte for byte; coalescing modes store identical contents; saved
//! runs round-trip through JSON.

use std::collections::HashSet;

use memlab::bench::{self, BenchResult};
use memlab::config::BenchConfig;
use memlab::report;
use memlab::router::Prepared;
use memlab::workload::{Fingerprint, Generator, Op, Profile, Stream, StreamFile, write_stream_file};

use crate::support::{host, options, scratch};

const WORKLOAD: &str = r#"
[workload]
seed = 3
ops = 2000
threads = 2
rows_per_batch = { dist = "uniform", min = 1, max = 12 }
tombstone_ratio = 0.05
partitions = { count = 300, distribution = { zipf = { s = 1.1 } }, key = { dist = "uniform", min = 4, max = 12 } }
clustering = { rows = { dist = "uniform", min = 1, max = 30 }, key = 6 }
column = [{ name = "v", size = { dist = "exponential", mean = 20, min = 1, max = 500 } }]
mix = { insert = 80, read = 15, scan = 5, scan_limit = 20 }
"#;

fn variant(name: &str, extra: &str) -> String {
    format!("\n[[variant]]\nname = \"{name}\"\nmemtable = \"skiplist\"\nallocator = \"per-row\"\nserializer = \"lean\"\nmemtable_space = \"1MiB\"\n{extra}\n")
}

fn run(config: &str, dir: &str) -> BenchResult {
    let config = BenchConfig::parse(dir, config).expect("config");
    bench::run(&host(), &config, &options(scratch(dir)), |_| {}).expect("bench")
}

fn assert_all_equal(result: &BenchResult) {
    let first = &result.variants[0];
    for v in &result.variants {
        assert_eq!(v.failure(), None, "{}", v.variant.name);
        assert_eq!(v.fingerprint, first.fingerprint, "{}: the stream differs", v.variant.name);
        assert_eq!(v.verified.expect("verified").digest, first.verified.expect("verified").digest, "{}", v.variant.name);
    }
}

#[test]
fn coalescing_modes_store_identical_contents() {
    let mut config = WORKLOAD.to_string();
    for (mode, spelled) in [("none", "\"none\""), ("group", "\"group\""), ("adaptive", "\"adaptive\""), ("window", "{ window = 30 }")] {
        // One shard: both clients meet at it, so groups do form.
        config.push_str(&variant(mode, &format!("coalescing = {spelled}")));
        config.push_str(&variant(&format!("{mode} native"), &format!("coalescing = {spelled}\nruntime = \"native\"\nshards = 3")));
    }
    let result = run(&config, "coalescing");
    assert_all_equal(&result);
    for v in &result.variants {
        let inserts = v.op_counts["insert"];
        if v.variant.coalescing == "none" {
            assert_eq!(v.counters.groups, 0);
        } else {
            assert!(v.counters.groups > 0 && v.counters.groups <= inserts, "{}: {} groups for {inserts} inserts", v.variant.name, v.counters.groups);
        }
        // A fixed window: every group's leader waited the whole 30 µs.
        if v.variant.coalescing.starts_with("window") {
            let floor = v.counters.groups * 30_000;
            assert!(v.counters.coalesce_wait_ns >= floor, "{}: waited {} ns over {} groups", v.variant.name, v.counters.coalesce_wait_ns, v.counters.groups);
        }
    }
}

#[test]
fn the_fingerprint_does_not_depend_on_variant_or_schedule() {
    let mut config = WORKLOAD.to_string();
    config.push_str(&variant("a", ""));
    config.push_str(&variant("b", "shards = 7\nflush_writers = 3\npool = \"striped\""));
    config.push_str(&variant("c", "runtime = \"native\"\ncoalescing = \"adaptive\""));
    config.push_str("\n[bench]\nrepeats = 2\n");
    let result = run(&config, "fingerprint");
    assert_eq!(result.variants.len(), 6);
    assert_all_equal(&result);
    // The same ops taken in another order (threads interleaved backwards)
    // fold into the same fingerprint: it depends on ops, not schedule.
    let mut profile = BenchConfig::parse("w", &(WORKLOAD.to_string() + &variant("x", ""))).expect("config").workload;
    profile.salt = Some(crate::support::TEST_SALT.parse().expect("a salt"));
    let mut generator = Generator::new(&profile);
    let mut op = Op::default();
    let (mut parts, mut shapes) = (vec![Fingerprint::default(); profile.threads], vec![Fingerprint::default(); profile.threads]);
    for index in 0..profile.ops_for(0) {
        for thread in (0..profile.threads).rev() {
            if index < profile.ops_for(thread) {
                generator.op(thread, index, &mut op);
                parts[thread].add(&op);
                shapes[thread].add_shape(&op);
            }
        }
    }
    assert_eq!(Fingerprint::combine(&parts).to_string(), result.variants[0].fingerprint);
    // The shape is the salt's to keep: an unsalted generator draws it too.
    assert_eq!(Fingerprint::combine(&shapes).to_string(), result.variants[0].shape);
    let mut public = Generator::new(&Profile { salt: None, ..profile.clone() });
    let mut shape = Fingerprint::default();
    for index in 0..profile.ops_for(0) {
        public.op(0, index, &mut op);
        shape.add_shape(&op);
    }
    let mut salted_shape = Fingerprint::default();
    for index in 0..profile.ops_for(0) {
        generator.op(0, index, &mut op);
        salted_shape.add_shape(&op);
    }
    assert_eq!(shape, salted_shape);
}

fn profile() -> Profile {
    BenchConfig::parse("w", &(WORKLOAD.to_string() + &variant("x", ""))).expect("config").workload
}

#[test]
fn a_stream_file_replays_the_generated_stream() {
    let dir = scratch("stream-file");
    let file = dir.join("s.mlstream");
    let (fingerprint, ops) = write_stream_file(&profile(), &file).expect("write");
    assert_eq!(ops, 2000);
    let stream = StreamFile::read(&file).expect("read");
    assert_eq!(stream.fingerprint(), fingerprint);
    let mut generator = Generator::new(&profile());
    let (mut a, mut b) = (Op::default(), Op::default());
    for thread in 0..2 {
        for index in 0..stream.ops_for(thread) {
            generator.op(thread, index, &mut a);
            assert!(stream.op(thread, index, &mut b));
            assert_eq!(a, b, "op {index} of thread {thread}");
        }
    }
    // A file is public content: a bench replays it unsalted, the stream
    // the profile's public generator makes.
    let config = format!("[workload]\nstream = \"{}\"\nread_probe = 10000\n", file.display()) + &variant("replayed", "");
    let replayed = run(&config, "stream-replayed");
    assert_eq!(replayed.variants[0].fingerprint, fingerprint.to_string());
    assert_eq!(replayed.provenance.stream_salt, None);
    let public = Stream::of(&profile()).expect("stream");
    let counts: Vec<u64> = (0..2).map(|t| public.ops_for(t).expect("count")).collect();
    let expected = memlab::verify::digest(&memlab::verify::expected(&public, &counts, &HashSet::new()));
    assert_eq!(replayed.variants[0].verified.expect("verified").digest, expected);
}

/// `materialize = true` generates the stream before the clock and replays
/// it, routed ahead (`router::Prepared`): the same ops, fingerprint and
/// final state as generating and routing on the fly, alone, sharded and
/// coalesced (a group's ledger lines come from each batch's own hashes).
#[test]
fn a_materialized_stream_is_the_generated_stream() {
    let config = WORKLOAD.to_string()
        + &variant("generated", "")
        + &variant("native", "runtime = \"native\"")
        + &variant("sharded", "shards = 5\nflush_writers = 2")
        + &variant("coalesced", "coalescing = \"group\"");
    let generated = run(&config, "materialize-generated");
    let materialized = run(&config.replacen("[workload]\n", "[workload]\nmaterialize = true\n", 1), "materialize-replayed");
    for (g, m) in generated.variants.iter().zip(&materialized.variants) {
        assert_eq!(m.failure(), None, "{}", m.variant.name);
        assert_eq!(m.fingerprint, g.fingerprint, "{}", m.variant.name);
        assert_eq!(m.op_counts, g.op_counts, "{}", m.variant.name);
        assert_eq!(m.verified.expect("verified").digest, g.verified.expect("verified").digest, "{}", m.variant.name);
    }
    assert!(materialized.variants.iter().any(|v| v.counters.groups > 0), "some groups formed, so the grouped path ran");
    let mut held = profile();
    held.materialize = true;
    let stream = Stream::of(&held).expect("materialized");
    assert!(matches!(stream, Stream::Replayed(_)), "materialized up front, not generated in the run");
    // Routed ahead: each thread's fingerprint after any prefix is the one
    // a client folding those ops would have.
    let prepared = Prepared::of(&stream).expect("routed").expect("a replayed stream is routed ahead");
    let mut generator = Generator::new(&held);
    let mut op = Op::default();
    for thread in 0..held.threads {
        let mut folded = Fingerprint::default();
        assert_eq!(prepared.fingerprint(thread, 0), folded);
        for index in 0..held.ops_for(thread) {
            generator.op(thread, index, &mut op);
            folded.add(&op);
            assert_eq!(prepared.fingerprint(thread, index + 1), folded, "thread {thread}, after op {index}");
        }
    }
    assert!(Prepared::of(&Stream::of(&profile()).expect("generated")).expect("no routing").is_none(), "a generated stream is not held");
    let mut timed = profile();
    timed.materialize = true;
    timed.duration = Some(std::time::Duration::from_secs(1));
    let error = Stream::of(&timed).expect_err("a timed run has no stream to generate up front").to_string();
    assert!(error.contains("materialized stream") && error.contains("duration"), "{error}");
}

#[test]
fn a_damaged_stream_file_is_refused_naming_file_and_byte() {
    let dir = scratch("stream-damage");
    let file = dir.join("s.mlstream");
    let mut small = profile();
    small.ops = 50;
    write_stream_file(&small, &file).expect("write");
    let good = std::fs::read(&file).expect("read");
    for at in (0..good.len()).step_by(7) {
        let mut bad = good.clone();
        bad[at] ^= 0x10;
        let message = StreamFile::parse(&file, bad).expect_err("damage must be caught").to_string();
        assert!(message.contains("s.mlstream: byte"), "{message}");
    }
    let message = StreamFile::parse(&file, good[..good.len() / 2].to_vec()).expect_err("truncation").to_string();
    assert!(message.contains("s.mlstream"), "{message}");
    let mut timed = small.clone();
    timed.duration = Some(std::time::Duration::from_secs(1));
    assert!(write_stream_file(&timed, &dir.join("t.mlstream")).expect_err("duration").to_string().contains("duration"));
}

#[test]
fn a_timed_mixed_run_verifies_what_it_wrote() {
    let config = WORKLOAD.replace("ops = 2000", "duration = \"300ms\"\ntarget_rate = 4000") + &variant("timed", "");
    let result = run(&config, "timed");
    let v = &result.variants[0];
    assert_eq!(v.failure(), None);
    assert!(v.paced);
    // About 1,200 ops in 300 ms at 4,000 op/s; generous bounds for a busy machine.
    assert!((300..=1_500).contains(&v.ops), "{} ops", v.ops);
    assert!(v.op_counts.contains_key("read") && v.op_counts.contains_key("scan"));
    assert!(v.verified.is_some());
}

#[test]
fn a_saved_run_round_trips_through_json() {
    let mut config = WORKLOAD.to_string();
    config.push_str(&variant("a", ""));
    config.push_str(&variant("b", "shards = 2"));
    config.push_str("\n[bench]\nname = \"round-trip\"\nrepeats = 2\ninterval = 0.05\n");
    let result = run(&config, "json");
    let json = serde_json::to_string(&result).expect("serialize");
    let back: BenchResult = serde_json::from_str(&json).expect("deserialize");
    let again = serde_json::to_string(&back).expect("serialize again");
    let differs = again.bytes().zip(json.bytes()).position(|(a, b)| a != b);
    let at = differs.unwrap_or(0).saturating_sub(80);
    assert!(again == json, "the round trip differs at byte {differs:?}: {:?}", again.get(at..(at + 160).min(again.len())));
    assert_eq!(report::comparison(&back), report::comparison(&result));
    assert!(report::comparison(&result).contains("vs first"));
    assert!(report::against_baseline(&result, &back).expect("one workload").contains("row rate verdict"));
    let html = report::html::render(&back);
    assert!(html.matches("<svg").count() >= 4 && html.contains("round-trip"));
    assert!(!back.provenance.wasmtime_version.is_empty() && back.provenance.plugins.contains_key("skiplist"));
    // The record names its salt once the run is over: with it, the
    // recorded profile replays the stream the run verified.
    assert_eq!(back.provenance.stream_salt.as_deref(), Some(crate::support::TEST_SALT));
    let salt = back.provenance.stream_salt.as_deref().map(|s| s.parse().expect("the recorded salt"));
    let stream = Stream::of(&Profile { salt, ..back.config.profile().expect("the recorded profile reads back") }).expect("stream");
    let counts: Vec<u64> = (0..2).map(|t| stream.ops_for(t).expect("count")).collect();
    assert_eq!(memlab::verify::digest(&memlab::verify::expected(&stream, &counts, &HashSet::new())), back.variants[0].verified.expect("verified").digest);
}

#[test]
fn coalescing_with_far_more_threads_than_cores_stores_identical_contents() {
    // 48 clients on one shard: groups fill, leaders lead in a row, and
    // every follower is woken on its own.
    let mut config = WORKLOAD.replace("threads = 2", "threads = 48").replace("ops = 2000", "ops = 4800");
    for (mode, spelled) in [("none", "\"none\""), ("group", "\"group\""), ("adaptive", "\"adaptive\""), ("window", "{ window = 50 }")] {
        config.push_str(&variant(mode, &format!("coalescing = {spelled}")));
    }
    let result = run(&config, "coalescing-many");
    assert_all_equal(&result);
    for v in &result.variants[1..] {
        let inserts = v.op_counts["insert"];
        assert!(
            v.counters.groups > 0 && v.counters.groups < inserts,
            "{}: {} groups for {inserts} inserts: batches shared calls",
            v.variant.name,
            v.counters.groups
        );
    }
}
