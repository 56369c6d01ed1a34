//! Strategies running as wasm components: one `Store` per shard (memtable
//! plus allocator), one per flush (serializer), one per segment reader.

use std::sync::Arc;

use memlab_sdk::{Description, Finished, Packed, SegmentMeta, Stats};
use wasmtime::Store;
use wasmtime::component::ResourceAny;

use super::bindings::{allocator, memtable, serializer, types};
use super::load::Indices;
use super::store::{Limits, StoreCtx};
use super::{Plugin, PluginError, PluginHost, TrapKind};
use crate::strategy::{Boundary, FlushStrategy, SegmentReading, ShardStrategies};
use crate::pool::MemoryPool;

/// One plugin instance inside a store.
struct Slot {
    plugin: Arc<Plugin>,
}

/// A store plus the bookkeeping every call shares.
struct Caller {
    store: Store<StoreCtx>,
    limits: Limits,
    shard: usize,
    boundary: Boundary,
    /// Set by the first trap: a trap leaves the whole store unusable
    /// ("cannot enter component instance"), so every instance in it is
    /// poisoned, and later calls say which trap did it.
    trapped: Option<String>,
}

impl Caller {
    fn new(host: &PluginHost, pool: Option<Arc<MemoryPool>>, shard: usize) -> Self {
        let limits = host.limits();
        let mut store = Store::new(&host.engine, StoreCtx::new(limits, pool));
        store.limiter(|ctx| ctx);
        // Instantiation runs guest code too: it gets a call's deadline
        // (and a store with epochs off needs some deadline all the same).
        store.set_epoch_deadline(limits.deadline_ticks.unwrap_or(u64::MAX));
        Caller { store, limits, shard, boundary: Boundary::default(), trapped: None }
    }

    /// Runs one call into `slot`, classifying traps and poisoning the slot.
    fn call<R>(
        &mut self,
        slot: &mut Slot,
        operation: &str,
        bytes_in: usize,
        f: impl FnOnce(&mut Store<StoreCtx>) -> wasmtime::Result<R>,
    ) -> Result<R, PluginError> {
        if let Some(cause) = &self.trapped {
            return Err(PluginError::Poisoned { plugin: slot.plugin.name.clone(), operation: operation.into(), shard: self.shard, cause: cause.clone() });
        }
        if let Some(ticks) = self.limits.deadline_ticks {
            self.store.set_epoch_deadline(ticks);
        }
        self.boundary.calls += 1;
        self.boundary.bytes_in += bytes_in as u64;
        f(&mut self.store).map_err(|error| {
            let kind = classify(&error, self.store.data());
            self.trapped = Some(format!("`{}` trapped in `{operation}`: {kind}", slot.plugin.name));
            PluginError::Trap {
                plugin: slot.plugin.name.clone(),
                sha256: slot.plugin.sha256.clone(),
                operation: operation.into(),
                shard: self.shard,
                kind,
                detail: trap_detail(&error),
            }
        })
    }

    fn guest_error(&self, slot: &Slot, operation: &str, error: types::Error) -> PluginError {
        PluginError::Guest { plugin: slot.plugin.name.clone(), operation: operation.into(), shard: self.shard, error: describe_error(&error) }
    }

    fn contract(&self, slot: &Slot, operation: &str, detail: impl ToString) -> PluginError {
        PluginError::Contract { plugin: slot.plugin.name.clone(), operation: operation.into(), shard: self.shard, detail: detail.to_string() }
    }

