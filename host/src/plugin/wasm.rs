//! Strategies running as wasm components: one `Store` per shard (memtable
//! plus allocator), one per flush (serializer), one per segment reader.
//! These are raw runtimes: `seam` counts and checks every call.

use std::sync::Arc;

use memlab_sdk::{Description, Finished, Packed, SegmentMeta, Stats};
use wasmtime::Store;
use wasmtime::component::ResourceAny;

use super::Indices;
use super::bindings::{allocator, memtable, serializer, types};
use super::store::{Limits, Running, StoreCtx};
use super::{Plugin, PluginHost};
use crate::pool::MemoryPool;
use crate::seam::KindSpecs;
use crate::seam::watch::during;
use crate::seam::{
    AllocatorRuntime, Fault, Kind, LoadCause, LoadError, MemtableRuntime, Op, ReaderRuntime, SeamError, SerialShardRuntime, SerializerRuntime, ShardRuntime,
    TrapKind,
};

/// A store plus the trap state every call shares.
pub(super) struct Caller {
    pub(super) store: Store<StoreCtx>,
    limits: Limits,
    /// Set by the first trap: a trap leaves the whole store unusable
    /// ("cannot enter component instance"), so every instance in it is
    /// poisoned, and later calls say which trap did it.
    trapped: Option<String>,
    /// On a profiling engine: each call names its plugin for the samples.
    sampled: bool,
}

impl Caller {
    pub(super) fn new(host: &PluginHost, pool: Option<Arc<MemoryPool>>) -> Self {
        let limits = host.limits();
        let mut store = Store::new(&host.engine, StoreCtx::new(limits, pool));
        store.limiter(|ctx| ctx);
        // Instantiation runs guest code too: it gets a call's deadline
        // (and a store with epochs off needs some deadline all the same).
        // "Never" is far past any epoch, not `u64::MAX`: wasmtime adds the
        // current epoch to it, which overflows once a ticker has run.
        let ticks = match limits.ticks_now() {
            Ok(ticks) => ticks.unwrap_or(u64::MAX / 2),
            Err(_) => 1,
        };
        store.set_epoch_deadline(ticks);
        let sampled = host.sampler.clone();
        if let Some(sampler) = &sampled {
            let sampler = Arc::clone(sampler);
            // Each tick while a guest runs: one sample, then the deadline.
            store.epoch_deadline_callback(move |mut ctx| {
                if let Some(root) = ctx.data().profiled.clone() {
                    sampler.sample(&root, &ctx);
                }
                match ctx.data().ticks_left {
                    Some(0) => Ok(wasmtime::UpdateDeadline::Interrupt),
                    left => {
                        ctx.data_mut().ticks_left = left.map(|n| n - 1);
                        Ok(wasmtime::UpdateDeadline::Continue(1))
                    }
                }
            });
            store.set_epoch_deadline(1);
            store.data_mut().ticks_left = limits.deadline_ticks;
        }
        Caller { store, limits, trapped: None, sampled: sampled.is_some() }
    }

    /// Runs one call into `plugin`, classifying a trap and poisoning the store.
    pub(super) fn call<R>(&mut self, plugin: &Plugin, operation: Op, f: impl FnOnce(&mut Store<StoreCtx>) -> wasmtime::Result<R>) -> Result<R, Fault> {
        if let Some(cause) = &self.trapped {
            return Err(Fault::Poisoned(cause.clone()));
        }
        self.store.data_mut().running = Running::of(plugin.kind);
        let Ok(ticks) = self.limits.ticks_now() else {
            self.trapped = Some(format!("`{}` trapped in `{operation}`: {}", plugin.name, TrapKind::Deadline));
            let detail = BUDGET_SPENT.to_string();
            return Err(Fault::Trap { sha256: plugin.sha256.clone(), kind: TrapKind::Deadline, detail });
        };
        if self.sampled {
            let ctx = self.store.data_mut();
            ctx.profiled = Some(Arc::clone(&plugin.label));
            ctx.ticks_left = ticks;
            self.store.set_epoch_deadline(1);
        } else if let Some(ticks) = ticks {
            self.store.set_epoch_deadline(ticks);
        }
        let value = during(operation, 0, || f(&mut self.store)).map_err(|error| {
            let kind = classify(&error, self.store.data());
            self.trapped = Some(format!("`{}` trapped in `{operation}`: {kind}", plugin.name));
            // A panic the plugin reported before trapping says what and where.
            let detail = match self.store.data_mut().panic.take() {
                Some(panic) => format!("{} ({})", panic.replace('\n', " "), trap_detail(&error)),
                None if kind == TrapKind::Deadline && self.limits.ticks_now().is_err() => BUDGET_SPENT.to_string(),
                None => trap_detail(&error),
            };
            Fault::Trap { sha256: plugin.sha256.clone(), kind, detail }
        })?;
        // A misused `output.put` (output contract 2) breaks this call.
        match self.store.data_mut().answer.broke.take() {
            Some(detail) => Err(Fault::Contract(detail)),
            None => Ok(value),
        }
    }

