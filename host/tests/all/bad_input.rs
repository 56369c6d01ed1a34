//! Bad input and faults, case by case, through the `memlab` binary as a
//! user meets them: each gives one clear error naming the file, key,
//! line or plugin, and exits non-zero; none panics, hangs or loses a
//! finished variant's figures.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::{command, memlab, scratch};

/// A small valid config with `extra` spliced into its `[workload]`, and
/// `bench` lines after the `[bench]` header.
fn config(dir: &Path, name: &str, bench: &str, workload: &str) -> PathBuf {
    let text = format!(
        "[bench]\n{bench}\n\n[workload]\nseed = 3\n{workload}\npartitions = {{ count = 500 }}\n\n[[variant]]\nname = \"v\"\nmemtable = \"btree\"\nallocator = \"per-row\"\nserializer = \"lean\"\n"
    );
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write config");
    path
}

#[test]
fn bad_configs_and_flags_give_one_clear_error() {
    let dir = scratch("bad-input-configs");
    let out = dir.join("runs");
    let out = out.to_str().expect("utf-8 path");
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec![config(&dir, "ops0.toml", "", "ops = 0").display().to_string()], "`ops` is 0"),
        (vec![config(&dir, "stream-ops.toml", "", "ops = 5\nstream = \"s.mls\"").display().to_string()], "ops` and `duration` beside it"),
        (vec![config(&dir, "name.toml", "name = \"../../x\"", "ops = 5").display().to_string()], "line 2 (`name = \"../../x\"`)"),
        (
            vec![config(&dir, "rate.toml", "", "ops = 5\ntarget_rate = 1e-6").display().to_string()],
            "line 7 (`target_rate = 1e-6`): workload: `target_rate` must lie in 1..=1e9",
        ),
        (vec![config(&dir, "repeats.toml", "repeats = 0", "ops = 5").display().to_string()], "line 2 (`repeats = 0`): 0 is outside 1..=100"),
        (vec![config(&dir, "deadline.toml", "call_deadline_ms = -5", "ops = 5").display().to_string()], "`bench.call_deadline_ms` must lie in 1..=3600000"),
        (
            vec![config(&dir, "huge-ops.toml", "", "ops = 18446744073709551615").display().to_string()],
            "line 6 (`ops = 18446744073709551615`): `ops` = 18446744073709551615 is too large",
        ),
        (vec![config(&dir, "empty-profile.toml", "", "profile = \"\"").display().to_string()], "line 6 (`profile = \"\"`): `workload.profile` is empty"),
        (vec![config(&dir, "empty-stream.toml", "", "stream = \"\"").display().to_string()], "line 6 (`stream = \"\"`): workload: `stream` is empty"),
        (vec![config(&dir, "nan.toml", "interval = nan", "ops = 5").display().to_string()], "line 2 (`interval = nan`)"),
        (vec![config(&dir, "eons.toml", "", "duration = \"1000000000000s\"").display().to_string()], "`duration` must lie above 0 and at most 7 days"),
        (vec!["/dev/zero".to_string()], "/dev/zero: not a regular file, so it is not read as a config or profile"),
    ];
    for (args, expected) in cases {
        let mut all = vec!["bench".to_string()];
        all.extend(args.iter().cloned());
        all.extend(["--out".to_string(), out.to_string()]);
        let all: Vec<&str> = all.iter().map(String::as_str).collect();
        let (ok, text) = memlab(&all);
        assert!(!ok && text.contains(expected), "{all:?}: expected `{expected}` in:\n{text}");
    }
    let threshold = dir.join("threshold.toml");
    std::fs::write(
        &threshold,
        "[workload]\nops = 5\n\n[[variant]]\nname = \"v\"\nmemtable = \"btree\"\nallocator = \"per-row\"\nserializer = \"lean\"\ncleanup_threshold = 1e-300\n",
    )
    .expect("write");
    let (ok, text) = memlab(&["bench", threshold.to_str().expect("path"), "--out", out]);
    assert!(!ok && text.contains("line 9 (`cleanup_threshold = 1e-300`)") && text.contains("0.01..=1"), "{text}");
    let utf8 = dir.join("utf8.toml");
    std::fs::write(&utf8, b"[workload]\nops = 5\n# caf\xe9\n").expect("write");
    let (ok, text) = memlab(&["bench", utf8.to_str().expect("path"), "--out", out]);
    assert!(!ok && text.contains("line 3, byte 24: not UTF-8") && text.contains("utf8.toml"), "{text}");
    let valid = config(&dir, "valid.toml", "", "ops = 5");
    let valid = valid.to_str().expect("path");
    for (flags, expected) in [
        (&["--deadline-ms", "inf"][..], "outside 1..=3600000"),
        (&["--deadline-ms", "1e300"], "outside 1..=3600000"),
        (&["--deadline-ms=-5"], "outside 1..=3600000"),
        (&["--repeats", "0"], "outside 1..=100"),
    ] {
        let mut args = vec!["bench", valid, "--out", out];
        args.extend(flags);
        let (ok, text) = memlab(&args);
        assert!(!ok && text.contains(expected), "{flags:?}: {text}");
    }
    let (ok, text) = memlab(&["check", "btree", "--ops", "0"]);
    assert!(!ok && text.contains("0 would check nothing"), "{text}");
    let (ok, text) = memlab(&["bench", valid, "--out", "/proc/memlab-cannot-write-here"]);
    assert!(!ok && text.contains("--out /proc/memlab-cannot-write-here"), "{text}");
}

