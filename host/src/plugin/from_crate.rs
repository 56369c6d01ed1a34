//! A plugin given as its crate's folder: memlab builds it for wasm32 with
//! the crate's own release profile, so `memlab check .` and a bench config
//! that names the folder need no build step of the author's; with
//! `--native`, also as a shared library for this machine.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::wasm_target::{OUTER_CARGO_VARS, WASM_TARGET as TARGET, ensure_wasm_target};
use crate::seam::{LoadCause, LoadError};
use crate::util::text::for_terminal;

/// What a build is for.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// The wasm component, run in the sandbox.
    Wasm,
    /// A shared library for this machine, with the SDK's native entry
    /// (`--native`), loaded into memlab itself.
    Host,
}

impl Target {
    /// The artifact's extension.
    fn extension(self) -> &'static str {
        match self {
            Target::Wasm => "wasm",
            Target::Host => env::consts::DLL_EXTENSION,
        }
    }
}

/// Builds the crate at `dir` and returns its `.wasm`, or its shared
/// library, and the bytes it held when the build ended.
pub fn build(spec: &str, dir: &Path, target: Target) -> Result<(PathBuf, Vec<u8>), LoadError> {
    let fail = |detail: String| LoadError::new(spec.to_string(), LoadCause::Build(detail));
    // Absolute: cargo runs in the crate's folder, where `./crate` means
    // something else.
    let dir = &std::path::absolute(dir).map_err(|e| fail(format!("{}: {e}", dir.display())))?;
    let cargo = env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let (mut cmd, shown) = command(&cargo, spec, dir, target).map_err(fail)?;
    // Flags of an outer cargo (memlab run by `cargo run` or a test) are for
    // the host; a CARGO_TARGET_DIR of the author's own is kept.
    for var in OUTER_CARGO_VARS {
        cmd.env_remove(var);
    }
    // Every crate memlab builds shares one target folder in memlab's cache,
    // so a second crate's first build reuses the SDK and wit-bindgen built
    // for the first (seconds, not minutes).
    // Only in a cache folder of this user's alone: a build planted in a
    // target folder others may write would run as the crate's.
    let cache = env::var_os("CARGO_TARGET_DIR").is_none().then(super::cache::default_dir).flatten().filter(|d| super::cache::private(d));
    let shared = cache.map(|d| d.join("plugin-target"));
    if let Some(shared) = &shared {
        cmd.env("CARGO_TARGET_DIR", shared);
    }
    // Crates of one package name build to one path of a shared target:
    // another memlab's build could replace this crate's artifact between
    // our build and our read, so both happen under a lock of the folder.
    let _locked = match shared.clone().or_else(|| env::var_os("CARGO_TARGET_DIR").map(PathBuf::from)) {
        Some(target) => Some(lock(&target).map_err(|e| fail(format!("locking {}: {e}", target.display())))?),
        None => None,
    };
    let outside = match target {
        Target::Wasm => "its build scripts and proc-macros run on this machine, outside the sandbox",
        Target::Host => "its build scripts, its proc-macros and then its own code run on this machine, outside the sandbox",
    };
    eprintln!("memlab: building {} ({shown}): {outside}", for_terminal(spec));
    let (artifact, fresh) = run_cargo(&mut cmd, &cargo, target).map_err(fail)?;
    // Crates of one package name build to one artifact path, and cargo
    // calls one fresh while the file holds the other's build: a fresh
    // artifact that another crate folder built last is built again here,
    // never read.
    let owner = artifact.with_extension(format!("{}.memlab-built-from", target.extension()));
    let ours = dir.canonicalize().unwrap_or_else(|_| dir.clone()).display().to_string();
    let artifact = if !fresh || std::fs::read_to_string(&owner).is_ok_and(|o| o == ours) {
        artifact
    } else {
        let deps = artifact.parent().map(|p| p.join("deps")).zip(artifact.file_name()).map(|(deps, name)| deps.join(name));
        for stale in [Some(artifact.clone()), deps].into_iter().flatten() {
            let _ = std::fs::remove_file(stale);
        }
        let (artifact, fresh) = run_cargo(&mut cmd, &cargo, target).map_err(fail)?;
        if fresh {
            return Err(fail(format!("cargo did not build {} again after another crate's build took its path", artifact.display())));
        }
        artifact
    };
    crate::util::files::write_whole(&owner, ours.as_bytes()).map_err(|e| fail(format!("{}: {e}", owner.display())))?;
    let bytes = crate::util::read_bounded(&artifact, super::MAX_PLUGIN_BYTES, "plugin file").map_err(|e| fail(format!("{}: {e}", artifact.display())))?;
    Ok((artifact, bytes))
}

/// Runs the build: the crate's artifact, and whether cargo found it fresh.
fn run_cargo(cmd: &mut Command, cargo: &str, target: Target) -> Result<(PathBuf, bool), String> {
    let out = crate::util::child::output(cmd).map_err(|e| format!("running {cargo}: {e}"))?;
    // Cargo's own report, warnings of build scripts included, escaped.
    let stderr = String::from_utf8_lossy(&out.stderr);
    if out.status.success() && !stderr.trim().is_empty() {
        eprint!("{}", for_terminal(&stderr));
    }
    if !out.status.success() {
        let tail: Vec<&str> = stderr.lines().rev().take(20).collect();
        return Err(format!("cargo failed ({}):\n{}", out.status, tail.into_iter().rev().collect::<Vec<_>>().join("\n")));
    }
    artifact(&out.stdout, target).ok_or_else(|| format!("cargo built no .{}: is the crate a `cdylib` (as `memlab new` writes it)?", target.extension()))
}

