// How plugins are built with cargo, shared by host/build.rs (the bundled
// plugins), which `include!`s this file, and `plugin::from_crate` (an
// author's crate). Plain comments: an included file cannot hold `//!`;
// the includer imports `env`, `Path`, `PathBuf` and `Command`.

/// The target plugins build for: no WASI, so no WASI imports.
pub const WASM_TARGET: &str = "wasm32-unknown-unknown";

/// What an outer cargo sets for its own build (flags, jobserver, target)
/// and a nested `cargo build` of wasm plugins must not inherit.
pub const OUTER_CARGO_VARS: [&str; 8] =
    ["CARGO_ENCODED_RUSTFLAGS", "RUSTFLAGS", "CARGO_BUILD_RUSTFLAGS", "CARGO_BUILD_TARGET", "CARGO_MAKEFLAGS", "MAKEFLAGS", "MFLAGS", "CARGO_PRIMARY_PACKAGE"];

/// rustup installs a toolchain's targets only when auto-install is on
/// (`RUSTUP_AUTO_INSTALL=0` leaves them out): adds `WASM_TARGET` to the
/// toolchain that builds in `dir` when it lacks it. `Ok(Some(command))`
/// says that it ran rustup, and how.
pub fn ensure_wasm_target(dir: &Path) -> Result<Option<String>, String> {
    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let out = Command::new(&rustc).args(["--print", "sysroot"]).current_dir(dir).output().map_err(|e| format!("running {rustc} --print sysroot: {e}"))?;
    let sysroot = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    if sysroot.join("lib/rustlib").join(WASM_TARGET).exists() {
        return Ok(None);
    }
    let toolchain = env::var("RUSTUP_TOOLCHAIN").ok();
    let mut command = format!("rustup target add {WASM_TARGET}");
    if let Some(toolchain) = &toolchain {
        command.push_str(&format!(" --toolchain {toolchain}"));
    }
    let mut rustup = Command::new("rustup");
    rustup.args(command.split(' ').skip(1)).current_dir(dir);
    match rustup.status() {
        Ok(status) if status.success() => Ok(Some(command)),
        Ok(status) => Err(format!("`{command}` failed ({status}); run it yourself, then try again")),
        Err(e) => Err(format!("the {WASM_TARGET} target is missing from {} and rustup cannot run ({e}); install the target", sysroot.display())),
    }
}