#[test]
fn a_truncated_module_is_refused_everywhere_before_anything_runs() {
    let dir = scratch("bad-input-truncated");
    let module = std::fs::read(memlab_test_plugins::core_modules().join("memtable_btree.wasm")).expect("a core module");
    for cut in [9, 100, module.len() / 3, module.len() / 2, module.len() - 1] {
        let path = dir.join(format!("cut-{cut}.wasm"));
        std::fs::write(&path, &module[..cut]).expect("write");
        let path = path.to_str().expect("path");
        let (ok, text) = memlab(&["componentize", path, "-o", dir.join("out.wasm").to_str().expect("path")]);
        assert!(!ok && text.contains("invalid core module"), "cut {cut}: {text}");
        let (ok, text) = memlab(&["check", path]);
        assert!(!ok && text.contains(path), "cut {cut}: {text}");
    }
    // As the second variant: refused before the first one runs.
    let cut = dir.join("cut-9.wasm");
    let config = dir.join("second.toml");
    std::fs::write(
        &config,
        format!(
            "[workload]\nops = 50\n\n[[variant]]\nname = \"fine\"\nmemtable = \"btree\"\nallocator = \"per-row\"\nserializer = \"lean\"\n\n[[variant]]\nname = \"cut\"\nmemtable = \"{}\"\nallocator = \"per-row\"\nserializer = \"lean\"\n",
            cut.display()
        ),
    )
    .expect("write");
    let (ok, text) = memlab(&["bench", config.to_str().expect("path"), "--out", dir.join("runs").to_str().expect("path")]);
    assert!(!ok && text.contains("preflight") && text.contains("variant `cut`") && !text.contains("variant 1/2"), "{text}");
}

#[test]
fn runs_of_one_config_in_one_second_keep_their_own_directories() {
    let dir = scratch("bad-input-runs");
    let config = config(&dir, "quick.toml", "name = \"quick\"", "ops = 20");
    let out = dir.join("runs");
    for _ in 0..2 {
        let (ok, text) = memlab(&["bench", config.to_str().expect("path"), "--out", out.to_str().expect("path"), "--quiet", "--no-intervals"]);
        assert!(ok, "{text}");
    }
    let runs: Vec<_> = std::fs::read_dir(&out).expect("runs").flatten().filter(|e| e.path().join("run.json").exists()).collect();
    assert_eq!(runs.len(), 2, "two runs, two directories");
}

#[test]
fn rows_that_can_never_fit_fail_the_variant_with_the_cause() {
    let dir = scratch("bad-input-huge");
    let config = dir.join("huge.toml");
    std::fs::write(
        &config,
        "[workload]\nops = 2\npartitions = { count = 10 }\n\n[[workload.column]]\nname = \"big\"\nsize = 16777216\n\n[[variant]]\nname = \"v\"\nmemtable = \"btree\"\nallocator = \"per-row\"\nserializer = \"lean\"\nmemtable_space = \"1MiB\"\n",
    )
    .expect("write");
    let (ok, text) = memlab(&["bench", config.to_str().expect("path"), "--out", dir.join("runs").to_str().expect("path"), "--quiet", "--no-intervals"]);
    assert!(!ok && text.contains("every one of the 2 ops failed") && text.contains("pool is full"), "{text}");
}

