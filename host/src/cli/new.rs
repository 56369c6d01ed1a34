//! `memlab new` (a plugin crate of a kind, outside memlab's tree) and
//! `memlab bindings` (C bindings for a kind's world).

use std::path::PathBuf;

use super::CliError;

/// `memlab new`'s arguments.
#[derive(Debug, clap::Args)]
pub(super) struct NewArgs {
    /// The kind of strategy.
    #[arg(value_parser = super::flags::kind())]
    kind: crate::seam::Kind,
    /// The plugin's name (lowercase, digits, `-`).
    name: String,
    /// Where to put the crate's folder.
    #[arg(default_value = ".")]
    dir: PathBuf,
}

/// `memlab bindings`'s arguments.
#[derive(Debug, clap::Args)]
pub(super) struct BindingsArgs {
    /// The language: only `c` for now.
    #[arg(value_parser = ["c"])]
    language: String,
    /// The kind of strategy.
    #[arg(value_parser = super::flags::kind())]
    kind: crate::seam::Kind,
    /// Where to write them.
    dir: PathBuf,
}

pub(super) fn new(args: NewArgs) -> Result<(), CliError> {
    let root = crate::scaffold::scaffold(args.kind, &args.name, &args.dir)?;
    sayln!("Wrote {}. Then, in it (`--build`: memlab builds the crate, running its build scripts on this machine):", root.display());
    sayln!("  memlab check . --build");
    sayln!("  memlab bench bench.toml --build");
    Ok(())
}

pub(super) fn bindings(args: BindingsArgs) -> Result<(), CliError> {
    for path in crate::scaffold::c_bindings(args.kind, &args.dir)? {
        sayln!("Wrote {}", path.display());
    }
    Ok(())
}
