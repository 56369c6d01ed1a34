//! The write path's commit log: each batch (or coalesced group) is
//! encoded by its shard's log format and appended to the host's log
//! under the shard's lock, so a shard's records are in the order its
//! memtable took them; the writer then waits for durability outside the
//! lock, as its sync mode says. When the shard's memtable or allocator
//! traps, the host replays the live generation's records into fresh
//! instances and the write goes on (a recovery). A concurrent shard's
//! writers each encode with formats of their own (`Lanes`), inside the
//! generation they then write to, and share the group's syncs.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use thread_local::ThreadLocal;

use memlab_sdk::{Entry, Packed, RowView};

use super::metrics::{CallTimes, WriteMetrics};
use super::{Turn, WritePath};
use crate::commitlog::{CommitLog, Position};
use crate::router::{sort_key, token};
use crate::seam::ledger::Noted;
use crate::seam::{CommitLogFormat, Fault, Op, SeamError, Shard};

/// A write path's log: the host's files and syncs, and one format a
/// shard for each of its lanes (`WritePath::log_lanes`).
pub struct PathLog {
    /// The host's log, shared by every shard.
    pub log: Arc<CommitLog>,
    /// Each lane's formats in shard order, lane after lane.
    pub formats: Vec<CommitLogFormat>,
}

/// A concurrent shard's writers' formats: a record depends only on its
/// rows and the parameters (commitlog contract 1), so each writer
/// encodes with instances of its own, taken once, when it first logs.
pub(super) struct Lanes {
    spare: Mutex<Vec<Vec<CommitLogFormat>>>,
    mine: ThreadLocal<RefCell<Vec<CommitLogFormat>>>,
}

impl Lanes {
    fn take(&self) -> Result<RefCell<Vec<CommitLogFormat>>, SeamError> {
        let lane = self.spare.lock().unwrap_or_else(PoisonError::into_inner).pop();
        lane.map(RefCell::new).ok_or_else(|| host_error("more writers than the log has formats for"))
    }
}

/// Rows a `replay` call gives back when a shard recovers.
const REPLAY_ROWS: u32 = 4096;
/// Rows a recovery stores and inserts a call.
const REPLAY_BATCH: usize = 1 << 16;
/// Recoveries a run may make before a trapping plugin fails it.
pub const MAX_RECOVERIES: u64 = 64;

fn host_error(detail: impl ToString) -> SeamError {
    SeamError::Host { operation: "commit log", detail: detail.to_string() }
}

impl WritePath {
    /// How many writers log at once, each with a format a shard of its
    /// own: every client where the shards take concurrent writers, else
    /// one (the shard's turn orders its records).
    pub fn log_lanes(&self) -> usize {
        if self.concurrent { self.clients } else { 1 }
    }

    /// Gives the write path its commit log (before any write).
    pub fn with_log(mut self, log: PathLog) -> Self {
        let mut formats = log.formats.into_iter();
        if self.concurrent {
            let lanes = (0..self.clients).map(|_| formats.by_ref().take(self.shards.len()).collect()).collect();
            self.lanes = Some(Lanes { spare: Mutex::new(lanes), mine: ThreadLocal::new() });
        } else {
            for (slot, format) in self.shards.iter_mut().zip(formats) {
                slot.turn.get_mut().unwrap_or_else(|p| p.into_inner()).format = Some(format);
            }
        }
        self.log = Some(log.log);
        self
    }

    /// The host's commit log, when the variant keeps one.
    pub fn log(&self) -> Option<&Arc<CommitLog>> {
        self.log.as_ref()
    }

