use std::fmt;

use super::Op;

/// How a trap is classified for the report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrapKind {
    /// The instance hit its memory cap.
    OutOfMemory,
    /// A call ran past its epoch deadline.
    Deadline,
    /// A Rust panic or `unreachable` in the guest.
    Panic,
    /// The wasm stack limit was reached.
    StackOverflow,
    /// Any other trap (out-of-bounds access, bad conversion, ...).
    Other,
}

impl fmt::Display for TrapKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TrapKind::OutOfMemory => "out of memory",
            TrapKind::Deadline => "deadline exceeded",
            TrapKind::Panic => "panic",
            TrapKind::StackOverflow => "stack overflow",
            TrapKind::Other => "trap",
        })
    }
}

/// Why a plugin could not be loaded: read, validated, wrapped, compiled
/// and checked against the WIT package. Each message names the plugin.
#[derive(Debug, Clone, thiserror::Error)]
pub enum LoadError {
    #[error("setting up the wasm engine: {0}")]
    Engine(String),
    #[error("plugin `{plugin}`: cannot read {path}: {detail}")]
    Read { plugin: String, path: String, detail: String },
    #[error("plugin `{plugin}`: cannot build its crate: {detail}")]
    Build { plugin: String, detail: String },
    /// A crate folder where building was not asked for: its build scripts
    /// and proc-macros would run on this machine, outside the sandbox.
    #[error(
        "plugin `{plugin}` is a crate folder: building it runs its build scripts and proc-macros on this machine, outside the sandbox; pass `--build` to let memlab run `cargo build` there, or build it yourself and name its .wasm"
    )]
    BuildNotAsked { plugin: String },
    #[error("no bundled plugin named `{0}` (see `memlab list`), and no such file")]
    UnknownBundled(String),
    #[error("plugin `{plugin}`: not a WebAssembly file ({detail})")]
    NotWasm { plugin: String, detail: String },
    #[error("plugin `{plugin}`: cannot wrap the core module as a component: {detail}")]
    Componentize { plugin: String, detail: String },
    #[error("plugin `{plugin}`: invalid component: {detail}")]
    Compile { plugin: String, detail: String },
    #[error("plugin `{plugin}` imports `{import}`, which memlab does not provide (plugins may import only memlab:strategy/pool and types; no WASI)")]
    ForeignImport { plugin: String, import: String },
    #[error("plugin `{plugin}` speaks `{found}`, but this host speaks `{expected}`; rebuild it against memlab-sdk for {expected}")]
    WrongVersion { plugin: String, found: String, expected: String },
    #[error("plugin `{plugin}` exports none of memlab's strategy interfaces (it exports: {found})")]
    NoStrategy { plugin: String, found: String },
    #[error("plugin `{plugin}` exports more than one strategy kind ({found}); build one kind per plugin")]
    SeveralKinds { plugin: String, found: String },
    #[error("plugin `{plugin}` is a {found} plugin, but it is configured as the {expected}")]
    WrongKind { plugin: String, expected: String, found: String },
    #[error("plugin `{plugin}`: cannot link its imports: {detail}")]
    Link { plugin: String, detail: String },
}

impl LoadError {
    /// The plugin the error names, if it names one.
    pub fn plugin(&self) -> Option<&str> {
        match self {
            LoadError::Engine(_) => None,
            LoadError::UnknownBundled(plugin) => Some(plugin),
            LoadError::Read { plugin, .. }
            | LoadError::Build { plugin, .. }
            | LoadError::BuildNotAsked { plugin }
            | LoadError::NotWasm { plugin, .. }
            | LoadError::Componentize { plugin, .. }
            | LoadError::Compile { plugin, .. }
            | LoadError::ForeignImport { plugin, .. }
            | LoadError::WrongVersion { plugin, .. }
            | LoadError::NoStrategy { plugin, .. }
            | LoadError::SeveralKinds { plugin, .. }
            | LoadError::WrongKind { plugin, .. }
            | LoadError::Link { plugin, .. } => Some(plugin),
        }
    }
}

