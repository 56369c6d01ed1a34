//! The write path end to end: a stream through shards, switches, flushes,
//! segments, and a read-back that must equal the stream's final state.
//! Every variant — wasm or native, one shard or many — must end in the
//! same state (a metamorphic test).

use memlab::bench;
use memlab::config::BenchConfig;

use crate::support::{host, options, scratch};

const CONFIG: &str = r#"
[workload]
seed = 7
ops = 3000
threads = 2
partitions = { count = 800 }
rows_per_batch = 10
tombstone_ratio = 0.1

[[variant]]
name = "wasm-1"
memtable = "btree"
allocator = "per-row"
serializer = "naive"
memtable_space = "1MiB"

[[variant]]
name = "wasm-4x2"
memtable = "btree"
allocator = "per-row"
allocator_params = { chunk_size = 4096 }
serializer = "naive"
shards = 4
flush_writers = 2
memtable_space = "1MiB"
pool = "cas-loop"

[[variant]]
name = "native-3"
memtable = "btree"
allocator = "per-row"
serializer = "naive"
shards = 3
memtable_space = "1MiB"
runtime = "native"
"#;

#[test]
fn every_variant_flushes_and_reads_back_the_streams_final_state() {
    let config = BenchConfig::parse("pipeline test", CONFIG).expect("config");
    let options = options(scratch("pipeline"));
    let result = bench::run(&host(), &config, &options, |_| {}).expect("bench");
    let first = &result.variants[0];
    for v in &result.variants {
        assert_eq!(v.failure, None, "{}", v.variant.name);
        assert_eq!(v.errors, 0);
        assert_eq!(v.rows, 30_000);
        assert!(v.counters.switches >= 3, "{}: a 1 MiB budget must switch often", v.variant.name);
        assert!(v.flushes.iter().map(|f| f.rows).sum::<u64>() >= 30_000 / 2);
        assert_eq!(v.fingerprint, first.fingerprint, "the stream differs between variants");
        let verified = v.verified.expect("verified");
        assert_eq!(verified.digest, first.verified.expect("verified").digest);
        assert!(verified.keys > 0 && verified.keys < 8000 + 1);
    }
}

const MEMTABLES: [&str; 4] = ["btree", "skiplist", "trie", "vector"];
const ALLOCATORS: [&str; 4] = ["per-row", "per-cell", "region", "heap"];
const SERIALIZERS: [&str; 3] = ["naive", "lean", "block"];

/// Every memtable x allocator x serializer, wasm and native, on one
/// stream: all must read back the same final state (a metamorphic test).
#[test]
fn every_strategy_combination_ends_in_the_same_state() {
    let mut config = String::from(
        "[workload]\nseed = 11\nops = 400\nthreads = 2\npartitions = { count = 150 }\nrows_per_batch = 10\ntombstone_ratio = 0.1\n",
    );
    for runtime in ["wasm", "native"] {
        for m in MEMTABLES {
            for a in ALLOCATORS {
                for s in SERIALIZERS {
                    config.push_str(&format!(
                        "\n[[variant]]\nname = \"{m}-{a}-{s}-{runtime}\"\nmemtable = \"{m}\"\nallocator = \"{a}\"\nallocator_params = {{ {} }}\nserializer = \"{s}\"\nshards = 2\nmemtable_space = \"1MiB\"\nruntime = \"{runtime}\"\n",
                        // Small regions, so that the 1 MiB budget still switches.
                        if a == "region" { "region_size = 16384" } else { "" }
                    ));
                }
            }
        }
    }
    let config = BenchConfig::parse("combinations", &config).expect("config");
    let options = options(scratch("combinations"));
    let result = bench::run(&host(), &config, &options, |_| {}).expect("bench");
    let first = &result.variants[0];
    let digest = first.verified.expect("first variant verified").digest;
    for v in &result.variants {
        assert_eq!(v.failure, None, "{}", v.variant.name);
        assert_eq!(v.fingerprint, first.fingerprint, "{}", v.variant.name);
        assert_eq!(v.verified.expect("verified").digest, digest, "{}", v.variant.name);
    }
}

#[test]
fn the_default_config_parses() {
    let config = BenchConfig::parse("default", memlab::config::DEFAULT_CONFIG).expect("default config");
    // The mission's comparison: unsharded skiplist vs sharded trie, each
    // with per-cell and per-row allocation.
    let shape: Vec<(&str, usize, &str)> =
        config.variants.iter().map(|v| (v.memtable.as_str(), v.shards, v.allocator.as_str())).collect();
    assert_eq!(shape, [("skiplist", 1, "per-cell"), ("skiplist", 1, "per-row"), ("trie", 32, "per-cell"), ("trie", 32, "per-row")]);
}
