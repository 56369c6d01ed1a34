//! Strategies that take many writers at once. A shard of a memtable and
//! an allocator that are both concurrent runs natively without the
//! shard's lock: every writer thread calls `insert` and `store` at once,
//! as Cassandra's `SkipListMemtable` and `NativeAllocator`, and RocksDB's
//! `InlineSkipList` with `allow_concurrent_memtable_write`, take them.
//!
//! A wasm instance cannot be entered by two threads, so in a component
//! the same type runs behind [`Serialized`]: one call at a time, which
//! the record says.
//!
//! What the host holds a concurrent memtable to: a `get` or `scan` sees
//! every insert that completed before it started, and may or may not see
//! one that races it, and never answers a version no insert begun
//! before it ended wrote. The cursor opens only once every writer is
//! out. `memlab check --native` holds a concurrent build to this with
//! writers racing a reader.

#[cfg(not(target_arch = "wasm32"))]
pub(crate) mod native;

use crate::{Allocator, Entry, Error, Memtable, Packed, Params, Pool, RowView, Stats};

/// An entry's timestamp and ref: what a point read finds for its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Version {
    /// The entry's write timestamp.
    pub timestamp: u64,
    /// The allocator's ref of its row.
    pub reference: u64,
}

/// A sorted index that takes calls from many threads at once.
pub trait ConcurrentMemtable: Send + Sync + Sized + 'static {
    /// The name config uses.
    const NAME: &'static str;
    /// The implementation's version.
    const VERSION: &'static str;
    /// Where a cursor stands between `next` calls.
    type Position: Send + 'static;

    /// Builds an empty memtable, taking its parameters from `params`.
    fn create(params: &mut Params) -> Result<Self, Error>;

    /// Inserts one entry, beside other inserts and reads. For an existing
    /// key the higher timestamp wins (timestamps in a stream are unique).
    fn insert(&self, entry: Entry<'_>) -> Result<(), Error>;

    /// Inserts a batch; override to exploit the batch as a whole.
    fn insert_batch(&self, entries: &Packed) -> Result<(), Error> {
        for record in entries.iter() {
            self.insert(Entry::decode(record)?)?;
        }
        Ok(())
    }

    /// The newest version of `key`, if any.
    fn get(&self, key: &[u8]) -> Option<Version>;

    /// Appends entries with `start <= key < end` in order, at most `limit`.
    fn scan(&self, start: &[u8], end: Option<&[u8]>, limit: usize, out: &mut Packed);

    /// A cursor before the first entry; no insert follows (the host
    /// opens it once every writer is out).
    fn cursor(&self) -> Self::Position;

    /// Appends entries after `position` until `max_bytes` is reached (at
    /// least one while any remain), and moves `position` past them.
    fn next(&self, position: &mut Self::Position, max_bytes: usize, out: &mut Packed);

    /// Counters; must include `entries` and `index-bytes`.
    fn stats(&self) -> Stats;
}

/// An allocator that every writer of its memtable stores into at once.
pub trait ConcurrentAllocator: Send + Sync + Sized + 'static {
    /// The name config uses.
    const NAME: &'static str;
    /// The implementation's version.
    const VERSION: &'static str;

    /// Builds an empty allocator, taking its parameters from `params`.
    fn create(params: &mut Params) -> Result<Self, Error>;

    /// Keeps `row`'s bytes, reserving them from `pool` first (the pool is
    /// the calling writer's), and returns the ref that `load` takes.
    fn store(&self, pool: &mut dyn Pool, row: RowView<'_>) -> Result<u64, Error>;

    /// Stores a batch; override to reserve for the batch at once.
    fn store_batch(&self, pool: &mut dyn Pool, rows: &Packed, refs: &mut Vec<u64>) -> Result<(), Error> {
        for record in rows.iter() {
            refs.push(self.store(pool, RowView::decode(record)?)?);
        }
        Ok(())
    }

    /// The row bytes behind `reference`, exactly as stored.
    fn load(&self, reference: u64) -> Result<&[u8], Error>;

    /// Counters; must include `bytes-used`, `bytes-reserved`, `regions`,
    /// `reservations` and `waste`.
    fn stats(&self) -> Stats;
}

/// A concurrent strategy run one call at a time: how a component (wasm)
/// runs it, since an instance takes one thread.
pub struct Serialized<T>(T);

impl<T> Serialized<T> {
    /// The strategy, for calls from many threads at once (native).
    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) fn inner(&self) -> &T {
        &self.0
    }
}

impl<T: ConcurrentMemtable> Memtable for Serialized<T> {
    const NAME: &'static str = T::NAME;
    const VERSION: &'static str = T::VERSION;
    type Position = T::Position;

    fn create(params: &mut Params) -> Result<Self, Error> {
        T::create(params).map(Serialized)
    }

    fn insert(&mut self, entry: Entry<'_>) -> Result<(), Error> {
        self.0.insert(entry)
    }

    fn insert_batch(&mut self, entries: &Packed) -> Result<(), Error> {
        self.0.insert_batch(entries)
    }

    fn get<'a>(&'a self, key: &'a [u8]) -> Option<Entry<'a>> {
        self.0.get(key).map(|v| Entry { key, timestamp: v.timestamp, reference: v.reference })
    }

    fn scan(&self, start: &[u8], end: Option<&[u8]>, limit: usize, out: &mut Packed) {
        self.0.scan(start, end, limit, out);
    }

    fn cursor(&self) -> T::Position {
        self.0.cursor()
    }

    fn next(&self, position: &mut T::Position, max_bytes: usize, out: &mut Packed) {
        self.0.next(position, max_bytes, out);
    }

    fn stats(&self) -> Stats {
        self.0.stats()
    }
}

impl<T: ConcurrentAllocator> Allocator for Serialized<T> {
    const NAME: &'static str = T::NAME;
    const VERSION: &'static str = T::VERSION;

    fn create(params: &mut Params) -> Result<Self, Error> {
        T::create(params).map(Serialized)
    }

    fn store(&mut self, pool: &mut dyn Pool, row: RowView<'_>) -> Result<u64, Error> {
        self.0.store(pool, row)
    }

    fn store_batch(&mut self, pool: &mut dyn Pool, rows: &Packed, refs: &mut Vec<u64>) -> Result<(), Error> {
        self.0.store_batch(pool, rows, refs)
    }

    fn load(&self, reference: u64) -> Result<&[u8], Error> {
        self.0.load(reference)
    }

    fn stats(&self) -> Stats {
        self.0.stats()
    }
}
