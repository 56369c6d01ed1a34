//! The C example (examples/c-sorted-array): built from memlab's own C
//! bindings with Debian's clang-14, it passes `memlab check` and runs a
//! bench beside a bundled memtable with the same verified state.

use std::path::Path;
use std::process::{Command, Output};

use crate::support::scratch;

fn memlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_memlab"))
        .args(args)
        .env("MEMLAB_CACHE_DIR", Path::new(env!("CARGO_TARGET_TMPDIR")).join("memlab-cache"))
        .output()
        .expect("memlab runs")
}

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

#[test]
fn the_c_memtable_passes_check_and_benches_beside_vector() {
    let dir = scratch("c-plugin");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/c-sorted-array/build.sh");
    let built = Command::new("bash").arg(&script).arg(env!("CARGO_BIN_EXE_memlab")).arg(&dir).output().expect("bash runs build.sh");
    assert!(built.status.success(), "build.sh failed:\n{}", text(&built));
    let wasm = dir.join("sorted_array.wasm");
    let wasm = wasm.to_str().expect("utf-8 path");

    let check = memlab(&["check", wasm, "--ops", "20000", "--size", "50000"]);
    assert!(check.status.success() && text(&check).contains("7 of 7 properties passed"), "{}", text(&check));

    let config = dir.join("bench.toml");
    let variant = |name: &str, memtable: &str| {
        format!("[[variant]]\nname = {name:?}\nmemtable = {memtable:?}\nallocator = \"per-row\"\nserializer = \"lean\"\nshards = 2\n")
    };
    let bench = format!(
        "[bench]\nname = \"c-plugin\"\n\n[workload]\nprofile = {:?}\nops = 3000\nthreads = 1\n\n{}\n{}",
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../benches/profiles/seed.toml"),
        variant("c sorted-array", wasm),
        variant("vector", "vector"),
    );
    std::fs::write(&config, bench).expect("write config");
    let runs = dir.join("runs");
    let out = memlab(&["bench", config.to_str().expect("path"), "--quiet", "--no-intervals", "--out", runs.to_str().expect("path")]);
    let report = text(&out);
    assert!(out.status.success(), "{report}");
    // Both verified against the stream: the same state, the same digest.
    let digests: Vec<&str> = report.lines().filter(|l| l.starts_with("Verified")).filter_map(|l| l.split("digest ").nth(1)?.split(',').next()).collect();
    assert_eq!(digests.len(), 2, "{report}");
    assert_eq!(digests[0], digests[1], "{report}");
    assert!(!report.contains("FAILED"), "{report}");
}
