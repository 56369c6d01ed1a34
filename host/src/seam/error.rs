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
    /// The wasm engine could not be set up.
    Engine(String),
    #[error("plugin `{plugin}`: cannot read {path}: {detail}")]
    /// The plugin's file could not be read.
    Read {
        /// The plugin, as configured.
        plugin: String,
        /// The file.
        path: String,
        /// What went wrong.
        detail: String,
    },
    #[error("plugin `{plugin}`: cannot build its crate: {detail}")]
    /// The plugin's crate did not build.
    Build {
        /// The plugin, as configured.
        plugin: String,
        /// What went wrong.
        detail: String,
    },
    /// A crate folder where building was not asked for: its build scripts
    /// and proc-macros would run on this machine, outside the sandbox.
    #[error(
        "plugin `{plugin}` is a crate folder: building it runs its build scripts and proc-macros on this machine, outside the sandbox; pass `--build` to let memlab run `cargo build` there, or build it yourself and name its .wasm"
    )]
    BuildNotAsked {
        /// The plugin, as configured.
        plugin: String,
    },
    /// A plugin to run natively (`runtime = "native"`) from a crate
    /// folder, where `--native` was not given.
    #[error(
        "plugin `{plugin}` is configured with `runtime = \"native\"`: memlab would build its crate for this machine and load it into memlab itself, where its code runs outside the sandbox with your rights; pass `--native` (with `--build`) to allow that"
    )]
    NativeNotAsked {
        /// The plugin, as configured.
        plugin: String,
    },
    #[error("plugin `{plugin}`: cannot load its native build: {detail}")]
    /// A crate built for the host could not be loaded.
    Native {
        /// The plugin, as configured.
        plugin: String,
        /// What went wrong.
        detail: String,
    },
    #[error("no bundled plugin named `{0}` (see `memlab list`), and no such file")]
    /// No bundled plugin has the name, and no file does.
    UnknownBundled(String),
    #[error("plugin `{plugin}`: not a WebAssembly file ({detail})")]
    /// The file is not WebAssembly.
    NotWasm {
        /// The plugin, as configured.
        plugin: String,
        /// What went wrong.
        detail: String,
    },
    #[error("plugin `{plugin}`: cannot wrap the core module as a component: {detail}")]
    /// A core module could not be wrapped as a component.
    Componentize {
        /// The plugin, as configured.
        plugin: String,
        /// What went wrong.
        detail: String,
    },
    #[error("plugin `{plugin}`: invalid component: {detail}")]
    /// The component is invalid.
    Compile {
        /// The plugin, as configured.
        plugin: String,
        /// What went wrong.
        detail: String,
    },
    #[error("plugin `{plugin}` imports `{import}`, which memlab does not provide (plugins may import only memlab:strategy/pool and types; no WASI)")]
    /// The plugin imports what memlab does not provide (WASI, say).
    ForeignImport {
        /// The plugin, as configured.
        plugin: String,
        /// The import.
        import: String,
    },
    #[error("plugin `{plugin}` speaks `{found}`, but this host speaks `{expected}`; rebuild it against memlab-sdk for {expected}")]
    /// The plugin speaks another version of the WIT package.
    WrongVersion {
        /// The plugin, as configured.
        plugin: String,
        /// What the plugin has.
        found: String,
        /// What memlab wants.
        expected: String,
    },
    #[error("plugin `{plugin}` exports none of memlab's strategy interfaces (it exports: {found})")]
    /// The plugin exports no strategy interface.
    NoStrategy {
        /// The plugin, as configured.
        plugin: String,
        /// What the plugin has.
        found: String,
    },
    #[error("plugin `{plugin}` exports more than one strategy kind ({found}); build one kind per plugin")]
    /// The plugin exports more than one kind.
    SeveralKinds {
        /// The plugin, as configured.
        plugin: String,
        /// What the plugin has.
        found: String,
    },
    #[error("plugin `{plugin}` is a {found} plugin, but it is configured as the {expected}")]
    /// The plugin is of another kind than configured.
    WrongKind {
        /// The plugin, as configured.
        plugin: String,
        /// What memlab wants.
        expected: String,
        /// What the plugin has.
        found: String,
    },
    #[error("plugin `{plugin}`: cannot link its imports: {detail}")]
    /// The plugin's imports could not be linked.
    Link {
        /// The plugin, as configured.
        plugin: String,
        /// What went wrong.
        detail: String,
    },
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
            | LoadError::NativeNotAsked { plugin }
            | LoadError::Native { plugin, .. }
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
    /// The plugin could not be loaded.
    Load(#[from] LoadError),
    #[error("plugin `{plugin}`: cannot instantiate: {detail}")]
    /// The plugin could not be instantiated.
    Instantiate {
        /// The plugin, as configured.
        plugin: String,
        /// What went wrong.
        detail: String,
    },
    #[error("plugin `{plugin}` (sha256 {sha256:.12}) trapped in `{operation}` on shard {shard}: {kind}: {detail}")]
    /// The call trapped; the instance is poisoned.
    Trap {
        /// The plugin, as configured.
        plugin: String,
        /// The component's sha256.
        sha256: String,
        /// The operation.
        operation: Op,
        /// The shard (or the flush's part).
        shard: usize,
        /// The kind.
        kind: TrapKind,
        /// What went wrong.
        detail: String,
    },
    #[error("plugin `{plugin}` returned an error from `{operation}` on shard {shard}: {error}")]
    /// The plugin returned its own error.
    Guest {
        /// The plugin, as configured.
        plugin: String,
        /// The operation.
        operation: Op,
        /// The shard (or the flush's part).
        shard: usize,
        /// The guest's own error.
        error: memlab_sdk::Error,
    },
    #[error("plugin `{plugin}` broke its contract in `{operation}` on shard {shard}: {detail}")]
    /// The plugin's answer broke its contract.
    Contract {
        /// The plugin, as configured.
        plugin: String,
        /// The operation.
        operation: Op,
        /// The shard (or the flush's part).
        shard: usize,
        /// What went wrong.
        detail: String,
    },
    /// Memory kept past what the plugin reserved from the pool.
    #[error("plugin `{plugin}` broke the memory budget in `{operation}` on shard {shard}: {detail}")]
    Budget {
        /// The plugin, as configured.
        plugin: String,
        /// The operation.
        operation: Op,
        /// The shard (or the flush's part).
        shard: usize,
        /// What went wrong.
        detail: String,
    },
    #[error("plugin `{plugin}` on shard {shard} is poisoned ({cause} earlier); `{operation}` was not attempted")]
    /// An earlier trap poisoned the instance; nothing was called.
    Poisoned {
        /// The plugin, as configured.
        plugin: String,
        /// The operation.
        operation: Op,
        /// The shard (or the flush's part).
        shard: usize,
        /// The trap that poisoned it.
        cause: String,
    },
    #[error(
        "no native twin named `{plugin}`: bundled strategies have one (see `memlab list`), and so does a plugin crate's folder given with `--build --native`; a `.wasm` file has none"
    )]
    /// No native twin has the name.
    NoTwin {
        /// The plugin, as configured.
        plugin: String,
    },
    /// A configured parameter the plugin does not describe: a typo in the
    /// config, refused by the host before the plugin is created with it.
    #[error("`{kind}_params.{key}`: plugin `{plugin}` has no parameter `{key}` (it describes {known}); a typo?")]
    UnknownParam {
        /// The plugin, as configured.
        plugin: String,
        /// Its kind.
        kind: super::Kind,
        /// The key the plugin does not describe.
        key: String,
        /// What it does describe.
        known: String,
    },
    /// The host's own step (routing, the read probe, the write path).
    #[error("memlab: `{operation}` failed: {detail}")]
    Host {
        /// The operation.
        operation: &'static str,
        /// What went wrong.
        detail: String,
    },
}

/// How a call failed, as a runtime (wasm or native) reports it; the seam
/// adds the plugin, the operation and the shard.
#[derive(Debug, Clone)]
pub enum Fault {
    /// The plugin returned an error (WIT `error`).
    Guest(memlab_sdk::Error),
    /// The call trapped; the instance is unusable from now on.
    Trap {
        /// The component's sha256.
        sha256: String,
        /// The kind.
        kind: TrapKind,
        /// What went wrong.
        detail: String,
    },
    /// An earlier trap left the instance unusable; nothing was called.
    Poisoned {
        /// The trap that poisoned it.
        cause: String,
    },
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
