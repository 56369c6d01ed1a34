//! A native strategy, wherever its table comes from: linked into the
//! host (a bundled plugin), or a plugin crate built for the host and
//! loaded. Either makes the same instances, which the seam checks alike.

use std::any::Any;
use std::sync::Arc;

use memlab_sdk::native::{NativeTable, decode_description, decode_finished, decode_replayed, decode_stats};
use memlab_sdk::twin::Replayed;
use memlab_sdk::{Description, Error, Finished, Op, Packed, Stats};

use super::instance::Instance;
use super::library::Library;
use super::shard::{NativePool, NativeShard};
use crate::pool::MemoryPool;
use crate::seam::{
    self, CommitLogRuntime, Fault, Kind, LoadCause, LoadError, ReaderRuntime, SeamError, SerialShardRuntime, SerializerRuntime, StrategyRuntime,
};

/// The table of every bundled strategy, linked into the host; generated
/// with the registry of components from `host/Cargo.toml`.
static TWINS: &[&NativeTable] = include!(concat!(env!("OUT_DIR"), "/twins.rs"));

/// A native table, by the name config gave its strategy.
struct NativeStrategy {
    name: Arc<str>,
    library: Library,
}

fn created(plugin: &str, operation: Op, shard: usize) -> impl FnOnce(Error) -> SeamError {
    move |error| SeamError::call(plugin, operation, shard, Fault::Guest(error))
}

fn strategy(name: &str, kind: Kind, library: Library) -> seam::Strategy {
    seam::Strategy::new(name, kind, Arc::new(NativeStrategy { name: name.into(), library }))
}

/// The bundled strategy called `name`, linked into the host.
pub fn bundled(name: &str, kind: Kind) -> Result<seam::Strategy, SeamError> {
    let table = TWINS.iter().map(|t| Library::linked(t)).filter_map(Result::ok).find(|l| l.kind == kind && l.name() == name);
    let library = table.ok_or_else(|| SeamError::NoTwin { plugin: name.into() })?;
    Ok(strategy(name, kind, library))
}

/// A table linked into this process (a test's strategy), as `name`.
pub fn linked(name: &str, table: &'static NativeTable) -> Result<seam::Strategy, LoadError> {
    let library = Library::linked(table).map_err(|detail| LoadError::new(name, LoadCause::Native(detail)))?;
    Ok(strategy(name, library.kind, library))
}

/// A loaded library, as `name`; it must be of `kind`.
pub fn built(name: &str, kind: Kind, library: Library) -> Result<seam::Strategy, LoadError> {
    if library.kind != kind {
        return Err(LoadError::new(name, LoadCause::WrongKind(kind.to_string(), library.kind.to_string())));
    }
    Ok(strategy(name, kind, library))
}

impl NativeStrategy {
    fn instance(&self, op: Op, params: &[(String, String)], (a, b): (&[u8], &[u8]), shard: usize) -> Result<Instance, SeamError> {
        let remote = seam::watch::during(op, shard, || self.library.create(&self.name, op, params, a, b)).map_err(created(&self.name, op, shard))?;
        Ok(Instance::new(remote, &self.name))
    }
}

impl StrategyRuntime for NativeStrategy {
    fn shard(
        &self,
        params: &[(String, String)],
        allocator: &dyn StrategyRuntime,
        allocator_params: &[(String, String)],
        pool: Arc<MemoryPool>,
        shard: usize,
    ) -> Result<Box<dyn SerialShardRuntime>, SeamError> {
        let allocator = allocator
            .as_any()
            .downcast_ref::<NativeStrategy>()
            .ok_or_else(|| SeamError::NoTwin { plugin: "a memtable and an allocator on two runtimes".into() })?;
        let m = self.instance(Op::MemtableCreate, params, (&[], &[]), shard)?;
        let a = allocator.instance(Op::AllocatorCreate, allocator_params, (&[], &[]), shard)?;
        Ok(Box::new(NativeShard::new(m, a, NativePool::new(pool))))
    }

    fn serializer(&self, params: &[(String, String)], part: usize) -> Result<Box<dyn SerializerRuntime>, SeamError> {
        Ok(Box::new(NativeWriter(self.instance(Op::WriterCreate, params, (&[], &[]), part)?)))
    }

    fn reader(&self, params: &[(String, String)], data: &[u8], index: &[u8]) -> Result<Box<dyn ReaderRuntime>, SeamError> {
        Ok(Box::new(NativeReader(self.instance(Op::ReaderOpen, params, (data, index), 0)?)))
    }

    fn commitlog(&self, params: &[(String, String)], shard: usize) -> Result<Box<dyn CommitLogRuntime>, SeamError> {
        Ok(Box::new(NativeCommitLog(self.instance(Op::CommitLogCreate, params, (&[], &[]), shard)?)))
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// A native serializer's writer.
struct NativeWriter(Instance);

impl SerializerRuntime for NativeWriter {
    fn write(&mut self, records: &mut Packed, out: &mut Vec<u8>) -> Result<(), Fault> {
        self.0.lent(Op::WriterWrite, records, out)
    }

    fn finish(&mut self) -> Result<(Vec<u8>, Finished), Fault> {
        // The writer ends here, so its answer buffer is taken, not copied:
        // a segment's index can be megabytes.
        let op = Op::WriterFinish;
        self.0.bytes(op, &[], None, 0)?;
        decode_finished(std::mem::take(&mut self.0.bytes)).map_err(|e| Fault::Contract(format!("{op}: {e}")))
    }

    fn describe(&mut self) -> Result<Description, Fault> {
        self.0.decoded(Op::WriterDescribe, decode_description)
    }

    fn stats(&mut self) -> Result<Stats, Fault> {
        self.0.decoded(Op::WriterStats, decode_stats)
    }

    fn guest_memory_bytes(&self) -> u64 {
        0
    }

    fn memory_before_create(&self) -> u64 {
        0
    }
}

/// A native segment reader.
struct NativeReader(Instance);

impl ReaderRuntime for NativeReader {
    fn next(&mut self, max_bytes: u32) -> Result<Packed, Fault> {
        let mut out = Packed::new();
        self.0.packed(Op::ReaderNext, &[], None, u64::from(max_bytes), &mut out)?;
        Ok(out)
    }

    fn get(&mut self, mut keys: Packed) -> Result<Packed, Fault> {
        let mut out = Packed::new();
        let r = &mut self.0;
        keys.with_wire(|wire| r.packed(Op::ReaderGet, wire, None, 0, &mut out))?;
        Ok(out)
    }
}

/// A native commit-log format.
struct NativeCommitLog(Instance);

impl CommitLogRuntime for NativeCommitLog {
    fn encode(&mut self, rows: &mut Packed) -> Result<Vec<u8>, Fault> {
        let mut out = Vec::with_capacity(rows.data_len() + rows.len() * 16 + 16);
        self.0.lent(Op::CommitLogEncode, rows, &mut out)?;
        Ok(out)
    }

    fn replay(&mut self, segment: &[u8], max_rows: u32) -> Result<Replayed, Fault> {
        let op = Op::CommitLogReplay;
        let bytes = self.0.bytes(op, segment, None, u64::from(max_rows))?;
        decode_replayed(bytes).map_err(|e| Fault::Contract(format!("{op}: {e}")))
    }

    fn describe(&mut self) -> Result<Description, Fault> {
        self.0.decoded(Op::CommitLogDescribe, decode_description)
    }

    fn stats(&mut self) -> Result<Stats, Fault> {
        self.0.decoded(Op::CommitLogStats, decode_stats)
    }
}
