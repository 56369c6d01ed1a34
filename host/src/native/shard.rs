//! A shard's native runtime: its memtable and allocator instances and
//! the pool they reserve from, called by one writer at a time, or by
//! every writer at once where both strategies are concurrent.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use memlab_sdk::native::{Called, Remote, SharedRemote, decode_description, decode_stats};
use memlab_sdk::{Description, Error, Op, Packed, Pool, Stats};

use super::instance::{Instance, Remotely};
use super::library::thrown;
use crate::pool::MemoryPool;
use crate::seam::watch::during;
use crate::seam::{AllocatorRuntime, Fault, Kind, MemtableRuntime, Pooled, SerialShardRuntime, ShardRuntime};

/// The host pool, as a native allocator sees it.
pub(super) struct NativePool {
    pub(super) pool: Arc<MemoryPool>,
    reserved: u64,
    reservations: u64,
    refused: bool,
}

impl NativePool {
    pub(super) fn new(pool: Arc<MemoryPool>) -> Self {
        NativePool { pool, reserved: 0, reservations: 0, refused: false }
    }
}

impl Pool for NativePool {
    fn reserve(&mut self, bytes: u64) -> Result<(), Error> {
        if self.pool.reserve(bytes).is_err() {
            self.refused = true;
            return Err(Error::PoolFull);
        }
        self.reserved += bytes;
        self.reservations += 1;
        Ok(())
    }

    fn reserve_each(&mut self, sizes: &[u64]) -> Result<(), Error> {
        let Ok(granted) = self.pool.reserve_each(sizes) else {
            self.refused = true;
            return Err(Error::PoolFull);
        };
        self.reserved += granted;
        self.reservations += sizes.len() as u64;
        Ok(())
    }

    fn release(&mut self, bytes: u64) {
        let bytes = bytes.min(self.reserved);
        self.pool.release(bytes);
        self.reserved -= bytes;
    }
}

/// A shard's native memtable and allocator.
pub(super) struct NativeShard<R = Remote> {
    pub(super) memtable: Instance<R>,
    pub(super) allocator: Instance<R>,
    pub(super) pool: NativePool,
    /// A `load`'s refs in wire form.
    refs: Vec<u8>,
}

impl<R: Remotely> NativeShard<R> {
    pub(super) fn new(memtable: Instance<R>, allocator: Instance<R>, pool: NativePool) -> Self {
        NativeShard { memtable, allocator, pool, refs: Vec::new() }
    }
}

impl<R: Remotely> MemtableRuntime for NativeShard<R> {
    fn insert(&mut self, entries: &mut Packed) -> Result<(), Fault> {
        let mut none = Vec::new();
        self.memtable.lent(Op::MemtableInsert, entries, &mut none)
    }

    fn get(&mut self, mut keys: Packed) -> Result<Packed, Fault> {
        let mut out = Packed::new();
        let m = &mut self.memtable;
        keys.with_wire(|wire| m.packed(Op::MemtableGet, wire, None, 0, &mut out))?;
        Ok(out)
    }

    fn scan(&mut self, start: &[u8], end: Option<&[u8]>, limit: u32) -> Result<Packed, Fault> {
        let mut out = Packed::new();
        self.memtable.packed(Op::MemtableScan, start, end, u64::from(limit), &mut out)?;
        Ok(out)
    }

    fn open_cursor(&mut self) -> Result<(), Fault> {
        self.memtable.bytes(Op::MemtableOpenCursor, &[], None, 0).map(drop)
    }

    fn next_entries(&mut self, max_bytes: u32, out: &mut Packed) -> Result<(), Fault> {
        self.memtable.packed(Op::CursorNext, &[], None, u64::from(max_bytes), out)
    }

    fn memtable_stats(&mut self) -> Result<Stats, Fault> {
        self.memtable.decoded(Op::MemtableStats, decode_stats)
    }

    fn describe_memtable(&mut self) -> Result<Description, Fault> {
        self.memtable.decoded(Op::MemtableDescribe, decode_description)
    }
}

