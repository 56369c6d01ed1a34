//! A shard runtime that takes one caller at a time (every wasm instance,
//! and a native one not exported as concurrent), given to the checked
//! shard as one that takes calls on `&self`: each call takes its lock.
//! The write path calls such a shard under its own shard lock, which
//! orders a batch's log record with its store and insert, so this lock
//! is never contended there.

use std::sync::{Mutex, MutexGuard, PoisonError};

use memlab_sdk::Packed;

use super::{Fault, Kind, Pooled, SerialShardRuntime, ShardRuntime};

/// One caller at a time.
pub(super) struct Locked(Mutex<Box<dyn SerialShardRuntime>>);

impl Locked {
    pub(super) fn new(runtime: Box<dyn SerialShardRuntime>) -> Self {
        Locked(Mutex::new(runtime))
    }

    fn lock(&self) -> MutexGuard<'_, Box<dyn SerialShardRuntime>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl ShardRuntime for Locked {
    fn store_rows(&self, rows: &mut Packed) -> (Result<Vec<u64>, Fault>, Pooled) {
        let mut runtime = self.lock();
        let refs = runtime.store_rows(rows);
        let pooled = Pooled {
            refused: runtime.pool_refused(),
            reserved: runtime.reserved_bytes(),
            charged: runtime.charged_bytes(),
            memory: runtime.memory_of(Kind::Allocator),
        };
        (refs, pooled)
    }

    fn insert(&self, entries: &mut Packed) -> Result<(), Fault> {
        self.lock().insert(entries)
    }

    fn get(&self, keys: Packed) -> Result<Packed, Fault> {
        self.lock().get(keys)
    }

    fn scan(&self, start: &[u8], end: Option<&[u8]>, limit: u32) -> Result<Packed, Fault> {
        self.lock().scan(start, end, limit)
    }

    fn reserved_bytes(&self) -> u64 {
        self.lock().reserved_bytes()
    }

    fn reservations(&self) -> u64 {
        self.lock().reservations()
    }

    fn charge(&self, bytes: u64) {
        self.lock().charge(bytes);
    }

    fn charged_bytes(&self) -> u64 {
        self.lock().charged_bytes()
    }

    fn guest_memory_bytes(&self) -> u64 {
        self.lock().guest_memory_bytes()
    }

    fn memory_of(&self, kind: Kind) -> Option<u64> {
        self.lock().memory_of(kind)
    }

    fn concurrent(&self) -> bool {
        false
    }

    fn alone(&mut self) -> &mut dyn SerialShardRuntime {
        self.0.get_mut().unwrap_or_else(PoisonError::into_inner).as_mut()
    }

    fn into_concurrent(self: Box<Self>) -> Result<Box<dyn ShardRuntime>, Box<dyn ShardRuntime>> {
        let runtime = self.0.into_inner().unwrap_or_else(PoisonError::into_inner);
        runtime.into_shared().map_err(|back| Box::new(Locked::new(back)) as Box<dyn ShardRuntime>)
    }
}
