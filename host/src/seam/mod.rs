//! The seam between the write path and its strategies. A runtime (the
//! wasm components in `plugin`, the native twins in `native`) implements
//! one object-safe trait, `StrategyRuntime`, that makes raw instances of
//! every kind, which only make raw calls; `Strategy` wraps each instance
//! once in its checked type (`Shard`, `Serializer`, `Reader`,
//! `CommitLogFormat`), which counts the boundary traffic and enforces the
//! contract checks, so both runtimes are metered and held to the contract
//! the same way. Nothing above the seam matches on a runtime.

mod books;
mod budget;
mod checked_flush;
mod checked_log;
mod describe;
mod error;
mod kind;
pub mod ledger;
mod locked;
mod noted;
mod op;
mod sample;
mod shard;
mod shard_alone;
#[cfg(test)]
pub(crate) mod stub;
mod tape;
mod writers;

pub(crate) use sample::secret;
pub use sample::{picked, secret_offset, secret_pick};
pub mod watch;

use std::any::Any;
use std::sync::Arc;

use memlab_sdk::twin::Replayed;
use memlab_sdk::{Description, Finished, Packed, Stats};

use crate::pool::MemoryPool;

pub use budget::{FRAMING_PER_ROW, MEMORY_SLACK_BYTES, memory_allowance};
pub use checked_flush::{Reader, Serializer};
pub use checked_log::CommitLogFormat;
pub use describe::{MAX_DESCRIBED_PARAMS, Unprobed, check_description, show_key};
pub use error::{Fault, LoadCause, LoadError, SeamError, TrapKind};
pub use kind::{KINDS, Kind, KindSpec, KindSpecs};
pub use op::Op;
pub use shard::Shard;
pub use tape::{Tape, behaviour};

/// Calls and bytes across the plugin boundary.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Boundary {
    /// Calls made.
    pub calls: u64,
    /// Bytes passed in (arguments).
    pub bytes_in: u64,
    /// Bytes passed back (results).
    pub bytes_out: u64,
}

impl Boundary {
    pub(crate) fn add(&mut self, other: Boundary) {
        self.calls += other.calls;
        self.bytes_in += other.bytes_in;
        self.bytes_out += other.bytes_out;
    }
}

/// A shard's memtable as a runtime runs it: raw calls, no counting, no
/// checks (`Shard` does both).
pub trait MemtableRuntime {
    /// Inserts entries into the memtable. The batch is lent, so its
    /// buffers serve the next one; it comes back unchanged.
    fn insert(&mut self, entries: &mut Packed) -> Result<(), Fault>;
    /// Batched point reads.
    fn get(&mut self, keys: Packed) -> Result<Packed, Fault>;
    /// A range scan.
    fn scan(&mut self, start: &[u8], end: Option<&[u8]>, limit: u32) -> Result<Packed, Fault>;
    /// Freezes the memtable and opens its flush cursor.
    fn open_cursor(&mut self) -> Result<(), Fault>;
    /// The cursor's next entries, into `out` (empty: the flush lends one
    /// buffer for every chunk, so a chunk allocates nothing it need not).
    fn next_entries(&mut self, max_bytes: u32, out: &mut Packed) -> Result<(), Fault>;
    /// The memtable's counters.
    fn memtable_stats(&mut self) -> Result<Stats, Fault>;
    /// The memtable's `describe()`.
    fn describe_memtable(&mut self) -> Result<Description, Fault>;
}

/// A shard's allocator as a runtime runs it.
pub trait AllocatorRuntime {
    /// Stores rows in the allocator; lent as in `MemtableRuntime::insert`.
    fn store_rows(&mut self, rows: &mut Packed) -> Result<Vec<u64>, Fault>;
    /// Loads rows by ref, into `out` (empty, lent as in `next_entries`).
    fn load(&mut self, refs: &[u64], out: &mut Packed) -> Result<(), Fault>;
    /// The allocator's counters.
    fn allocator_stats(&mut self) -> Result<Stats, Fault>;
    /// The allocator's `describe()`.
    fn describe_allocator(&mut self) -> Result<Description, Fault>;
    /// Bytes reserved from the pool and not released.
    fn reserved_bytes(&self) -> u64;
    /// Reservations the pool granted this shard (each of a `reserve-each`
    /// counts), as the host counted them.
    fn reservations(&self) -> u64;
    /// Whether the pool refused a reservation during the last
    /// `store_rows`: a `pool-full` the pool did not give is a lie.
    fn pool_refused(&self) -> bool;
    /// Charges the pool `bytes` of memory the allocator holds unreserved;
    /// a runtime that cannot measure the allocator's memory charges none.
    fn charge(&mut self, _bytes: u64) {}
    /// Bytes charged so far and not released.
    fn charged_bytes(&self) -> u64 {
        0
    }
    /// The allocator instance's memory before its `create`, which the
    /// budget rule measures growth from; `None` where unknown.
    fn allocator_baseline(&self) -> Option<u64>;
}

