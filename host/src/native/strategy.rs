//! A native strategy, wherever its code comes from: a bundled twin linked
//! into the host, or a plugin crate built for the host and loaded
//! (`built.rs`). Either makes the same twins, which the seam checks alike.

use std::sync::Arc;

use memlab_sdk::Error;

use super::built::Library;
use super::log::{LogTwin, NativeLog};
use super::{AllocatorTwin, MemtableTwin, NativeReader, NativeWriter, Params, ReaderTwin, Twin, WriterTwin, created, shard_of, twin};
use crate::pool::MemoryPool;
use crate::seam::{self, Kind, LoadError, Op, SeamError};

#[derive(Clone, Copy)]
enum Code {
    Bundled(&'static Twin),
    Built(Library),
}

/// A native strategy of one kind, by the name config gave it.
#[derive(Clone)]
pub struct Strategy {
    name: Arc<str>,
    kind: Kind,
    code: Code,
}

impl std::fmt::Debug for Strategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let from = if matches!(self.code, Code::Bundled(_)) { "bundled" } else { "built for this machine" };
        write!(f, "{} {} ({from})", self.kind, self.name)
    }
}

impl Strategy {
    /// The bundled twin called `name`.
    pub fn bundled(name: &str, kind: Kind) -> Result<Strategy, SeamError> {
        Ok(Strategy { name: name.into(), kind, code: Code::Bundled(twin(name, kind)?) })
    }

    /// A loaded library, as `name`; it must be of `kind`.
    pub fn built(name: &str, kind: Kind, library: Library) -> Result<Strategy, LoadError> {
        if library.kind != kind {
            return Err(LoadError::WrongKind { plugin: name.into(), expected: kind.to_string(), found: library.kind.to_string() });
        }
        Ok(Strategy { name: name.into(), kind, code: Code::Built(library) })
    }

    /// The name config gave it.
    pub fn name(&self) -> &str {
        &self.name
    }

    fn wrong(&self) -> SeamError {
        SeamError::NoTwin { plugin: format!("{} (as a {})", self.name, self.kind) }
    }

    fn memtable(&self, params: Params) -> Result<Box<dyn MemtableTwin>, Error> {
        match self.code {
            Code::Bundled(Twin::Memtable(new)) => new(params),
            Code::Built(library) => library.memtable(&self.name, params),
            Code::Bundled(_) => Err(Error::InvalidState(self.wrong().to_string())),
        }
    }

    fn allocator(&self, params: Params) -> Result<Box<dyn AllocatorTwin>, Error> {
        match self.code {
            Code::Bundled(Twin::Allocator(new)) => new(params),
            Code::Built(library) => library.allocator(&self.name, params),
            Code::Bundled(_) => Err(Error::InvalidState(self.wrong().to_string())),
        }
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
        if self.kind != Kind::Memtable || allocator.kind != Kind::Allocator {
            return Err(SeamError::NoTwin { plugin: format!("{} / {}", self.name, allocator.name) });
        }
        let m = self.memtable(params.to_vec()).map_err(created(&self.name, Op::MemtableCreate, shard))?;
        let a = allocator.allocator(allocator_params.to_vec()).map_err(created(&allocator.name, Op::AllocatorCreate, shard))?;
        Ok(shard_of((&self.name, m), (&allocator.name, a), pool, shard))
    }

    /// Creates this serializer's writer, checked and metered.
    pub fn serializer(&self, params: &[(String, String)], shard: usize) -> Result<seam::Serializer, SeamError> {
        let writer: Result<Box<dyn WriterTwin>, Error> = match self.code {
            Code::Bundled(Twin::Serializer { writer, .. }) => writer(params.to_vec()),
            Code::Built(library) if self.kind == Kind::Serializer => library.writer(&self.name, params.to_vec()),
            _ => return Err(self.wrong()),
        };
        let w = writer.map_err(created(&self.name, Op::WriterCreate, shard))?;
        Ok(seam::Serializer::new(Box::new(NativeWriter(w)), &self.name, shard))
    }

    /// Opens a segment with this serializer's reader.
    pub fn reader(&self, params: &[(String, String)], data: &[u8], index: &[u8]) -> Result<seam::Reader, SeamError> {
        let reader: Result<Box<dyn ReaderTwin>, Error> = match self.code {
            Code::Bundled(Twin::Serializer { reader, .. }) => reader(params.to_vec(), data.to_vec(), index.to_vec()),
            Code::Built(library) if self.kind == Kind::Serializer => library.reader(&self.name, params.to_vec(), data, index),
            _ => return Err(self.wrong()),
        };
        let r = reader.map_err(created(&self.name, Op::ReaderOpen, 0))?;
        Ok(seam::Reader::new(Box::new(NativeReader(r)), &self.name))
    }

    /// Creates a shard's log format of this commit log, checked and metered.
    pub fn log_format(&self, params: &[(String, String)], shard: usize) -> Result<seam::LogFormat, SeamError> {
        let format: Result<Box<dyn LogTwin>, Error> = match self.code {
            Code::Bundled(Twin::CommitLog(new)) => new(params.to_vec()),
            Code::Built(library) if self.kind == Kind::CommitLog => library.log(&self.name, params.to_vec()),
            _ => return Err(self.wrong()),
        };
        let format = format.map_err(created(&self.name, Op::CommitLogCreate, shard))?;
        Ok(seam::LogFormat::new(Box::new(NativeLog(format)), &self.name, shard))
    }
}
