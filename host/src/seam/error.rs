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
/// and checked against the WIT package. `plugin` is the plugin as
/// configured; only the engine's own set-up names none.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{}{cause}", plugin.as_deref().map(|p| format!("plugin `{p}`: ")).unwrap_or_default())]
pub struct LoadError {
    /// The plugin, as configured.
    pub plugin: Option<String>,
    /// What went wrong.
    pub cause: LoadCause,
}

impl LoadError {
    /// A load error of `plugin`.
    pub fn new(plugin: impl Into<String>, cause: LoadCause) -> LoadError {
        LoadError { plugin: Some(plugin.into()), cause }
    }

    /// The wasm engine (or the host's own probe) could not be set up.
    pub fn engine(detail: String) -> LoadError {
        LoadError { plugin: None, cause: LoadCause::Engine(detail) }
    }

    /// The plugin the error names, if it names one.
    pub fn plugin(&self) -> Option<&str> {
        self.plugin.as_deref()
    }
}

/// What stopped a plugin from loading; each message follows its plugin's
/// name.
#[derive(Debug, Clone, thiserror::Error)]
pub enum LoadCause {
    /// The wasm engine could not be set up.
    #[error("setting up the wasm engine: {0}")]
    Engine(String),
    /// The plugin's file (second) could not be read (third).
    #[error("cannot read {0}: {1}")]
    Read(String, String),
    /// The plugin's crate did not build.
    #[error("cannot build its crate: {0}")]
    Build(String),
    /// A crate folder where building was not asked for: its build scripts
    /// and proc-macros would run on this machine, outside the sandbox.
    #[error(
        "a crate folder: building it runs its build scripts and proc-macros on this machine, outside the sandbox; pass `--build` to let memlab run `cargo build` there, or build it yourself and name its .wasm"
    )]
    BuildNotAsked,
    /// A plugin to run natively (`runtime = "native"`) from a crate
    /// folder, where `--native` was not given.
    #[error(
        "configured with `runtime = \"native\"`: memlab would build its crate for this machine and load it into memlab itself, where its code runs outside the sandbox with your rights; pass `--native` (with `--build`) to allow that"
    )]
    NativeNotAsked,
    /// A crate built for the host could not be loaded.
    #[error("cannot load its native build: {0}")]
    Native(String),
    /// No bundled plugin has the name, and no file does.
    #[error("no bundled plugin has this name (see `memlab list`), and no file does")]
    UnknownBundled,
    /// The file is not WebAssembly.
    #[error("not a WebAssembly file ({0})")]
    NotWasm(String),
    /// A core module could not be wrapped as a component.
    #[error("cannot wrap the core module as a component: {0}")]
    Componentize(String),
    /// The component is invalid.
    #[error("invalid component: {0}")]
    Compile(String),
    /// The plugin imports what memlab does not provide (WASI, say).
    #[error("imports `{0}`, which memlab does not provide (plugins may import only memlab:strategy/pool and types; no WASI)")]
    ForeignImport(String),
    /// The plugin speaks another version (first) of the WIT package than
    /// memlab's (second).
    #[error("speaks `{0}`, but this host speaks `{1}`; rebuild it against memlab-sdk for {1}")]
    WrongVersion(String, String),
    /// The plugin exports no strategy interface (it exports these).
    #[error("exports none of memlab's strategy interfaces (it exports: {0})")]
    NoStrategy(String),
    /// The plugin exports more than one kind (these).
    #[error("exports more than one strategy kind ({0}); build one kind per plugin")]
    SeveralKinds(String),
    /// The plugin is of another kind (second) than configured (first).
    #[error("a {1} plugin, but it is configured as the {0}")]
    WrongKind(String, String),
    /// The plugin's imports could not be linked.
    #[error("cannot link its imports: {0}")]
    Link(String),
}

/// How a call failed. A runtime (wasm or native) reports the first four;
/// the seam's own checks add the last two, and the plugin, operation and
/// shard.
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
    Poisoned(String),
    /// The answer broke its contract (or the boundary's own layout).
    Contract(String),
    /// Memory kept past what the plugin reserved from the pool.
    Budget(String),
}

fn call_message(plugin: &str, operation: &Op, shard: &usize, fault: &Fault) -> String {
    match fault {
        Fault::Guest(error) => format!("plugin `{plugin}` returned an error from `{operation}` on shard {shard}: {error}"),
        Fault::Trap { sha256, kind, detail } => {
            format!("plugin `{plugin}` (sha256 {sha256:.12}) trapped in `{operation}` on shard {shard}: {kind}: {detail}")
        }
        Fault::Poisoned(cause) => format!("plugin `{plugin}` on shard {shard} is poisoned ({cause} earlier); `{operation}` was not attempted"),
        Fault::Contract(detail) => format!("plugin `{plugin}` broke its contract in `{operation}` on shard {shard}: {detail}"),
        Fault::Budget(detail) => format!("plugin `{plugin}` broke the memory budget in `{operation}` on shard {shard}: {detail}"),
    }
}

/// Everything that can go wrong creating or calling a strategy, wasm or
/// native (and loading it, through `Load`). Each message names the plugin,
/// and for calls the operation and the shard.
#[derive(Debug, Clone, thiserror::Error)]
pub enum SeamError {
    /// The plugin could not be loaded.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// The plugin could not be instantiated.
    #[error("plugin `{plugin}`: cannot instantiate: {detail}")]
    Instantiate {
        /// The plugin, as configured.
        plugin: String,
        /// What went wrong.
        detail: String,
    },
    /// A call failed: the plugin's own error, a trap, a poisoned instance,
    /// a broken contract or budget.
    #[error("{}", call_message(.plugin, .operation, .shard, .fault))]
    Call {
        /// The plugin, as configured.
        plugin: String,
        /// The operation.
        operation: Op,
        /// The shard (or the flush's part).
        shard: usize,
        /// How it failed.
        fault: Fault,
    },
    /// No native twin has the name.
    #[error(
        "no native twin named `{plugin}`: bundled strategies have one (see `memlab list`), and so does a plugin crate's folder given with `--build --native`; a `.wasm` file has none"
    )]
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

impl SeamError {
    /// Attaches where a fault happened.
    pub fn call(plugin: &str, operation: Op, shard: usize, fault: Fault) -> SeamError {
        SeamError::Call { plugin: plugin.to_string(), operation, shard, fault }
    }

    /// An answer of `plugin` to `operation` on `shard` that broke its
    /// contract.
    pub fn contract(plugin: &str, operation: Op, shard: usize, detail: impl Into<String>) -> SeamError {
        SeamError::call(plugin, operation, shard, Fault::Contract(detail.into()))
    }

    /// How the call failed, for a failed call.
    pub fn fault(&self) -> Option<&Fault> {
        match self {
            SeamError::Call { fault, .. } => Some(fault),
            _ => None,
        }
    }

    /// The guest's own error, when the plugin returned one.
    pub fn guest_error(&self) -> Option<&memlab_sdk::Error> {
        match self.fault() {
            Some(Fault::Guest(error)) => Some(error),
            _ => None,
        }
    }

    /// True for a failure that leaves the variant's figures invalid (a
    /// trap, a poisoned instance, a broken contract, a host failure); an
    /// expected guest error fails only its op.
    pub fn is_fatal(&self) -> bool {
        self.guest_error().is_none()
    }
}
