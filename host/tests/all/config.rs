//! Bad configs give one line naming the file, the line and the key.

use memlab::config::BenchConfig;
use memlab::seam::Kind;

const GOOD: &str = r#"
[workload]
ops = 10

[[variant]]
name = "a"
memtable = "btree"
allocator = "per-row"
serializer = "naive"
"#;

fn error_of(text: &str) -> String {
    BenchConfig::parse("bench.toml", text).expect_err("must be refused").to_string()
}

#[test]
fn a_good_config_parses() {
    let config = BenchConfig::parse("bench.toml", GOOD).expect("good");
    assert_eq!(config.variants[0].shards, 1);
    assert!((config.variants[0].threshold() - 0.5).abs() < 1e-9);
}

#[test]
fn an_unknown_key_names_file_line_and_key() {
    let message = error_of(&GOOD.replace("serializer = \"naive\"", "serializer = \"naive\"\nshardz = 4"));
    assert!(message.starts_with("bench.toml: line 10"), "{message}");
    assert!(message.contains("shardz"), "{message}");
    assert_eq!(message.lines().count(), 1, "{message}");
}

#[test]
fn a_bad_value_names_the_line() {
    let message = error_of(&GOOD.replace("name = \"a\"", "name = \"a\"\nshards = 0"));
    assert!(message.contains("line 7") && message.contains("shards = 0"), "{message}");
    let message = error_of(&GOOD.replace("name = \"a\"", "name = \"a\"\nmemtable_space = \"64MB\""));
    assert!(message.contains("unknown unit `MB`"), "{message}");
}

#[test]
fn a_missing_file_names_it() {
    let err = BenchConfig::load(std::path::Path::new("no/such/bench.toml")).expect_err("missing");
    assert!(err.to_string().contains("no/such/bench.toml"), "{err}");
}

#[test]
fn workload_values_are_checked() {
    let message = error_of(&GOOD.replace("ops = 10", "ops = 10\nthreads = 0"));
    assert!(message.contains("threads"), "{message}");
}

#[test]
fn the_rounds_rule_is_checked_by_key() {
    let with = |table: &str| GOOD.replace("[workload]", &format!("[bench.decide]\n{table}\n\n[workload]"));
    let message = error_of(&with("min_rounds = 5\nmax_rounds = 3"));
    assert!(message.contains("line 3") && message.contains("min_rounds") && message.contains("above"), "{message}");
    let message = error_of(&with("max_rounds = 1"));
    assert!(message.contains("max_rounds") && message.contains("2..=100"), "{message}");
    let message = error_of(&with("max_time = \"forever\""));
    assert!(message.contains("max_time") && message.contains("forever"), "{message}");
    let message = error_of(&with("rounds = 3"));
    assert!(message.contains("rounds") && message.contains("unknown field"), "{message}");
    let message = error_of(&GOOD.replace("[workload]", "[bench]\nthreshold = 2\n\n[workload]"));
    assert!(message.contains("line 3") && message.contains("threshold"), "{message}");
    let message = error_of(&GOOD.replace("[workload]", "[bench]\nwarmup = \"soon\"\n\n[workload]"));
    assert!(message.contains("warmup") && message.contains("first-switch"), "{message}");
    let config = BenchConfig::parse("bench.toml", &with("max_time = \"80s\"")).expect("good");
    let decide = config.bench.decide.expect("the rule");
    assert_eq!((decide.min_rounds, decide.max_rounds, decide.max_time), (3, 12, Some(std::time::Duration::from_secs(80))));
}

#[test]
fn the_sample_rate_is_checked_by_key() {
    let config = BenchConfig::parse("bench.toml", GOOD).expect("good");
    assert_eq!(config.variants[0].verify_sample, memlab::config::DEFAULT_SAMPLE);
    let message = error_of(&GOOD.replace("name = \"a\"", "name = \"a\"\nverify_sample = 2000000"));
    assert!(message.contains("line 7") && message.contains("verify_sample") && message.contains("0..=1048576"), "{message}");
    let config = BenchConfig::parse("bench.toml", &GOOD.replace("name = \"a\"", "name = \"a\"\nverify_sample = 0")).expect("off");
    assert_eq!(config.variants[0].verify_sample, 0);
}