impl<R: Remotely> AllocatorRuntime for NativeShard<R> {
    fn store_rows(&mut self, rows: &mut Packed) -> Result<Vec<u64>, Fault> {
        self.pool.refused = false;
        let (op, Instance { remote, plugin, bytes }, pool) = (Op::AllocatorStoreRows, &mut self.allocator, &mut self.pool);
        during(op, 0, || rows.with_wire(|wire| remote.call_with_pool(op, wire, pool, bytes))).map_err(|c| Fault::Guest(thrown(plugin, op, c)))?;
        memlab_sdk::native::decode_refs(bytes).map_err(|e| Fault::Contract(format!("{op}: {e}")))
    }

    fn load(&mut self, refs: &[u64], out: &mut Packed) -> Result<(), Fault> {
        self.refs.clear();
        self.refs.extend(refs.iter().flat_map(|r| r.to_le_bytes()));
        self.allocator.packed(Op::AllocatorLoad, &self.refs, None, 0, out)
    }

    fn allocator_stats(&mut self) -> Result<Stats, Fault> {
        self.allocator.decoded(Op::AllocatorStats, decode_stats)
    }

    fn describe_allocator(&mut self) -> Result<Description, Fault> {
        self.allocator.decoded(Op::AllocatorDescribe, decode_description)
    }

    fn reserved_bytes(&self) -> u64 {
        self.pool.reserved
    }

    fn reservations(&self) -> u64 {
        self.pool.reservations
    }

    fn pool_refused(&self) -> bool {
        self.pool.refused
    }

    fn allocator_baseline(&self) -> Option<u64> {
        None
    }
}

impl SerialShardRuntime for NativeShard {
    fn guest_memory_bytes(&self) -> u64 {
        0
    }

    fn memory_of(&self, _kind: Kind) -> Option<u64> {
        None
    }

    fn into_shared(self: Box<Self>) -> Result<Box<dyn ShardRuntime>, Box<dyn SerialShardRuntime>> {
        let NativeShard { memtable: m, allocator: a, pool, refs } = *self;
        match (SharedRemote::of(m.remote), SharedRemote::of(a.remote)) {
            (Ok(memtable), Ok(allocator)) => Ok(Box::new(SharedNativeShard {
                shard: NativeShard::new(Instance::new(memtable, &m.plugin), Instance::new(allocator, &a.plugin), NativePool::new(Arc::clone(&pool.pool))),
                reserved: pool.reserved.into(),
                reservations: pool.reservations.into(),
            })),
            (m_back, a_back) => {
                let back = |r: Result<SharedRemote, Remote>, plugin| Instance::new(r.map_or_else(|r| r, SharedRemote::into_inner), &plugin);
                Err(Box::new(NativeShard { memtable: back(m_back, m.plugin), allocator: back(a_back, a.plugin), pool, refs }))
            }
        }
    }
}

/// The flush's calls on a concurrent shard, alone; its writers' calls and
/// the pool's counts are `SharedNativeShard`'s.
impl SerialShardRuntime for NativeShard<SharedRemote> {
    fn guest_memory_bytes(&self) -> u64 {
        0
    }

    fn memory_of(&self, _kind: Kind) -> Option<u64> {
        None
    }

    fn into_shared(self: Box<Self>) -> Result<Box<dyn ShardRuntime>, Box<dyn SerialShardRuntime>> {
        Err(self)
    }
}

/// A shard of a concurrent memtable and a concurrent allocator, native:
/// every writer calls it at once, and the pool's counts are atomics.
pub(super) struct SharedNativeShard {
    shard: NativeShard<SharedRemote>,
    reserved: AtomicU64,
    reservations: AtomicU64,
}

/// The pool as one writer's `store-rows` call sees it.
struct CallPool<'a> {
    shard: &'a SharedNativeShard,
    refused: bool,
}