/// Everything that can go wrong creating or calling a strategy, wasm or
/// native (and loading it, through `Load`). Each message names the plugin,
/// and for calls the operation and the shard.
#[derive(Debug, Clone, thiserror::Error)]
pub enum SeamError {
    #[error(transparent)]
    Load(#[from] LoadError),
    #[error("plugin `{plugin}`: cannot instantiate: {detail}")]
    Instantiate { plugin: String, detail: String },
    #[error("plugin `{plugin}` (sha256 {sha256:.12}) trapped in `{operation}` on shard {shard}: {kind}: {detail}")]
    Trap { plugin: String, sha256: String, operation: Op, shard: usize, kind: TrapKind, detail: String },
    #[error("plugin `{plugin}` returned an error from `{operation}` on shard {shard}: {error}")]
    Guest { plugin: String, operation: Op, shard: usize, error: memlab_sdk::Error },
    #[error("plugin `{plugin}` broke its contract in `{operation}` on shard {shard}: {detail}")]
    Contract { plugin: String, operation: Op, shard: usize, detail: String },
    /// Memory kept past what the plugin reserved from the pool.
    #[error("plugin `{plugin}` broke the memory budget in `{operation}` on shard {shard}: {detail}")]
    Budget { plugin: String, operation: Op, shard: usize, detail: String },
    #[error("plugin `{plugin}` on shard {shard} is poisoned ({cause} earlier); `{operation}` was not attempted")]
    Poisoned { plugin: String, operation: Op, shard: usize, cause: String },
    #[error("no native twin named `{plugin}` (only bundled strategies have one; see `memlab list`)")]
    NoTwin { plugin: String },
    /// The host's own step (routing, the read probe, the write path).
    #[error("memlab: `{operation}` failed: {detail}")]
    Host { operation: &'static str, detail: String },
}

/// How a call failed, as a runtime (wasm or native) reports it; the seam
/// adds the plugin, the operation and the shard.
#[derive(Debug, Clone)]
pub enum Fault {
    /// The plugin returned an error (WIT `error`).
    Guest(memlab_sdk::Error),
    /// The call trapped; the instance is unusable from now on.
    Trap { sha256: String, kind: TrapKind, detail: String },
    /// An earlier trap left the instance unusable; nothing was called.
    Poisoned { cause: String },
    /// The result broke the boundary's own layout (a malformed batch).
    Malformed(String),
}

impl SeamError {
    /// Attaches where a runtime's fault happened.
    pub fn from_fault(fault: Fault, plugin: &str, operation: Op, shard: usize) -> SeamError {
        let plugin = plugin.to_string();
        match fault {
            Fault::Guest(error) => SeamError::Guest { plugin, operation, shard, error },
            Fault::Trap { sha256, kind, detail } => SeamError::Trap { plugin, sha256, operation, shard, kind, detail },
            Fault::Poisoned { cause } => SeamError::Poisoned { plugin, operation, shard, cause },
            Fault::Malformed(detail) => SeamError::Contract { plugin, operation, shard, detail },
        }
    }

    /// The guest's own error, when the plugin returned one.
    pub fn guest_error(&self) -> Option<&memlab_sdk::Error> {
        match self {
            SeamError::Guest { error, .. } => Some(error),
            _ => None,
        }
    }

    /// The plugin, operation and shard a call failed in, where known.
    pub fn place(&self) -> Option<(&str, Op, usize)> {
        match self {
            SeamError::Trap { plugin, operation, shard, .. }
            | SeamError::Guest { plugin, operation, shard, .. }
            | SeamError::Contract { plugin, operation, shard, .. }
            | SeamError::Budget { plugin, operation, shard, .. }
            | SeamError::Poisoned { plugin, operation, shard, .. } => Some((plugin, *operation, *shard)),
            _ => None,
        }
    }

    /// True for a failure that leaves the variant's figures invalid (a
    /// trap, a poisoned instance, a broken contract, a host failure); an
    /// expected guest error fails only its op.
    pub fn is_fatal(&self) -> bool {
        !matches!(self, SeamError::Guest { .. })
    }
}
