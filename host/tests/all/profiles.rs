//! Profiles and named configurations: every shipped file parses; bad
//! input gives one line naming the file, the line and the key.

use std::path::Path;

use memlab::config::{BenchConfig, load_profile};
use memlab::workload::{DistSpec, Popularity};

use crate::support::scratch;
use memlab::seam::Kind;

fn workspace() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("workspace")
}

#[test]
fn every_shipped_profile_and_config_loads() {
    let profiles = workspace().join("benches/profiles");
    let mut seen = 0;
    for entry in std::fs::read_dir(&profiles).expect("profiles dir") {
        let path = entry.expect("entry").path();
        let profile = load_profile(&path).unwrap_or_else(|e| panic!("{e}"));
        assert!(!profile.name.is_empty());
        seen += 1;
    }
    assert!(seen >= 4, "seed, kv, skewed and mixed profiles ship");
    let skewed = load_profile(&profiles.join("skewed.toml")).expect("skewed");
    assert!(matches!(skewed.partitions.distribution, Popularity::Hot { .. }));
    assert!(matches!(skewed.clustering.rows.spec(), DistSpec::Zipf { .. }));
    // The seed configs (benches/seeds/) too; check's pools are theirs.
    let mut budgets = std::collections::BTreeSet::new();
    for dir in ["benches", "benches/seeds"] {
        for entry in std::fs::read_dir(workspace().join(dir)).expect("benches dir") {
            let path = entry.expect("entry").path();
            if path.extension().is_some_and(|e| e == "toml") {
                let config = BenchConfig::load(&path).unwrap_or_else(|e| panic!("{e}"));
                budgets.extend(config.variants.iter().map(|v| v.memtable_space));
            }
        }
    }
    assert_eq!(budgets.into_iter().collect::<Vec<_>>(), memlab::check::BENCH_POOLS, "check draws its pools from the shipped configs' budgets");
}

fn profile_error(text: &str) -> String {
    let dir = scratch("profile-errors");
    let path = dir.join("p.toml");
    std::fs::write(&path, text).expect("write");
    load_profile(&path).expect_err("must be refused").to_string()
}

#[test]
fn profile_errors_name_file_line_and_key() {
    let message = profile_error("seed = 1\n[partitions]\ncount = 10\nkeyy = 4\n");
    assert!(message.contains("p.toml: line 4") && message.contains("keyy"), "{message}");
    let message = profile_error("[clustering]\nkey = { dist = \"uniform\", min = 9, max = 8 }\n");
    assert!(message.contains("line 2") && message.contains("min 9 is above max 8"), "{message}");
    let message = profile_error("rows_per_batch = { dist = \"poisson\", mean = 3 }\n");
    assert!(message.contains("line 1") && message.contains("poisson") && message.contains("zipf"), "{message}");
    let message = profile_error("[partitions]\ndistribution = { hot = { fraction = 2.0, share = 0.5 } }\n");
    assert!(message.contains("partitions.distribution") && message.contains("fraction"), "{message}");
    let message = profile_error("duration = \"10 parsecs\"\n");
    assert!(message.contains("line 1") && message.contains("parsecs"), "{message}");
    let message = profile_error("[mix]\ninsert = 0\n");
    assert!(message.contains("mix"), "{message}");
    for message in [profile_error("seed = 1\n[partitions]\ncount = 10\nkeyy = 4\n"), profile_error("[mix]\ninsert = 0\n")] {
        assert_eq!(message.lines().count(), 1, "{message}");
    }
}

const NAMED: &str = r#"
[workload]
ops = 10

[memtable.trie]
plugin = "trie"
shards = 32
params = { node_capacity = 1000 }

[memtable.trie-small]
inherits = "trie"
params = { node_capacity = 64 }

[allocator.batched]
plugin = "per-row"
params = { chunk_size = 4096 }

[[variant]]
name = "a"
memtable = "trie-small"
allocator = "batched"
serializer = "lean"

[[variant]]
name = "b"
memtable = "trie"
memtable_params = { node_capacity = 5 }
allocator = "per-cell"
serializer = "lean"
shards = 4
coalescing = "group"
"#;

#[test]
fn named_configurations_inherit_and_variants_override() {
    let config = BenchConfig::parse("named.toml", NAMED).expect("config");
    let (a, b) = (&config.variants[0], &config.variants[1]);
    assert_eq!((a.plugin(Kind::Memtable), a.shards, a.plugin(Kind::Allocator)), ("trie", 32, "per-row"));
    assert_eq!(a.strategy(Kind::Memtable).params["node_capacity"].to_string(), "64");
    assert_eq!(a.strategy(Kind::Allocator).params["chunk_size"].to_string(), "4096");
    assert_eq!(a.configurations, ["memtable trie-small < trie", "allocator batched"]);
    assert_eq!((b.shards, b.strategy(Kind::Memtable).params["node_capacity"].to_string()), (4, "5".to_string()));
    assert_eq!(b.coalescing.to_string(), "group");
}

fn config_error(text: &str) -> String {
    BenchConfig::parse("named.toml", text).expect_err("must be refused").to_string()
}

#[test]
fn bad_inheritance_is_an_error_naming_the_line() {
    let message = config_error(&NAMED.replace("inherits = \"trie\"", "inherits = \"tree\""));
    assert!(message.contains("named.toml: line 11") && message.contains("tree"), "{message}");
    let cycle = NAMED.replace("plugin = \"trie\"\nshards = 32", "inherits = \"trie-small\"");
    let message = config_error(&cycle);
    assert!(message.contains("cycle") && message.contains("trie-small -> trie -> trie-small"), "{message}");
    let message = config_error(&NAMED.replace("plugin = \"per-row\"", "plugin = \"per-row\"\nshards = 2"));
    assert!(message.contains("[allocator.batched]") && message.contains("shards"), "{message}");
    let message = config_error(&NAMED.replace("coalescing = \"group\"", "coalescing = \"eager\""));
    assert!(message.contains("eager") && message.contains("adaptive"), "{message}");
}

#[test]
fn a_workload_can_name_a_profile_file_and_override_it() {
    let dir = scratch("profile-override");
    std::fs::write(dir.join("p.toml"), "name = \"mine\"\nseed = 5\nops = 1000\n[partitions]\ncount = 77\n").expect("write");
    let config =
        "[workload]\nprofile = \"p.toml\"\nops = 20\n\n[[variant]]\nname = \"a\"\nmemtable = \"btree\"\nallocator = \"per-row\"\nserializer = \"lean\"\n"
            .to_string();
    std::fs::write(dir.join("bench.toml"), config).expect("write");
    let config = BenchConfig::load(&dir.join("bench.toml")).expect("config");
    assert_eq!((config.workload.name.as_str(), config.workload.seed, config.workload.ops), ("mine", 5, 20));
    assert_eq!(config.workload.partitions.count, 77);
    std::fs::write(dir.join("bad.toml"), "[workload]\nprofile = \"missing.toml\"\n").expect("write");
    let message = BenchConfig::load(&dir.join("bad.toml")).expect_err("missing profile").to_string();
    assert!(message.contains("missing.toml"), "{message}");
}
