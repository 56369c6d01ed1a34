//! `memlab stream`: a profile's stream written to a file a bench can
//! replay (`stream = "file"` in the workload).

use std::path::PathBuf;

use super::CliError;

/// `memlab stream`'s arguments.
#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// A profile (TOML).
    profile: PathBuf,
    /// The stream file to write.
    #[arg(short, long)]
    output: PathBuf,
}

pub(super) fn run(args: Args) -> Result<(), CliError> {
    let profile = crate::config::load_profile(&args.profile)?;
    let (fingerprint, ops) = crate::workload::write_stream_file(&profile, &args.output)?;
    sayln!("{}: {} ops of profile `{}` over {} threads, fingerprint {fingerprint}", args.output.display(), ops, profile.name, profile.threads);
    Ok(())
}