#[test]
fn verify_rereads_kept_segments_and_finds_damage() {
    let dir = scratch("bad-input-verify");
    let config = config(&dir, "kept.toml", "name = \"kept\"", "ops = 300");
    let out = dir.join("runs");
    let (ok, text) = memlab(&["bench", config.to_str().expect("path"), "--out", out.to_str().expect("path"), "--keep-segments", "--quiet", "--no-intervals"]);
    // What it keeps is said, measured on the first round.
    assert!(ok && text.contains("--keep-segments: round 1 kept") && text.contains("MiB"), "{text}");
    let run = std::fs::read_dir(&out).expect("runs").flatten().map(|e| e.path()).find(|p| p.join("run.json").exists()).expect("a run");
    let (ok, text) = memlab(&["verify", run.to_str().expect("path")]);
    assert!(ok && text.contains("OK    v (repeat 1)"), "{text}");
    // A run is named by its directory or its run.json, for verify and show.
    let json = run.join("run.json");
    let (ok, text) = memlab(&["verify", json.to_str().expect("path")]);
    assert!(ok && text.contains("OK    v (repeat 1)"), "{text}");
    let (ok, text) = memlab(&["show", run.to_str().expect("path")]);
    assert!(ok && text.contains("Results: v"), "{text}");
    // A folder of runs (a sweep's directory) is verified point by point,
    // each named; a folder with no run in it is named in the error.
    let (ok, text) = memlab(&["verify", out.to_str().expect("path")]);
    let named = run.file_name().and_then(|n| n.to_str()).expect("name");
    assert!(ok && text.contains(&format!("{named}:")) && text.contains("OK    v (repeat 1)"), "{text}");
    let empty = dir.join("no-runs");
    std::fs::create_dir_all(&empty).expect("dir");
    let (ok, text) = memlab(&["verify", empty.to_str().expect("path")]);
    assert!(!ok && text.contains("no-runs") && text.contains("no-runs/run.json: no record there"), "{text}");
    let data = std::fs::read_dir(run.join("01-v-1"))
        .expect("segments")
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "data"))
        .expect("a data file");
    let mut bytes = std::fs::read(&data).expect("read");
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x10;
    std::fs::write(&data, bytes).expect("write");
    let (ok, text) = memlab(&["verify", run.to_str().expect("path")]);
    assert!(!ok && text.contains("FAIL  v (repeat 1)") && text.contains(data.file_name().and_then(|n| n.to_str()).expect("name")), "{text}");
}

/// A healthy run passes `memlab verify`, whatever it verified: rounds
/// whose final state the run did not compare (`verify_rounds = "first"`)
/// are read back, said to be unverified, and do not fail it.
#[test]
fn verify_passes_a_healthy_run_whose_later_rounds_were_not_compared() {
    let dir = scratch("bad-input-verify-first");
    let config = config(&dir, "first.toml", "name = \"first\"\nverify_rounds = \"first\"\nrepeats = 2", "ops = 300");
    let out = dir.join("runs");
    let (ok, text) = memlab(&["bench", config.to_str().expect("path"), "--out", out.to_str().expect("path"), "--keep-segments", "--quiet", "--no-intervals"]);
    assert!(ok, "{text}");
    let run = std::fs::read_dir(&out).expect("runs").flatten().map(|e| e.path()).find(|p| p.join("run.json").exists()).expect("a run");
    let (ok, text) = memlab(&["verify", run.to_str().expect("path")]);
    assert!(ok, "a healthy run failed verify: {text}");
    assert!(text.contains("OK    v (repeat 1): ") && text.contains("keys, digest"), "{text}");
    assert!(text.contains("OK    v (repeat 2): ") && text.contains("its final state was not verified at run time"), "{text}");
}

/// Starts `memlab args...` in the workspace, for a test that signals it.
fn spawn(args: &[&str]) -> std::process::Child {
    command(args).stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn().expect("memlab starts")
}

fn two_variants(dir: &Path, second: &str) -> PathBuf {
    let config = dir.join("two.toml");
    std::fs::write(
        &config,
        format!("[workload]\nseed = 9\nops = 400\npartitions = {{ count = 1000 }}\n\n[[variant]]\nname = \"healthy\"\nmemtable = \"btree\"\nallocator = \"per-row\"\nserializer = \"lean\"\n\n[[variant]]\nname = \"second\"\n{second}\n"),
    )
    .expect("write");
    config
}

