//! `memlab list`: the bundled plugins, with the version each describes.

use std::sync::Arc;

use super::CliError;
use crate::plugin::{self, EngineSettings, PluginHost};
use crate::registry;

pub(super) fn run() -> Result<(), CliError> {
    let host: Arc<PluginHost> = PluginHost::new(EngineSettings::default())?;
    sayln!("{:<12} {:<11} {:<8} component sha256", "name", "kind", "version");
    for b in registry::all() {
        let plugin = host.load_as(b.name, b.kind)?;
        sayln!("{:<12} {:<11} {:<8} {}", b.name, b.kind.to_string(), described_version(&host, &plugin)?, plugin.sha256);
    }
    Ok(())
}

/// The version a bundled plugin's `describe()` gives (its own crate's).
fn described_version(host: &Arc<PluginHost>, plugin: &Arc<plugin::Plugin>) -> Result<String, CliError> {
    Ok(crate::check::describe(host, plugin, &[])?.version)
}
