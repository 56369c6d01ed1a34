//! A variant's commit log in the record: what was configured (`LogSpec`,
//! part of the variant's spec) and what the host measured of it
//! (`LogFigures`): bytes, syncs and their latency, the writers' waits,
//! recoveries, and the segments read back.

use crate::commitlog::{Access, FileCounts, SyncMode, SyncTimes};
use crate::config::LogSettings;

use super::Latency;

/// How the host wrote and synced the log, as configured (the format and
/// its parameters are the variant's `commitlog` strategy).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LogSpec {
    /// `periodic`, `batch` or `group`.
    pub sync: String,
    /// The sync period (`periodic`) or group window (`group`), in ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync_ms: Option<f64>,
    /// `buffered` or `direct`.
    pub access: String,
    /// Bytes a segment grows to before the next one opens.
    pub segment_size: u64,
}

impl LogSpec {
    /// The spec of a variant's log, or none when it keeps no log.
    pub fn of(log: &LogSettings) -> Option<Self> {
        let (sync, sync_ms) = match log.sync {
            SyncMode::None => return None,
            SyncMode::Periodic(d) => ("periodic", Some(d.as_secs_f64() * 1e3)),
            SyncMode::Batch => ("batch", None),
            SyncMode::Group(d) => ("group", Some(d.as_secs_f64() * 1e3)),
        };
        let access = match log.access {
            Access::Buffered => "buffered",
            Access::Direct => "direct",
        };
        Some(LogSpec { sync: sync.into(), sync_ms, access: access.into(), segment_size: log.segment_size })
    }
}

/// What the host measured of a run's commit log.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LogFigures {
    /// Log records appended (one a batch, or one a coalesced group).
    pub records: u64,
    /// Rows they held.
    pub rows: u64,
    /// Bytes the formats encoded.
    pub bytes: u64,
    /// Bytes written to the files (direct I/O's padded blocks included).
    pub written: u64,
    /// Syncs made.
    pub syncs: u64,
    /// Each sync's time, in nanoseconds.
    pub sync_latency: Latency,
    /// Each writer's wait for durability, in nanoseconds (`batch`, `group`).
    pub wait_latency: Latency,
    /// Segments opened, and released once flushed.
    pub segments: u64,
    /// Segments released.
    pub released: u64,
    /// Segments the host replayed after the run and held to what it
    /// appended (the live ones, and the released ones the secret kept).
    pub replayed: u64,
    /// Shards recovered from the log after a trap.
    pub recoveries: u64,
    /// The segments left in the variant's folder after the run, each as
    /// the host read it back (what `memlab verify` holds a kept log to).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kept: Vec<KeptLog>,
}

/// A log segment left on disk, as the run read it back.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct KeptLog {
    /// Its file, relative to the variant's folder.
    pub file: super::RunPath,
    /// Bytes its records span.
    pub bytes: u64,
    /// Rows it holds.
    pub rows: u64,
    /// FNV-1a 128 over its rows in order (`verify::rows_digest`), in hex.
    pub digest: String,
}

impl LogFigures {
    /// The figures from the log's counters and times.
    pub fn of(counts: &FileCounts, times: &SyncTimes, records: u64, rows: u64) -> Self {
        LogFigures {
            records,
            rows,
            bytes: counts.appended,
            written: counts.written,
            syncs: counts.syncs,
            sync_latency: Latency::from(&times.syncs),
            wait_latency: Latency::from(&times.waits),
            segments: counts.segments,
            released: counts.released,
            replayed: 0,
            recoveries: 0,
            kept: Vec::new(),
        }
    }

    /// Bytes written for each byte logged.
    pub fn write_amplification(&self) -> f64 {
        if self.bytes == 0 { 0.0 } else { self.written as f64 / self.bytes as f64 }
    }
}