fn record_in(out: &Path) -> serde_json::Value {
    let run = std::fs::read_dir(out).expect("runs").flatten().map(|e| e.path().join("run.json")).find(|p| p.exists()).expect("a run.json");
    serde_json::from_slice(&std::fs::read(run).expect("read")).expect("json")
}

#[test]
fn a_call_that_never_returns_ends_the_run_and_keeps_what_finished() {
    let dir = scratch("bad-input-loop");
    let hostile = memlab_test_plugins::path("hostile");
    let config = two_variants(
        &dir,
        &format!(
            "memtable = {:?}\nmemtable_params = {{ mode = \"loop\", after = 2500 }}\nallocator = \"per-row\"\nserializer = \"lean\"",
            hostile.display().to_string()
        ),
    );
    let out = dir.join("runs");
    let child = spawn(&["bench", config.to_str().expect("path"), "--out", out.to_str().expect("path"), "--stall-s", "2", "--quiet", "--no-intervals"]);
    let output = child.wait_with_output().expect("it ends by itself");
    let text = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success() && text.contains("made no progress") && text.contains("memtable.insert"), "{text}");
    let record = record_in(&out);
    assert_eq!(record["variants"][0]["outcome"]["status"], "completed");
    assert_eq!(record["variants"][1]["outcome"]["status"], "failed");
}

/// A `create` that never returns is a stall in preflight, named, within
/// the stall limit: not a silent hang before the first variant.
#[test]
fn a_create_that_never_returns_ends_preflight_with_the_plugin_named() {
    let dir = scratch("bad-input-create-loop");
    let hostile = memlab_test_plugins::path("hostile");
    let second = format!(
        "memtable = {:?}\nmemtable_params = {{ mode = \"create-loop\" }}\nallocator = \"per-row\"\nserializer = \"lean\"",
        hostile.display().to_string()
    );
    let config = two_variants(&dir, &second);
    let out = dir.join("runs");
    let started = std::time::Instant::now();
    let child = spawn(&["bench", config.to_str().expect("path"), "--out", out.to_str().expect("path"), "--stall-s", "2", "--quiet", "--no-intervals"]);
    let output = child.wait_with_output().expect("it ends by itself");
    let text = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success() && text.contains("made no progress") && text.contains("memtable.create") && text.contains("variant `second`"), "{text}");
    assert!(started.elapsed() < std::time::Duration::from_secs(60), "it took {:?}", started.elapsed());
}

/// Ctrl-C and SIGTERM stop a run alike: the stopped variant is marked and
/// what finished is kept. A writer waiting out a long group window does
/// not hold the stop back (issue 50).
#[test]
fn ctrl_c_or_sigterm_stops_cleanly_and_says_what_was_kept() {
    let group = "serializer = \"lean\"\ncommitlog_sync = \"group\"\ncommitlog_sync_group_window_ms = 60000\n";
    for (case, signal, first) in [("int", "-INT", None), ("term", "-TERM", None), ("group", "-INT", Some(group))] {
        let dir = scratch(&format!("bad-input-stop-{case}"));
        let config = two_variants(&dir, "memtable = \"btree\"\nallocator = \"per-row\"\nserializer = \"lean\"");
        // Long enough to be stopped in the middle: a paced first variant.
        let mut text = std::fs::read_to_string(&config).expect("read").replace("ops = 400", "ops = 40000\ntarget_rate = 2000");
        if let Some(first) = first {
            text = text.replacen("serializer = \"lean\"\n", first, 1);
        }
        std::fs::write(&config, text).expect("write");
        let out = dir.join("runs");
        let mut child = spawn(&["bench", config.to_str().expect("path"), "--out", out.to_str().expect("path"), "--quiet", "--no-intervals"]);
        // Stop it once the first variant has started.
        let mut stderr = std::io::BufReader::new(child.stderr.take().expect("stderr"));
        let mut text = String::new();
        while !text.contains("variant 1/2") {
            let mut line = String::new();
            if std::io::BufRead::read_line(&mut stderr, &mut line).expect("read") == 0 {
                break;
            }
            text.push_str(&line);
        }
        std::thread::sleep(std::time::Duration::from_millis(500));
        let stopped = std::time::Instant::now();
        let status = Command::new("kill").args([signal, &child.id().to_string()]).status().expect("kill");
        assert!(status.success());
        std::io::Read::read_to_string(&mut stderr, &mut text).expect("read the rest");
        let status = child.wait().expect("it stops");
        assert!(stopped.elapsed() < std::time::Duration::from_secs(30), "{case}: it took {:?} to stop", stopped.elapsed());
        assert!(!status.success() && text.contains("interrupted") && text.contains("run.json"), "{case}: {text}");
        let record = record_in(&out);
        let outcome = &record["variants"][0]["outcome"];
        assert_eq!(outcome["class"], "interrupted", "{case}: {record}");
        assert!(outcome["message"].as_str().is_some_and(|r| r.contains("SIGTERM")), "{case}: {record}");
    }
}