/// Plugin paths in a config are taken from the config's folder, like
/// profiles and streams; a config written for the old rule (from the
/// current folder) is told what changed.
#[test]
fn plugin_paths_are_taken_from_the_configs_folder() {
    let dir = crate::support::scratch("config-plugin-paths").join("sub");
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::write(dir.join("mine.wasm"), b"").expect("plugin file");
    let write = |memtable: &str| {
        let path = dir.join("bench.toml");
        std::fs::write(&path, GOOD.replace("memtable = \"btree\"", &format!("memtable = {memtable:?}"))).expect("config");
        BenchConfig::load(&path)
    };
    let config = write("mine.wasm").expect("a path beside the config");
    assert_eq!(config.variants[0].plugin(Kind::Memtable), dir.join("mine.wasm").display().to_string());
    assert_eq!(write("btree").expect("bundled").variants[0].plugin(Kind::Memtable), "btree");
    // `Cargo.toml` exists in the tests' current folder, not beside the config.
    let message = write("Cargo.toml").expect_err("the old rule").to_string();
    assert!(message.contains("line 7") && message.contains("taken from the config's folder"), "{message}");
}

#[test]
fn the_commit_log_keys_fit_together_or_are_refused_by_key() {
    let with = |keys: &str| GOOD.replace("serializer = \"naive\"", &format!("serializer = \"naive\"\n{keys}"));
    let v = |keys: &str| BenchConfig::parse("bench.toml", &with(keys)).expect("a log config parses").variants.remove(0);
    assert_eq!(v("").log.sync, memlab::commitlog::SyncMode::None, "no key: no log");
    assert!(v("").plugin(Kind::CommitLog).is_empty() && v("").strategies().count() == 3);
    let named = v("commitlog = \"lz4\"");
    assert_eq!(named.log.sync, memlab::commitlog::SyncMode::Periodic(std::time::Duration::from_secs(10)), "Cassandra's default");
    assert_eq!(named.log.segment_size, memlab::config::DEFAULT_SEGMENT_SIZE);
    assert_eq!(v("commitlog_sync = \"batch\"").plugin(Kind::CommitLog), "plain", "a sync mode alone logs in the plain format");
    let group =
        v("commitlog_sync = \"group\"\ncommitlog_sync_group_window_ms = 2.5\ncommitlog_disk_access_mode = \"direct\"\ncommitlog_segment_size = \"4MiB\"");
    assert_eq!(group.log.sync, memlab::commitlog::SyncMode::Group(std::time::Duration::from_micros(2500)));
    assert_eq!((group.log.access, group.log.segment_size), (memlab::commitlog::Access::Direct, 4 << 20));
    for (keys, key, says) in [
        ("commitlog_sync = \"batch\"\ncommitlog_sync_period_ms = 5", "commitlog_sync_period_ms", "no effect"),
        ("commitlog = \"plain\"\ncommitlog_sync = \"none\"", "commitlog_sync", "keeps no log"),
        ("commitlog_sync = \"fast\"", "commitlog_sync", "`none`, `periodic`, `batch`, `group`"),
        ("commitlog_disk_access_mode = \"direct\"", "commitlog_disk_access_mode", "keeps no commit log"),
        ("commitlog_sync = \"group\"\ncommitlog_sync_group_window_ms = 0", "commitlog_sync_group_window_ms", "must lie in"),
        ("commitlog_params = { level = 1 }", "commitlog_params", "without a commit log"),
        ("commitlog_sync = \"batch\"\ncommitlog_segment_size = \"2GiB\"", "commitlog_segment_size", "1GiB"),
    ] {
        let message = error_of(&with(keys));
        assert!(message.starts_with("bench.toml: line ") && message.contains(key) && message.contains(says), "{keys}: {message}");
        assert_eq!(message.lines().count(), 1, "{message}");
    }
}
