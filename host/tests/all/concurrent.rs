//! Concurrent strategies: a memtable and an allocator that take every
//! writer at once run natively without the shard lock, held to the same
//! checks, and end in the same state as the locked ones (a metamorphic
//! test); where they cannot run so, the config says why.

use memlab::bench;
use memlab::check::{CheckOptions, check};
use memlab::config::BenchConfig;
use memlab::seam::Kind;

use crate::support::{command, host, memlab, options, scratch};

fn variant(name: &str, memtable: &str, allocator: &str, extra: &str) -> String {
    format!(
        "\n[[variant]]\nname = \"{name}\"\nmemtable = \"{memtable}\"\nallocator = \"{allocator}\"\nserializer = \"lean\"\nmemtable_space = \"1MiB\"\n{extra}\n"
    )
}

fn workload(seed: u64, threads: usize) -> String {
    format!("[workload]\nseed = {seed}\nops = 2000\nthreads = {threads}\npartitions = {{ count = 300 }}\nrows_per_batch = 10\ntombstone_ratio = 0.1\n")
}

/// Locked and concurrent, one shard and several, each way of reserving,
/// and the same crate serialized in wasm: one final state.
#[test]
fn concurrent_and_locked_strategies_end_in_the_same_state() {
    for seed in [5, crate::support::drawn_seed("concurrent_and_locked_strategies_end_in_the_same_state")] {
        let mut config = workload(seed, 4);
        config += &variant("btree locked", "btree", "per-row", "runtime = \"native\"");
        for (name, params) in [("cell", "reserve = \"cell\""), ("row", ""), ("region", "reserve = \"region\", region_size = 8192")] {
            config += &variant(&format!("lockfree {name}"), "lockfree", "cas-region", &format!("runtime = \"native\"\nallocator_params = {{ {params} }}"));
        }
        config += &variant("lockfree x3", "lockfree", "cas-region", "runtime = \"native\"\nshards = 3");
        config += &variant("lockfree under the lock", "lockfree", "cas-region", "runtime = \"native\"\nshard_lock = true");
        config += &variant("lockfree wasm", "lockfree", "cas-region", "");
        let config = BenchConfig::parse("concurrent", &config).expect("config");
        let result = bench::run(&host(), &config, &options(scratch(&format!("concurrent-{seed}"))), |_| {}).expect("bench");
        let digest = result.variants[0].verified.expect("verified").digest;
        for v in &result.variants {
            assert_eq!(v.failure(), None, "seed {seed}: {}", v.variant.name);
            assert!(v.counters.switches >= 3, "seed {seed}: {}: a 1 MiB budget switches often", v.variant.name);
            assert_eq!(v.verified.expect("verified").digest, digest, "seed {seed}: {}", v.variant.name);
            let concurrent = ["lockfree cell", "lockfree row", "lockfree region", "lockfree x3"].contains(&v.variant.name.as_str());
            assert_eq!(v.counters.most_inside > 0, concurrent, "seed {seed}: {}: {:?}", v.variant.name, v.counters);
        }
    }
}

/// Through the binary: four writers, one shard, and the host sees more
/// than one of them inside the memtable's `insert` at once.
#[test]
fn several_writers_are_inside_one_memtable_at_once() {
    let dir = scratch("concurrent-binary");
    let path = dir.join("bench.toml");
    let config = format!("{}{}", workload(9, 4).replace("ops = 2000", "ops = 20000"), variant("lockfree", "lockfree", "cas-region", "runtime = \"native\""));
    std::fs::write(&path, config).expect("config");
    let runs = dir.join("runs");
    let (ok, out) = memlab(&["bench", path.to_str().expect("utf-8"), "--out", runs.to_str().expect("utf-8"), "--quiet", "--no-intervals"]);
    assert!(ok, "{out}");
    let seen = out.lines().find(|l| l.starts_with("Contended puts")).expect("a contention line");
    let most: u64 = seen.rsplit(": ").next().and_then(|n| n.trim().parse().ok()).expect(seen);
    assert!((2..=4).contains(&most), "{seen}");
    assert!(out.contains("Verified"), "{out}");
}

/// `shard_lock = false` where it cannot hold: a clear error that names
/// the variant, the key and what to do.
#[test]
fn a_variant_that_cannot_run_without_the_lock_says_why() {
    for (extra, says) in [("", "runtime = \"native\""), ("runtime = \"native\"\ncoalescing = \"group\"", "coalescing")] {
        let config = format!("{}{}", workload(1, 2), variant("v", "lockfree", "cas-region", &format!("shard_lock = false\n{extra}")));
        let err = BenchConfig::parse("unlocked", &config).expect_err(extra).to_string();
        assert!(err.contains("shard_lock") && err.contains("variant `v`") && err.contains(says), "{extra}: {err}");
    }
    // A strategy that does not take concurrent writers fails its variant, named.
    let config = format!("{}{}", workload(1, 2), variant("v", "btree", "cas-region", "runtime = \"native\"\nshard_lock = false"));
    let config = BenchConfig::parse("unlocked", &config).expect("config");
    let result = bench::run(&host(), &config, &options(scratch("unlocked")), |_| {}).expect("bench");
    let failure = result.variants[0].failure().expect("btree takes one writer at a time");
    assert!(failure.message.contains("`btree`") && failure.message.contains("concurrent"), "{failure}");
}

