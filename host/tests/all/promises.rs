//! Issue 66's other causes, through the binary: every plugin call
//! watched, one signal ending any wait (a build's too), every output
//! delivered or failed, every exit status documented, and errors that
//! state their reason whole.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::{command, memlab, scratch};

/// A config of one healthy variant and one `second`.
fn two_variants(dir: &Path, second: &str) -> PathBuf {
    let config = dir.join("two.toml");
    let healthy = "memtable = \"btree\"\nallocator = \"per-row\"\nserializer = \"lean\"";
    let text = format!(
        "[workload]\nseed = 9\nops = 400\npartitions = {{ count = 1000 }}\n\n[[variant]]\nname = \"healthy\"\n{healthy}\n\n[[variant]]\nname = \"second\"\n{second}\n"
    );
    std::fs::write(&config, text).expect("write");
    config
}

fn hostile(mode: &str) -> String {
    let path = crate::support::hostile_plugin();
    format!("memtable = {path:?}\nmemtable_params = {{ mode = {mode:?} }}\nallocator = \"per-row\"\nserializer = \"lean\"")
}

fn bench(config: &Path, out: &Path, extra: &[&str]) -> std::process::Child {
    let mut args = vec!["bench", config.to_str().expect("path"), "--out", out.to_str().expect("path"), "--quiet", "--no-intervals"];
    args.extend(extra);
    command(&args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("memlab starts")
}

/// A `stats` that never returns in preflight is a stall like any other
/// call: named, and the run ended, within the stall limit.
#[test]
fn a_stats_call_that_never_returns_in_preflight_is_a_named_stall() {
    let dir = scratch("promises-stats-loop");
    let config = two_variants(&dir, &hostile("stats-loop"));
    let started = Instant::now();
    let child = bench(&config, &dir.join("runs"), &["--stall-s", "2"]);
    let out = wait_at_most(child, Duration::from_secs(120));
    let text = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{text}");
    assert!(text.contains("made no progress") && text.contains("memtable.stats") && text.contains("variant `second`"), "{text}");
    assert!(started.elapsed() < Duration::from_secs(90), "it took {:?}", started.elapsed());
    // A sweep checks every point before the first runs: watched too.
    let swept = dir.join("swept.toml");
    std::fs::write(&swept, format!("{}\n[sweep]\nover = \"threads\"\nvalues = [1, 2]\n", std::fs::read_to_string(&config).expect("config"))).expect("write");
    let out = wait_at_most(bench(&swept, &dir.join("sweeps"), &["--stall-s", "2"]), Duration::from_secs(120));
    let text = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{text}");
    assert!(text.contains("memtable.stats") && text.contains("nothing ran: the sweep's points were being checked"), "{text}");
}

/// One SIGTERM ends a run stuck in a call that never returns, long
/// before its stall limit: the watchdog's limit shrinks to a grace.
#[test]
fn one_sigterm_ends_a_wait_on_a_call_that_never_returns() {
    let dir = scratch("promises-one-sigterm");
    let config = two_variants(&dir, &hostile("create-loop"));
    let child = bench(&config, &dir.join("runs"), &["--stall-s", "600"]);
    // In preflight's `create` of the second variant by then.
    std::thread::sleep(Duration::from_secs(8));
    let sent = Instant::now();
    assert!(Command::new("kill").args(["-TERM", &child.id().to_string()]).status().expect("kill").success());
    let out = wait_at_most(child, Duration::from_secs(60));
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(sent.elapsed() < Duration::from_secs(20), "one SIGTERM took {:?} to end it:\n{text}", sent.elapsed());
    assert!(!out.status.success() && text.contains("made no progress") && text.contains("memtable.create"), "{text}");
}

/// The child's output, or a failed test (and the child killed) once
/// `limit` has passed: a hang fails, never blocks the suite.
fn wait_at_most(mut child: std::process::Child, limit: Duration) -> std::process::Output {
    let started = Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if started.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().expect("output");
            panic!("still running after {limit:?}:\n{}", String::from_utf8_lossy(&out.stderr));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    child.wait_with_output().expect("output")
}

/// A quick run; its directory.
fn a_run(dir: &Path) -> PathBuf {
    let config = two_variants(dir, "memtable = \"vector\"\nallocator = \"per-row\"\nserializer = \"lean\"");
    let out = dir.join("runs");
    let (ok, text) = memlab(&["bench", config.to_str().expect("path"), "--out", out.to_str().expect("path"), "--keep-segments", "--quiet", "--no-intervals"]);
    assert!(ok, "{text}");
    std::fs::read_dir(&out).expect("runs").flatten().map(|e| e.path()).find(|p| p.join("run.json").exists()).expect("a run")
}

/// Output that cannot be written (`> /dev/full`) fails the command with
/// exit 1, saying so; a closed pipe stays no error.
#[test]
fn output_that_cannot_be_written_is_a_failure() {
    let dir = scratch("promises-dev-full");
    let run = a_run(&dir);
    let run = run.to_str().expect("path");
    for args in [vec!["show", run], vec!["list"], vec!["verify", run]] {
        let full = std::fs::OpenOptions::new().write(true).open("/dev/full").expect("/dev/full");
        let out = command(&args).stdout(full).output().expect("memlab runs");
        let text = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {text}");
        assert!(text.contains("standard output") && text.contains("No space left on device"), "{args:?}: {text}");
    }
    let script = format!("{} show {run} | head -c 10 > /dev/null; echo \"${{PIPESTATUS[0]}}\"", env!("CARGO_BIN_EXE_memlab"));
    let out = Command::new("bash").args(["-c", &script]).output().expect("bash");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "0", "a closed pipe: {}", String::from_utf8_lossy(&out.stderr));
}

