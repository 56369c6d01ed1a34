//! A variant's commit log in one run: opened at set-up (the host's
//! segment files in the variant's folder, a format a shard), closed after
//! the drain, then every segment it wrote (the live ones, and every
//! released one, set aside until then) replayed by a fresh instance and
//! held to what the host appended, with a damaged and a cut copy of one
//! the secret picks; and its figures for the record.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use super::strategies::CommitLogFactory;
use crate::commitlog::{CommitLog, LogFiles};
use crate::config::Variant;
use crate::record::{Failure, KeptLog, LogFigures};
use crate::seam::{self, Op, SeamError};
use crate::verify::log::{Copy, hold, rows_digest};
use crate::write_path::{CallTimes, PathLog, WriteCounters};

/// The log's folder in the variant's.
const FOLDER: &str = "commitlog";

fn folder(dir: &Path) -> std::path::PathBuf {
    dir.join(FOLDER)
}

/// Opens the variant's log, when it keeps one, with a format a shard for
/// each of `lanes` writers logging at once.
pub(super) fn open(
    variant: &Variant,
    dir: &Path,
    factory: Option<&CommitLogFactory>,
    hurry: Option<Arc<AtomicBool>>,
    lanes: usize,
) -> Result<Option<PathLog>, SeamError> {
    let Some(factory) = factory.filter(|_| variant.log.sync != crate::commitlog::SyncMode::None) else { return Ok(None) };
    let files = LogFiles::create(&folder(dir), variant.log.access, variant.log.segment_size)?;
    let log = Arc::new(CommitLog::new(files, variant.log.sync, variant.verify, hurry));
    let formats = (0..variant.shards * lanes.max(1)).map(|i| factory(i % variant.shards)).collect::<Result<Vec<_>, _>>()?;
    Ok(Some(PathLog { log, formats }))
}

/// Closes the log; its figures, and the read-back's failure, if any.
pub(super) fn close(
    log: &CommitLog,
    factory: &CommitLogFactory,
    plugin: &str,
    (counters, calls): (&WriteCounters, &CallTimes),
    read_back: Option<u64>,
) -> (LogFigures, Option<Failure>) {
    let closed = log.close();
    let (counts, times) = match closed {
        Ok(figures) => figures,
        Err(e) => {
            let (counts, times) = log.figures();
            let failure = Failure::from(&SeamError::from(e));
            return (LogFigures::of(&counts, &times, calls.log_records, calls.log_rows), Some(failure));
        }
    };
    let mut figures = LogFigures::of(&counts, &times, calls.log_records, calls.log_rows);
    figures.recoveries = counters.recoveries;
    let Some(round) = read_back else { return (figures, None) };
    match replay_segments(log, factory, round) {
        Ok(kept) => {
            figures.replayed = kept.len() as u64;
            figures.kept = kept;
            (figures, None)
        }
        Err(detail) => {
            let e = SeamError::contract(plugin, Op::CommitLogReplay, 0, detail);
            (figures, Some(Failure::from(&e)))
        }
    }
}

/// Replays every segment on disk and holds it to what was appended;
/// one the secret picks (salted by the round) also damaged and cut.
fn replay_segments(log: &CommitLog, factory: &CommitLogFactory, round: u64) -> Result<Vec<KeptLog>, String> {
    let segments = log.to_read_back();
    let mut format = factory(0).map_err(|e| e.to_string())?;
    let picked = seam::secret_pick(segments.len(), round);
    let mut kept = Vec::with_capacity(segments.len());
    for (i, (number, path, appended)) in segments.iter().enumerate() {
        let bytes = crate::input::read(path, crate::commitlog::MAX_SEGMENT_BYTES, "commit-log segment").map_err(|e| e.to_string())?;
        let whole = format.replay_all(&bytes, 4096).map_err(|e| e.to_string())?;
        hold(&whole, Copy::Whole, appended).map_err(|e| format!("log segment {number} ({} bytes): {e}", appended.len()))?;
        let file = path.file_name().map(|n| format!("{FOLDER}/{}", n.to_string_lossy())).unwrap_or_default();
        kept.push(KeptLog {
            file: crate::record::RunPath::new(file),
            bytes: appended.len(),
            rows: whole.rows.len() as u64,
            digest: format!("{:032x}", rows_digest(whole.rows.iter())),
        });
        if i != picked || appended.len() < 2 {
            continue;
        }
        let at = seam::secret_offset(appended.len() as usize);
        let mut damaged = bytes.clone();
        damaged[at] ^= 0x10;
        let replayed = format.replay_all(&damaged, 4096).map_err(|e| e.to_string())?;
        hold(&replayed, Copy::Damaged(at as u64), appended).map_err(|e| format!("log segment {number}: {e}"))?;
        let cut = 1 + seam::secret_offset(appended.len() as usize - 1);
        let replayed = format.replay_all(&bytes[..cut], 4096).map_err(|e| e.to_string())?;
        hold(&replayed, Copy::Cut(cut as u64), appended).map_err(|e| format!("log segment {number}: {e}"))?;
    }
    Ok(kept)
}
