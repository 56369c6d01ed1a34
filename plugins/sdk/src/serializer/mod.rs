#[cfg(all(target_arch = "wasm32", feature = "serializer"))]
#[doc(hidden)]
pub mod export;
#[cfg(not(target_arch = "wasm32"))]
pub(crate) mod native;
pub(crate) mod twin;
use crate::{Error, FlushRecord, Packed, Params, Stats};

/// Segment metadata: WIT `segment-meta`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SegmentMeta {
    /// Rows written, tombstones included.
    pub rows: u64,
    /// Distinct partitions written.
    pub partitions: u64,
    /// Row tombstones written.
    pub tombstones: u64,
    /// Smallest row timestamp.
    pub min_timestamp: u64,
    /// Largest row timestamp.
    pub max_timestamp: u64,
    /// Smallest clustering key.
    pub min_clustering: Vec<u8>,
    /// Largest clustering key.
    pub max_clustering: Vec<u8>,
    /// The serializer's own checksum of the data it wrote.
    pub checksum: u64,
}

/// What `finish` hands back besides the data file's tail.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Finished {
    /// The index file's bytes.
    pub index: Vec<u8>,
    /// The segment's metadata.
    pub meta: SegmentMeta,
}

/// Turns a frozen memtable into a segment: WIT `serializer.writer`.
pub trait Serializer: Sized + 'static {
    /// The name config uses, e.g. `"naive"`.
    const NAME: &'static str;
    /// The implementation's version.
    const VERSION: &'static str;

    /// Reads this serializer's segments back.
    type Reader: SegmentReader;

    /// Starts one segment, taking parameters from `params`.
    fn create(params: &mut Params) -> Result<Self, Error>;

    /// Encodes one record (keys arrive strictly ascending) and appends the
    /// bytes for the data file to `out`.
    fn write(&mut self, record: FlushRecord<'_>, out: &mut Vec<u8>) -> Result<(), Error>;

    /// Ends the segment: appends the data file's last bytes to `tail`.
    fn finish(&mut self, tail: &mut Vec<u8>) -> Result<Finished, Error>;

    /// Counters for reports.
    fn stats(&self) -> Stats;
}

/// Reads one segment back: WIT `serializer.reader`.
pub trait SegmentReader: Sized + 'static {
    /// Opens a whole data file and its index; damage is `Error::Corrupt`.
    fn open(params: &mut Params, data: Vec<u8>, index: Vec<u8>) -> Result<Self, Error>;

    /// Appends flush records in written order until `max_bytes` is reached
    /// (at least one while any remain).
    fn next(&mut self, max_bytes: usize, out: &mut Packed) -> Result<(), Error>;

    /// Appends the flush record for `key`, or an empty record.
    fn get(&self, key: &[u8], out: &mut Packed) -> Result<(), Error>;
}
