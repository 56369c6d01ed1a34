//! When a write is durable, and who waits for it. `none` keeps no log
//! (every existing config); `periodic` syncs every N ms and writers do
//! not wait; `batch` makes each write wait for a sync of its own (a
//! writer whose bytes a concurrent sync already covered returns at once);
//! `group` makes writers wait for a shared sync, made by a syncer thread
//! every window (Cassandra's `commitlog_sync_group_window`). A group
//! commit's leader appends its whole group in one record and waits once.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use super::Appended;
use super::files::{FileCounts, LogFiles, LogIoError, Position};

/// How writes are made durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SyncMode {
    /// No commit log.
    #[default]
    None,
    /// A sync every this long; writers do not wait.
    Periodic(Duration),
    /// Each write waits for its own sync.
    Batch,
    /// Writers wait for a shared sync, made every this long.
    Group(Duration),
}

/// The syncs' latencies and the writers' waits, in nanoseconds.
#[derive(Debug, Clone)]
pub struct SyncTimes {
    /// Each sync, as long as it took.
    pub syncs: Histogram<u64>,
    /// Each wait of a writer for durability (batch and group only).
    pub waits: Histogram<u64>,
}

fn histogram() -> Histogram<u64> {
    // 1 ns to 1 hour at 3 significant digits; the bounds are constants.
    Histogram::new_with_bounds(1, 3_600_000_000_000, 3).unwrap_or_else(|_| Histogram::new(3).unwrap_or_else(|_| unreachable!()))
}

impl Default for SyncTimes {
    fn default() -> Self {
        SyncTimes { syncs: histogram(), waits: histogram() }
    }
}

struct State {
    files: LogFiles,
    /// Where the last append ended.
    end: Position,
    times: SyncTimes,
    /// What each live segment was handed, when the rows are kept for
    /// reading the log back (verified variants).
    appended: BTreeMap<u64, Appended>,
    /// Released segments set aside to read back (every one whose rows
    /// were kept: a verified variant's).
    kept: BTreeMap<u64, Appended>,
    releases: Releases,
}

/// Which generations' flushes release which segments: once a generation
/// and every one before it is flushed, the segments before where the
/// next one began hold nothing live.
#[derive(Default)]
struct Releases {
    /// Generation → (flush parts still running, the first segment the
    /// next generation may have written to).
    frozen: BTreeMap<u64, (usize, u64)>,
}

#[derive(Default)]
struct Synced {
    /// Everything up to here is durable.
    at: Position,
    /// A writer or the syncer is syncing.
    in_flight: bool,
}

struct Shared {
    state: Mutex<State>,
    /// What is durable, and whether a sync is running (one at a time;
    /// appends go on while it runs).
    synced: Mutex<Synced>,
    /// Signalled when a sync ends.
    durable: Condvar,
    /// The writers' waits: a lock of their own, so timing a wait never
    /// queues behind an append or a sync's preparation.
    waits: Mutex<Histogram<u64>>,
    stop: AtomicBool,
    /// Whether each segment's rows are kept (their hashes) to read back.
    keep_rows: bool,
    /// A sync that failed: every later wait fails with it.
    failed: Mutex<Option<String>>,
}

impl Shared {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn synced(&self) -> std::sync::MutexGuard<'_, Synced> {
        self.synced.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Makes everything up to `at` durable. A writer that finds a sync
    /// running waits for it and wakes with every other waiter: those it
    /// covered return, and one of the rest syncs every append made
    /// meanwhile (group commit's leader; Cassandra's batch mode), so
    /// writers that arrive during a sync share the next one.
    fn sync(&self, at: Position) -> Result<(), LogIoError> {
        let mut synced = self.synced();
        loop {
            if at <= synced.at {
                return Ok(());
            }
            if !synced.in_flight {
                break;
            }
            if let Some(e) = self.failed.lock().unwrap_or_else(|p| p.into_inner()).clone() {
                return Err(LogIoError { path: "commit log".into(), source: std::io::Error::other(e) });
            }
            synced = self.durable.wait_timeout(synced, Duration::from_millis(100)).unwrap_or_else(|p| p.into_inner()).0;
        }
        synced.in_flight = true;
        drop(synced);
        let result = self.sync_now();
        let mut synced = self.synced();
        synced.in_flight = false;
        if let Ok(end) = result {
            synced.at = synced.at.max(end);
        }
        drop(synced);
        self.durable.notify_all();
        result.map(|_| ())
    }

