//! The plugin layer: the only module that touches wasmtime. It compiles
//! components once (with a cache of precompiled code), checks their imports
//! and exports against the WIT package, and creates one `Store` per shard
//! and memtable generation.

mod bindings;
mod cache;
mod from_crate;
mod load;
mod output;
mod probe;
pub mod sampler;
mod store;
mod wasm;
mod wasm_log;
mod wasm_target {
    use std::env;
    use std::path::{Path, PathBuf};
    use std::process::Command;
    include!("wasm_target.rs");
}

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

pub use cache::verified as verified_cache_payload;
pub use load::{MAX_PLUGIN_BYTES, Plugin, Source, sha256_hex, to_component};
pub use probe::AbiProbe;
pub use store::Limits;

use crate::pool::MemoryPool;
use crate::seam::{self, LoadError, SeamError};

/// Export indices resolved once per plugin, so a new instance needs no
/// string lookups. The layer's one table of kinds: a new kind adds its
/// variant and its line in `new`, beside its `mod wasm_KIND` above.
#[derive(Clone)]
pub(crate) enum Indices {
    Memtable(bindings::memtable::GuestIndices),
    Allocator(bindings::allocator::GuestIndices),
    Serializer(bindings::serializer::GuestIndices),
    CommitLog(bindings::commitlog::GuestIndices),
}

impl Indices {
    fn new(kind: seam::Kind, pre: &wasmtime::component::InstancePre<store::StoreCtx>) -> wasmtime::Result<Indices> {
        Ok(match kind {
            seam::Kind::Memtable => Indices::Memtable(bindings::memtable::GuestIndices::new(pre)?),
            seam::Kind::Allocator => Indices::Allocator(bindings::allocator::GuestIndices::new(pre)?),
            seam::Kind::Serializer => Indices::Serializer(bindings::serializer::GuestIndices::new(pre)?),
            seam::Kind::CommitLog => Indices::CommitLog(bindings::commitlog::GuestIndices::new(pre)?),
        })
    }
}

/// The WIT package this host speaks; plugins must match it.
pub const WIT_PACKAGE: &str = concat!("memlab:strategy@", env!("MEMLAB_WIT_VERSION"));
const WIT_NAMESPACE: &str = "memlab:strategy";
/// From `wit/worlds.wit`'s package line (host/build.rs).
const WIT_VERSION: &str = env!("MEMLAB_WIT_VERSION");

/// The full name of one of the package's interfaces, as components name it.
fn interface_name(interface: &str) -> String {
    format!("{WIT_NAMESPACE}/{interface}@{WIT_VERSION}")
}

/// Engine settings that every report records.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct EngineSettings {
    /// Per-call deadline through epoch interruption; `None` is off.
    pub call_deadline: Option<Duration>,
    /// Memory cap per instance, in bytes.
    pub memory_cap: u64,
    /// Maximum wasm stack, in bytes.
    pub stack_limit: usize,
    /// Where precompiled components are cached; `None` disables the cache.
    pub cache_dir: Option<PathBuf>,
    /// Component instances the pooling allocator keeps slots for (a shard
    /// holds two per generation: live, flushing, or started ahead); 0
    /// allocates each instance's memory on demand instead.
    pub instance_slots: u32,
    /// Linear memories reserve only what they use (with explicit bounds
    /// checks) instead of 4 GiB of address space each: set when the
    /// process's address space is limited (`ulimit -v`).
    pub compact_memories: bool,
    /// Build a plugin given as a crate folder (`--build`): that runs the
    /// crate's build scripts and proc-macros on the host, unsandboxed.
    pub build_crates: bool,
    /// Also build such a crate for the host and load it into memlab
    /// (`--native`, for `runtime = "native"`): its code runs outside the
    /// sandbox.
    #[serde(skip)]
    pub native_crates: bool,
    /// When every call of this engine's plugins must have ended (`memlab
    /// check`'s whole budget): a call that would run past it is
    /// interrupted, and one after it refused, as a deadline trap.
    #[serde(skip)]
    pub budget_until: Option<std::time::Instant>,
    /// Sample guest stacks for flame graphs: epochs on, advanced every
    /// millisecond, each store's epoch callback sampling (the profiled
    /// round's engine only: epoch checks cost every call).
    pub profile: bool,
}

