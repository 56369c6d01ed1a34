//! Builds the test plugins (`plugins/test-*`) for wasm32-unknown-unknown
//! and wraps each core module as a component, into `OUT_DIR` and
//! `target/test-plugins/` (a path a bench config can name). Only the
//! tests depend on this crate: `cargo build` of memlab never runs it.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, exit};

include!("../src/plugin/wasm_target.rs");

/// (crate, file name).
const PLUGINS: [(&str, &str); 3] = [("test-hostile", "hostile"), ("test-liar-alloc", "liar-alloc"), ("test-liar-flush", "liar-flush")];

fn main() {
    let manifest_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| fail("cargo sets CARGO_MANIFEST_DIR")));
    let workspace = manifest_dir.join("../..");
    let out_dir = PathBuf::from(env::var("OUT_DIR").unwrap_or_else(|_| fail("cargo sets OUT_DIR")));
    for watched in ["plugins", "wit", "Cargo.toml"] {
        println!("cargo:rerun-if-changed={}", workspace.join(watched).display());
    }
    println!("cargo:rerun-if-changed=build.rs");
    match ensure_wasm_target(&workspace) {
        Ok(Some(command)) => println!("cargo:warning=memlab: installed the {WASM_TARGET} target (`{command}`) to build the test plugins"),
        Ok(None) => {}
        Err(e) => fail(&e),
    }
    // The bundled plugins' directory: its lock serializes this build with
    // host/build.rs's, and the SDK is built once for both.
    let target_dir = env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| workspace.join("target"));
    let plugins_dir = target_dir.join("wasm-plugins");
    build(&workspace, &plugins_dir);
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

fn build(workspace: &Path, target_dir: &Path) {
    let cargo = env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(workspace).args(["build", "--profile", "plugin", "--target", WASM_TARGET, "--target-dir"]).arg(target_dir);
    for (krate, _) in PLUGINS {
        cmd.args(["-p", krate]);
    }
    // The outer build's flags, jobserver, target and target dir are for the host.
    for var in OUTER_CARGO_VARS.iter().chain(&["CARGO_TARGET_DIR"]) {
        cmd.env_remove(var);
    }
    let status = cmd.status().unwrap_or_else(|e| fail(&format!("running cargo for the test plugins: {e}")));
    if !status.success() {
        fail(&format!("building the test plugins for {WASM_TARGET} failed ({status})"));
    }
}

fn componentize(module_path: &Path) -> Vec<u8> {
    let module = fs::read(module_path).unwrap_or_else(|e| fail(&format!("reading {}: {e}", module_path.display())));
    wit_component::ComponentEncoder::default()
        .module(&module)
        .and_then(|encoder| encoder.validate(true).encode())
        .unwrap_or_else(|e| fail(&format!("wrapping {} as a component: {e:#}", module_path.display())))
}

fn fail(message: &str) -> ! {
    eprintln!("error: {message}");
    exit(1)
}
