//! A native strategy, wherever its table comes from: linked into the
//! host (a bundled plugin), or a plugin crate built for the host and
//! loaded. Either makes the same instances, which the seam checks alike.

use std::sync::Arc;

use memlab_sdk::native::NativeTable;
use memlab_sdk::{Error, Op};

use super::library::Library;
use super::runtime::{Instance, NativeCommitLog, NativePool, NativeReader, NativeShard, NativeWriter};
use crate::pool::MemoryPool;
use crate::seam::{self, Fault, Kind, LoadCause, LoadError, SeamError};

/// The table of every bundled strategy, linked into the host; generated
/// with the registry of components from `host/Cargo.toml`.
static TWINS: &[&NativeTable] = include!(concat!(env!("OUT_DIR"), "/twins.rs"));

/// A native strategy of one kind, by the name config gave it.
#[derive(Clone)]
pub struct Strategy {
    name: Arc<str>,
    kind: Kind,
    library: Library,
    bundled: bool,
}

impl std::fmt::Debug for Strategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let from = if self.bundled { "bundled" } else { "built for this machine" };
        write!(f, "{} {} ({from})", self.kind, self.name)
    }
}

fn created(plugin: &str, operation: Op, shard: usize) -> impl FnOnce(Error) -> SeamError {
    move |error| SeamError::call(plugin, operation, shard, Fault::Guest(error))
}

impl Strategy {
    /// The bundled strategy called `name`, linked into the host.
    pub fn bundled(name: &str, kind: Kind) -> Result<Strategy, SeamError> {
        let table = TWINS.iter().map(|t| Library::linked(t)).filter_map(Result::ok).find(|l| l.kind == kind && l.name() == name);
        let library = table.ok_or_else(|| SeamError::NoTwin { plugin: name.into() })?;
        Ok(Strategy { name: name.into(), kind, library, bundled: true })
    }

    /// A table linked into this process (a test's strategy), as `name`.
    pub fn linked(name: &str, table: &'static NativeTable) -> Result<Strategy, LoadError> {
        let library = Library::linked(table).map_err(|detail| LoadError::new(name, LoadCause::Native(detail)))?;
        Ok(Strategy { name: name.into(), kind: library.kind, library, bundled: false })
    }

    /// A loaded library, as `name`; it must be of `kind`.
    pub fn built(name: &str, kind: Kind, library: Library) -> Result<Strategy, LoadError> {
        if library.kind != kind {
            return Err(LoadError::new(name, LoadCause::WrongKind(kind.to_string(), library.kind.to_string())));
        }
        Ok(Strategy { name: name.into(), kind, library, bundled: false })
    }

    /// The name config gave it.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its kind.
    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// Refuses a use of another kind's.
    fn expect(&self, kind: Kind) -> Result<(), SeamError> {
        match self.kind == kind {
            true => Ok(()),
            false => Err(SeamError::NoTwin { plugin: format!("{} (a {}, used as a {kind})", self.name, self.kind) }),
        }
    }

    fn instance(&self, op: Op, params: &[(String, String)], (a, b): (&[u8], &[u8]), shard: usize) -> Result<Instance, SeamError> {
        self.expect(op.kind())?;
        let remote = seam::watch::during(op, shard, || self.library.create(&self.name, op, params, a, b)).map_err(created(&self.name, op, shard))?;
        Ok(Instance::new(remote, &self.name))
    }

    /// Creates a shard of this memtable and `allocator`, checked and
    /// metered by the seam.
    pub fn shard(
        &self,
        params: &[(String, String)],
        allocator: &Strategy,
        allocator_params: &[(String, String)],
        pool: Arc<MemoryPool>,
        shard: usize,
    ) -> Result<seam::Shard, SeamError> {
        let m = self.instance(Op::MemtableCreate, params, (&[], &[]), shard)?;
        let a = allocator.instance(Op::AllocatorCreate, allocator_params, (&[], &[]), shard)?;
        let runtime = NativeShard::new(m, a, NativePool::new(pool));
        Ok(seam::Shard::new(Box::new(runtime), &self.name, &allocator.name, shard))
    }

    /// Creates this serializer's writer, checked and metered.
    pub fn serializer(&self, params: &[(String, String)], shard: usize) -> Result<seam::Serializer, SeamError> {
        let w = self.instance(Op::WriterCreate, params, (&[], &[]), shard)?;
        Ok(seam::Serializer::new(Box::new(NativeWriter(w)), &self.name, shard))
    }

    /// Opens a segment with this serializer's reader.
    pub fn reader(&self, params: &[(String, String)], data: &[u8], index: &[u8]) -> Result<seam::Reader, SeamError> {
        let r = self.instance(Op::ReaderOpen, params, (data, index), 0)?;
        Ok(seam::Reader::new(Box::new(NativeReader(r)), &self.name))
    }

    /// Creates a shard's log format of this commit log, checked and metered.
    pub fn commitlog_format(&self, params: &[(String, String)], shard: usize) -> Result<seam::CommitLogFormat, SeamError> {
        let l = self.instance(Op::CommitLogCreate, params, (&[], &[]), shard)?;
        Ok(seam::CommitLogFormat::new(Box::new(NativeCommitLog(l)), &self.name, shard))
    }
}

/// Creates a shard of bundled strategies, checked and metered by the seam.
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

/// Creates the bundled serializer `name`'s writer, checked and metered.
pub fn serializer(name: &str, params: &[(String, String)], shard: usize) -> Result<seam::Serializer, SeamError> {
    Strategy::bundled(name, Kind::Serializer)?.serializer(params, shard)
}

/// Opens a segment with the bundled serializer `name`'s reader.
pub fn segment_reader(name: &str, params: &[(String, String)], data: &[u8], index: &[u8]) -> Result<seam::Reader, SeamError> {
    Strategy::bundled(name, Kind::Serializer)?.reader(params, data, index)
}

/// Creates a shard's bundled log format, checked and metered by the seam.
pub fn commitlog_format(name: &str, params: &[(String, String)], shard: usize) -> Result<seam::CommitLogFormat, SeamError> {
    Strategy::bundled(name, Kind::CommitLog)?.commitlog_format(params, shard)
}
