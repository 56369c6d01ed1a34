//! Native twins: the bundled strategies' plain-Rust logic linked into the
//! host and driven through the SDK's `twin` instances, the same batch
//! loops the wasm export glue runs. `seam` checks and meters them as it
//! does the components, so the sandbox's price shows on one stream in one
//! run. `host/build.rs` generates the table of twins (`TWINS`) from the
//! same list as the registry of components.

use std::sync::Arc;

#[expect(unsafe_code, reason = "loading a shared library and calling its C-ABI table")]
mod built;
mod log;
mod strategy;

pub use built::Library;
pub use log::{LogTwin, commitlog, log_format};
pub use strategy::Strategy;

use memlab_sdk::twin::{ArenaInstance, MemtableInstance, ReaderInstance, WriterInstance};
use memlab_sdk::{Allocator, CommitLog, Description, Error, Finished, Memtable, Packed, Pool, SegmentReader, Serializer, Stats};

use crate::pool::MemoryPool;
use crate::seam::{self, AllocatorRuntime, Fault, Kind, MemtableRuntime, Op, ReaderRuntime, SeamError, SerializerRuntime, ShardRuntime};

type Params = Vec<(String, String)>;

/// A native memtable, its cursor position held beside it.
pub trait MemtableTwin: Send {
    /// See `MemtableInstance::insert`; lent mutably, so a loaded plugin
    /// gets its wire form without a copy.
    fn insert(&mut self, entries: &mut Packed) -> Result<(), Error>;
    /// See `MemtableInstance::get`.
    fn get(&self, keys: &Packed, out: &mut Packed);
    /// See `MemtableInstance::scan`.
    fn scan(&self, start: &[u8], end: Option<&[u8]>, limit: u32, out: &mut Packed);
    /// Freezes and opens (or reopens) the cursor.
    fn open_cursor(&mut self);
    /// The open cursor's next entries.
    fn next(&mut self, max_bytes: u32, out: &mut Packed) -> Result<(), Error>;
    /// What `create` applied.
    fn description(&self) -> Description;
    /// Counters.
    fn stats(&self) -> Stats;
}

struct NativeMemtable<M: Memtable> {
    instance: MemtableInstance<M>,
    position: Option<M::Position>,
}

impl<M: Memtable + Send> MemtableTwin for NativeMemtable<M>
where
    M::Position: Send,
{
    fn insert(&mut self, entries: &mut Packed) -> Result<(), Error> {
        self.instance.insert(entries)
    }

    fn get(&self, keys: &Packed, out: &mut Packed) {
        self.instance.get(keys, out);
    }

    fn scan(&self, start: &[u8], end: Option<&[u8]>, limit: u32, out: &mut Packed) {
        self.instance.scan(start, end, limit, out);
    }

    fn open_cursor(&mut self) {
        self.position = Some(self.instance.cursor());
    }

    fn next(&mut self, max_bytes: u32, out: &mut Packed) -> Result<(), Error> {
        let position = self.position.as_mut().ok_or_else(|| Error::InvalidState("no cursor is open".into()))?;
        self.instance.next(position, max_bytes, out);
        Ok(())
    }

    fn description(&self) -> Description {
        self.instance.description().clone()
    }

    fn stats(&self) -> Stats {
        self.instance.stats()
    }
}

/// Creates the native twin of memtable `M`.
pub fn memtable<M: Memtable + Send>(params: Params) -> Result<Box<dyn MemtableTwin>, Error>
where
    M::Position: Send,
{
    Ok(Box::new(NativeMemtable::<M> { instance: MemtableInstance::create(params)?, position: None }))
}

/// A native allocator.
pub trait AllocatorTwin: Send {
    /// See `ArenaInstance::store`.
    fn store(&mut self, pool: &mut dyn Pool, rows: &mut Packed) -> Result<Vec<u64>, Error>;
    /// See `ArenaInstance::load`.
    fn load(&self, refs: &[u64], out: &mut Packed) -> Result<(), Error>;
    /// What `create` applied.
    fn description(&self) -> Description;
    /// Counters.
    fn stats(&self) -> Stats;
}

