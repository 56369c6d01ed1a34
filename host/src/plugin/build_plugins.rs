// Building plugin crates for wasm32 from a build script and wrapping
// their core modules as components, shared by host/build.rs (the bundled
// plugins) and host/test-plugins/build.rs (the test plugins), which
// `include!` it after `wasm_target.rs`. Plain comments: an included file
// cannot hold `//!`; the includer imports `env`, `fs`, `Path`,
// `Command` and `exit`.

/// Ends the build script with `message`.
fn fail(message: &str) -> ! {
    eprintln!("error: {message}");
    exit(1)
}

/// `cargo build --profile plugin --target wasm32-unknown-unknown` of
/// `crates` into `target_dir`, without the outer build's flags; `what`
/// names them in a failure.
fn build_plugins<'c>(workspace: &Path, target_dir: &Path, crates: impl IntoIterator<Item = &'c str>, what: &str) {
    let cargo = env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(workspace).args(["build", "--profile", "plugin", "--target", WASM_TARGET, "--target-dir"]).arg(target_dir);
    for krate in crates {
        cmd.args(["-p", krate]);
    }
    // The outer build's flags, jobserver, target and target dir are for the host.
    for var in OUTER_CARGO_VARS.iter().chain(&["CARGO_TARGET_DIR"]) {
        cmd.env_remove(var);
    }
    let status = cmd.status().unwrap_or_else(|e| fail(&format!("running cargo for {what}: {e}")));
    if !status.success() {
        fail(&format!("building {what} for {WASM_TARGET} failed ({status})"));
    }
}

/// A built core module wrapped as a component.
fn componentize(module_path: &Path) -> Vec<u8> {
    let module = fs::read(module_path).unwrap_or_else(|e| fail(&format!("reading {}: {e}", module_path.display())));
    wit_component::ComponentEncoder::default()
        .module(&module)
        .and_then(|encoder| encoder.validate(true).encode())
        .unwrap_or_else(|e| fail(&format!("wrapping {} as a component: {e:#}", module_path.display())))
}
