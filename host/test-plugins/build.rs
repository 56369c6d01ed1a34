//! Builds the test plugins (`plugins/test-*`) for wasm32-unknown-unknown
//! and wraps each core module as a component, into `OUT_DIR` and
//! `target/test-plugins/` (a path a bench config can name). Only the
//! tests depend on this crate: `cargo build` of memlab never runs it.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, exit};

include!("../src/plugin/wasm_target.rs");
include!("../src/plugin/build_plugins.rs");

/// (crate, file name).
const PLUGINS: [(&str, &str); 4] =
    [("test-hostile", "hostile"), ("test-liar-alloc", "liar-alloc"), ("test-liar-flush", "liar-flush"), ("test-liar-log", "liar-log")];

fn main() {
    let manifest_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| fail("cargo sets CARGO_MANIFEST_DIR")));
    let workspace = manifest_dir.join("../..");
    let out_dir = PathBuf::from(env::var("OUT_DIR").unwrap_or_else(|_| fail("cargo sets OUT_DIR")));
    for watched in ["plugins", "wit", "Cargo.toml"] {
        println!("cargo:rerun-if-changed={}", workspace.join(watched).display());
    }
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=../src/plugin/build_plugins.rs");
    match ensure_wasm_target(&workspace) {
        Ok(Some(command)) => println!("cargo:warning=memlab: installed the {WASM_TARGET} target (`{command}`) to build the test plugins"),
        Ok(None) => {}
        Err(e) => fail(&e),
    }
    // The bundled plugins' directory: its lock serializes this build with
    // host/build.rs's, and the SDK is built once for both.
    let target_dir = env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| workspace.join("target"));
    let plugins_dir = target_dir.join("wasm-plugins");
    build_plugins(&workspace, &plugins_dir, PLUGINS.iter().map(|(krate, _)| *krate), "the test plugins");
    let modules = plugins_dir.join(WASM_TARGET).join("plugin");
    let shared = target_dir.join("test-plugins");
    fs::create_dir_all(&shared).unwrap_or_else(|e| fail(&format!("creating {}: {e}", shared.display())));
    for (krate, name) in PLUGINS {
        let component = componentize(&modules.join(format!("{}.wasm", krate.replace('-', "_"))));
        for path in [out_dir.join(format!("{name}.wasm")), shared.join(format!("{name}.wasm"))] {
            fs::write(&path, &component).unwrap_or_else(|e| fail(&format!("writing {}: {e}", path.display())));
        }
    }
    println!("cargo:rustc-env=MEMLAB_TEST_PLUGINS={}", out_dir.display());
    println!("cargo:rustc-env=MEMLAB_CORE_MODULES={}", modules.display());
}
