//! `memlab check`: a plugin against the host's reference, property by
//! property, with the sandbox's limits on.

use super::CliError;
use super::flags::{budget, check_ops, check_size, deadline, key_value, seed};
use crate::plugin::{EngineSettings, PluginHost};
use crate::seam::{LoadCause, LoadError, SeamError};

/// The crate at `plugin` built for this machine and loaded, as the kind
/// its wasm build is.
fn native_build(host: &PluginHost, plugin: &str) -> Result<crate::seam::Strategy, CliError> {
    let not_a_crate = || SeamError::Load(LoadError::new(plugin.to_string(), LoadCause::Native("`--native` builds a crate's folder, and this is none".into())));
    let (path, sha256) = host.native_build(plugin)?.ok_or_else(not_a_crate)?;
    let kind = host.load(plugin)?.kind;
    Ok(crate::native::built(plugin, kind, crate::native::Library::open(plugin, &path, &sha256)?).map_err(SeamError::Load)?)
}

/// `memlab check`'s arguments.
#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// A bundled name, a `.wasm` file, or a plugin crate's folder (built first).
    plugin: String,
    /// Operations in all, in rounds of small fresh instances (1 to
    /// 1,000,000,000).
    #[arg(long, default_value_t = 1_000_000, value_parser = check_ops)]
    ops: u64,
    /// Distinct keys, rows or records the one big instance grows to (1
    /// to 20,000,000: about 7 GiB for an allocator).
    #[arg(long, default_value_t = 1_000_000, value_parser = check_size)]
    size: u64,
    /// The seed, decimal or `0x` hex (a failure prints its round's).
    /// Without it check draws one from the OS and prints it at the end:
    /// a plugin cannot know the rows it will be given, as it cannot in a
    /// bench.
    #[arg(long, value_parser = seed)]
    seed: Option<u64>,
    /// The epoch deadline per call, in milliseconds, 1 to 3600000.
    #[arg(long, default_value_t = 10_000.0, value_parser = deadline)]
    deadline_ms: f64,
    /// The whole check's budget, in seconds, past which every call into
    /// the plugin traps as a deadline; by default 60 s and 100 µs an op
    /// and a key of `--size` (the bundled plugins take 7-38 s at the
    /// defaults, a sixth or less of it), counted from when the plugin is
    /// built and loaded; 0 for none.
    #[arg(long, value_parser = budget)]
    budget_s: Option<f64>,
    /// A parameter for the plugin, `key=value` (repeatable).
    #[arg(long = "param", value_parser = key_value)]
    params: Vec<(String, String)>,
    /// Build the plugin if it is a crate folder: runs its build scripts
    /// and proc-macros on this machine, outside the sandbox.
    #[arg(long)]
    build: bool,
    /// Also build the crate for this machine, load it into memlab and
    /// check it again natively: its code runs outside the sandbox, with
    /// your rights (needs `--build`).
    #[arg(long, requires = "build")]
    native: bool,
    /// Run only this property (a failure's replay line names it).
    #[arg(long, value_name = "PROPERTY")]
    only: Option<String>,
}

pub(super) fn run(args: Args) -> Result<(), CliError> {
    let Args { plugin, ops, size, seed, deadline_ms, budget_s, params, build, native, only } = args;
    // A plugin applies one value; which one would be the plugin's choice.
    for (i, (key, value)) in params.iter().enumerate() {
        if let Some((_, first)) = params[..i].iter().find(|(k, _)| k == key) {
            return Err(CliError::Usage(format!("--param {key} is given twice (`{first}`, then `{value}`): give each parameter once")));
        }
    }
    let deadline = Some(std::time::Duration::from_secs_f64(deadline_ms / 1e3));
    let budget = budget_s.unwrap_or(60.0 + (ops + size) as f64 * 100e-6);
    let budget = (budget > 0.0).then(|| std::time::Duration::from_secs_f64(budget));
    let settings = EngineSettings { call_deadline: deadline, build_crates: build, native_crates: native, ..EngineSettings::default() };
    let host = PluginHost::new(settings)?;
    sayln!("{}", super::terminal::engine_line(host.settings()));
    let native = if native { Some(native_build(&host, &plugin)?) } else { None };
    let seed = match seed {
        Some(seed) => seed,
        None => getrandom::u64().map_err(|e| CliError::Usage(format!("the OS gave no randomness for check's seed ({e}): give one with --seed")))?,
    };
    let options = crate::check::CheckOptions { ops, size, native, only: only.clone(), budget, ..crate::check::CheckOptions::new(params, seed) };
    let result = crate::check::check(&host, &plugin, options)?;
    if let Some(only) = only.filter(|o| !result.offered.iter().any(|p| p == o)) {
        let offered = result.offered.iter().map(|p| format!("`{p}`")).collect::<Vec<_>>().join(", ");
        return Err(CliError::Usage(format!("--only {}: a {} plugin has no such property (it has: {offered})", only, result.kind)));
    }
    say!("{}", result.render());
    sayln!("seed {seed:#x} (`--seed {seed:#x}` checks with these rows again)");
    if !result.passed() {
        return Err(CliError::CheckFailed { plugin: result.plugin.clone(), failed: result.failed(), total: result.total() });
    }
    Ok(())
}