impl EngineSettings {
    /// Whether the engine checks epochs: for deadlines, budgets or samples.
    fn epochs(&self) -> bool {
        self.call_deadline.is_some() || self.budget_until.is_some() || self.profile
    }
}

impl Default for EngineSettings {
    fn default() -> Self {
        EngineSettings {
            call_deadline: None,
            memory_cap: 1 << 30,
            stack_limit: 1 << 20,
            cache_dir: cache::default_dir(),
            instance_slots: DEFAULT_INSTANCE_SLOTS,
            compact_memories: false,
            build_crates: false,
            native_crates: false,
            budget_until: None,
            profile: false,
        }
    }
}

/// Enough for 64 shards with several generations alive, and the checks.
pub const DEFAULT_INSTANCE_SLOTS: u32 = 1000;

/// Slots the pooling allocator reserves up front, so that a new generation
/// reuses a warm slot (memory mapped, its image in place) instead of
/// mapping memory and copying data segments: it halves the cost of
/// starting a shard. Each slot reserves address space only.
fn pooling(settings: &EngineSettings) -> wasmtime::PoolingAllocationConfig {
    let slots = settings.instance_slots;
    let mut pooling = wasmtime::PoolingAllocationConfig::new();
    // A memlab component is a main module plus wit-component's shim and
    // fixup modules: one memory, at most two tables, three core instances.
    pooling
        .total_component_instances(slots)
        .total_memories(slots)
        .total_tables(slots.saturating_mul(2))
        .total_core_instances(slots.saturating_mul(4))
        .max_memory_size(usize::try_from(settings.memory_cap).unwrap_or(usize::MAX));
    pooling
}

fn engine(settings: &EngineSettings) -> Result<wasmtime::Engine, LoadError> {
    let mut config = wasmtime::Config::new();
    config
        .concurrency_support(false)
        .cranelift_opt_level(wasmtime::OptLevel::Speed)
        .wasm_component_model(true)
        .max_wasm_stack(settings.stack_limit)
        .epoch_interruption(settings.epochs());
    if settings.instance_slots > 0 {
        config.allocation_strategy(pooling(settings));
    }
    if settings.compact_memories {
        // No virtual reservation beyond the memory itself: memories grow
        // by moving, and accesses are bounds-checked (slower, but it fits).
        config.memory_reservation(0).memory_guard_size(0).memory_reservation_for_growth(1 << 20);
    }
    // Names guest functions for `perf` and callgrind (/tmp/perf-PID.map).
    if std::env::var_os("MEMLAB_PERF_MAP").is_some() {
        config.profiler(wasmtime::ProfilingStrategy::PerfMap);
    }
    wasmtime::Engine::new(&config).map_err(|e| LoadError::engine(format!("{e:#}")))
}

/// The process's address-space limit (`ulimit -v`), from
/// `/proc/self/limits`; `None` when unlimited or unknown.
fn address_space_limit() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|l| l.starts_with("Max address space"))?;
    line.split_whitespace().nth(3)?.parse().ok()
}

/// A wasmtime engine plus the linker that offers memlab's own interfaces
/// and nothing else.
pub struct PluginHost {
    engine: wasmtime::Engine,
    linker: wasmtime::component::Linker<store::StoreCtx>,
    settings: EngineSettings,
    sampler: Option<Arc<sampler::GuestSampler>>,
    /// Shared with a budgeted twin that shares the engine, whose epoch it
    /// advances.
    ticker: Option<Arc<store::EpochTicker>>,
    /// Crate folders built by this host, and the `.wasm` each built with
    /// its bytes as read right after its build (crates of one package
    /// name share an artifact path in the shared target), so a crate is
    /// built (and says so) once however often it is loaded.
    built: std::sync::Mutex<std::collections::HashMap<PathBuf, Built>>,
    /// Crate folders built for the host (`--native`): the kept shared
    /// library and its sha256.
    built_native: std::sync::Mutex<std::collections::HashMap<PathBuf, (PathBuf, String)>>,
    /// Loads this host and its budgeted twins have begun (compiled, taken
    /// from the cache, or refused): what shows a twin ran a plugin as it
    /// was loaded instead of loading it again.
    loads: Arc<std::sync::atomic::AtomicU64>,
}