    /// Syncs everything appended so far; where that ends.
    fn sync_now(&self) -> Result<Position, LogIoError> {
        let mut state = self.state();
        let end = state.end;
        let started = Instant::now();
        let open = state.files.prepare_sync()?;
        drop(state);
        if let Some((file, path)) = open {
            file.sync_data().map_err(|source| LogIoError { path: path.display().to_string(), source })?;
        }
        let took = started.elapsed();
        let mut state = self.state();
        state.files.synced(took);
        let _ = state.times.syncs.record(took.as_nanos().clamp(1, 3_600_000_000_000) as u64);
        Ok(end)
    }

    fn fail(&self, e: &LogIoError) {
        self.failed.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert_with(|| e.to_string());
        self.durable.notify_all();
    }
}

/// The longest a syncer parks at once, and its period once hurried.
const HURRIED: Duration = Duration::from_millis(50);

/// A commit log shared by a run's writers.
pub struct CommitLog {
    shared: Arc<Shared>,
    mode: SyncMode,
    syncer: Mutex<Option<JoinHandle<()>>>,
}

impl CommitLog {
    /// A log over `files`, synced as `mode` says (a syncer thread for
    /// `periodic` and `group`); `keep_rows` keeps the hashes of the rows
    /// each segment holds, to read it back against. Once `hurry` is set
    /// (Ctrl-C), the syncer syncs at least every 50 ms, so no writer
    /// waits out a long group window before the run can stop.
    pub fn new(files: LogFiles, mode: SyncMode, keep_rows: bool, hurry: Option<Arc<AtomicBool>>) -> Self {
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                files,
                end: Position::default(),
                times: SyncTimes::default(),
                appended: BTreeMap::new(),
                kept: BTreeMap::new(),
                releases: Releases::default(),
            }),
            keep_rows,
            synced: Mutex::new(Synced::default()),
            durable: Condvar::new(),
            waits: Mutex::new(histogram()),
            stop: AtomicBool::new(false),
            failed: Mutex::new(None),
        });
        let syncer = match mode {
            SyncMode::Periodic(every) | SyncMode::Group(every) => {
                let shared = Arc::clone(&shared);
                std::thread::Builder::new()
                    .name("memlab-log-sync".into())
                    .spawn(move || {
                        // Parked, not asleep: a close unparks it at once,
                        // and a hurry is seen within one step.
                        let mut last = Instant::now();
                        while !shared.stop.load(Ordering::Acquire) {
                            let hurried = hurry.as_ref().is_some_and(|h| h.load(Ordering::Relaxed));
                            let due = last + if hurried { every.min(HURRIED) } else { every };
                            let now = Instant::now();
                            if now < due {
                                std::thread::park_timeout((due - now).min(HURRIED));
                                continue;
                            }
                            last = now;
                            let end = shared.state().end;
                            if let Err(e) = shared.sync(end) {
                                shared.fail(&e);
                                return;
                            }
                        }
                    })
                    .ok()
            }
            SyncMode::None | SyncMode::Batch => None,
        };
        CommitLog { shared, mode, syncer: Mutex::new(syncer) }
    }

    /// Appends one record (a batch, or a coalesced group's) of the rows
    /// `rows` hashes; returns where it ends, to wait on.
    pub fn append(&self, record: &[u8], rows: impl IntoIterator<Item = u64>) -> Result<Position, LogIoError> {
        let mut state = self.shared.state();
        let at = state.files.append(record)?;
        state.end = at;
        if self.shared.keep_rows {
            state.appended.entry(at.segment).or_default().note(rows, at.offset);
        }
        Ok(at)
    }

    /// Where the last append ended.
    pub fn end(&self) -> Position {
        self.shared.state().end
    }

    /// The bytes of one record, `len` bytes ending at `end` (a recovery's).
    pub fn read(&self, end: Position, len: u64) -> Result<Vec<u8>, LogIoError> {
        self.shared.state().files.read(end.segment, end.offset - len, len)
    }

    /// A generation froze in `parts` flush jobs; the next one's writes
    /// start at or after `next_from`.
    pub fn frozen(&self, generation: u64, parts: usize, next_from: Position) {
        self.shared.state().releases.frozen.insert(generation, (parts.max(1), next_from.segment.max(1)));
    }

    /// One flush job of `generation` is done: once it and every earlier
    /// generation is flushed, the segments they alone wrote to are
    /// released. Each one whose rows were kept (a verified variant's) is
    /// set aside to be read back after the run, not a sample: a format
    /// could lie in the segments it can tell will be released. Others are
    /// deleted, as nothing would read them.
    pub fn flushed(&self, generation: u64) -> Result<(), LogIoError> {
        let mut state = self.shared.state();
        if let Some((parts, _)) = state.releases.frozen.get_mut(&generation) {
            *parts = parts.saturating_sub(1);
        }
        let mut before = None;
        while let Some((&g, &(0, next_from))) = state.releases.frozen.first_key_value() {
            state.releases.frozen.remove(&g);
            before = Some(next_from);
        }
        let Some(before) = before else { return Ok(()) };
        let state = &mut *state;
        state.files.release_before(before, |n| match state.appended.remove(&n) {
            Some(rows) => {
                state.kept.insert(n, rows);
                true
            }
            None => false,
        })
    }

    /// The segments to read back after the run: the live ones and those
    /// set aside, each with its file and what it was handed.
    pub fn to_read_back(&self) -> Vec<(u64, std::path::PathBuf, Appended)> {
        let state = self.shared.state();
        let live = state.files.live().iter().map(|&n| (n, state.files.path_of(n), state.appended.get(&n).cloned().unwrap_or_default()));
        let kept = state.kept.iter().map(|(&n, a)| (n, state.files.kept_path(n), a.clone()));
        let mut all: Vec<_> = live.chain(kept).collect();
        all.sort_by_key(|(n, _, _)| *n);
        all
    }

    /// Returns once everything up to `at` is durable, as the mode says:
    /// at once for `none` and `periodic`; after its own sync for
    /// `batch`; after the next shared sync for `group`. The wait is
    /// timed into the log's wait histogram.
    pub fn wait_durable(&self, at: Position) -> Result<Duration, String> {
        let started = Instant::now();
        match self.mode {
            SyncMode::None | SyncMode::Periodic(_) => return Ok(Duration::ZERO),
            SyncMode::Batch => self.shared.sync(at).map_err(|e| e.to_string())?,
            SyncMode::Group(_) => {
                let mut synced = self.shared.synced();
                while synced.at < at {
                    if let Some(e) = self.shared.failed.lock().unwrap_or_else(|p| p.into_inner()).clone() {
                        return Err(e);
                    }
                    synced = self.shared.durable.wait_timeout(synced, Duration::from_millis(100)).unwrap_or_else(|p| p.into_inner()).0;
                }
            }
        }
        let waited = started.elapsed();
        let _ = self.shared.waits.lock().unwrap_or_else(|p| p.into_inner()).record(waited.as_nanos().clamp(1, 3_600_000_000_000) as u64);
        Ok(waited)
    }

    /// Everything up to here is durable.
    pub fn synced(&self) -> Position {
        self.shared.synced().at
    }

    /// What the files cost, and the syncs' and waits' times, so far.
    pub fn figures(&self) -> (FileCounts, SyncTimes) {
        let waits = self.shared.waits.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let state = self.shared.state();
        (state.files.counts(), SyncTimes { syncs: state.times.syncs.clone(), waits })
    }

    /// Stops the syncer and makes everything durable; the figures.
    pub fn close(&self) -> Result<(FileCounts, SyncTimes), LogIoError> {
        self.stop_syncer();
        let end = self.shared.state().end;
        self.shared.sync(end)?;
        Ok(self.figures())
    }

    /// The sync mode.
    pub fn mode(&self) -> SyncMode {
        self.mode
    }

    fn stop_syncer(&self) {
        self.shared.stop.store(true, Ordering::Release);
        if let Some(syncer) = self.syncer.lock().unwrap_or_else(|p| p.into_inner()).take() {
            syncer.thread().unpark();
            let _ = syncer.join();
        }
    }
}

