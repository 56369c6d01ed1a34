//! A command's failure, for `main` to print.

use crate::report;

/// A command's failure, typed: each names its file, plugin or operation.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The config.
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    /// A plugin's creation or call.
    #[error(transparent)]
    Plugin(#[from] crate::seam::SeamError),
    /// A plugin's load.
    #[error(transparent)]
    Load(#[from] crate::seam::LoadError),
    /// A stream file.
    #[error(transparent)]
    Stream(#[from] crate::workload::StreamFileError),
    /// A file the command writes or reads.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// A record.
    #[error(transparent)]
    Record(#[from] crate::record::RecordError),
    /// `memlab new` or `memlab bindings`.
    #[error(transparent)]
    Scaffold(#[from] crate::scaffold::ScaffoldError),
    /// `show -b`'s pairing.
    #[error(transparent)]
    Pairing(#[from] report::PairingError),
    /// `show -b` on records of different workloads.
    #[error(transparent)]
    WorkloadsDiffer(#[from] report::WorkloadsDiffer),
    /// The bench session.
    #[error(transparent)]
    Session(#[from] crate::session::SessionError),
    /// `memlab verify` found damage.
    #[error("{broken} of {checked} variant rounds no longer hold what the run verified (their segments or their kept log)")]
    VerifyFailed {
        /// Rounds whose segments or kept log are damaged.
        broken: usize,
        /// Rounds checked.
        checked: usize,
    },
    /// `memlab verify` cannot check a run.
    #[error("memlab verify: {0}")]
    Verify(String),
    /// `memlab check` found failing properties.
    #[error("{plugin}: {failed} of {total} properties failed")]
    CheckFailed {
        /// The plugin.
        plugin: String,
        /// Properties failed.
        failed: usize,
        /// Properties checked.
        total: usize,
    },
    /// A sweep's points do not merge.
    #[error(transparent)]
    Sweep(Box<crate::record::sweep::SweepError>),
    /// Flags or runs that do not go together.
    #[error("{0}")]
    Usage(String),
}

impl From<crate::record::sweep::SweepError> for CliError {
    fn from(e: crate::record::sweep::SweepError) -> Self {
        CliError::Sweep(Box::new(e))
    }
}

impl CliError {
    /// The process's exit status: 4 when a run completed but its record
    /// is not where it was to go, 2 for flags that do not go together (as
    /// clap's usage errors), 1 for any other failure.
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::Session(crate::session::SessionError::NotSaved { .. }) => 4,
            // As clap's own usage errors.
            CliError::Usage(_) => 2,
            _ => 1,
        }
    }
}

pub(super) fn io(path: &std::path::Path) -> impl FnOnce(std::io::Error) -> CliError + '_ {
    move |source| CliError::Io { path: path.display().to_string(), source }
}