    /// A call whose WIT result carries an `error`.
    pub(super) fn try_call<R>(
        &mut self,
        plugin: &Plugin,
        operation: Op,
        f: impl FnOnce(&mut Store<StoreCtx>) -> wasmtime::Result<Result<R, types::Error>>,
    ) -> Result<R, Fault> {
        self.call(plugin, operation, f)?.map_err(|e| Fault::Guest(sdk_error(e)))
    }
}

/// Why a call past the engine's budget trapped.
const BUDGET_SPENT: &str = "the whole budget for its calls is spent (`memlab check --budget-s`, or a bench's parameter probe)";

/// A packed result from the guest, checked for its layout.
pub(super) fn packed_out(p: types::Packed) -> Result<Packed, Fault> {
    Packed::from_wire(p).map_err(|e| Fault::Contract(e.to_string()))
}

fn classify(error: &wasmtime::Error, ctx: &StoreCtx) -> TrapKind {
    if ctx.memory_denied {
        return TrapKind::OutOfMemory;
    }
    match error.downcast_ref::<wasmtime::Trap>() {
        Some(wasmtime::Trap::Interrupt) => TrapKind::Deadline,
        Some(wasmtime::Trap::StackOverflow) => TrapKind::StackOverflow,
        Some(wasmtime::Trap::UnreachableCodeReached) => TrapKind::Panic,
        _ => TrapKind::Other,
    }
}

fn trap_detail(error: &wasmtime::Error) -> String {
    // The root cause names the trap; the backtrace around it is noise here.
    let root = error.root_cause().to_string();
    let first = format!("{error:#}").lines().next().unwrap_or("").trim_end_matches(':').to_string();
    if first.contains(&root) || first.starts_with("error while executing") { root } else { format!("{first}: {root}") }
}

fn sdk_error(error: types::Error) -> memlab_sdk::Error {
    match error {
        types::Error::BadParam(m) => memlab_sdk::Error::BadParam(m),
        types::Error::PoolFull => memlab_sdk::Error::PoolFull,
        types::Error::Corrupt(m) => memlab_sdk::Error::Corrupt(m),
        types::Error::InvalidState(m) => memlab_sdk::Error::InvalidState(m),
        types::Error::Other(m) => memlab_sdk::Error::Other(m),
    }
}

pub(super) fn description(d: types::Description) -> Description {
    Description { name: d.name, version: d.version, params: d.params }
}

pub(super) fn instantiate(caller: &mut Caller, plugin: &Arc<Plugin>) -> Result<wasmtime::component::Instance, SeamError> {
    caller.store.data_mut().running = Running::of(plugin.kind);
    // Watched as the kind's create: a start function that never returns
    // is a stall the watchdog names, in preflight as in a run.
    during(plugin.kind.spec().create, 0, || plugin.pre.instantiate(&mut caller.store)).map_err(|e| {
        let mut detail = format!("{e:#}");
        if detail.contains("maximum concurrent") {
            detail.push_str(" (the pooling allocator's instance slots: every shard holds two per generation, live, flushing or started ahead)");
        }
        SeamError::Instantiate { plugin: plugin.name.clone(), detail }
    })
}

pub(super) fn load_failed(plugin: &Plugin, e: wasmtime::Error) -> SeamError {
    SeamError::Instantiate { plugin: plugin.name.clone(), detail: format!("{e:#}") }
}

