//! One kind's strategy as a runtime loaded it. A runtime (the wasm
//! components in `plugin`, the native tables in `native`) implements one
//! object-safe trait, `StrategyRuntime`, which makes raw instances of
//! every kind; `Strategy` wraps each instance once in its checked type.
//! Nothing above the seam matches on a runtime.

use std::any::Any;
use std::sync::Arc;

use super::{CommitLogFormat, CommitLogRuntime, Kind, Reader, ReaderRuntime, SeamError, Serializer, SerializerRuntime, Shard, ShardRuntime};
use crate::pool::MemoryPool;

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
    ) -> Result<Box<dyn ShardRuntime>, SeamError>;
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