/// A crate's `.wasm` and the bytes it held right after its build.
type Built = (PathBuf, Arc<[u8]>);

impl std::fmt::Debug for PluginHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PluginHost").field("settings", &self.settings).finish_non_exhaustive()
    }
}

impl PluginHost {
    /// Builds the engine: no WASI, `concurrency_support` off (it costs
    /// ~600 ns a call), Cranelift at opt level Speed. Where the pooling
    /// allocator cannot reserve its address space (a `ulimit -v`, valgrind),
    /// instances are allocated on demand instead, and `settings()` says so.
    pub fn new(settings: EngineSettings) -> Result<Arc<Self>, LoadError> {
        PluginHost::build(settings).map(Arc::new)
    }

    fn build(mut settings: EngineSettings) -> Result<Self, LoadError> {
        if address_space_limit().is_some() {
            settings.instance_slots = 0;
            settings.compact_memories = true;
        }
        let engine = match engine(&settings) {
            Err(_) if settings.instance_slots > 0 => {
                settings.instance_slots = 0;
                engine(&settings)?
            }
            built => built?,
        };
        let mut linker = wasmtime::component::Linker::new(&engine);
        bindings::Host_::add_to_linker::<_, wasmtime::component::HasSelf<_>>(&mut linker, |ctx| ctx)
            .and_then(|()| output::add_to_linker(&mut linker))
            .map_err(|e| LoadError::engine(format!("defining memlab's interfaces: {e:#}")))?;
        let ticking = settings.epochs();
        let ticker = ticking.then(|| Arc::new(store::EpochTicker::start(engine.clone(), store::epoch_tick(&settings))));
        let sampler = settings.profile.then(|| Arc::new(sampler::GuestSampler::default()));
        Ok(PluginHost { engine, linker, settings, sampler, ticker, built: Default::default(), built_native: Default::default(), loads: Default::default() })
    }

    /// A host with these settings whose every call traps once `until` has
    /// passed; it knows the crates this one built, so none is built (or
    /// said to be) again. Where this engine already checks epochs (a call
    /// deadline: `memlab check`), the twin shares it, so what this host
    /// loaded runs there as it is (`adopt`); otherwise it is an engine of
    /// its own, and a plugin is loaded again (from the compile cache).
    pub fn budgeted(&self, until: std::time::Instant) -> Result<Arc<Self>, LoadError> {
        let settings = EngineSettings { budget_until: Some(until), ..self.settings.clone() };
        let built = self.built.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone();
        let built_native = self.built_native.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone();
        // A profiling engine's epoch callback samples into its own sampler.
        let shared = self.ticker.as_ref().filter(|_| self.sampler.is_none());
        let twin = match shared {
            Some(ticker) => Arc::new(PluginHost {
                engine: self.engine.clone(),
                linker: self.linker.clone(),
                settings,
                sampler: None,
                ticker: Some(Arc::clone(ticker)),
                built: Default::default(),
                built_native: Default::default(),
                loads: Arc::clone(&self.loads),
            }),
            None => Arc::new(PluginHost { loads: Arc::clone(&self.loads), ..PluginHost::build(settings)? }),
        };
        *twin.built.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = built;
        *twin.built_native.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = built_native;
        Ok(twin)
    }

    /// `plugin` as this host can run it: itself where it was loaded on
    /// this host's engine (a budgeted twin's), else `None`.
    pub fn adopt(&self, plugin: &Arc<Plugin>) -> Option<Arc<Plugin>> {
        wasmtime::Engine::same(plugin.pre.engine(), &self.engine).then(|| Arc::clone(plugin))
    }

