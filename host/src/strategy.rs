//! What the write path needs from a shard's strategies and from a flush,
//! whether they run as wasm components or as native twins.

use memlab_sdk::{Description, Finished, Packed, Stats};

use crate::plugin::PluginError;

/// Calls and bytes across the plugin boundary.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
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

/// A shard's memtable and allocator for one memtable generation.
pub trait ShardStrategies: Send {
    /// Stores rows in the allocator; one ref per row. The batch is lent,
    /// so its buffers serve the next one; it comes back unchanged.
    fn store_rows(&mut self, rows: &mut Packed) -> Result<Vec<u64>, PluginError>;
    /// Inserts entries into the memtable; lent as in `store_rows`.
    fn insert(&mut self, entries: &mut Packed) -> Result<(), PluginError>;
    /// Batched point reads; an empty record is a miss.
    fn get(&mut self, keys: Packed) -> Result<Packed, PluginError>;
    /// A range scan.
    fn scan(&mut self, start: &[u8], end: Option<&[u8]>, limit: u32) -> Result<Packed, PluginError>;
    /// Freezes the memtable and opens its flush cursor.
    fn open_cursor(&mut self) -> Result<(), PluginError>;
    /// The next entries in key order; empty when done.
    fn next_entries(&mut self, max_bytes: u32) -> Result<Packed, PluginError>;
    /// Loads rows by ref.
    fn load(&mut self, refs: Vec<u64>) -> Result<Packed, PluginError>;
    /// The memtable's and the allocator's counters.
    fn stats(&mut self) -> Result<(Stats, Stats), PluginError>;
    /// What ran: memtable, then allocator.
    fn describe(&mut self) -> Result<(Description, Description), PluginError>;
    /// Bytes reserved from the pool and not released.
    fn reserved_bytes(&self) -> u64;
    /// Linear memory (wasm) held by the instances; 0 for native twins.
    fn guest_memory_bytes(&self) -> u64;
    /// Boundary traffic so far.
    fn boundary(&self) -> Boundary;
}

/// One segment's serializer.
pub trait FlushStrategy: Send {
    /// Encodes flush records; returns bytes for the data file.
    fn write(&mut self, records: Packed) -> Result<Vec<u8>, PluginError>;
    /// Ends the segment: the data file's tail, the index and the metadata.
    fn finish(&mut self) -> Result<(Vec<u8>, Finished), PluginError>;
    /// What ran.
    fn describe(&mut self) -> Result<Description, PluginError>;
    /// Linear memory (wasm) held; 0 for native twins.
    fn guest_memory_bytes(&self) -> u64;
    /// Boundary traffic so far.
    fn boundary(&self) -> Boundary;
}

/// Reads one segment back.
pub trait SegmentReading: Send {
    /// The next flush records in written order; empty when done.
    fn next(&mut self, max_bytes: u32) -> Result<Packed, PluginError>;
    /// Batched point reads; an empty record is a miss.
    fn get(&mut self, keys: Packed) -> Result<Packed, PluginError>;
}