    /// Checks a packed result from the guest and counts its bytes.
    fn packed_out(&mut self, slot: &Slot, operation: &str, p: types::Packed) -> Result<Packed, PluginError> {
        self.boundary.bytes_out += (p.data.len() + 4 * p.ends.len()) as u64;
        Packed::from_parts(p.data, p.ends).map_err(|e| self.contract(slot, operation, e))
    }
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

pub(crate) fn describe_error(error: &types::Error) -> String {
    match error {
        types::Error::BadParam(m) => format!("bad parameter: {m}"),
        types::Error::PoolFull => "memory pool is full".into(),
        types::Error::Corrupt(m) => format!("corrupt: {m}"),
        types::Error::InvalidState(m) => format!("invalid state: {m}"),
        types::Error::Other(m) => m.clone(),
    }
}

fn wit_packed(p: Packed) -> (types::Packed, usize) {
    let (data, ends) = p.into_parts();
    let bytes = data.len() + 4 * ends.len();
    (types::Packed { data, ends }, bytes)
}

/// Returns a lent batch's buffers, which the call only read. They came out
/// of a valid batch, so `from_parts` (a pass over `ends`) cannot refuse them.
fn give_back(lent: &mut Packed, p: types::Packed) {
    *lent = Packed::from_parts(p.data, p.ends).unwrap_or_default();
}

fn description(d: types::Description) -> Description {
    Description { name: d.name, version: d.version, params: d.params }
}

fn instantiate(caller: &mut Caller, plugin: &Arc<Plugin>) -> Result<wasmtime::component::Instance, PluginError> {
    plugin
        .pre
        .instantiate(&mut caller.store)
        .map_err(|e| {
            let mut detail = format!("{e:#}");
            if detail.contains("maximum concurrent") {
                detail.push_str(" (the pooling allocator's instance slots: every shard holds two per generation, live, flushing or started ahead)");
            }
            PluginError::Instantiate { plugin: plugin.name.clone(), detail }
        })
}

fn load_failed(plugin: &Plugin, e: wasmtime::Error) -> PluginError {
    PluginError::Instantiate { plugin: plugin.name.clone(), detail: format!("{e:#}") }
}

/// A shard's memtable and allocator, both in one store.
pub struct WasmShard {
    caller: Caller,
    memtable_slot: Slot,
    allocator_slot: Slot,
    memtable: memtable::Guest,
    allocator: allocator::Guest,
    table: ResourceAny,
    arena: ResourceAny,
    cursor: Option<ResourceAny>,
}

impl WasmShard {
    pub(super) fn new(
        host: &PluginHost,
        memtable_plugin: &Arc<Plugin>,
        memtable_params: &[(String, String)],
        allocator_plugin: &Arc<Plugin>,
        allocator_params: &[(String, String)],
        pool: Arc<MemoryPool>,
        shard: usize,
    ) -> Result<Self, PluginError> {
        let mut caller = Caller::new(host, Some(pool), shard);
        let Indices::Memtable(mt_indices) = &memtable_plugin.indices else {
            return Err(wrong_kind(memtable_plugin, "memtable"));
        };
        let Indices::Allocator(al_indices) = &allocator_plugin.indices else {
            return Err(wrong_kind(allocator_plugin, "allocator"));
        };
        let mt_instance = instantiate(&mut caller, memtable_plugin)?;
        let memtable = mt_indices.load(&mut caller.store, &mt_instance).map_err(|e| load_failed(memtable_plugin, e))?;
        let al_instance = instantiate(&mut caller, allocator_plugin)?;
        let allocator = al_indices.load(&mut caller.store, &al_instance).map_err(|e| load_failed(allocator_plugin, e))?;
        let mut memtable_slot = Slot { plugin: Arc::clone(memtable_plugin) };
        let mut allocator_slot = Slot { plugin: Arc::clone(allocator_plugin) };
        let table = caller
            .call(&mut memtable_slot, "memtable.create", 0, |s| memtable.memtable().call_create(s, &memtable_params.to_vec()))?
            .map_err(|e| caller.guest_error(&memtable_slot, "memtable.create", e))?;
        let arena = caller
            .call(&mut allocator_slot, "arena.create", 0, |s| allocator.arena().call_create(s, &allocator_params.to_vec()))?
            .map_err(|e| caller.guest_error(&allocator_slot, "arena.create", e))?;
        Ok(WasmShard { caller, memtable_slot, allocator_slot, memtable, allocator, table, arena, cursor: None })
    }
}

fn wrong_kind(plugin: &Plugin, expected: &str) -> PluginError {
    PluginError::WrongKind { plugin: plugin.name.clone(), expected: expected.into(), found: plugin.kind.to_string() }
}

impl ShardStrategies for WasmShard {
    fn store_rows(&mut self, lent: &mut Packed) -> Result<Vec<u64>, PluginError> {
        let expected = lent.len();
        let (rows, bytes) = wit_packed(std::mem::take(lent));
        let (arena, api) = (self.arena, &self.allocator);
        let result = self.caller.call(&mut self.allocator_slot, "arena.store", bytes, |s| api.arena().call_store(s, arena, &rows));
        give_back(lent, rows);
        let refs = result?
            .map_err(|e| self.caller.guest_error(&self.allocator_slot, "arena.store", e))?;
        self.caller.boundary.bytes_out += 8 * refs.len() as u64;
        if refs.len() != expected {
            return Err(self.caller.contract(&self.allocator_slot, "arena.store", format_args!("returned {} refs for {expected} rows", refs.len())));
        }
        Ok(refs)
    }

    fn insert(&mut self, lent: &mut Packed) -> Result<(), PluginError> {
        let (entries, bytes) = wit_packed(std::mem::take(lent));
        let (table, api) = (self.table, &self.memtable);
        let result = self.caller.call(&mut self.memtable_slot, "memtable.insert", bytes, |s| api.memtable().call_insert(s, table, &entries));
        give_back(lent, entries);
        result?.map_err(|e| self.caller.guest_error(&self.memtable_slot, "memtable.insert", e))
    }