    /// How many loads this host and its budgeted twins have begun.
    pub fn loads(&self) -> u64 {
        self.loads.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The settings the engine was built with.
    pub fn settings(&self) -> &EngineSettings {
        &self.settings
    }

    /// The guest sampler of a profiling engine.
    pub fn guest_sampler(&self) -> Option<&sampler::GuestSampler> {
        self.sampler.as_deref()
    }

    fn limits(&self) -> Limits {
        Limits::from_settings(&self.settings)
    }

    /// `plugin` as a strategy of the seam's, making its instances as wasm
    /// components.
    pub fn strategy(self: &Arc<Self>, plugin: &Arc<Plugin>) -> seam::Strategy {
        let runtime = WasmStrategy { host: Arc::clone(self), plugin: Arc::clone(plugin) };
        seam::Strategy::new(&plugin.name, plugin.kind, Arc::new(runtime))
    }
}

/// A loaded component and the host that instantiates it: each instance in
/// a store of its own, a shard's memtable and allocator in one.
struct WasmStrategy {
    host: Arc<PluginHost>,
    plugin: Arc<Plugin>,
}

impl seam::StrategyRuntime for WasmStrategy {
    fn shard(
        &self,
        params: &[(String, String)],
        allocator: &dyn seam::StrategyRuntime,
        allocator_params: &[(String, String)],
        pool: Arc<MemoryPool>,
        shard: usize,
    ) -> Result<Box<dyn seam::SerialShardRuntime>, SeamError> {
        let Some(allocator) = allocator.as_any().downcast_ref::<WasmStrategy>() else {
            return Err(SeamError::NoTwin { plugin: "a memtable and an allocator on two runtimes".into() });
        };
        wasm::shard(&self.host, &self.plugin, params, &allocator.plugin, allocator_params, pool, shard)
    }

    fn serializer(&self, params: &[(String, String)], part: usize) -> Result<Box<dyn seam::SerializerRuntime>, SeamError> {
        wasm::serializer(&self.host, &self.plugin, params, part)
    }

    fn reader(&self, params: &[(String, String)], data: &[u8], index: &[u8]) -> Result<Box<dyn seam::ReaderRuntime>, SeamError> {
        wasm::reader(&self.host, &self.plugin, params, data, index)
    }

    fn commitlog(&self, params: &[(String, String)], shard: usize) -> Result<Box<dyn seam::CommitLogRuntime>, SeamError> {
        wasm_log::commitlog(&self.host, &self.plugin, params, shard)
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// A plugin loaded from a file may not describe itself as a bundled one.
pub fn check_identity(kind: seam::Kind, plugin: &str, described: &memlab_sdk::Description) -> Result<(), SeamError> {
    for (what, value) in [("name", &described.name), ("version", &described.version)] {
        if let Some(detail) = unprintable_identity(what, value) {
            return Err(SeamError::contract(plugin, seam::KindSpecs::spec(kind).describe, 0, detail));
        }
    }
    match crate::registry::impersonated(kind, plugin, &described.name) {
        None => Ok(()),
        Some(b) => Err(SeamError::contract(
            plugin,
            seam::KindSpecs::spec(kind).describe,
            0,
            format!(
                "it describes itself as `{} {}`, the bundled {kind}, but it is not that component; give it a name of its own (its `NAME`)",
                b.name, described.version
            ),
        )),
    }
}

/// A name or version a record and a report can show as it is: 1 to 64
/// of ASCII letters, digits, `-`, `_` and `.`. Anything else (a
/// zero-width space after `btree`, a homoglyph) could pass for another
/// plugin, so it is refused with its bytes shown escaped.
fn unprintable_identity(what: &str, value: &str) -> Option<String> {
    let allowed = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.');
    if !value.is_empty() && value.len() <= 64 && value.bytes().all(allowed) {
        return None;
    }
    let shown: String = value.bytes().take(96).map(|b| if allowed(b) { (b as char).to_string() } else { format!("\\x{b:02x}") }).collect();
    Some(format!(
        "it describes its {what} as \"{shown}\" ({} bytes): a plugin's {what} must be 1 to 64 of ASCII letters, digits, `-`, `_` and `.`",
        value.len()
    ))
}
