//! A recorded run's kept commit log read back (`memlab verify`): each
//! segment the run left replayed from its start and held to what the run
//! read back from it then (its rows' count and published digest). A log
//! cut short (a crash mid-append, or a truncated copy) replays up to the
//! tear and says where it stopped and how many of the logged rows it lost.

use std::path::Path;

use memlab_sdk::Tail;

use super::log::rows_digest;
use crate::seam::CommitLogFormat;

/// What one kept log segment holds now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogCheck {
    /// Every row the run logged there, in order.
    Holds {
        /// Rows replayed.
        rows: u64,
    },
    /// The segment stops short: torn or damaged at `at`, with `rows` of
    /// the `logged` rows before it.
    Short {
        /// Where the replay stopped.
        at: u64,
        /// How it stopped.
        tail: Tail,
        /// Rows replayed.
        rows: u64,
        /// Rows the run logged there.
        logged: u64,
    },
    /// It replays whole, but not as the run read it back.
    Differs(String),
}

/// A kept segment as the run read it back (the record's `KeptLog`).
#[derive(Debug, Clone, Copy)]
pub struct Kept<'a> {
    /// Its file, relative to the variant's folder.
    pub file: &'a crate::input::RunPath,
    /// Bytes its records span.
    pub bytes: u64,
    /// Rows it holds.
    pub rows: u64,
    /// FNV-1a 128 over its rows in order, in hex.
    pub digest: &'a str,
}

/// Replays the kept segment `kept` under `dir` (the variant's folder).
pub fn check(dir: &Path, kept: Kept<'_>, format: &mut CommitLogFormat) -> Result<LogCheck, String> {
    let path = kept.file.under(dir).map_err(|e| e.to_string())?;
    // Only as far as the run appended, to the block: a file the record
    // calls short is not read whole, however large it is now.
    let span = kept.bytes.min(crate::commitlog::MAX_SEGMENT_BYTES).next_multiple_of(crate::commitlog::BLOCK as u64);
    let bytes = crate::input::read_prefix(&path, span, "commit-log segment").map_err(|e| e.to_string())?;
    let replayed = format.replay_all(&bytes, 4096).map_err(|e| e.to_string())?;
    let rows = replayed.rows.len() as u64;
    if replayed.tail != Tail::Clean || replayed.intact < kept.bytes {
        return Ok(LogCheck::Short { at: replayed.intact, tail: replayed.tail, rows, logged: kept.rows });
    }
    let digest = format!("{:032x}", rows_digest(replayed.rows.iter()));
    if rows != kept.rows || digest != kept.digest {
        return Ok(LogCheck::Differs(format!("{rows} rows, digest {digest}; the run read back {} rows, digest {}", kept.rows, kept.digest)));
    }
    Ok(LogCheck::Holds { rows })
}