    fn get(&mut self, keys: Packed) -> Result<Packed, PluginError> {
        let expected = keys.len();
        let (keys, bytes) = wit_packed(keys);
        let (table, api) = (self.table, &self.memtable);
        let out = self.caller.call(&mut self.memtable_slot, "memtable.get", bytes, |s| api.memtable().call_get(s, table, &keys))?;
        let out = self.caller.packed_out(&self.memtable_slot, "memtable.get", out)?;
        if out.len() != expected {
            return Err(self.caller.contract(&self.memtable_slot, "memtable.get", format_args!("returned {} records for {expected} keys", out.len())));
        }
        Ok(out)
    }

    fn scan(&mut self, start: &[u8], end: Option<&[u8]>, limit: u32) -> Result<Packed, PluginError> {
        let (table, api) = (self.table, &self.memtable);
        let bytes = start.len() + end.map_or(0, <[u8]>::len);
        let out = self.caller.call(&mut self.memtable_slot, "memtable.scan", bytes, |s| {
            api.memtable().call_scan(s, table, start, end, limit)
        })?;
        self.caller.packed_out(&self.memtable_slot, "memtable.scan", out)
    }

    fn open_cursor(&mut self) -> Result<(), PluginError> {
        let (table, api) = (self.table, &self.memtable);
        let cursor = self.caller.call(&mut self.memtable_slot, "memtable.cursor", 0, |s| api.memtable().call_cursor(s, table))?;
        self.cursor = Some(cursor);
        Ok(())
    }

    fn next_entries(&mut self, max_bytes: u32) -> Result<Packed, PluginError> {
        let Some(cursor) = self.cursor else {
            return Err(self.caller.contract(&self.memtable_slot, "cursor.next", "no cursor is open"));
        };
        let api = &self.memtable;
        let out = self.caller.call(&mut self.memtable_slot, "cursor.next", 4, |s| api.cursor().call_next(s, cursor, max_bytes))?;
        let out = self.caller.packed_out(&self.memtable_slot, "cursor.next", out)?;
        // Memtable contract 5: entries until `max_bytes` is reached, so all
        // but the last fit below it; more is a plugin flooding the host.
        let before_last = out.data_len() - out.get(out.len().wrapping_sub(1)).map_or(0, <[u8]>::len);
        if before_last >= max_bytes as usize && out.len() > 1 {
            let detail = format!("returned {} entries of {} bytes when asked for at most {max_bytes}", out.len(), out.data_len());
            return Err(self.caller.contract(&self.memtable_slot, "cursor.next", detail));
        }
        Ok(out)
    }

    fn load(&mut self, refs: Vec<u64>) -> Result<Packed, PluginError> {
        let expected = refs.len();
        let (arena, api) = (self.arena, &self.allocator);
        let out = self
            .caller
            .call(&mut self.allocator_slot, "arena.load", 8 * refs.len(), |s| api.arena().call_load(s, arena, &refs))?
            .map_err(|e| self.caller.guest_error(&self.allocator_slot, "arena.load", e))?;
        let out = self.caller.packed_out(&self.allocator_slot, "arena.load", out)?;
        if out.len() != expected {
            return Err(self.caller.contract(&self.allocator_slot, "arena.load", format_args!("returned {} rows for {expected} refs", out.len())));
        }
        Ok(out)
    }

    fn stats(&mut self) -> Result<(Stats, Stats), PluginError> {
        let (table, arena) = (self.table, self.arena);
        let (mt, al) = (&self.memtable, &self.allocator);
        let memtable = self.caller.call(&mut self.memtable_slot, "memtable.stats", 0, |s| mt.memtable().call_stats(s, table))?;
        let allocator = self.caller.call(&mut self.allocator_slot, "arena.stats", 0, |s| al.arena().call_stats(s, arena))?;
        Ok((memtable, allocator))
    }

    fn describe(&mut self) -> Result<(Description, Description), PluginError> {
        let (table, arena) = (self.table, self.arena);
        let (mt, al) = (&self.memtable, &self.allocator);
        let memtable = self.caller.call(&mut self.memtable_slot, "memtable.describe", 0, |s| mt.memtable().call_describe(s, table))?;
        let allocator = self.caller.call(&mut self.allocator_slot, "arena.describe", 0, |s| al.arena().call_describe(s, arena))?;
        Ok((description(memtable), description(allocator)))
    }

    fn reserved_bytes(&self) -> u64 {
        self.caller.store.data().reserved
    }

    fn guest_memory_bytes(&self) -> u64 {
        self.caller.store.data().memory_bytes
    }

