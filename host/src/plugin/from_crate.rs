//! A plugin given as its crate's folder: memlab builds it for wasm32 with
//! the crate's own release profile, so `memlab check .` and a bench config
//! that names the folder need no build step of the author's.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::wasm_target::{OUTER_CARGO_VARS, WASM_TARGET as TARGET, ensure_wasm_target};
use crate::seam::LoadError;
use crate::seam::text::for_terminal;

/// Builds the crate at `dir` and returns its `.wasm` and the bytes it held
/// when the build ended.
pub fn build(spec: &str, dir: &Path) -> Result<(PathBuf, Vec<u8>), LoadError> {
    let fail = |detail: String| LoadError::Build { plugin: spec.to_string(), detail };
    // Absolute: cargo runs in the crate's folder, where `./crate` means
    // something else.
    let dir = &std::path::absolute(dir).map_err(|e| fail(format!("{}: {e}", dir.display())))?;
    let cargo = env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    if let Some(command) = ensure_wasm_target(dir).map_err(fail)? {
        eprintln!("memlab: installed the {TARGET} target (`{command}`) to build {spec}");
    }
    let mut cmd = Command::new(&cargo);
    // In the crate's folder, so rustup picks the toolchain it names.
    cmd.current_dir(dir)
        .args(["build", "--release", "--target", TARGET, "--message-format=json-render-diagnostics", "--manifest-path"])
        .arg(dir.join("Cargo.toml"));
    // Flags of an outer cargo (memlab run by `cargo run` or a test) are for
    // the host; a CARGO_TARGET_DIR of the author's own is kept.
    for var in OUTER_CARGO_VARS {
        cmd.env_remove(var);
    }
    // Every crate memlab builds shares one target folder in memlab's cache,
    // so a second crate's first build reuses the SDK and wit-bindgen built
    // for the first (seconds, not minutes).
    let shared = env::var_os("CARGO_TARGET_DIR").is_none().then(super::cache::default_dir).flatten().map(|d| d.join("plugin-target"));
    if let Some(shared) = &shared {
        cmd.env("CARGO_TARGET_DIR", shared);
    }
    // Crates of one package name build to one path of a shared target:
    // another memlab's build could replace this crate's `.wasm` between
    // our build and our read, so both happen under a lock of the folder.
    let _locked = match shared.clone().or_else(|| env::var_os("CARGO_TARGET_DIR").map(PathBuf::from)) {
        Some(target) => Some(lock(&target).map_err(|e| fail(format!("locking {}: {e}", target.display())))?),
        None => None,
    };
    eprintln!(
        "memlab: building {} (cargo build --release --target {TARGET}): its build scripts and proc-macros run on this machine, outside the sandbox",
        for_terminal(spec)
    );
    let out = cmd.output().map_err(|e| fail(format!("running {cargo}: {e}")))?;
    // Cargo's own report, warnings of build scripts included, escaped.
    let stderr = String::from_utf8_lossy(&out.stderr);
    if out.status.success() && !stderr.trim().is_empty() {
        eprint!("{}", for_terminal(&stderr));
    }
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<&str> = stderr.lines().rev().take(20).collect();
        return Err(fail(format!("cargo build failed ({}):\n{}", out.status, tail.into_iter().rev().collect::<Vec<_>>().join("\n"))));
    }
    // The last artifact with a .wasm is the crate's cdylib.
    let wasm = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|msg| msg["reason"] == "compiler-artifact")
        .flat_map(|msg| msg["filenames"].as_array().cloned().unwrap_or_default())
        .filter_map(|f| f.as_str().map(PathBuf::from))
        .rfind(|f| f.extension().is_some_and(|e| e == "wasm"));
    let wasm = wasm.ok_or_else(|| fail("cargo built no .wasm: is the crate a `cdylib` (as `memlab new` writes it)?".into()))?;
    let bytes = crate::seam::read_bounded(&wasm, super::MAX_PLUGIN_BYTES, "plugin file").map_err(|e| fail(format!("{}: {e}", wasm.display())))?;
    Ok((wasm, bytes))
}

/// An exclusive lock of `target`'s memlab lock file, held while the
/// returned file is open.
fn lock(target: &Path) -> std::io::Result<std::fs::File> {
    std::fs::create_dir_all(target)?;
    let file = std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(target.join("memlab-build.lock"))?;
    match file.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => {
            eprintln!("memlab: waiting for another memlab's build in {}", for_terminal(&target.display().to_string()));
            file.lock()?;
        }
        Err(std::fs::TryLockError::Error(e)) => return Err(e),
    }
    Ok(file)
}