/// A parameter given twice is refused as a usage error (exit 2), never
/// left to the plugin to pick one.
#[test]
fn a_parameter_given_twice_is_refused() {
    let out = command(&["check", "region", "--param", "region_size=4096", "--param", "region_size=8192"]).output().expect("memlab runs");
    let text = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains("--param region_size is given twice (`4096`, then `8192`)"), "{text}");
    // Any other flag given twice: clap's own usage error.
    let out = command(&["check", "btree", "--seed", "1", "--seed", "2"]).output().expect("memlab runs");
    let text = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains("'--seed <SEED>' cannot be used multiple times"), "{text}");
}

/// A folder with no record, or with a record memlab cannot open, is a
/// failure naming the file and why (exit 1), not a usage error.
#[test]
fn a_folder_without_a_readable_record_fails_naming_the_file() {
    let dir = scratch("promises-no-record");
    let empty = dir.join("killed-early");
    std::fs::create_dir_all(empty.join("01-v-1")).expect("mkdir");
    let looped = dir.join("looped");
    std::fs::create_dir(&looped).expect("mkdir");
    std::os::unix::fs::symlink("run.json", looped.join("run.json")).expect("loop");
    let fifo = dir.join("fifo");
    std::fs::create_dir(&fifo).expect("mkdir");
    assert!(Command::new("mkfifo").arg(fifo.join("run.json.gz")).status().expect("mkfifo").success());
    let cases =
        [(&empty, "killed-early/run.json: no record there"), (&looped, "looped/run.json"), (&fifo, "fifo/run.json.gz: cannot read: not a regular file")];
    for (folder, expected) in cases {
        for verb in ["show", "verify"] {
            let out = command(&[verb, folder.to_str().expect("path")]).output().expect("memlab runs");
            let text = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{verb} {}: {text}", folder.display());
            assert!(text.contains(expected), "{verb}: expected `{expected}` in {text}");
        }
    }
}

/// An error quotes a config line cut short and states its reason whole,
/// however long the line; a name that would become a file name is
/// refused up front when too long.
#[test]
fn an_error_states_its_reason_whole_however_long_its_line() {
    let dir = scratch("promises-long-lines");
    let nested = format!("{}1{}", "[".repeat(100_000), "]".repeat(100_000));
    let wide = format!("[{}]", vec!["1"; 50_000].join(", "));
    let long_name = "n".repeat(1 << 20);
    let cases = [
        (format!("[bench]\nrepeats = {nested}\n"), "repeats"),
        (format!("[bench]\nrepeats = {wide}\n"), "repeats"),
        (format!("[workload]\nops = 5\n\n[[variant]]\nname = \"{long_name}\"\nmemtable = \"btree\"\n"), "may be at most 100"),
        (format!("[bench]\nname = \"{}\"\n[workload]\nops = 5\n\n[[variant]]\nname = \"v\"\nmemtable = \"btree\"\n", "b".repeat(300)), "may be at most 100"),
    ];
    for (i, (text, expected)) in cases.iter().enumerate() {
        let path = dir.join(format!("long-{i}.toml"));
        std::fs::write(&path, text).expect("config");
        let out = command(&["bench", path.to_str().expect("path"), "--out", dir.join("runs").to_str().expect("path")]).output().expect("memlab runs");
        let said = String::from_utf8_lossy(&out.stderr);
        let line = said.lines().find(|l| l.starts_with("error:")).unwrap_or_else(|| panic!("case {i}: no error line in {said}"));
        assert_eq!(out.status.code(), Some(1), "case {i}: {said}");
        assert!(line.len() < 2_000 && !line.contains("characters cut") && line.contains(expected), "case {i}: {line}");
    }
    assert!(!dir.join("runs").exists(), "a refused config started a run");
}