pub(super) fn wrong_kind(plugin: &Plugin, expected: Kind) -> SeamError {
    SeamError::Load(LoadError::new(plugin.name.clone(), LoadCause::WrongKind(expected.to_string(), plugin.kind.to_string())))
}

/// A constructor's failure, before the seam wraps the runtime.
pub(super) fn create_failed(plugin: &Plugin, operation: Op, shard: usize) -> impl FnOnce(Fault) -> SeamError {
    move |fault| SeamError::call(&plugin.name, operation, shard, fault)
}

/// A shard's memtable and allocator, both in one store.
struct WasmShard {
    caller: Caller,
    memtable_plugin: Arc<Plugin>,
    allocator_plugin: Arc<Plugin>,
    memtable: memtable::Guest,
    allocator: allocator::Guest,
    cursor: Option<ResourceAny>,
    /// The allocator instance's memory once instantiated, before `create`.
    allocator_baseline: u64,
}

/// Instantiates a shard's memtable and allocator in one store and creates
/// both; the seam checks and meters it from then on.
pub(super) fn shard(
    host: &PluginHost,
    memtable_plugin: &Arc<Plugin>,
    memtable_params: &[(String, String)],
    allocator_plugin: &Arc<Plugin>,
    allocator_params: &[(String, String)],
    pool: Arc<MemoryPool>,
    shard: usize,
) -> Result<Box<dyn SerialShardRuntime>, SeamError> {
    let mut caller = Caller::new(host, Some(pool));
    let Indices::Memtable(mt_indices) = &memtable_plugin.indices else {
        return Err(wrong_kind(memtable_plugin, Kind::Memtable));
    };
    let Indices::Allocator(al_indices) = &allocator_plugin.indices else {
        return Err(wrong_kind(allocator_plugin, Kind::Allocator));
    };
    let mt_instance = instantiate(&mut caller, memtable_plugin)?;
    let memtable = mt_indices.load(&mut caller.store, &mt_instance).map_err(|e| load_failed(memtable_plugin, e))?;
    let al_instance = instantiate(&mut caller, allocator_plugin)?;
    let allocator = al_indices.load(&mut caller.store, &al_instance).map_err(|e| load_failed(allocator_plugin, e))?;
    // Before `create`: memory it grows there is held to its reservations
    // like any other (allocator contract 5).
    let allocator_baseline = caller.store.data().memory_of[Running::Allocator as usize];
    // One memtable and one arena per instance (memtable and allocator contract 0).
    during(Op::MemtableCreate, shard, || caller.try_call(memtable_plugin, Op::MemtableCreate, |s| memtable.call_create(s, &memtable_params.to_vec())))
        .map_err(create_failed(memtable_plugin, Op::MemtableCreate, shard))?;
    during(Op::AllocatorCreate, shard, || caller.try_call(allocator_plugin, Op::AllocatorCreate, |s| allocator.call_create(s, &allocator_params.to_vec())))
        .map_err(create_failed(allocator_plugin, Op::AllocatorCreate, shard))?;
    let runtime = WasmShard {
        caller,
        memtable_plugin: Arc::clone(memtable_plugin),
        allocator_plugin: Arc::clone(allocator_plugin),
        memtable,
        allocator,
        cursor: None,
        allocator_baseline,
    };
    Ok(Box::new(runtime))
}

impl MemtableRuntime for WasmShard {
    fn insert(&mut self, lent: &mut Packed) -> Result<(), Fault> {
        let (caller, api, plugin) = (&mut self.caller, &self.memtable, &self.memtable_plugin);
        lent.with_wire(|entries| caller.try_call(plugin, Op::MemtableInsert, |s| api.call_insert(s, entries)))
    }

    fn get(&mut self, keys: Packed) -> Result<Packed, Fault> {
        let keys = keys.into_wire();
        let api = &self.memtable;
        packed_out(self.caller.call(&self.memtable_plugin, Op::MemtableGet, |s| api.call_get(s, &keys))?)
    }

    fn scan(&mut self, start: &[u8], end: Option<&[u8]>, limit: u32) -> Result<Packed, Fault> {
        let api = &self.memtable;
        packed_out(self.caller.call(&self.memtable_plugin, Op::MemtableScan, |s| api.call_scan(s, start, end, limit))?)
    }