#[test]
fn variants_whose_names_sanitize_alike_keep_their_own_segments() {
    let dir = scratch("bad-input-names");
    let config = dir.join("names.toml");
    let variant = |name: &str| format!("\n[[variant]]\nname = {name:?}\nmemtable = \"btree\"\nallocator = \"per-row\"\nserializer = \"lean\"\n");
    std::fs::write(&config, format!("[workload]\nops = 200\npartitions = {{ count = 100 }}\n{}{}", variant("skip list"), variant("skip?list"))).expect("write");
    let out = dir.join("runs");
    let (ok, text) = memlab(&["bench", config.to_str().expect("path"), "--out", out.to_str().expect("path"), "--keep-segments", "--quiet", "--no-intervals"]);
    assert!(ok, "{text}");
    let record = record_in(&out);
    let folders: Vec<&str> = (0..2).map(|i| record["variants"][i]["segments"].as_str().expect("kept")).collect();
    assert_ne!(folders[0], folders[1]);
    let run = std::fs::read_dir(&out).expect("runs").flatten().map(|e| e.path()).find(|p| p.join("run.json").exists()).expect("run");
    for folder in folders {
        assert!(std::fs::read_dir(run.join(folder)).expect("kept segments").count() > 0, "{folder}");
    }
}

#[test]
fn a_limited_address_space_still_runs() {
    let dir = scratch("bad-input-ulimit");
    let config = config(&dir, "small.toml", "", "ops = 200");
    let script =
        format!("ulimit -v 8000000 && {} bench {} --out {} --quiet --no-intervals", env!("CARGO_BIN_EXE_memlab"), config.display(), dir.join("runs").display());
    let out = Command::new("sh").args(["-c", &script]).env("MEMLAB_CACHE_DIR", dir.join("cache")).output().expect("sh runs");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success() && text.contains("address space limited"), "{text}");
}

#[test]
fn a_plugin_crate_that_does_not_build_is_refused_with_cargos_words() {
    let dir = scratch("bad-input-crate");
    let krate = dir.join("broken-table");
    std::fs::create_dir_all(krate.join("src")).expect("mkdir");
    std::fs::write(
        krate.join("Cargo.toml"),
        "[package]\nname = \"broken-table\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n[lib]\ncrate-type = [\"cdylib\"]\n\n[workspace]\n",
    )
    .expect("write Cargo.toml");
    std::fs::write(krate.join("src/lib.rs"), "pub fn oops() -> u32 { \"not a number\" }\n").expect("write lib.rs");
    let path = krate.to_str().expect("utf-8 path");
    let (ok, text) = memlab(&["check", path, "--build"]);
    assert!(!ok, "{text}");
    assert!(text.contains(&format!("plugin `{path}`: cannot build its crate")) && text.contains("mismatched types"), "{text}");
    // Building, but exporting no strategy: refused as such, by name.
    std::fs::write(krate.join("src/lib.rs"), "pub fn fine() -> u32 { 7 }\n").expect("write lib.rs");
    let (ok, text) = memlab(&["check", path, "--build"]);
    assert!(!ok && text.contains(path), "{text}");
}

/// Runs a bench of `config` keeping segments; the run's directory.
fn kept_run(config: &Path, out: &Path) -> PathBuf {
    let (ok, text) = memlab(&["bench", config.to_str().expect("path"), "--out", out.to_str().expect("path"), "--keep-segments", "--quiet", "--no-intervals"]);
    assert!(ok, "{text}");
    std::fs::read_dir(out).expect("runs").flatten().map(|e| e.path()).find(|p| p.join("run.json").exists()).expect("a run")
}