/// A size with a unit is refused by saying what a size may be.
#[test]
fn a_size_with_a_unit_is_refused_saying_what_a_size_is() {
    let dir = scratch("promises-size-unit");
    let path = dir.join("size.toml");
    let text = "[workload]\nops = 5\n\n[[workload.column]]\nname = \"v\"\nsize = \"2GiB\"\n\n[[variant]]\nname = \"v\"\nmemtable = \"btree\"\n";
    std::fs::write(&path, text).expect("config");
    let (ok, said) = memlab(&["bench", path.to_str().expect("path"), "--out", dir.join("runs").to_str().expect("path")]);
    assert!(!ok && said.contains("\"2GiB\" is not a distribution") && said.contains("sizes are bytes, with no unit"), "{said}");
    assert!(!said.contains("internally tagged"), "{said}");
}

/// `shard_lock = false` on strategies that take one writer at a time is
/// refused in preflight, naming them, before any variant runs.
#[test]
fn shard_lock_off_on_a_strategy_that_is_not_concurrent_is_refused_up_front() {
    let dir = scratch("promises-shard-lock");
    let second = "memtable = \"btree\"\nallocator = \"per-row\"\nserializer = \"lean\"\nruntime = \"native\"\nshard_lock = false";
    let config = two_variants(&dir, second);
    let (ok, said) = memlab(&["bench", config.to_str().expect("path"), "--out", dir.join("runs").to_str().expect("path"), "--quiet"]);
    assert!(!ok && said.contains("preflight") && said.contains("`shard_lock = false`: `btree` and `per-row` must both take concurrent writers"), "{said}");
    assert!(!said.contains("variant 1/"), "a variant ran before the refusal:\n{said}");
}

/// A signal to memlab alone during `--build` stops cargo and what it
/// runs too, at once, not after the build.
#[test]
fn a_signal_during_a_build_stops_the_build() {
    let dir = scratch("promises-build-signal");
    let krate = dir.join("slow-build");
    std::fs::create_dir_all(krate.join("src")).expect("mkdir");
    let manifest =
        "[package]\nname = \"slow-build\"\nversion = \"0.1.0\"\nedition = \"2024\"\nbuild = \"build.rs\"\n\n[lib]\ncrate-type = [\"cdylib\"]\n\n[workspace]\n";
    std::fs::write(krate.join("Cargo.toml"), manifest).expect("manifest");
    std::fs::write(krate.join("src/lib.rs"), "").expect("lib");
    let marker = dir.join("build-script.pid");
    let script = format!(
        "fn main() {{ std::fs::write({:?}, std::process::id().to_string()).ok(); std::thread::sleep(std::time::Duration::from_secs(300)); }}\n",
        marker
    );
    std::fs::write(krate.join("build.rs"), script).expect("build.rs");
    let child = command(&["check", krate.to_str().expect("path"), "--build"])
        .env("CARGO_TARGET_DIR", dir.join("target"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("memlab starts");
    let started = Instant::now();
    while !marker.exists() {
        assert!(started.elapsed() < Duration::from_secs(300), "the build script never started");
        std::thread::sleep(Duration::from_millis(200));
    }
    let pid = std::fs::read_to_string(&marker).expect("pid");
    let sent = Instant::now();
    assert!(Command::new("kill").args(["-TERM", &child.id().to_string()]).status().expect("kill").success());
    let out = wait_at_most(child, Duration::from_secs(60));
    assert!(sent.elapsed() < Duration::from_secs(20), "it waited {:?} for the build", sent.elapsed());
    assert!(!out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // Gone, or a zombie no one has reaped yet: it runs no more.
    let running =
        || std::fs::read_to_string(format!("/proc/{}/stat", pid.trim())).is_ok_and(|s| s.rsplit(')').next().is_some_and(|r| !r.trim_start().starts_with('Z')));
    let gone = Instant::now();
    while running() {
        assert!(gone.elapsed() < Duration::from_secs(10), "the build script {pid} outlived memlab");
        std::thread::sleep(Duration::from_millis(100));
    }
}
