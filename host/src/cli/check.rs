//! `memlab check`: a plugin against the host's reference, property by
//! property, with the sandbox's limits on.

use super::CliError;
use super::flags::{check_ops, check_size, deadline, key_value, seed};
use crate::plugin::{EngineSettings, PluginHost};

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
    #[arg(long, default_value = "0x6d656d6c6162", value_parser = seed)]
    seed: u64,
    /// The epoch deadline per call, in milliseconds, 1 to 3600000.
    #[arg(long, default_value_t = 10_000.0, value_parser = deadline)]
    deadline_ms: f64,
    /// A parameter for the plugin, `key=value` (repeatable).
    #[arg(long = "param", value_parser = key_value)]
    params: Vec<(String, String)>,
    /// Build the plugin if it is a crate folder: runs its build scripts
    /// and proc-macros on this machine, outside the sandbox.
    #[arg(long)]
    build: bool,
}

pub(super) fn run(args: Args) -> Result<(), CliError> {
    let Args { plugin, ops, size, seed, deadline_ms, params, build } = args;
    let settings =
        EngineSettings { call_deadline: Some(std::time::Duration::from_secs_f64(deadline_ms / 1e3)), build_crates: build, ..EngineSettings::default() };
    let host = PluginHost::new(settings)?;
    sayln!("{}", super::terminal::engine_line(host.settings()));
    let result = crate::check::check(&host, &plugin, crate::check::CheckOptions { ops, size, ..crate::check::CheckOptions::new(params, seed) })?;
    say!("{}", result.render());
    let failed = result.properties.iter().filter(|p| p.failure.is_some()).count();
    if failed > 0 {
        return Err(CliError::CheckFailed { plugin: result.plugin, failed, total: result.properties.len() });
    }
    Ok(())
}
