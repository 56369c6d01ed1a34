#[cfg(all(target_arch = "wasm32", feature = "commitlog"))]
#[doc(hidden)]
pub mod export;
#[cfg(not(target_arch = "wasm32"))]
pub(crate) mod native;
pub(crate) mod twin;
use crate::{Error, Packed, Params, Stats};

/// Where a replay stopped: WIT `tail`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tail {
    /// At the end of the bytes, or at zeros where a record would begin.
    Clean,
    /// Inside a record cut short (a crash mid-append).
    Torn,
    /// At a record whose checksum or framing fails.
    Damaged,
}

/// What [`CommitLog::decode`] found at the start of its bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decoded {
    /// A whole, intact record this many bytes long; its rows were appended.
    Record(usize),
    /// The bytes end inside a record.
    Torn,
    /// The record's checksum or framing fails.
    Damaged,
}

/// Frames rows as commit-log records and reads them back: WIT
/// `commitlog`. The plugin has no I/O: the host appends the records to
/// its files and syncs them.
pub trait CommitLog: Sized + 'static {
    /// The name config uses, e.g. `"plain"`.
    const NAME: &'static str;
    /// The implementation's version.
    const VERSION: &'static str;

    /// Creates the log format, taking parameters from `params`.
    fn create(params: &mut Params) -> Result<Self, Error>;

    /// Appends one log record holding `rows` (a batch, or a coalesced
    /// group's) to `out`. It must not begin with a zero byte: zeros where
    /// a record would begin end a segment (direct I/O pads with them).
    fn encode(&mut self, rows: &Packed, out: &mut Vec<u8>) -> Result<(), Error>;

    /// Reads the record at the start of `bytes` (never empty, never
    /// starting with zero), appending its rows to `out` only when it is
    /// whole and intact. Damage is `Decoded::Damaged`, never a panic.
    fn decode(&self, bytes: &[u8], out: &mut Packed) -> Decoded;

    /// Counters for reports.
    fn stats(&self) -> Stats;
}