/// `memlab verify` reads segments back with the component the run kept,
/// by sha256; a record edited to name another plugin (a crate folder with
/// a build script) is refused, and nothing is built.
#[test]
fn verify_never_builds_or_loads_what_a_record_names() {
    let dir = scratch("bad-input-verify-never-builds");
    let flush = crate::support::liar_plugin("liar-flush");
    let text = format!(
        "[workload]\nseed = 3\nops = 300\npartitions = {{ count = 500 }}\n\n[[variant]]\nname = \"v\"\nmemtable = \"btree\"\nallocator = \"per-row\"\nserializer = {flush:?}\n"
    );
    std::fs::write(dir.join("liar.toml"), text).expect("config");
    let run = kept_run(&dir.join("liar.toml"), &dir.join("runs"));
    let (ok, said) = memlab(&["verify", run.to_str().expect("path")]);
    assert!(ok && said.contains("OK    v (repeat 1)"), "{said}");
    // A crate whose build script leaves a mark, named by an edited record.
    let krate = dir.join("evil");
    std::fs::create_dir_all(krate.join("src")).expect("crate");
    std::fs::write(krate.join("Cargo.toml"), "[package]\nname = \"evil\"\nversion = \"0.1.0\"\nedition = \"2024\"\n[lib]\ncrate-type = [\"cdylib\"]\n")
        .expect("toml");
    std::fs::write(krate.join("src/lib.rs"), "").expect("lib");
    std::fs::write(krate.join("build.rs"), "fn main() { std::fs::write(\"/tmp/memlab-evil-ran\", b\"\").ok(); }\n").expect("build.rs");
    let _ = std::fs::remove_file("/tmp/memlab-evil-ran");
    let record = std::fs::read_to_string(run.join("run.json")).expect("record");
    let sha = record.split("\"sha256\": \"").nth(3).and_then(|s| s.get(..64)).expect("the serializer's sha256").to_string();
    let edited = record.replace(&format!("{flush:?}"), &format!("{:?}", krate.display().to_string())).replace(&sha, &"0".repeat(64));
    std::fs::write(run.join("run.json"), edited).expect("edit");
    let (ok, said) = memlab(&["verify", run.to_str().expect("path")]);
    assert!(!ok && said.contains("never loads or builds"), "{said}");
    assert!(!Path::new("/tmp/memlab-evil-ran").exists(), "verify ran a build script a record named");
}

/// A record whose counts disagree with its segments fails `verify`,
/// whatever its schema: segments swapped in from a run with another seed,
/// the record edited to schema 1 (which has no comparable digest).
#[test]
fn verify_refuses_swapped_segments_whatever_the_schema() {
    let dir = scratch("bad-input-verify-swapped");
    let a = kept_run(&config(&dir, "a.toml", "name = \"a\"", "ops = 300"), &dir.join("runs-a"));
    let other = std::fs::read_to_string(dir.join("a.toml")).expect("config").replace("seed = 3", "seed = 4").replace("ops = 300", "ops = 400");
    std::fs::write(dir.join("b.toml"), other).expect("config");
    let b = kept_run(&dir.join("b.toml"), &dir.join("runs-b"));
    std::fs::remove_dir_all(a.join("01-v-1")).expect("remove");
    std::fs::rename(b.join("01-v-1"), a.join("01-v-1")).expect("swap");
    let record = std::fs::read_to_string(a.join("run.json")).expect("record").replacen("\"schema\": 3", "\"schema\": 1", 1);
    std::fs::write(a.join("run.json"), record).expect("edit");
    let (ok, said) = memlab(&["verify", a.to_str().expect("path")]);
    assert!(!ok && said.contains("FAIL  v (repeat 1)") && said.contains("the run verified"), "{said}");
}

/// Text from a record or a plugin never reaches the terminal raw: a
/// variant named with ESC and BEL sequences is shown escaped.
#[test]
fn show_escapes_control_characters_from_a_record() {
    let dir = scratch("bad-input-show-escapes");
    let run = kept_run(&config(&dir, "e.toml", "name = \"e\"", "ops = 200"), &dir.join("runs"));
    let record = std::fs::read_to_string(run.join("run.json")).expect("record").replace("\"name\": \"v\"", "\"name\": \"v\\u001b[2J\\u0007\"");
    std::fs::write(run.join("run.json"), record).expect("edit");
    let out = command(&["show", run.join("run.json").to_str().expect("path")]).output().expect("memlab show");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!out.stdout.iter().any(|&b| b == 0x1b || b == 0x07), "raw control characters reached the terminal");
    assert!(String::from_utf8_lossy(&out.stdout).contains("v\\u{1b}[2J\\u{7}"), "{}", String::from_utf8_lossy(&out.stdout));
}

