//! What ends a bench session early, typed: the CLI prints it, a test
//! matches it.

/// A session's failure.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// A plugin could not be created or called outside a variant.
    #[error(transparent)]
    Plugin(#[from] crate::seam::SeamError),
    /// A plugin could not be loaded.
    #[error(transparent)]
    Load(#[from] crate::seam::LoadError),
    /// The workload's stream file could not be read.
    #[error(transparent)]
    Stream(#[from] crate::workload::StreamFileError),
    /// A file of the run could not be written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// A record could not be read or merged.
    #[error(transparent)]
    Record(#[from] crate::record::RecordError),
    /// Some variants failed; their records say why.
    #[error("{0} of {1} runs failed")]
    VariantsFailed(usize, usize),
    /// `--out` cannot hold the run's directory.
    #[error("--out {path}: cannot create the run's directory: {detail}")]
    Out {
        /// The directory.
        path: String,
        /// Why not.
        detail: String,
    },
    /// The run completed, but its record is not where it was to go.
    #[error("the run completed, but {path} could not be written ({why}); its record was saved to {saved}")]
    NotSaved {
        /// Where the record was to go.
        path: String,
        /// Why it could not.
        why: String,
        /// Where it went instead.
        saved: String,
    },
    /// A variant's strategies could not be created before anything ran.
    #[error("preflight, before any variant ran: {0}")]
    Preflight(#[from] crate::bench::PreflightError),
    /// Ctrl-C: what finished is kept.
    #[error("interrupted: {kept} of {planned} runs are recorded in {path} (a run stopped midway is marked failed)")]
    Interrupted {
        /// Runs recorded.
        kept: usize,
        /// Runs planned.
        planned: usize,
        /// The record.
        path: String,
    },
    /// The sweep's points do not merge.
    #[error(transparent)]
    Sweep(Box<crate::record::sweep::SweepError>),
    /// A sweep refused before its first point ran.
    #[error("{0}")]
    Points(String),
}

impl From<crate::record::sweep::SweepError> for SessionError {
    fn from(e: crate::record::sweep::SweepError) -> Self {
        // Boxed: its variants carry two paths and two identities.
        SessionError::Sweep(Box::new(e))
    }
}

pub(super) fn io(path: &std::path::Path) -> impl FnOnce(std::io::Error) -> SessionError + '_ {
    move |source| SessionError::Io { path: path.display().to_string(), source }
}