    fn open_cursor(&mut self) -> Result<(), Fault> {
        let api = &self.memtable;
        self.cursor = Some(self.caller.call(&self.memtable_plugin, Op::MemtableOpenCursor, |s| api.call_open_cursor(s))?);
        Ok(())
    }

    fn next_entries(&mut self, max_bytes: u32, out: &mut Packed) -> Result<(), Fault> {
        let Some(cursor) = self.cursor else {
            return Err(Fault::Guest(memlab_sdk::Error::InvalidState("no cursor is open".into())));
        };
        let (api, plugin) = (&self.memtable, &self.memtable_plugin);
        self.caller.answer_packed(out, |caller| caller.call(plugin, Op::CursorNext, |s| api.cursor().call_next(s, cursor, max_bytes)))
    }

    fn memtable_stats(&mut self) -> Result<Stats, Fault> {
        let api = &self.memtable;
        self.caller.call(&self.memtable_plugin, Op::MemtableStats, |s| api.call_stats(s))
    }

    fn describe_memtable(&mut self) -> Result<Description, Fault> {
        let api = &self.memtable;
        self.caller.call(&self.memtable_plugin, Op::MemtableDescribe, |s| api.call_describe(s)).map(description)
    }
}

impl AllocatorRuntime for WasmShard {
    fn store_rows(&mut self, lent: &mut Packed) -> Result<Vec<u64>, Fault> {
        self.caller.store.data_mut().refused = false;
        let (caller, api, plugin) = (&mut self.caller, &self.allocator, &self.allocator_plugin);
        lent.with_wire(|rows| caller.try_call(plugin, Op::AllocatorStoreRows, |s| api.call_store_rows(s, rows)))
    }

    fn load(&mut self, refs: &[u64], out: &mut Packed) -> Result<(), Fault> {
        let (api, plugin) = (&self.allocator, &self.allocator_plugin);
        self.caller.answer_packed(out, |caller| caller.try_call(plugin, Op::AllocatorLoad, |s| api.call_load(s, refs)))
    }

    fn allocator_stats(&mut self) -> Result<Stats, Fault> {
        let api = &self.allocator;
        self.caller.call(&self.allocator_plugin, Op::AllocatorStats, |s| api.call_stats(s))
    }

    fn describe_allocator(&mut self) -> Result<Description, Fault> {
        let api = &self.allocator;
        self.caller.call(&self.allocator_plugin, Op::AllocatorDescribe, |s| api.call_describe(s)).map(description)
    }

    fn reserved_bytes(&self) -> u64 {
        self.caller.store.data().reserved
    }

    fn reservations(&self) -> u64 {
        self.caller.store.data().reservations
    }

    fn pool_refused(&self) -> bool {
        self.caller.store.data().refused
    }

    fn charge(&mut self, bytes: u64) {
        self.caller.store.data_mut().charge(bytes);
    }

    fn charged_bytes(&self) -> u64 {
        self.caller.store.data().charged
    }

    fn allocator_baseline(&self) -> Option<u64> {
        Some(self.allocator_baseline)
    }
}

impl SerialShardRuntime for WasmShard {
    fn guest_memory_bytes(&self) -> u64 {
        self.caller.store.data().memory_bytes
    }

    fn memory_of(&self, kind: Kind) -> Option<u64> {
        Some(self.caller.store.data().memory_of[Running::of(kind) as usize])
    }

    /// A component instance takes one thread at a time (wasmtime 48 has
    /// no shared memory for components), so it is never shared.
    fn into_shared(self: Box<Self>) -> Result<Box<dyn ShardRuntime>, Box<dyn SerialShardRuntime>> {
        Err(self)
    }
}

fn serializer_api(caller: &mut Caller, plugin: &Arc<Plugin>) -> Result<serializer::Guest, SeamError> {
    let Indices::Serializer(indices) = &plugin.indices else {
        return Err(wrong_kind(plugin, Kind::Serializer));
    };
    let instance = instantiate(caller, plugin)?;
    indices.load(&mut caller.store, &instance).map_err(|e| load_failed(plugin, e))
}

/// One flush's serializer, in a store of its own.
struct WasmSerializer {
    caller: Caller,
    plugin: Arc<Plugin>,
    api: serializer::Guest,
    writer: ResourceAny,
    /// Linear memory before `create`: memory grown there is the flush's.
    baseline: u64,
}