/// When `run.json` cannot be written any more (here: the run's directory
/// is replaced by a file while the second variant runs), every variant's summary is
/// still shown as it ends, the record goes to a file memlab names, and the
/// exit status (4) says the run completed but was not saved where asked.
#[test]
fn a_record_that_cannot_be_written_is_saved_elsewhere_and_said_so() {
    let dir = scratch("bad-input-lost-dir");
    let config = two_variants(&dir, "memtable = \"btree\"\nallocator = \"per-row\"\nserializer = \"lean\"");
    let text = std::fs::read_to_string(&config).expect("read").replace("ops = 400", "ops = 4000\ntarget_rate = 2000");
    std::fs::write(&config, text).expect("write");
    let out = dir.join("runs");
    let mut child = spawn(&["bench", config.to_str().expect("path"), "--out", out.to_str().expect("path"), "--quiet", "--no-intervals"]);
    let mut stderr = std::io::BufReader::new(child.stderr.take().expect("stderr"));
    let mut text = String::new();
    while !text.contains("variant 2/2") {
        let mut line = String::new();
        if std::io::BufRead::read_line(&mut stderr, &mut line).expect("read") == 0 {
            break;
        }
        text.push_str(&line);
    }
    // A file where the directory was: nothing under it can be written.
    std::fs::remove_dir_all(&out).expect("remove the run's directory");
    std::fs::write(&out, b"").expect("a file in its place");
    std::io::Read::read_to_string(&mut stderr, &mut text).expect("read the rest");
    let output = child.wait_with_output().expect("it ends");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(4), "{text}");
    assert!(stdout.contains("Results: healthy") && stdout.contains("Results: second"), "{stdout}");
    let saved = text.split("its record was saved to ").nth(1).map(str::trim).expect("where it went");
    let record: serde_json::Value = serde_json::from_slice(&std::fs::read(saved).expect("the saved record")).expect("json");
    assert_eq!(record["variants"].as_array().map(Vec::len), Some(2), "{record}");
    let _ = std::fs::remove_file(saved);
}

/// Endless or huge inputs are refused by their limit, never read whole:
/// a plugin file, a run record and a config given as `/dev/zero`.
#[test]
fn endless_inputs_are_refused_by_their_limit() {
    for (args, expected) in [
        (vec!["check", "/dev/zero"], "/dev/zero: not a regular file, so it is not read as a plugin file"),
        (vec!["show", "/dev/zero"], "/dev/zero: cannot read: not a regular file, so it is not read as a run record"),
        (vec!["bench", "/dev/zero"], "/dev/zero: not a regular file, so it is not read as a config or profile"),
        (vec!["check", "btree", "--size", "99999999999"], "above the most check takes (20000000)"),
    ] {
        let (ok, text) = memlab(&args);
        assert!(!ok && text.contains(expected), "{args:?}: {text}");
    }
}

/// A salt is 32 hex digits, as a record shows it; anything else is a
/// usage error that shows what was given, escaped. A salt with a config
/// that replays a stream file (never salted) is refused, naming the file.
#[test]
fn a_bad_salt_is_a_usage_error() {
    let dir = scratch("bad-input-salt");
    for bad in ["", "xyz", "+123456789abcdef0011223344556677", "0123456789ABCDEF0123456789abcdef0", "\u{1b}[31m0123456789abcdef0123456789abcd"] {
        let out = command(&["bench", "--salt", bad, "--out", dir.to_str().expect("path")]).output().expect("memlab runs");
        let text = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{bad:?}: {text}");
        assert!(text.contains("a salt is 32 hex digits") && !text.contains('\u{1b}'), "{bad:?}: {text}");
    }
    let profile = dir.join("p.toml");
    std::fs::write(&profile, "ops = 100\n").expect("profile");
    let file = dir.join("s.mlstream");
    let (ok, text) = memlab(&["stream", "--output", file.to_str().expect("path"), profile.to_str().expect("path")]);
    assert!(ok, "{text}");
    let config = dir.join("replay.toml");
    let replay = format!(
        "[workload]\nstream = \"{}\"\n\n[[variant]]\nname = \"v\"\nmemtable = \"btree\"\nallocator = \"per-row\"\nserializer = \"lean\"\n",
        file.display()
    );
    std::fs::write(&config, replay).expect("config");
    let salt = "0123456789abcdef0123456789abcdef";
    let out = command(&["bench", config.to_str().expect("path"), "--salt", salt, "--out", dir.to_str().expect("path")]).output().expect("memlab runs");
    let text = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains("this config replays the stream file") && text.contains("s.mlstream"), "{text}");
}

