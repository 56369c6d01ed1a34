//! What the host checked of a run on its own account, beside its figures:
//! the parameter probe's findings and each round's checks.

use super::Kind;

/// A described parameter that changed nothing when changed.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct NoEffect {
    /// The strategy's kind.
    pub kind: Kind,
    /// The parameter.
    pub param: String,
    /// The value tried instead of the one applied.
    pub tried: String,
    /// Where changing it changed nothing.
    #[serde(default, skip_serializing_if = "Site::is_workload")]
    pub on: Site,
}

/// Where a parameter's effect was probed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Site {
    /// check's bench-shaped workload, before the first variant (the only
    /// site records before the tape knew).
    #[default]
    Workload,
    /// The bench's own taped rows, replayed in a pool like the variant's.
    BenchRows,
}

impl Site {
    fn is_workload(&self) -> bool {
        *self == Site::Workload
    }

    /// Where, as a summary says it.
    pub fn shown(self) -> &'static str {
        match self {
            Site::Workload => "on check's bench-shaped workload",
            Site::BenchRows => "on this bench's own rows",
        }
    }
}

/// A described parameter the probe did not reach.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct NotProbed {
    /// The strategy's kind.
    pub kind: Kind,
    /// The parameter.
    pub param: String,
    /// Why not.
    pub why: crate::seam::Unprobed,
}

/// What the host checked of one run beside the final state: every flush
/// held to its ledger, every segment read back whole.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RoundChecks {
    /// Rows the flushes handed over, each held to the host's ledger of
    /// what it gave the shard's strategies.
    pub ledger_rows: u64,
    /// Segments read back whole.
    pub segments: u64,
    /// Of them, those held to the host's tally of what their serializer
    /// was handed.
    pub tallied: u64,
    /// Whether the final state was compared with the stream's.
    pub final_state: bool,
}