impl Pool for CallPool<'_> {
    fn reserve(&mut self, bytes: u64) -> Result<(), Error> {
        self.reserve_each(&[bytes])
    }

    fn reserve_each(&mut self, sizes: &[u64]) -> Result<(), Error> {
        let Ok(granted) = self.shard.shard.pool.pool.reserve_each(sizes) else {
            self.refused = true;
            return Err(Error::PoolFull);
        };
        // SeqCst: the seam counts a writer's rows after its reservations
        // and reads this after the rows (`Shard::store_rows`).
        self.shard.reserved.fetch_add(granted, Ordering::SeqCst);
        self.shard.reservations.fetch_add(sizes.len() as u64, Ordering::Relaxed);
        Ok(())
    }

    fn release(&mut self, bytes: u64) {
        let s = self.shard;
        let mut taken = 0;
        let _ = s.reserved.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |held| {
            taken = bytes.min(held);
            Some(held - taken)
        });
        s.shard.pool.pool.release(taken);
    }
}

fn guest(plugin: &Arc<str>, op: Op) -> impl FnOnce(Called) -> Fault + '_ {
    move |c| Fault::Guest(thrown(plugin, op, c))
}

impl ShardRuntime for SharedNativeShard {
    fn store_rows(&self, rows: &mut Packed) -> (Result<Vec<u64>, Fault>, Pooled) {
        let (op, Instance { remote, plugin, .. }) = (Op::AllocatorStoreRows, &self.shard.allocator);
        let mut pool = CallPool { shard: self, refused: false };
        let mut bytes = Vec::with_capacity(8 * rows.len());
        let called = during(op, 0, || rows.with_wire(|wire| remote.call_with_pool(op, wire, &mut pool, &mut bytes)));
        let pooled = Pooled { refused: pool.refused, reserved: self.reserved_bytes(), ..Pooled::default() };
        let refs = called.map_err(guest(plugin, op)).and_then(|()| memlab_sdk::native::decode_refs(&bytes).map_err(|e| Fault::Contract(format!("{op}: {e}"))));
        (refs, pooled)
    }

    fn insert(&self, entries: &mut Packed) -> Result<(), Fault> {
        let (op, Instance { remote, plugin, .. }) = (Op::MemtableInsert, &self.shard.memtable);
        during(op, 0, || entries.with_wire(|wire| remote.call_bytes(op, wire, None, 0, &mut Vec::new()))).map_err(guest(plugin, op))
    }

    fn get(&self, mut keys: Packed) -> Result<Packed, Fault> {
        let (op, Instance { remote, plugin, .. }) = (Op::MemtableGet, &self.shard.memtable);
        let mut out = Packed::new();
        during(op, 0, || keys.with_wire(|wire| remote.call_packed(op, wire, None, 0, &mut out))).map_err(guest(plugin, op))?;
        Ok(out)
    }

    fn scan(&self, start: &[u8], end: Option<&[u8]>, limit: u32) -> Result<Packed, Fault> {
        let (op, Instance { remote, plugin, .. }) = (Op::MemtableScan, &self.shard.memtable);
        let mut out = Packed::new();
        during(op, 0, || remote.call_packed(op, start, end, u64::from(limit), &mut out)).map_err(guest(plugin, op))?;
        Ok(out)
    }

    fn reserved_bytes(&self) -> u64 {
        self.reserved.load(Ordering::SeqCst)
    }

    fn reservations(&self) -> u64 {
        self.reservations.load(Ordering::Relaxed)
    }

    /// A native twin's memory is the process's: nothing to charge.
    fn charge(&self, _bytes: u64) {}

    fn charged_bytes(&self) -> u64 {
        0
    }

    fn guest_memory_bytes(&self) -> u64 {
        0
    }

    fn memory_of(&self, _kind: Kind) -> Option<u64> {
        None
    }

    fn concurrent(&self) -> bool {
        true
    }

    fn alone(&mut self) -> &mut dyn SerialShardRuntime {
        &mut self.shard
    }

    fn into_concurrent(self: Box<Self>) -> Result<Box<dyn ShardRuntime>, Box<dyn ShardRuntime>> {
        Ok(self)
    }
}