/// An empty strategy name is refused for every kind, the commit log's
/// included: `commitlog = ""` ran with no log while the record named one
/// (issue 50).
#[test]
fn an_empty_strategy_name_is_refused_for_every_kind() {
    for kind in memlab::seam::KINDS.iter().map(|k| k.name) {
        let mut text = String::from("[workload]\nseed = 3\nops = 100\n\n[[variant]]\nname = \"v\"\n");
        for (other, name) in [("memtable", "btree"), ("allocator", "per-row"), ("serializer", "lean")].into_iter().filter(|(k, _)| *k != kind) {
            text.push_str(&format!("{other} = \"{name}\"\n"));
        }
        text.push_str(&format!("{kind} = \"\"\n"));
        let error = memlab::config::BenchConfig::parse("empty.toml", &text).expect_err("an empty name").to_string();
        assert!(error.contains(&format!("`{kind} = \"\"` names no")) && error.contains("empty.toml: line"), "{kind}: {error}");
    }
}

/// A config of many variants that create the same strategies is checked
/// once per distinct set, not one by one in silence, and a stop is seen
/// between variants (issue 50: 1,000 variants took 361 s).
#[test]
fn like_variants_are_preflighted_once_and_a_stop_is_seen() {
    let mut text = String::from("[workload]\nseed = 3\nops = 100\n");
    for i in 0..1000 {
        text.push_str(&format!(
            "\n[[variant]]\nname = \"v{i}\"\nmemtable = \"btree\"\nallocator = \"per-row\"\nserializer = \"lean\"\nshards = {}\n",
            1 + i % 4
        ));
    }
    let config = memlab::config::BenchConfig::parse("many.toml", &text).expect("config");
    let host = crate::support::host();
    let started = std::time::Instant::now();
    let said = std::sync::Mutex::new(Vec::new());
    let note = |line: &str| said.lock().expect("notes").push(line.to_string());
    memlab::bench::preflight_watched(&host, &config, None, None, &note).expect("preflight");
    assert!(started.elapsed() < std::time::Duration::from_secs(60), "took {:?}", started.elapsed());
    let said = said.into_inner().expect("notes");
    assert!(said.last().is_some_and(|l| l.contains("1000 variants checked as 1 distinct")), "{said:?}");
    let stop = std::sync::atomic::AtomicBool::new(true);
    let error = memlab::bench::preflight_watched(&host, &config, None, Some(&stop), &|_| {}).expect_err("stopped").to_string();
    assert!(error.contains("interrupted") && error.contains("v0"), "{error}");
}

/// A parameter its plugin does not describe is the config's typo, named by
/// the host before the plugin is created with it, for every kind: not the
/// plugin's error, nor a broken contract (issue 50).
#[test]
fn a_parameter_typo_is_refused_by_the_host_for_every_kind() {
    let host = crate::support::host();
    for kind in memlab::seam::KINDS.iter().map(|k| k.name) {
        let mut text = String::from("[workload]\nseed = 3\nops = 100\n\n[[variant]]\nname = \"v\"\n");
        for spec in &memlab::seam::KINDS {
            text.push_str(&format!("{} = \"{}\"\n", spec.name, spec.stand_in));
            spec.optional.into_iter().for_each(|line| text.push_str(&format!("{line}\n")));
        }
        text.push_str(&format!("{kind}_params = {{ tpyo = 3 }}\n"));
        let config = memlab::config::BenchConfig::parse("typo.toml", &text).expect("config");
        let error = memlab::bench::preflight(&host, &config, None).expect_err("a typo").to_string();
        assert!(error.contains(&format!("`{kind}_params.tpyo`")) && error.contains("a typo?") && !error.contains("contract"), "{kind}: {error}");
    }
}