impl<A: Allocator + Send> AllocatorTwin for ArenaInstance<A> {
    fn store(&mut self, pool: &mut dyn Pool, rows: &mut Packed) -> Result<Vec<u64>, Error> {
        ArenaInstance::store(self, pool, rows)
    }

    fn load(&self, refs: &[u64], out: &mut Packed) -> Result<(), Error> {
        ArenaInstance::load(self, refs, out)
    }

    fn description(&self) -> Description {
        ArenaInstance::description(self).clone()
    }

    fn stats(&self) -> Stats {
        ArenaInstance::stats(self)
    }
}

/// Creates the native twin of allocator `A`.
pub fn allocator<A: Allocator + Send>(params: Params) -> Result<Box<dyn AllocatorTwin>, Error> {
    Ok(Box::new(ArenaInstance::<A>::create(params)?))
}

/// A native serializer's writer.
pub trait WriterTwin: Send {
    /// See `WriterInstance::write`.
    fn write(&mut self, records: &mut Packed, out: &mut Vec<u8>) -> Result<(), Error>;
    /// See `WriterInstance::finish`.
    fn finish(&mut self, tail: &mut Vec<u8>) -> Result<Finished, Error>;
    /// What `create` applied.
    fn description(&self) -> Description;
    /// Counters.
    fn stats(&self) -> Stats;
}

impl<S: Serializer + Send> WriterTwin for WriterInstance<S> {
    fn write(&mut self, records: &mut Packed, out: &mut Vec<u8>) -> Result<(), Error> {
        WriterInstance::write(self, records, out)
    }

    fn finish(&mut self, tail: &mut Vec<u8>) -> Result<Finished, Error> {
        WriterInstance::finish(self, tail)
    }

    fn description(&self) -> Description {
        WriterInstance::description(self).clone()
    }

    fn stats(&self) -> Stats {
        WriterInstance::stats(self)
    }
}

/// Creates the native twin of serializer `S`'s writer.
pub fn writer<S: Serializer + Send>(params: Params) -> Result<Box<dyn WriterTwin>, Error> {
    Ok(Box::new(WriterInstance::<S>::create(params)?))
}

/// A native segment reader.
pub trait ReaderTwin: Send {
    /// See `ReaderInstance::next`.
    fn next(&mut self, max_bytes: u32, out: &mut Packed) -> Result<(), Error>;
    /// See `ReaderInstance::get`.
    fn get(&self, keys: &Packed, out: &mut Packed) -> Result<(), Error>;
}

impl<R: SegmentReader + Send> ReaderTwin for ReaderInstance<R> {
    fn next(&mut self, max_bytes: u32, out: &mut Packed) -> Result<(), Error> {
        ReaderInstance::next(self, max_bytes, out)
    }

    fn get(&self, keys: &Packed, out: &mut Packed) -> Result<(), Error> {
        ReaderInstance::get(self, keys, out)
    }
}

/// Opens a segment with the native twin of serializer `S`'s reader.
pub fn reader<S: Serializer>(params: Params, data: Vec<u8>, index: Vec<u8>) -> Result<Box<dyn ReaderTwin>, Error>
where
    S::Reader: Send,
{
    Ok(Box::new(ReaderInstance::<S::Reader>::open(params, data, index)?))
}

