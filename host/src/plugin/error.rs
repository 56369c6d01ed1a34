use std::fmt;

/// How a trap is classified for the report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
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

/// Everything that can go wrong loading or calling a plugin. Each message
/// names the plugin, and for calls the operation and the shard.
#[derive(Debug, thiserror::Error)]
pub enum PluginError {
    #[error("setting up the wasm engine: {0}")]
    Engine(String),
    #[error("plugin `{plugin}`: cannot read {path}: {source}")]
    Read { plugin: String, path: String, source: std::io::Error },
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
    #[error("plugin `{plugin}`: cannot instantiate: {detail}")]
    Instantiate { plugin: String, detail: String },
    #[error("plugin `{plugin}` (sha256 {sha256:.12}) trapped in `{operation}` on shard {shard}: {kind}: {detail}")]
    Trap { plugin: String, sha256: String, operation: String, shard: usize, kind: TrapKind, detail: String },
    #[error("plugin `{plugin}` returned an error from `{operation}` on shard {shard}: {error}")]
    Guest { plugin: String, operation: String, shard: usize, error: String },
    #[error("plugin `{plugin}` broke its contract in `{operation}` on shard {shard}: {detail}")]
    Contract { plugin: String, operation: String, shard: usize, detail: String },
    #[error("plugin `{plugin}` on shard {shard} is poisoned ({cause} earlier); `{operation}` was not attempted")]
    Poisoned { plugin: String, operation: String, shard: usize, cause: String },
}

impl PluginError {
    /// The same failure, for each op of a coalesced group that shared the
    /// call. Call failures keep their kind (a guest error stays non-fatal);
    /// set-up failures cannot happen mid-run and become contract errors.
    pub fn for_group(&self) -> PluginError {
        match self {
            PluginError::Trap { plugin, sha256, operation, shard, kind, detail } => PluginError::Trap {
                plugin: plugin.clone(),
                sha256: sha256.clone(),
                operation: operation.clone(),
                shard: *shard,
                kind: *kind,
                detail: detail.clone(),
            },
            PluginError::Guest { plugin, operation, shard, error } => {
                PluginError::Guest { plugin: plugin.clone(), operation: operation.clone(), shard: *shard, error: error.clone() }
            }
            PluginError::Poisoned { plugin, operation, shard, cause } => {
                PluginError::Poisoned { plugin: plugin.clone(), operation: operation.clone(), shard: *shard, cause: cause.clone() }
            }
            other => PluginError::Contract { plugin: "memlab".into(), operation: "coalesced write".into(), shard: 0, detail: other.to_string() },
        }
    }
}
