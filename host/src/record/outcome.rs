//! How a run of a variant ended: completed, or failed with a class, the
//! plugin, the operation and the shard. The classes are the record's own,
//! so a test (or a user's script) matches on the class, not on a message.

use crate::flush::FlushError;
use crate::seam::{Fault, SeamError};
use crate::verify::VerifyError;

/// What kind of rule a failed run broke.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FailureClass {
    /// The plugin could not be read, wrapped, compiled, linked or
    /// instantiated.
    Load,
    /// The plugin returned an error where the run cannot go on (`create`,
    /// a flush), or every op failed.
    PluginError,
    /// A trap in the guest: panic, out of memory, deadline, stack overflow
    /// (a poisoned instance is the echo of one).
    Trap,
    /// A broken contract: a malformed batch, a wrong count, a description
    /// that does not echo its parameters, a wrong read.
    Contract,
    /// Memory kept beyond what was reserved from the pool.
    Budget,
    /// The segments do not hold the stream's final state.
    Verification,
    /// A plugin call made no progress for the stall limit.
    Stall,
    /// The user stopped the run (Ctrl-C).
    Interrupted,
    /// A host thread panicked (native twins run plugin code there too).
    Panic,
    /// memlab's own step failed: writing a segment, routing, the sampler.
    Harness,
    /// A plugin this run loads (the same sha256) broke a rule in another
    /// variant of the run: a plugin caught once is trusted nowhere in it.
    Tainted,
    /// A record of schema 1 or 2, which kept only the message.
    Unclassified,
}

impl FailureClass {
    /// The name the record and reports use.
    pub fn name(self) -> &'static str {
        match self {
            FailureClass::Load => "load",
            FailureClass::PluginError => "plugin-error",
            FailureClass::Trap => "trap",
            FailureClass::Contract => "contract",
            FailureClass::Budget => "budget",
            FailureClass::Verification => "verification",
            FailureClass::Stall => "stall",
            FailureClass::Interrupted => "interrupted",
            FailureClass::Panic => "panic",
            FailureClass::Harness => "harness",
            FailureClass::Tainted => "tainted",
            FailureClass::Unclassified => "unclassified",
        }
    }

    /// Whether a failure of this class, pinned on a plugin, caught it in
    /// a lie: a broken contract, memory beyond its reservations, or
    /// segments that do not hold what was written. A trap, a stall or an
    /// error it returned is a fault, which a log may even recover from,
    /// and says nothing false of its figures elsewhere.
    pub fn is_a_lie(self) -> bool {
        matches!(self, FailureClass::Contract | FailureClass::Budget | FailureClass::Verification)
    }
}

impl std::fmt::Display for FailureClass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a run failed, as typed as the failure allows.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Failure {
    /// The rule broken (schema 2 had none: `unclassified`).
    #[serde(default = "unclassified")]
    pub class: FailureClass,
    /// The plugin that broke it, as configured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plugin: Option<String>,
    /// That plugin's sha256 ("native" for a twin).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    /// The operation, as the WIT names it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operation: Option<String>,
    /// The shard (or flush part).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<usize>,
    /// The whole message (schema 2's `reason`).
    #[serde(alias = "reason")]
    pub message: String,
}

fn unclassified() -> FailureClass {
    FailureClass::Unclassified
}

impl Failure {
    /// A failure with only a class and a message.
    pub fn new(class: FailureClass, message: impl Into<String>) -> Self {
        Failure { class, plugin: None, sha256: None, operation: None, shard: None, message: message.into() }
    }

    /// The user's Ctrl-C.
    pub fn interrupted() -> Self {
        Failure::new(FailureClass::Interrupted, "interrupted (Ctrl-C or SIGTERM): this run was stopped before its end")
    }
}

impl From<&SeamError> for Failure {
    fn from(e: &SeamError) -> Self {
        let class = match e {
            SeamError::Load(_) | SeamError::Instantiate { .. } | SeamError::NoTwin { .. } | SeamError::UnknownParam { .. } => FailureClass::Load,
            SeamError::Call { fault: Fault::Trap { .. } | Fault::Poisoned(_), .. } => FailureClass::Trap,
            SeamError::Call { fault: Fault::Guest(_), .. } => FailureClass::PluginError,
            SeamError::Call { fault: Fault::Contract(_), .. } => FailureClass::Contract,
            SeamError::Call { fault: Fault::Budget(_), .. } => FailureClass::Budget,
            SeamError::Host { .. } => FailureClass::Harness,
        };
        let mut failure = Failure::new(class, e.to_string());
        match e {
            SeamError::Call { plugin, operation, shard, fault } => {
                failure.operation = Some(operation.name().to_string());
                failure.shard = Some(*shard);
                failure.plugin = Some(plugin.clone());
                if let Fault::Trap { sha256, .. } = fault {
                    failure.sha256 = Some(sha256.clone());
                }
            }
            SeamError::Load(load) => failure.plugin = load.plugin().map(str::to_string),
            SeamError::Instantiate { plugin, .. } | SeamError::NoTwin { plugin } | SeamError::UnknownParam { plugin, .. } => {
                failure.plugin = Some(plugin.clone())
            }
            SeamError::Host { .. } => {}
        }
        failure
    }
}

impl From<&FlushError> for Failure {
    fn from(e: &FlushError) -> Self {
        match e {
            FlushError::Plugin { source, .. } => Failure { message: e.to_string(), ..Failure::from(source) },
            FlushError::Segment { .. } => Failure::new(FailureClass::Harness, e.to_string()),
            FlushError::Panic { .. } => Failure::new(FailureClass::Panic, e.to_string()),
        }
    }
}

impl From<&VerifyError> for Failure {
    fn from(e: &VerifyError) -> Self {
        match e {
            // The reader itself failed: a trap or a broken contract.
            VerifyError::Plugin { source, .. } => Failure { message: e.to_string(), ..Failure::from(source.as_ref()) },
            _ => Failure::new(FailureClass::Verification, e.to_string()),
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "[{}] {}", self.class, self.message)
    }
}

/// How one run of one variant ended.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum Outcome {
    /// Every op ran and, where asked, verification passed.
    #[default]
    Completed,
    /// The run stopped or failed verification; the figures are not valid.
    Failed(Failure),
}

#[cfg(test)]
mod tests {
    use super::FailureClass::*;

    #[test]
    fn each_class_is_named_as_the_record_spells_it() {
        for class in [Load, PluginError, Trap, Contract, Budget, Verification, Stall, Interrupted, Panic, Harness, Unclassified] {
            assert_eq!(serde_json::to_value(class).ok(), Some(serde_json::Value::String(class.name().into())), "{class:?}");
        }
    }
}