/// The cargo command that builds the crate in `dir` for `target`, and how
/// it is shown.
fn command(cargo: &str, spec: &str, dir: &Path, target: Target) -> Result<(Command, String), String> {
    let mut cmd = Command::new(cargo);
    // In the crate's folder, so rustup picks the toolchain it names.
    cmd.current_dir(dir);
    let shown = match target {
        Target::Wasm => {
            if let Some(command) = ensure_wasm_target(dir)? {
                eprintln!("memlab: installed the {TARGET} target (`{command}`) to build {spec}");
            }
            cmd.args(["build", "--release", "--target", TARGET]);
            format!("cargo build --release --target {TARGET}")
        }
        Target::Host => {
            // Unwinding, whatever the crate's profile says: a panic must
            // come back through the table as a status, not abort memlab.
            cmd.args([
                "--config",
                "profile.release.panic=\"unwind\"",
                "rustc",
                "--release",
                "--lib",
                "--crate-type",
                "cdylib",
                "--features",
                "memlab-sdk/native-entry",
            ]);
            "cargo rustc --release --lib --crate-type cdylib --features memlab-sdk/native-entry".to_string()
        }
    };
    cmd.args(["--message-format=json-render-diagnostics", "--manifest-path"]).arg(dir.join("Cargo.toml"));
    Ok((cmd, shown))
}

/// The last artifact cargo's messages name with the target's extension
/// (the crate's cdylib), and whether cargo found it fresh.
fn artifact(stdout: &[u8], target: Target) -> Option<(PathBuf, bool)> {
    String::from_utf8_lossy(stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|msg| msg["reason"] == "compiler-artifact")
        .flat_map(|msg| {
            let fresh = msg["fresh"].as_bool().unwrap_or(false);
            msg["filenames"].as_array().cloned().unwrap_or_default().into_iter().filter_map(move |f| f.as_str().map(|f| (PathBuf::from(f), fresh)))
        })
        .rfind(|(f, _)| f.extension().is_some_and(|e| e == target.extension()))
}

/// Keeps a native build's bytes as `<dir>/<sha256>.<ext>`, written whole
/// then renamed, so a later build of another crate of the same package
/// name (one artifact path in the shared target) never changes what a
/// loaded library's path holds. `dir` must be a folder only this user
/// may write: a library planted there would run inside memlab. Returns
/// the path and the sha256.
pub fn keep_native(spec: &str, dir: &Path, bytes: &[u8]) -> Result<(PathBuf, String), LoadError> {
    let fail = |detail: String| LoadError::new(spec.to_string(), LoadCause::Build(format!("keeping its build in {}: {detail}", dir.display())));
    crate::util::files::private_dir(dir).map_err(|why| fail(format!("{why}: memlab loads native builds only from a folder of yours alone")))?;
    let sha256 = super::load::sha256_hex(bytes);
    let path = dir.join(format!("{sha256}.{}", env::consts::DLL_EXTENSION));
    let kept = crate::input::read(&path, super::MAX_PLUGIN_BYTES, "native library").is_ok_and(|b| super::load::sha256_hex(&b) == sha256);
    if !kept {
        crate::util::files::write_whole(&path, bytes).map_err(|e| fail(e.to_string()))?;
    }
    Ok((path, sha256))
}

/// Where native builds are kept when there is no cache folder: a folder
/// of this user's own under the temporary directory.
pub fn private_fallback() -> PathBuf {
    env::temp_dir().join(format!("memlab-{}", nix::unistd::geteuid())).join("native")
}

/// An exclusive lock of `target`'s memlab lock file, held while the
/// returned file is open.
fn lock(target: &Path) -> std::io::Result<std::fs::File> {
    std::fs::create_dir_all(target)?;
    let file = crate::util::files::lock_file(&target.join("memlab-build.lock"))?;
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

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::keep_native;

    #[test]
    fn native_builds_are_kept_only_in_a_folder_of_this_users_alone() {
        let base = tempfile::tempdir().expect("temp");
        let dir = base.path().join("native");
        let (path, _) = keep_native("p", &dir, b"the build").expect("kept");
        assert_eq!(std::fs::metadata(&dir).expect("dir").permissions().mode() & 0o777, 0o700);
        // A file planted under the build's name is replaced by the build.
        std::fs::write(&path, b"planted").expect("plant");
        keep_native("p", &dir, b"the build").expect("kept again");
        assert_eq!(std::fs::read(&path).expect("read"), b"the build");
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).expect("chmod");
        let refused = keep_native("p", &dir, b"the build").expect_err("others may write there").to_string();
        assert!(refused.contains("other users may write to it (mode 777)"), "{refused}");
        assert!(refused.contains("memlab loads native builds only from a folder of yours alone"), "{refused}");
    }
}
