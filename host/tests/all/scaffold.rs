//! `memlab new`: each kind's crate builds outside memlab's tree and passes
//! `memlab check`; its bench config names it beside the bundled ones.

use std::path::Path;
use std::process::Command;

use crate::support::scratch;

#[test]
fn a_new_plugin_of_each_kind_builds_and_passes_check() {
    let dir = scratch("scaffold");
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("scaffold-target");
    for kind in ["memtable", "allocator", "serializer"] {
        let name = format!("my-{kind}");
        let out = Command::new(env!("CARGO_BIN_EXE_memlab")).args(["new", kind, &name, dir.to_str().expect("path")]).output().expect("memlab new");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let root = dir.join(&name);
        // The outer cargo's settings are for memlab's own build.
        let mut build = Command::new(env!("CARGO"));
        build.args(["build", "--release", "--target", "wasm32-unknown-unknown"]).current_dir(&root).env("CARGO_TARGET_DIR", &target);
        for var in ["RUSTFLAGS", "CARGO_ENCODED_RUSTFLAGS", "CARGO_BUILD_TARGET", "CARGO_MAKEFLAGS", "MAKEFLAGS"] {
            build.env_remove(var);
        }
        let built = build.output().expect("cargo runs");
        assert!(built.status.success(), "{kind}: {}", String::from_utf8_lossy(&built.stderr));
        let wasm = target.join(format!("wasm32-unknown-unknown/release/my_{kind}.wasm"));
        let check = Command::new(env!("CARGO_BIN_EXE_memlab"))
            .args(["check", wasm.to_str().expect("path"), "--ops", "20000", "--size", "20000"])
            .env("MEMLAB_CACHE_DIR", Path::new(env!("CARGO_TARGET_TMPDIR")).join("memlab-cache"))
            .output()
            .expect("memlab check");
        let text = String::from_utf8_lossy(&check.stdout);
        assert!(check.status.success() && text.contains("5 of 5 properties passed"), "{kind}: {text}{}", String::from_utf8_lossy(&check.stderr));
        let bench = std::fs::read_to_string(root.join("bench.toml")).expect("bench.toml");
        assert!(bench.contains(&format!("my_{kind}.wasm")), "{bench}");
    }
    let again = Command::new(env!("CARGO_BIN_EXE_memlab")).args(["new", "memtable", "my-memtable", dir.to_str().expect("path")]).output().expect("memlab new");
    assert!(!again.status.success() && String::from_utf8_lossy(&again.stderr).contains("already exists"));
}