/// A shard's memtable and allocator together, taking one caller at a
/// time: one store (wasm), where the allocator's refs mean something to
/// the memtable, and the memory they hold. The seam calls it through
/// `Locked`, as a `ShardRuntime`.
pub trait SerialShardRuntime: MemtableRuntime + AllocatorRuntime + Send {
    /// Linear memory (wasm) held by the instances; 0 for native twins.
    fn guest_memory_bytes(&self) -> u64;
    /// Linear memory of the memtable's or the allocator's instance alone;
    /// `None` where the runtime cannot tell (native twins share the heap).
    fn memory_of(&self, kind: Kind) -> Option<u64>;
    /// The same shard taking concurrent writers, where both its
    /// strategies say they do; else itself back.
    fn into_shared(self: Box<Self>) -> Result<Box<dyn ShardRuntime>, Box<dyn SerialShardRuntime>>;
}

/// The pool and the allocator's memory as a `store_rows` call left them.
#[derive(Debug, Clone, Copy, Default)]
pub struct Pooled {
    /// Whether the pool refused a reservation during the call.
    pub refused: bool,
    /// Bytes reserved from the pool and not released, by every writer.
    pub reserved: u64,
    /// Bytes the host charged and did not release.
    pub charged: u64,
    /// The allocator instance's memory (wasm); `None` where unknown.
    pub memory: Option<u64>,
}

/// A shard as the checked `Shard` calls it: writers' calls on `&self`,
/// at once where `concurrent` (both strategies take many threads,
/// native), else one at a time (`Locked`); the flush's calls on the
/// shard `alone`, once no writer is in.
pub trait ShardRuntime: Send + Sync {
    /// As `AllocatorRuntime::store_rows`, and the pool and the
    /// allocator's memory as the call left them (read in the same turn).
    fn store_rows(&self, rows: &mut Packed) -> (Result<Vec<u64>, Fault>, Pooled);
    /// As `MemtableRuntime::insert`.
    fn insert(&self, entries: &mut Packed) -> Result<(), Fault>;
    /// As `MemtableRuntime::get`.
    fn get(&self, keys: Packed) -> Result<Packed, Fault>;
    /// As `MemtableRuntime::scan`.
    fn scan(&self, start: &[u8], end: Option<&[u8]>, limit: u32) -> Result<Packed, Fault>;
    /// Bytes reserved from the pool and not released, by every writer.
    fn reserved_bytes(&self) -> u64;
    /// As `AllocatorRuntime::reservations`.
    fn reservations(&self) -> u64;
    /// As `AllocatorRuntime::charge`.
    fn charge(&self, bytes: u64);
    /// As `AllocatorRuntime::charged_bytes`.
    fn charged_bytes(&self) -> u64;
    /// As `SerialShardRuntime::guest_memory_bytes`.
    fn guest_memory_bytes(&self) -> u64;
    /// As `SerialShardRuntime::memory_of`.
    fn memory_of(&self, kind: Kind) -> Option<u64>;
    /// Whether writers call it at once.
    fn concurrent(&self) -> bool;
    /// The shard for one caller (the flush's), while no writer is in.
    fn alone(&mut self) -> &mut dyn SerialShardRuntime;
    /// The same shard taking concurrent writers, where it can; else
    /// itself back.
    fn into_concurrent(self: Box<Self>) -> Result<Box<dyn ShardRuntime>, Box<dyn ShardRuntime>>;
}

/// One segment's serializer as a runtime runs it.
pub trait SerializerRuntime: Send {
    /// Encodes flush records (lent) into `out` (empty, lent): bytes for
    /// the data file.
    fn write(&mut self, records: &mut Packed, out: &mut Vec<u8>) -> Result<(), Fault>;
    /// Ends the segment: the data file's tail, the index and the metadata.
    fn finish(&mut self) -> Result<(Vec<u8>, Finished), Fault>;
    /// What ran.
    fn describe(&mut self) -> Result<Description, Fault>;
    /// The serializer's own counters (reported, never verified).
    fn stats(&mut self) -> Result<Stats, Fault>;
    /// Linear memory (wasm) held; 0 for native twins.
    fn guest_memory_bytes(&self) -> u64;
    /// Linear memory before the writer's `create`; 0 for native twins.
    fn memory_before_create(&self) -> u64;
}

