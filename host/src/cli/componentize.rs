//! `memlab componentize`: a core wasm module carrying a memlab world's
//! component type, wrapped into a component and checked.

use std::path::PathBuf;

use super::CliError;
use super::error::io;
use crate::plugin::{self, EngineSettings, PluginHost};

/// `memlab componentize`'s arguments.
#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// The core module (`target/wasm32-unknown-unknown/release/*.wasm`).
    input: PathBuf,
    /// Where to write the component.
    #[arg(short, long)]
    output: PathBuf,
}

pub(super) fn run(args: Args) -> Result<(), CliError> {
    let Args { input, output } = args;
    let bytes = crate::util::read_bounded(&input, plugin::MAX_PLUGIN_BYTES, "plugin file").map_err(io(&input))?;
    let component = plugin::to_component(&input.display().to_string(), &bytes)?;
    let host = PluginHost::new(EngineSettings { cache_dir: None, ..EngineSettings::default() })?;
    let checked = host.load_bytes(&input.display().to_string(), plugin::Source::File(input.display().to_string()), &component)?;
    crate::util::files::write_whole(&output, &component).map_err(io(&output))?;
    sayln!("{}: {} plugin, sha256 {}", output.display(), checked.kind, checked.sha256);
    Ok(())
}