/// The host pool, as a native allocator sees it.
struct NativePool {
    pool: Arc<MemoryPool>,
    reserved: u64,
    reservations: u64,
    refused: bool,
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

/// Opens a segment: parameters, data file, index file.
pub type OpenReader = fn(Params, Vec<u8>, Vec<u8>) -> Result<Box<dyn ReaderTwin>, Error>;

/// How to create a bundled strategy's native twin.
pub enum Twin {
    /// A memtable.
    Memtable(fn(Params) -> Result<Box<dyn MemtableTwin>, Error>),
    /// An allocator.
    Allocator(fn(Params) -> Result<Box<dyn AllocatorTwin>, Error>),
    /// A serializer: its writer and its reader.
    Serializer {
        /// Starts a segment.
        writer: fn(Params) -> Result<Box<dyn WriterTwin>, Error>,
        /// Opens a segment: parameters, data file, index file.
        reader: OpenReader,
    },
    /// A commit-log format.
    CommitLog(fn(Params) -> Result<Box<dyn LogTwin>, Error>),
}

impl Twin {
    fn kind(&self) -> Kind {
        match self {
            Twin::Memtable(_) => Kind::Memtable,
            Twin::Allocator(_) => Kind::Allocator,
            Twin::Serializer { .. } => Kind::Serializer,
            Twin::CommitLog(_) => Kind::CommitLog,
        }
    }
}

/// One bundled strategy's (name, twin), by its kind's name: the rows
/// host/build.rs generates use it, so a new kind adds its line here.
macro_rules! twin {
    (memtable, $s:ty) => {
        (<$s as Memtable>::NAME, Twin::Memtable(memtable::<$s>))
    };
    (allocator, $s:ty) => {
        (<$s as Allocator>::NAME, Twin::Allocator(allocator::<$s>))
    };
    (serializer, $s:ty) => {
        (<$s as Serializer>::NAME, Twin::Serializer { writer: writer::<$s>, reader: reader::<$s> })
    };
    (commitlog, $s:ty) => {
        (<$s as CommitLog>::NAME, Twin::CommitLog(commitlog::<$s>))
    };
}

/// (name, twin) of every bundled strategy; generated with the registry.
static TWINS: &[(&str, Twin)] = include!(concat!(env!("OUT_DIR"), "/twins.rs"));

fn twin(name: &str, kind: Kind) -> Result<&'static Twin, SeamError> {
    TWINS.iter().find(|(n, t)| *n == name && t.kind() == kind).map(|(_, t)| t).ok_or_else(|| SeamError::NoTwin { plugin: name.into() })
}

/// The kind of the native twin called `name` of `kind`, if there is one.
pub fn twin_kind(name: &str, kind: Kind) -> Option<Kind> {
    twin(name, kind).ok().map(Twin::kind)
}

fn created(plugin: &str, operation: Op, shard: usize) -> impl FnOnce(Error) -> SeamError {
    move |error| SeamError::Guest { plugin: plugin.into(), operation, shard, error }
}

/// A shard's native memtable and allocator.
struct NativeShard {
    memtable: Box<dyn MemtableTwin>,
    allocator: Box<dyn AllocatorTwin>,
    pool: NativePool,
}

/// Creates a shard of bundled twins, checked and metered by the seam.
pub fn shard(
    memtable: &str,
    memtable_params: &[(String, String)],
    allocator: &str,
    allocator_params: &[(String, String)],
    pool: Arc<MemoryPool>,
    shard: usize,
) -> Result<seam::Shard, SeamError> {
    Strategy::bundled(memtable, Kind::Memtable)?.shard(memtable_params, &Strategy::bundled(allocator, Kind::Allocator)?, allocator_params, pool, shard)
}

/// A shard of twins made elsewhere (a test's, say), named as given.
pub fn shard_of(memtable: (&str, Box<dyn MemtableTwin>), allocator: (&str, Box<dyn AllocatorTwin>), pool: Arc<MemoryPool>, shard: usize) -> seam::Shard {
    let runtime = NativeShard { memtable: memtable.1, allocator: allocator.1, pool: NativePool { pool, reserved: 0, reservations: 0, refused: false } };
    seam::Shard::new(Box::new(runtime), memtable.0, allocator.0, shard)
}

impl MemtableRuntime for NativeShard {
    fn insert(&mut self, entries: &mut Packed) -> Result<(), Fault> {
        self.memtable.insert(entries).map_err(Fault::Guest)
    }

    fn get(&mut self, keys: Packed) -> Result<Packed, Fault> {
        let mut out = Packed::new();
        self.memtable.get(&keys, &mut out);
        Ok(out)
    }

    fn scan(&mut self, start: &[u8], end: Option<&[u8]>, limit: u32) -> Result<Packed, Fault> {
        let mut out = Packed::new();
        self.memtable.scan(start, end, limit, &mut out);
        Ok(out)
    }

    fn open_cursor(&mut self) -> Result<(), Fault> {
        self.memtable.open_cursor();
        Ok(())
    }