    /// The log formats' own counters, summed over the shards: reported
    /// by the plugin, never verified.
    pub fn log_stats(&mut self) -> Result<BTreeMap<String, u64>, SeamError> {
        let mut sum = BTreeMap::new();
        let mut add = |format: &mut CommitLogFormat| -> Result<(), SeamError> {
            for (name, value) in format.stats()? {
                *sum.entry(name).or_default() += value;
            }
            Ok(())
        };
        for slot in &mut self.shards {
            if let Some(format) = slot.turn.get_mut().unwrap_or_else(PoisonError::into_inner).format.as_mut() {
                add(format)?;
            }
        }
        for lane in self.lanes.iter_mut().flat_map(|lanes| lanes.mine.iter_mut()) {
            lane.get_mut().iter_mut().try_for_each(&mut add)?;
        }
        Ok(sum)
    }

    /// Logs `rows`, applies them to shard `shard` with `apply`, in its
    /// `turn`, and recovers the shard once if `apply` trapped: the live
    /// generation replayed from the log into fresh instances, then
    /// `apply` again. Returns where the record ends, for the writer to
    /// wait on outside the lock.
    pub(super) fn logged_apply(
        &self,
        shard: usize,
        turn: &mut Turn,
        times: &mut CallTimes,
        rows: &mut Packed,
        noted: Option<&Noted>,
        mut apply: impl FnMut(&Shard, &mut CallTimes, &mut Packed) -> Result<(), SeamError>,
    ) -> Result<Option<Position>, SeamError> {
        let record = match (&self.log, turn.format.as_mut()) {
            (Some(log), Some(format)) => Some(append(log, format, times, rows, noted)?),
            _ => None,
        };
        let slot = &self.shards[shard];
        match slot.with(|live| apply(live, times, rows)) {
            Err(e) if record.is_some() && recoverable(&e) && self.metrics.recoveries.load(std::sync::atomic::Ordering::Relaxed) < MAX_RECOVERIES => {
                self.recover(shard, turn)?;
                WriteMetrics::add(&self.metrics.recoveries, 1);
                slot.with(|live| apply(live, times, rows))?;
            }
            other => other?,
        }
        if let Some(record) = record {
            turn.logged.push(record);
        }
        Ok(record.map(|(end, _)| end))
    }

    /// Logs `rows` for shard `shard` with the calling writer's own format
    /// (a concurrent shard's); where the record ends. Called inside the
    /// generation the rows then go to: a switch waits for the writer, so
    /// no record of a later generation's rows lies before where that
    /// generation's records begin (`CommitLog::frozen`).
    pub(super) fn log_beside(&self, shard: usize, times: &mut CallTimes, rows: &mut Packed, noted: Option<&Noted>) -> Result<Option<Position>, SeamError> {
        let (Some(log), Some(lanes)) = (&self.log, &self.lanes) else { return Ok(None) };
        let mut mine = lanes.mine.get_or_try(|| lanes.take())?.borrow_mut();
        let format = mine.get_mut(shard).ok_or_else(|| host_error(format!("no format for shard {shard}")))?;
        append(log, format, times, rows, noted).map(|(end, _)| Some(end))
    }

    /// A read of the shard's live generation, recovering the shard once
    /// from the log if the read trapped (as `logged_apply` recovers a
    /// write), then reading again.
    pub(super) fn read_recovering<R>(&self, shard: usize, turn: &mut Turn, mut read: impl FnMut(&Shard) -> Result<R, SeamError>) -> Result<R, SeamError> {
        let slot = &self.shards[shard];
        match slot.with(&mut read) {
            Err(e) if self.log.is_some() && recoverable(&e) && self.metrics.recoveries.load(std::sync::atomic::Ordering::Relaxed) < MAX_RECOVERIES => {
                self.recover(shard, turn)?;
                WriteMetrics::add(&self.metrics.recoveries, 1);
                slot.with(read)
            }
            other => other,
        }
    }

    /// Replays the shard's live generation from the log into fresh
    /// instances, in place of the ones that trapped.
    fn recover(&self, shard: usize, turn: &mut Turn) -> Result<(), SeamError> {
        let Turn { format, logged } = turn;
        let (Some(log), Some(format)) = (&self.log, format.as_mut()) else { return Err(host_error("no commit log to recover from")) };
        self.shards[shard].alone(|live| self.replay(live, log, format, logged))
    }