/// The bundled concurrent memtable and allocator, checked natively:
/// writers race a reader, every answer held to the concurrent semantics.
#[test]
fn the_bundled_concurrent_strategies_pass_check_racing_writers() {
    let seed = crate::support::drawn_seed("the_bundled_concurrent_strategies_pass_check_racing_writers");
    for (name, kind) in [("lockfree", Kind::Memtable), ("cas-region", Kind::Allocator)] {
        let native = memlab::native::bundled(name, kind).expect(name);
        let options = CheckOptions { ops: 60_000, size: 5_000, flips: 2, native: Some(native), ..CheckOptions::new(Vec::new(), seed) };
        let report = check(&crate::support::strict_host(), name, options).expect("check");
        assert!(report.passed(), "seed {seed}: {}", report.render());
        let raced = report.native.iter().find(|p| p.name == "races").expect("a races property");
        assert!(raced.detail.contains("60000 ops in 3 rounds"), "{}", raced.detail);
    }
}

/// `memlab` at the contention liar (`plugins/test-liar-race`), built for
/// this machine in `dir`, with a cache of its own: the scaffold test
/// holds the shared one to one build of wit-bindgen, and this workspace
/// crate builds its own.
fn at_the_liar(dir: &std::path::Path, args: &[&str]) -> String {
    let mut memlab = command(args);
    memlab.current_dir(dir).env_remove("CARGO_TARGET_DIR").env("MEMLAB_CACHE_DIR", dir.join("cache"));
    for var in ["RUSTFLAGS", "CARGO_ENCODED_RUSTFLAGS", "CARGO_BUILD_TARGET", "CARGO_MAKEFLAGS", "MAKEFLAGS"] {
        memlab.env_remove(var);
    }
    let out = memlab.output().expect("memlab runs");
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// A memtable that drops a row only when two writers' batches overlap,
/// or answers a stale get only while a writer is inside: honest under
/// the lock; a bench without it fails the drop by its ledger, and
/// `check --native` races writers against a reader and fails both, with
/// a replay line that can be pasted.
#[test]
fn a_memtable_that_lies_only_under_contention_is_caught() {
    let dir = scratch("concurrent-liar");
    let liar = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../plugins/test-liar-race");
    let liar = liar.to_str().expect("utf-8");
    let config = format!("{}{}", workload(3, 4).replace("ops = 2000", "ops = 4000"), variant("race", liar, "cas-region", "runtime = \"native\""));
    std::fs::write(dir.join("race.toml"), config).expect("config");
    let said = at_the_liar(&dir, &["bench", "race.toml", "--quiet", "--no-intervals", "--out", "runs", "--build", "--native"]);
    let failed = said.lines().find(|l| l.starts_with("FAILED")).unwrap_or_else(|| panic!("the race went unseen:\n{said}"));
    assert!(failed.contains("ledger") && failed.contains("newest rows missing") && failed.contains("liar-race"), "{failed}");
    // A dropped row shows as a read that misses a completed insert, or as
    // a row missing after the race, whichever the timing meets first.
    for (lie, says) in [("drop", "after the race|left out|stale|answered nothing"), ("stale", "stale")] {
        let param = format!("lie={lie}");
        let said = at_the_liar(&dir, &["check", liar, "--build", "--native", "--ops", "40000", "--size", "1000", "--param", &param]);
        let raced = said.lines().find(|l| l.contains("races")).unwrap_or_else(|| panic!("{lie}: no races property:\n{said}"));
        assert!(raced.contains("FAIL") && says.split('|').any(|s| raced.contains(s)), "{lie}: {raced}");
        // Honest alone: every property but the races passes.
        assert!(said.lines().any(|l| l.contains(": 1 of ") && l.ends_with("properties failed")), "{lie}: only the races fail:\n{said}");
        let replay = said.lines().find_map(|l| l.trim().strip_prefix("replay: memlab ")).expect("a replay line");
        let expected = format!("--build --native --param {param} --size 1000 --only races --seed ");
        assert!(replay.starts_with(&format!("check {liar} ")) && replay.contains(&expected), "{replay}");
        // Pasted, it runs that property alone and fails again; a race
        // depends on timing as well as the seed, so up to three tries.
        let words = shlex::split(replay).expect("the replay line splits as a shell would");
        let failed_again = (0..3).any(|_| {
            let again = at_the_liar(&dir, &words.iter().map(String::as_str).collect::<Vec<_>>());
            let ran: Vec<&str> = again.lines().filter(|l| l.starts_with("  PASS") || l.starts_with("  FAIL")).collect();
            assert!(ran.len() == 1 && ran[0].contains("races"), "{lie}: the replay ran {ran:?}:\n{again}");
            ran[0].starts_with("  FAIL")
        });
        assert!(failed_again, "{lie}: three replays of `{replay}` passed");
    }
}