/// Instantiates a serializer and creates its writer for flush part `shard`.
pub(super) fn serializer(host: &PluginHost, plugin: &Arc<Plugin>, params: &[(String, String)], shard: usize) -> Result<Box<dyn SerializerRuntime>, SeamError> {
    let mut caller = Caller::new(host, None);
    let api = serializer_api(&mut caller, plugin)?;
    let baseline = caller.store.data().memory_bytes;
    let writer = during(Op::WriterCreate, shard, || caller.try_call(plugin, Op::WriterCreate, |s| api.writer().call_create(s, &params.to_vec())))
        .map_err(create_failed(plugin, Op::WriterCreate, shard))?;
    let runtime = WasmSerializer { caller, plugin: Arc::clone(plugin), api, writer, baseline };
    Ok(Box::new(runtime))
}

impl SerializerRuntime for WasmSerializer {
    fn write(&mut self, records: &mut Packed, out: &mut Vec<u8>) -> Result<(), Fault> {
        let (caller, writer, api, plugin) = (&mut self.caller, self.writer, &self.api, &self.plugin);
        records.with_wire(|wire| caller.answer_bytes(out, |caller| caller.try_call(plugin, Op::WriterWrite, |s| api.writer().call_write(s, writer, wire))))
    }

    fn finish(&mut self) -> Result<(Vec<u8>, Finished), Fault> {
        let (writer, api) = (self.writer, &self.api);
        let f = self.caller.try_call(&self.plugin, Op::WriterFinish, |s| api.writer().call_finish(s, writer))?;
        let m = f.meta;
        let meta = SegmentMeta {
            rows: m.rows,
            partitions: m.partitions,
            tombstones: m.tombstones,
            min_timestamp: m.min_timestamp,
            max_timestamp: m.max_timestamp,
            min_clustering: m.min_clustering,
            max_clustering: m.max_clustering,
            checksum: m.checksum,
        };
        Ok((f.tail, Finished { index: f.index, meta }))
    }

    fn describe(&mut self) -> Result<Description, Fault> {
        let (writer, api) = (self.writer, &self.api);
        self.caller.call(&self.plugin, Op::WriterDescribe, |s| api.writer().call_describe(s, writer)).map(description)
    }

    fn stats(&mut self) -> Result<Stats, Fault> {
        let (writer, api) = (self.writer, &self.api);
        self.caller.call(&self.plugin, Op::WriterStats, |s| api.writer().call_stats(s, writer))
    }

    fn guest_memory_bytes(&self) -> u64 {
        self.caller.store.data().memory_bytes
    }

    fn memory_before_create(&self) -> u64 {
        self.baseline
    }
}

/// A segment reader, in a store of its own.
struct WasmReader {
    caller: Caller,
    plugin: Arc<Plugin>,
    api: serializer::Guest,
    reader: ResourceAny,
}

/// Opens a segment with the serializer that wrote it.
pub(super) fn reader(
    host: &PluginHost,
    plugin: &Arc<Plugin>,
    params: &[(String, String)],
    data: &[u8],
    index: &[u8],
) -> Result<Box<dyn ReaderRuntime>, SeamError> {
    let mut caller = Caller::new(host, None);
    let api = serializer_api(&mut caller, plugin)?;
    let reader = during(Op::ReaderOpen, 0, || caller.try_call(plugin, Op::ReaderOpen, |s| api.reader().call_open(s, &params.to_vec(), data, index)))
        .map_err(create_failed(plugin, Op::ReaderOpen, 0))?;
    let runtime = WasmReader { caller, plugin: Arc::clone(plugin), api, reader };
    Ok(Box::new(runtime))
}

impl ReaderRuntime for WasmReader {
    fn next(&mut self, max_bytes: u32) -> Result<Packed, Fault> {
        let (reader, api) = (self.reader, &self.api);
        packed_out(self.caller.try_call(&self.plugin, Op::ReaderNext, |s| api.reader().call_next(s, reader, max_bytes))?)
    }

    fn get(&mut self, keys: Packed) -> Result<Packed, Fault> {
        let keys = keys.into_wire();
        let (reader, api) = (self.reader, &self.api);
        packed_out(self.caller.try_call(&self.plugin, Op::ReaderGet, |s| api.reader().call_get(s, reader, &keys))?)
    }
}