    /// Gives `live`'s trapped instances' pool back, and replays the
    /// `logged` records into fresh ones.
    fn replay(&self, live: &mut Shard, log: &CommitLog, format: &mut CommitLogFormat, logged: &[(Position, u64)]) -> Result<(), SeamError> {
        let fresh = self.generations.fresh(live.index())?;
        super::give_back(&self.pool, live);
        live.recover_with(fresh);
        // Replayed in a few large calls, not one a record: the records'
        // rows gathered up to `REPLAY_BATCH` at a time.
        let mut pending = Packed::new();
        for &(end, len) in logged {
            let bytes = log.read(end, len)?;
            let replayed = format.replay_all(&bytes, REPLAY_ROWS)?;
            if replayed.tail != memlab_sdk::Tail::Clean || replayed.intact != len {
                let detail = format!("a record of {len} bytes it encoded replayed as {:?} after {} bytes", replayed.tail, replayed.intact);
                return Err(SeamError::contract(format.plugin(), Op::CommitLogReplay, live.index(), detail));
            }
            replayed.rows.iter().for_each(|r| pending.push(r));
            if pending.len() >= REPLAY_BATCH {
                replay_into(live, std::mem::take(&mut pending))?;
            }
        }
        replay_into(live, pending)
    }

    /// Waits until everything up to `at` is durable, timing the wait.
    pub(super) fn wait_durable(&self, at: Option<Position>) -> Result<(), SeamError> {
        let (Some(log), Some(at)) = (&self.log, at) else { return Ok(()) };
        let waited = log.wait_durable(at).map_err(host_error)?;
        WriteMetrics::add(&self.metrics.durability_wait_ns, waited.as_nanos() as u64);
        Ok(())
    }
}

/// Encodes `rows` with `format` and appends the record to `log`, timed;
/// where it ends, and its length.
fn append(
    log: &CommitLog,
    format: &mut CommitLogFormat,
    times: &mut CallTimes,
    rows: &mut Packed,
    noted: Option<&Noted>,
) -> Result<(Position, u64), SeamError> {
    let started = Instant::now();
    let bytes = format.encode(rows)?;
    let hashes = noted.map(Noted::row_hashes).into_iter().flatten();
    let end = log.append(&bytes, hashes)?;
    times.log_ns += started.elapsed().as_nanos() as u64;
    times.log_bytes += bytes.len() as u64;
    times.log_records += 1;
    times.log_rows += rows.len() as u64;
    Ok((end, bytes.len() as u64))
}

/// Stores replayed rows and inserts their entries (each row's own key and
/// timestamp, the new refs), as the write path did the first time.
fn replay_into(shard: &Shard, mut rows: Packed) -> Result<(), SeamError> {
    if rows.is_empty() {
        return Ok(());
    }
    let refs = shard.store_rows(&mut rows)?;
    let mut entries = Packed::with_capacity(rows.len(), rows.data_len() / 2);
    let mut key = Vec::new();
    for (row, reference) in rows.iter().zip(refs) {
        let head = RowView::head(row).map_err(|e| host_error(format!("a replayed row does not decode: {e}")))?;
        key.clear();
        sort_key(token(head.partition), head.partition, head.clustering, &mut key);
        entries.push_with(|buf| Entry { key: &key, timestamp: head.timestamp, reference }.encode(buf));
    }
    shard.insert_replayed(&mut entries)
}

/// A trap or a poisoned instance of the shard's memtable or allocator:
/// a fault the log can recover from (a broken contract is not).
fn recoverable(e: &SeamError) -> bool {
    matches!(e, SeamError::Call { operation, fault: Fault::Trap { .. } | Fault::Poisoned(_), .. } if operation.kind() != crate::seam::Kind::CommitLog)
}
