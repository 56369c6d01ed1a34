//! Shared helpers.

use std::sync::{Arc, OnceLock};

use memlab::plugin::{EngineSettings, PluginHost};

/// One engine for the whole test binary; compiled plugins are cached on
/// disk under `target/`, so only the first run pays Cranelift.
pub fn host() -> Arc<PluginHost> {
    static HOST: OnceLock<Arc<PluginHost>> = OnceLock::new();
    Arc::clone(HOST.get_or_init(|| {
        let cache = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("memlab-cache");
        PluginHost::new(EngineSettings { cache_dir: Some(cache), ..EngineSettings::default() }).expect("engine")
    }))
}

/// A fresh directory of its own under the test tmpdir, named after the
/// test: two runs sharing a machine never share one. It is kept (not
/// removed on drop) so a failed test's files can be read afterwards.
pub fn scratch(name: &str) -> std::path::PathBuf {
    tempfile::Builder::new().prefix(&format!("{name}-")).tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("scratch dir").keep()
}

/// The salt of every bench a test runs through `options`.
pub const TEST_SALT: &str = "7e57c0ffee0000000000000000000049";

/// Bench options for tests: quiet, one repeat unless the config says.
pub fn options(run_dir: std::path::PathBuf) -> memlab::bench::BenchOptions {
    memlab::bench::BenchOptions {
        run_dir,
        keep_segments: false,
        log_flushes: false,
        intervals: false,
        repeats: None,
        decide: None,
        interrupt: None,
        watchdog: None,
        profile: None,
        // One salt for every test run, so that two runs compared in a test
        // replay one stream, as `--salt` does; the CLI's tests draw theirs.
        salt: Some(TEST_SALT.parse().expect("a salt")),
    }
}

/// A host with the sandbox's limits on: a 2 s deadline, a 256 MiB cap.
pub fn strict_host() -> Arc<PluginHost> {
    static HOST: OnceLock<Arc<PluginHost>> = OnceLock::new();
    Arc::clone(HOST.get_or_init(|| {
        let cache = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("memlab-cache-strict");
        let settings = EngineSettings {
            call_deadline: Some(std::time::Duration::from_secs(2)),
            memory_cap: 256 << 20,
            cache_dir: Some(cache),
            ..EngineSettings::default()
        };
        PluginHost::new(settings).expect("engine")
    }))
}

/// The hostile test plugin (`plugins/test-hostile`).
pub fn hostile_plugin() -> String {
    memlab_test_plugins::path("hostile").display().to_string()
}

/// A liar test plugin: `liar-alloc` or `liar-flush` (`plugins/test-liar-*`).
pub fn liar_plugin(name: &str) -> String {
    memlab_test_plugins::path(name).display().to_string()
}

/// `memlab args...`, to run in the workspace with the tests' cache.
pub fn command(args: &[&str]) -> std::process::Command {
    let workspace = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("workspace");
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_memlab"));
    command.args(args).current_dir(workspace).env("MEMLAB_CACHE_DIR", std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("memlab-cache"));
    command
}

/// Runs `memlab args...`; (success, stdout + stderr). A panic fails the test.
pub fn memlab(args: &[&str]) -> (bool, String) {
    let out = command(args).output().expect("memlab runs");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(!text.contains("panicked"), "memlab {args:?} panicked:\n{text}");
    (out.status.success(), text)
}

/// A seed drawn afresh each run (pebble's way), so a property or
/// metamorphic test explores beyond its fixed cases; printed with the
/// command that replays it, which a failing test's output shows.
/// `MEMLAB_TEST_SEED` fixes it.
pub fn drawn_seed(test: &str) -> u64 {
    let seed = std::env::var("MEMLAB_TEST_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(|| {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        // Folded to 32 bits: a seed a person can type.
        (nanos as u64 ^ (nanos >> 64) as u64 ^ u64::from(std::process::id())) & 0xffff_ffff
    });
    eprintln!("{test}: seed {seed} (replay: MEMLAB_TEST_SEED={seed} cargo test {test})");
    seed
}
