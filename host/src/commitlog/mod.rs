//! The commit log: where a write is appended and made durable before it
//! reaches a memtable (Cassandra's commit log, RocksDB's WAL). The host
//! owns the files and the syncs (`files.rs`) and when a writer waits for
//! durability (`sync.rs`, Cassandra's `commitlog_sync`: periodic, batch
//! or group); a strategy plugin will own only the bytes: framing,
//! checksums and compression (the `commitlog` kind, next).

mod appended;
mod files;
mod sync;

pub use appended::Appended;

pub use files::{Access, BLOCK, FileCounts, LogFiles, LogIoError, MAX_SEGMENT_BYTES, Position};
pub use sync::{CommitLog, SyncMode, SyncTimes};