    fn boundary(&self) -> Boundary {
        self.caller.boundary
    }
}

/// One flush's serializer, in a store of its own.
pub struct WasmSerializer {
    caller: Caller,
    slot: Slot,
    api: serializer::Guest,
    writer: ResourceAny,
}

impl WasmSerializer {
    /// Instantiates the serializer and creates its writer.
    pub fn new(host: &PluginHost, plugin: &Arc<Plugin>, params: &[(String, String)], shard: usize) -> Result<Self, PluginError> {
        let mut caller = Caller::new(host, None, shard);
        let api = serializer_api(&mut caller, plugin)?;
        let mut slot = Slot { plugin: Arc::clone(plugin) };
        let writer = caller
            .call(&mut slot, "writer.create", 0, |s| api.writer().call_create(s, &params.to_vec()))?
            .map_err(|e| caller.guest_error(&slot, "writer.create", e))?;
        Ok(WasmSerializer { caller, slot, api, writer })
    }
}

fn serializer_api(caller: &mut Caller, plugin: &Arc<Plugin>) -> Result<serializer::Guest, PluginError> {
    let Indices::Serializer(indices) = &plugin.indices else {
        return Err(wrong_kind(plugin, "serializer"));
    };
    let instance = instantiate(caller, plugin)?;
    indices.load(&mut caller.store, &instance).map_err(|e| load_failed(plugin, e))
}

impl FlushStrategy for WasmSerializer {
    fn write(&mut self, records: Packed) -> Result<Vec<u8>, PluginError> {
        let (records, bytes) = wit_packed(records);
        let (writer, api) = (self.writer, &self.api);
        let out = self
            .caller
            .call(&mut self.slot, "writer.write", bytes, |s| api.writer().call_write(s, writer, &records))?
            .map_err(|e| self.caller.guest_error(&self.slot, "writer.write", e))?;
        self.caller.boundary.bytes_out += out.len() as u64;
        Ok(out)
    }

    fn finish(&mut self) -> Result<(Vec<u8>, Finished), PluginError> {
        let (writer, api) = (self.writer, &self.api);
        let f = self
            .caller
            .call(&mut self.slot, "writer.finish", 0, |s| api.writer().call_finish(s, writer))?
            .map_err(|e| self.caller.guest_error(&self.slot, "writer.finish", e))?;
        self.caller.boundary.bytes_out += (f.tail.len() + f.index.len()) as u64;
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

    fn describe(&mut self) -> Result<Description, PluginError> {
        let (writer, api) = (self.writer, &self.api);
        let d = self.caller.call(&mut self.slot, "writer.describe", 0, |s| api.writer().call_describe(s, writer))?;
        Ok(description(d))
    }

    fn guest_memory_bytes(&self) -> u64 {
        self.caller.store.data().memory_bytes
    }

    fn boundary(&self) -> Boundary {
        self.caller.boundary
    }
}

/// A segment reader, in a store of its own.
pub struct WasmReader {
    caller: Caller,
    slot: Slot,
    api: serializer::Guest,
    reader: ResourceAny,
}

impl WasmReader {
    /// Opens a segment with the serializer that wrote it.
    pub fn open(
        host: &PluginHost,
        plugin: &Arc<Plugin>,
        params: &[(String, String)],
        data: &[u8],
        index: &[u8],
    ) -> Result<Self, PluginError> {
        let mut caller = Caller::new(host, None, 0);
        let api = serializer_api(&mut caller, plugin)?;
        let mut slot = Slot { plugin: Arc::clone(plugin) };
        let reader = caller
            .call(&mut slot, "reader.open", data.len() + index.len(), |s| api.reader().call_open(s, &params.to_vec(), data, index))?
            .map_err(|e| caller.guest_error(&slot, "reader.open", e))?;
        Ok(WasmReader { caller, slot, api, reader })
    }
}

impl SegmentReading for WasmReader {
    fn next(&mut self, max_bytes: u32) -> Result<Packed, PluginError> {
        let (reader, api) = (self.reader, &self.api);
        let out = self
            .caller
            .call(&mut self.slot, "reader.next", 4, |s| api.reader().call_next(s, reader, max_bytes))?
            .map_err(|e| self.caller.guest_error(&self.slot, "reader.next", e))?;
        self.caller.packed_out(&self.slot, "reader.next", out)
    }

    fn get(&mut self, keys: Packed) -> Result<Packed, PluginError> {
        let (keys, bytes) = wit_packed(keys);
        let (reader, api) = (self.reader, &self.api);
        let out = self
            .caller
            .call(&mut self.slot, "reader.get", bytes, |s| api.reader().call_get(s, reader, &keys))?
            .map_err(|e| self.caller.guest_error(&self.slot, "reader.get", e))?;
        self.caller.packed_out(&self.slot, "reader.get", out)
    }
}
