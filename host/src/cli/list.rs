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
    use crate::seam::Kind;
    let pool = || Arc::new(crate::pool::MemoryPool::new(1 << 30, crate::pool::PoolMode::FetchAdd));
    let description = match plugin.kind {
        Kind::Memtable => host.shard(plugin, &[], &host.load_as("per-row", Kind::Allocator)?, &[], pool(), 0)?.describe()?.0,
        Kind::Allocator => host.shard(&host.load_as("btree", Kind::Memtable)?, &[], plugin, &[], pool(), 0)?.describe()?.1,
        Kind::Serializer => host.serializer(plugin, &[], 0)?.describe()?,
        Kind::CommitLog => host.log_format(plugin, &[], 0)?.describe()?,
    };
    Ok(description.version)
}
