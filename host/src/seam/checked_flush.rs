//! The flush side of the checking layer: a segment's serializer and a
//! reader of its segments, each call counted and its failure named, as
//! `shard.rs` does for the shard.

use memlab_sdk::{Description, Finished, Packed, Stats};

use super::books::packed_bytes;
use super::describe::bounded;
use super::watch::during;
use super::{Boundary, Fault, Op, ReaderRuntime, SeamError, SerializerRuntime};

/// One segment's serializer, checked and metered.
pub struct Serializer {
    runtime: Box<dyn SerializerRuntime>,
    name: String,
    shard: usize,
    boundary: Boundary,
}

impl Serializer {
    /// Wraps a runtime's writer for the flush of `shard` (or part).
    pub fn new(runtime: Box<dyn SerializerRuntime>, name: &str, shard: usize) -> Self {
        Serializer { runtime, name: name.into(), shard, boundary: Boundary::default() }
    }

    fn fault(&self, operation: Op, fault: Fault) -> SeamError {
        SeamError::call(&self.name, operation, self.shard, fault)
    }

    /// The serializer's name, as configured.
    pub fn plugin(&self) -> &str {
        &self.name
    }

    /// Encodes flush records; returns bytes for the data file.
    pub fn write(&mut self, mut records: Packed) -> Result<Vec<u8>, SeamError> {
        let mut out = Vec::new();
        self.write_into(&mut records, &mut out)?;
        Ok(out)
    }

    /// Encodes flush records (lent) into `out`, cleared first: a flush
    /// lends one buffer each way for all its chunks.
    pub fn write_into(&mut self, records: &mut Packed, out: &mut Vec<u8>) -> Result<(), SeamError> {
        self.boundary.calls += 1;
        self.boundary.bytes_in += packed_bytes(records);
        out.clear();
        during(Op::WriterWrite, self.shard, || self.runtime.write(records, out)).map_err(|f| self.fault(Op::WriterWrite, f))?;
        self.boundary.bytes_out += out.len() as u64;
        Ok(())
    }

    /// Ends the segment: the data file's tail, the index and the metadata.
    pub fn finish(&mut self) -> Result<(Vec<u8>, Finished), SeamError> {
        self.boundary.calls += 1;
        let (tail, finished) = during(Op::WriterFinish, self.shard, || self.runtime.finish()).map_err(|f| self.fault(Op::WriterFinish, f))?;
        self.boundary.bytes_out += (tail.len() + finished.index.len()) as u64;
        Ok((tail, finished))
    }

    /// What ran.
    pub fn describe(&mut self) -> Result<Description, SeamError> {
        self.boundary.calls += 1;
        self.runtime.describe().map_err(|f| self.fault(Op::WriterDescribe, f))
    }

    /// The serializer's own counters: reported by the plugin, shown apart.
    pub fn stats(&mut self) -> Result<Stats, SeamError> {
        self.boundary.calls += 1;
        let stats = self.runtime.stats().map_err(|f| self.fault(Op::WriterStats, f))?;
        bounded(&stats).map_err(|detail| SeamError::contract(&self.name, Op::WriterStats, self.shard, detail))?;
        Ok(stats)
    }

    /// Linear memory (wasm) held; 0 for native twins.
    pub fn guest_memory_bytes(&self) -> u64 {
        self.runtime.guest_memory_bytes()
    }

    /// Linear memory before the writer's `create`, which its growth is
    /// counted from; 0 for native twins.
    pub fn memory_before_create(&self) -> u64 {
        self.runtime.memory_before_create()
    }

    /// Boundary traffic so far.
    pub fn boundary(&self) -> Boundary {
        self.boundary
    }
}

/// One segment's reader, checked.
pub struct Reader {
    runtime: Box<dyn ReaderRuntime>,
    name: String,
}

impl Reader {
    /// Wraps a runtime's reader of serializer `name`.
    pub fn new(runtime: Box<dyn ReaderRuntime>, name: &str) -> Self {
        Reader { runtime, name: name.into() }
    }

    /// The serializer's name, as configured.
    pub fn plugin(&self) -> &str {
        &self.name
    }

    /// The next flush records in written order; empty when done.
    pub fn next(&mut self, max_bytes: u32) -> Result<Packed, SeamError> {
        during(Op::ReaderNext, 0, || self.runtime.next(max_bytes)).map_err(|f| SeamError::call(&self.name, Op::ReaderNext, 0, f))
    }

    /// Batched point reads: one record per key, empty for a miss.
    pub fn get(&mut self, keys: Packed) -> Result<Packed, SeamError> {
        const OP: Op = Op::ReaderGet;
        let expected = keys.len();
        let out = during(Op::ReaderGet, 0, || self.runtime.get(keys)).map_err(|f| SeamError::call(&self.name, OP, 0, f))?;
        if out.len() != expected {
            let detail = format!("returned {} records for {expected} keys", out.len());
            return Err(SeamError::contract(&self.name, OP, 0, detail));
        }
        Ok(out)
    }
}