    fn next_entries(&mut self, max_bytes: u32, out: &mut Packed) -> Result<(), Fault> {
        self.memtable.next(max_bytes, out).map_err(Fault::Guest)
    }

    fn memtable_stats(&mut self) -> Result<Stats, Fault> {
        Ok(self.memtable.stats())
    }

    fn describe_memtable(&mut self) -> Result<Description, Fault> {
        Ok(self.memtable.description())
    }
}

impl AllocatorRuntime for NativeShard {
    fn store_rows(&mut self, rows: &mut Packed) -> Result<Vec<u64>, Fault> {
        self.pool.refused = false;
        self.allocator.store(&mut self.pool, rows).map_err(Fault::Guest)
    }

    fn load(&mut self, refs: &[u64], out: &mut Packed) -> Result<(), Fault> {
        self.allocator.load(refs, out).map_err(Fault::Guest)
    }

    fn allocator_stats(&mut self) -> Result<Stats, Fault> {
        Ok(self.allocator.stats())
    }

    fn describe_allocator(&mut self) -> Result<Description, Fault> {
        Ok(self.allocator.description())
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

impl ShardRuntime for NativeShard {
    fn guest_memory_bytes(&self) -> u64 {
        0
    }

    fn memory_of(&self, _kind: Kind) -> Option<u64> {
        None
    }
}

struct NativeWriter(pub(super) Box<dyn WriterTwin>);

/// Creates the bundled twin of serializer `name`, checked and metered.
pub fn serializer(name: &str, params: &[(String, String)], shard: usize) -> Result<seam::Serializer, SeamError> {
    Strategy::bundled(name, Kind::Serializer)?.serializer(params, shard)
}

impl SerializerRuntime for NativeWriter {
    fn write(&mut self, records: &mut Packed, out: &mut Vec<u8>) -> Result<(), Fault> {
        self.0.write(records, out).map_err(Fault::Guest)
    }

    fn finish(&mut self) -> Result<(Vec<u8>, Finished), Fault> {
        let mut tail = Vec::new();
        let finished = self.0.finish(&mut tail).map_err(Fault::Guest)?;
        Ok((tail, finished))
    }

    fn describe(&mut self) -> Result<Description, Fault> {
        Ok(self.0.description())
    }

    fn stats(&mut self) -> Result<Stats, Fault> {
        Ok(self.0.stats())
    }

    fn guest_memory_bytes(&self) -> u64 {
        0
    }

    fn memory_before_create(&self) -> u64 {
        0
    }
}

struct NativeReader(pub(super) Box<dyn ReaderTwin>);

/// Opens a segment with the bundled twin of serializer `name`.
pub fn segment_reader(name: &str, params: &[(String, String)], data: &[u8], index: &[u8]) -> Result<seam::Reader, SeamError> {
    Strategy::bundled(name, Kind::Serializer)?.reader(params, data, index)
}

impl ReaderRuntime for NativeReader {
    fn next(&mut self, max_bytes: u32) -> Result<Packed, Fault> {
        let mut out = Packed::new();
        self.0.next(max_bytes, &mut out).map_err(Fault::Guest)?;
        Ok(out)
    }

    fn get(&mut self, keys: Packed) -> Result<Packed, Fault> {
        let mut out = Packed::new();
        self.0.get(&keys, &mut out).map_err(Fault::Guest)?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use memlab_sdk::Entry;

    #[test]
    fn entries_survive_a_native_round_trip() {
        let pool = Arc::new(MemoryPool::new(1 << 20, Default::default()));
        let mut shard = shard("btree", &[], "per-row", &[], pool, 0).expect("twins exist");
        let mut entries = Packed::new();
        entries.push_with(|b| Entry { key: b"k", timestamp: 1, reference: 9 }.encode(b));
        shard.insert(&mut entries).expect("insert");
        shard.open_cursor().expect("cursor");
        let out = shard.next_entries(1024).expect("next");
        assert_eq!(out.len(), 1);
        assert_eq!(Entry::decode(out.get(0).expect("one")).expect("entry").reference, 9);
    }
}