/// A shard's commit-log format as a runtime runs it (one instance a
/// shard, for the whole run: it holds no rows).
pub trait CommitLogRuntime: Send {
    /// One log record of `rows`; lent as in `AllocatorRuntime::store_rows`.
    fn encode(&mut self, rows: &mut Packed) -> Result<Vec<u8>, Fault>;
    /// The intact records' rows from the start of `segment`, at most
    /// `max_rows`, and where the replay stopped.
    fn replay(&mut self, segment: &[u8], max_rows: u32) -> Result<Replayed, Fault>;
    /// What ran.
    fn describe(&mut self) -> Result<Description, Fault>;
    /// The format's own counters (reported, never verified).
    fn stats(&mut self) -> Result<Stats, Fault>;
}

/// One segment's reader as a runtime runs it.
pub trait ReaderRuntime: Send {
    /// The next flush records in written order; empty when done.
    fn next(&mut self, max_bytes: u32) -> Result<Packed, Fault>;
    /// Batched point reads; an empty record is a miss.
    fn get(&mut self, keys: Packed) -> Result<Packed, Fault>;
}

/// Parameters as configured: key and value, in the config's order.
type Params = [(String, String)];

/// What one runtime does with a strategy it loaded: makes its raw
/// instances, unchecked and uncounted.
pub trait StrategyRuntime: Send + Sync {
    /// A shard of this memtable and `allocator`, which the same runtime
    /// loaded (`as_any` finds it), in `pool`.
    fn shard(
        &self,
        params: &Params,
        allocator: &dyn StrategyRuntime,
        allocator_params: &Params,
        pool: Arc<MemoryPool>,
        shard: usize,
    ) -> Result<Box<dyn SerialShardRuntime>, SeamError>;
    /// A serializer's writer for flush part `part`.
    fn serializer(&self, params: &Params, part: usize) -> Result<Box<dyn SerializerRuntime>, SeamError>;
    /// A serializer's reader of one segment.
    fn reader(&self, params: &Params, data: &[u8], index: &[u8]) -> Result<Box<dyn ReaderRuntime>, SeamError>;
    /// A shard's commit-log format.
    fn commitlog(&self, params: &Params, shard: usize) -> Result<Box<dyn CommitLogRuntime>, SeamError>;
    /// Itself, for a memtable to find its allocator's own runtime.
    fn as_any(&self) -> &dyn Any;
}

/// One kind's strategy, loaded by either runtime, by the name config
/// gave it: it makes the seam's checked types.
#[derive(Clone)]
pub struct Strategy {
    runtime: Arc<dyn StrategyRuntime>,
    name: Arc<str>,
    kind: Kind,
}

impl std::fmt::Debug for Strategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.kind, self.name)
    }
}

impl Strategy {
    /// `runtime`'s strategy of `kind`, as `name`.
    pub fn new(name: &str, kind: Kind, runtime: Arc<dyn StrategyRuntime>) -> Self {
        Strategy { runtime, name: name.into(), kind }
    }

    /// The name config gave it.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its kind.
    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// Its runtime's own strategy (a test's look at a runtime's type).
    pub fn runtime(&self) -> &dyn StrategyRuntime {
        self.runtime.as_ref()
    }

    /// Refuses a use as another kind's.
    fn expect(&self, kind: Kind) -> Result<(), SeamError> {
        match self.kind == kind {
            true => Ok(()),
            false => Err(SeamError::NoTwin { plugin: format!("{} (a {}, used as a {kind})", self.name, self.kind) }),
        }
    }

    /// A shard of this memtable and `allocator`, checked and metered.
    pub fn shard(&self, params: &Params, allocator: &Strategy, allocator_params: &Params, pool: Arc<MemoryPool>, shard: usize) -> Result<Shard, SeamError> {
        self.expect(Kind::Memtable)?;
        allocator.expect(Kind::Allocator)?;
        let runtime = self.runtime.shard(params, allocator.runtime.as_ref(), allocator_params, pool, shard)?;
        Ok(Shard::new(runtime, &self.name, &allocator.name, shard))
    }

    /// A serializer's writer for flush part `part`, checked and metered.
    pub fn serializer(&self, params: &Params, part: usize) -> Result<Serializer, SeamError> {
        self.expect(Kind::Serializer)?;
        Ok(Serializer::new(self.runtime.serializer(params, part)?, &self.name, part))
    }

    /// Opens a segment with this serializer's reader.
    pub fn reader(&self, params: &Params, data: &[u8], index: &[u8]) -> Result<Reader, SeamError> {
        self.expect(Kind::Serializer)?;
        Ok(Reader::new(self.runtime.reader(params, data, index)?, &self.name))
    }

    /// A shard's commit-log format, checked and metered.
    pub fn commitlog_format(&self, params: &Params, shard: usize) -> Result<CommitLogFormat, SeamError> {
        self.expect(Kind::CommitLog)?;
        Ok(CommitLogFormat::new(self.runtime.commitlog(params, shard)?, &self.name, shard))
    }
}