impl Drop for CommitLog {
    fn drop(&mut self) {
        self.stop_syncer();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use super::{CommitLog, SyncMode};
    use crate::commitlog::{Access, LogFiles};

    fn log(name: &str, mode: SyncMode) -> (CommitLog, std::path::PathBuf) {
        let dir = std::env::temp_dir().join(format!("memlab-sync-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        (CommitLog::new(LogFiles::create(&dir, Access::Buffered, 1 << 20).expect("files"), mode, false, None), dir)
    }

    /// Many writers, each waiting for durability: every acknowledged
    /// write is covered by a sync, and group commit shares its syncs.
    #[test]
    fn every_acknowledged_write_is_synced_and_group_commit_shares_syncs() {
        for (name, mode) in [("batch", SyncMode::Batch), ("group", SyncMode::Group(Duration::from_millis(2)))] {
            let (log, dir) = log(name, mode);
            let log = Arc::new(log);
            std::thread::scope(|s| {
                for t in 0..8u8 {
                    let log = Arc::clone(&log);
                    s.spawn(move || {
                        for _ in 0..25 {
                            let at = log.append(&[t; 100], []).expect("append");
                            log.wait_durable(at).expect("durable");
                            assert!(log.synced() >= at, "{name}: acknowledged before its sync");
                        }
                    });
                }
            });
            let (counts, times) = log.close().expect("close");
            assert_eq!(counts.appended, 8 * 25 * 100);
            assert_eq!(times.waits.len(), 200, "{name}: every write waited");
            assert!(counts.syncs >= 1 && counts.syncs <= 201, "{name}: {counts:?}");
            // Batch writers that arrive during a sync share the next one
            // (a writer covered by it returns, whatever came after).
            assert!(counts.syncs <= 100, "{name}: 8 writers share their syncs: {counts:?}");
            let _ = std::fs::remove_dir_all(&dir);
        }
    }

    /// Ctrl-C while writers wait out a long group window: the syncer is
    /// hurried, and the waits end in well under the window.
    #[test]
    fn a_hurried_log_ends_a_long_group_window_early() {
        let dir = std::env::temp_dir().join(format!("memlab-sync-hurry-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let hurry = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let files = LogFiles::create(&dir, Access::Buffered, 1 << 20).expect("files");
        let log = CommitLog::new(files, SyncMode::Group(Duration::from_secs(60)), false, Some(Arc::clone(&hurry)));
        let at = log.append(b"waits", []).expect("append");
        let started = std::time::Instant::now();
        std::thread::scope(|s| {
            s.spawn(|| {
                std::thread::sleep(Duration::from_millis(200));
                hurry.store(true, std::sync::atomic::Ordering::Relaxed);
            });
            log.wait_durable(at).expect("durable");
        });
        assert!(started.elapsed() < Duration::from_secs(30), "waited {:?} of a 60 s window", started.elapsed());
        assert!(log.synced() >= at);
        let _ = log.close();
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn periodic_writers_do_not_wait_and_a_close_syncs_the_rest() {
        let (log, dir) = log("periodic", SyncMode::Periodic(Duration::from_secs(3600)));
        let at = log.append(b"unsynced", []).expect("append");
        assert_eq!(log.wait_durable(at).expect("no wait"), Duration::ZERO);
        assert!(log.synced() < at, "not yet synced");
        let (counts, _) = log.close().expect("close");
        assert_eq!(counts.syncs, 1);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
