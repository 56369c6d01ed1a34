//! The commit log's files: segments appended to, synced and recycled by
//! the host, never by a plugin, so every durability figure (bytes
//! written, syncs, their latency) is the host's own measurement.
//!
//! Buffered I/O appends through the page cache and syncs with
//! `fdatasync`. Direct I/O (`O_DIRECT`, as Cassandra's
//! `commitlog_disk_access_mode: direct`) writes whole aligned blocks from
//! an aligned buffer: the partial last block is written padded with
//! zeros at each sync and again, fuller, at the next, which is the write
//! amplification direct I/O pays. A reader finds a segment's end by its
//! framing: the padding reads as zeros.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The block direct I/O writes in: offsets, lengths and the buffer's
/// address are multiples of it.
pub const BLOCK: usize = 4096;

/// How the log's files are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Access {
    /// Through the page cache, `fdatasync` to sync.
    #[default]
    Buffered,
    /// `O_DIRECT` whole aligned blocks, then `fdatasync` for the metadata.
    Direct,
}

/// Where an append ended: a segment and the bytes up to the record's end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Position {
    /// The segment's number, from 1.
    pub segment: u64,
    /// Bytes of the segment up to the end of the record.
    pub offset: u64,
}

/// What the files have cost so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FileCounts {
    /// Bytes the log was handed.
    pub appended: u64,
    /// Bytes written to the files (padding and rewritten blocks included).
    pub written: u64,
    /// Syncs made.
    pub syncs: u64,
    /// Time inside the syncs, writes of direct I/O's pending blocks included.
    pub sync_time: Duration,
    /// Segments opened.
    pub segments: u64,
    /// Segments released once what they held was flushed.
    pub released: u64,
}

/// A commit-log file could not be written or read.
#[derive(Debug, thiserror::Error)]
#[error("commit log {path}: {source}")]
pub struct LogIoError {
    /// The file.
    pub path: String,
    /// The operating system's error.
    pub source: std::io::Error,
}

/// A log file that failed is memlab's own step failing, not a plugin's.
impl From<LogIoError> for crate::seam::SeamError {
    fn from(e: LogIoError) -> Self {
        crate::seam::SeamError::Host { operation: "commit log", detail: e.to_string() }
    }
}

/// The largest log segment the host reads back (a record larger than a
/// segment gets one of its own).
pub const MAX_SEGMENT_BYTES: u64 = 4 << 30;

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> LogIoError + '_ {
    move |source| LogIoError { path: path.display().to_string(), source }
}

/// A block-aligned buffer: a vector with slack, used from its first
/// aligned byte (no unsafe code: `align_offset` finds it).
struct Aligned {
    raw: Vec<u8>,
    start: usize,
    len: usize,
}

impl Aligned {
    fn new(capacity: usize) -> Self {
        let raw = vec![0u8; capacity + BLOCK];
        let start = raw.as_ptr().align_offset(BLOCK);
        Aligned { raw, start, len: 0 }
    }

    fn capacity(&self) -> usize {
        self.raw.len() - BLOCK
    }

    fn push(&mut self, bytes: &[u8]) {
        if self.len + bytes.len() > self.capacity() {
            let mut bigger = Aligned::new((self.len + bytes.len()).next_power_of_two().max(BLOCK));
            bigger.raw[bigger.start..bigger.start + self.len].copy_from_slice(&self.raw[self.start..self.start + self.len]);
            bigger.len = self.len;
            *self = bigger;
        }
        self.raw[self.start + self.len..self.start + self.len + bytes.len()].copy_from_slice(bytes);
        self.len += bytes.len();
    }

    /// The pending bytes padded with zeros to whole blocks.
    fn padded(&mut self) -> &[u8] {
        let whole = self.len.div_ceil(BLOCK) * BLOCK;
        self.raw[self.start + self.len..self.start + whole].fill(0);
        &self.raw[self.start..self.start + whole]
    }

    /// Drops the whole blocks written, keeping the partial last one.
    fn keep_tail(&mut self) -> usize {
        let whole = self.len / BLOCK * BLOCK;
        self.raw.copy_within(self.start + whole..self.start + self.len, self.start);
        self.len -= whole;
        whole
    }
}

/// The segment being appended to.
struct Open {
    number: u64,
    path: PathBuf,
    /// Shared with a sync made outside the files' lock.
    file: std::sync::Arc<File>,
    /// Logical bytes appended.
    len: u64,
    /// Direct I/O: the file offset where `pending` starts (block-aligned).
    pending_at: u64,
}

/// A directory of log segments, appended to in order.
pub struct LogFiles {
    dir: PathBuf,
    access: Access,
    segment_size: u64,
    open: Option<Open>,
    pending: Aligned,
    counts: FileCounts,
    /// Numbers of the segments not yet released, oldest first.
    live: Vec<u64>,
}

impl LogFiles {
    /// Creates `dir` (empty) for segments of at most `segment_size` bytes
    /// (a record larger than that gets a segment of its own).
    pub fn create(dir: &Path, access: Access, segment_size: u64) -> Result<Self, LogIoError> {
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        Ok(LogFiles {
            dir: dir.to_path_buf(),
            access,
            segment_size,
            open: None,
            pending: Aligned::new(1 << 16),
            counts: FileCounts::default(),
            live: Vec::new(),
        })
    }

    /// The file of segment `number`.
    pub fn path_of(&self, number: u64) -> PathBuf {
        self.dir.join(format!("log-{number:06}.seg"))
    }

    /// Where a released segment kept for reading back lies.
    pub fn kept_path(&self, number: u64) -> PathBuf {
        self.dir.join(format!("released-{number:06}.seg"))
    }

    /// Appends one record's bytes; returns where it ends.
    pub fn append(&mut self, bytes: &[u8]) -> Result<Position, LogIoError> {
        let full = self.open.as_ref().is_none_or(|o| o.len > 0 && o.len + bytes.len() as u64 > self.segment_size);
        if full {
            self.roll()?;
        }
        let open = self.open.as_mut().ok_or_else(|| LogIoError { path: self.dir.display().to_string(), source: std::io::Error::other("no open segment") })?;
        match self.access {
            Access::Buffered => {
                open.file.write_all_at(bytes, open.len).map_err(io(&open.path))?;
                self.counts.written += bytes.len() as u64;
            }
            Access::Direct => self.pending.push(bytes),
        }
        open.len += bytes.len() as u64;
        self.counts.appended += bytes.len() as u64;
        Ok(Position { segment: open.number, offset: open.len })
    }

    /// Makes everything appended so far durable; returns how long it took.
    pub fn sync(&mut self) -> Result<Duration, LogIoError> {
        let started = Instant::now();
        self.write_pending()?;
        if let Some(open) = &self.open {
            open.file.sync_data().map_err(io(&open.path))?;
        }
        let took = started.elapsed();
        self.counts.syncs += 1;
        self.counts.sync_time += took;
        Ok(took)
    }

    /// The first half of a sync made outside the files' lock (appends go
    /// on meanwhile): direct I/O's pending blocks written, and the open
    /// segment's file to `fdatasync`. `synced` is the second half.
    pub fn prepare_sync(&mut self) -> Result<Option<(std::sync::Arc<File>, PathBuf)>, LogIoError> {
        self.write_pending()?;
        Ok(self.open.as_ref().map(|o| (std::sync::Arc::clone(&o.file), o.path.clone())))
    }

    /// Counts a sync made outside the lock, as long as it took.
    pub fn synced(&mut self, took: Duration) {
        self.counts.syncs += 1;
        self.counts.sync_time += took;
    }

    /// Reads `len` bytes of segment `number` from `offset` (what a
    /// recovery replays): everything appended is written out first.
    pub fn read(&mut self, number: u64, offset: u64, len: u64) -> Result<Vec<u8>, LogIoError> {
        self.write_pending()?;
        let path = self.path_of(number);
        // A handle of its own: the log's is `O_DIRECT`, which reads only
        // aligned blocks.
        let file = File::open(&path).map_err(io(&path))?;
        let mut bytes = vec![0u8; usize::try_from(len).unwrap_or(usize::MAX)];
        file.read_exact_at(&mut bytes, offset).map_err(io(&path))?;
        Ok(bytes)
    }

    /// Direct I/O: the pending bytes, padded to whole blocks, at their
    /// aligned offset; the partial last block stays pending.
    fn write_pending(&mut self) -> Result<(), LogIoError> {
        let Some(open) = self.open.as_mut() else { return Ok(()) };
        if self.access != Access::Direct || self.pending.len == 0 {
            return Ok(());
        }
        let padded = self.pending.padded();
        open.file.write_all_at(padded, open.pending_at).map_err(io(&open.path))?;
        self.counts.written += padded.len() as u64;
        open.pending_at += self.pending.keep_tail() as u64;
        Ok(())
    }

    /// Ends the open segment (synced) and opens the next.
    fn roll(&mut self) -> Result<(), LogIoError> {
        if self.open.is_some() {
            self.sync()?;
        }
        self.pending.len = 0;
        let number = self.open.as_ref().map_or(1, |o| o.number + 1);
        let path = self.path_of(number);
        let direct = if self.access == Access::Direct { libc::O_DIRECT } else { 0 };
        let file = crate::util::files::create_new(&path, direct).map_err(io(&path))?;
        self.open = Some(Open { number, path, file: std::sync::Arc::new(file), len: 0, pending_at: 0 });
        self.live.push(number);
        self.counts.segments += 1;
        Ok(())
    }

    /// Releases every segment before `segment` (what they held is
    /// flushed): deleted, so a long run keeps a bounded log, except those
    /// `keep` names, which are renamed aside (`kept_path`) to be read back
    /// after the run.
    pub fn release_before(&mut self, segment: u64, mut keep: impl FnMut(u64) -> bool) -> Result<(), LogIoError> {
        let open = self.open.as_ref().map(|o| o.number);
        while let Some(&oldest) = self.live.first() {
            if oldest >= segment || Some(oldest) == open {
                break;
            }
            let path = self.path_of(oldest);
            if keep(oldest) {
                let aside = self.kept_path(oldest);
                std::fs::rename(&path, &aside).map_err(io(&path))?;
            } else {
                std::fs::remove_file(&path).map_err(io(&path))?;
            }
            self.live.remove(0);
            self.counts.released += 1;
        }
        Ok(())
    }

    /// The segments not yet released, oldest first.
    pub fn live(&self) -> &[u64] {
        &self.live
    }

    /// What the files have cost so far.
    pub fn counts(&self) -> FileCounts {
        self.counts
    }
}

#[cfg(test)]
mod tests {
    use super::{Access, BLOCK, LogFiles, Position};

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("memlab-log-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn appends_read_back_in_order_across_segments_either_way() {
        for access in [Access::Buffered, Access::Direct] {
            let dir = scratch(&format!("{access:?}"));
            let mut log = LogFiles::create(&dir, access, 10_000).expect("log");
            let mut written: Vec<Vec<u8>> = vec![Vec::new(); 8];
            for i in 0..30u8 {
                let record = vec![i + 1; 1000 + usize::from(i) * 7];
                let at = log.append(&record).expect("append");
                written[at.segment as usize].extend_from_slice(&record);
                if i % 4 == 0 {
                    log.sync().expect("sync");
                }
            }
            log.sync().expect("sync");
            for (n, want) in written.iter().enumerate().skip(1).filter(|(_, w)| !w.is_empty()) {
                let got = std::fs::read(log.path_of(n as u64)).expect("segment");
                assert_eq!(&got[..want.len()], want.as_slice(), "{access:?} segment {n}");
                assert!(got[want.len()..].iter().all(|&b| b == 0), "{access:?}: padding reads as zeros");
                if access == Access::Direct {
                    assert_eq!(got.len() % BLOCK, 0);
                }
            }
            let c = log.counts();
            assert_eq!(c.appended, (0..30u64).map(|i| 1000 + i * 7).sum::<u64>());
            assert!(c.written >= c.appended && c.syncs >= 9 && c.segments >= 3, "{access:?}: {c:?}");
            if access == Access::Buffered {
                assert_eq!(c.written, c.appended, "buffered I/O writes each byte once");
            }
            let _ = std::fs::remove_dir_all(&dir);
        }
    }

    #[test]
    fn released_segments_are_gone_and_the_open_one_stays() {
        let dir = scratch("release");
        let mut log = LogFiles::create(&dir, Access::Buffered, 100).expect("log");
        let mut last = Position::default();
        for _ in 0..5 {
            last = log.append(&[7u8; 100]).expect("append");
        }
        assert_eq!(log.live(), [1, 2, 3, 4, 5]);
        log.release_before(4, |_| false).expect("release");
        assert_eq!(log.live(), [4, 5]);
        assert!(!log.path_of(1).exists() && log.path_of(4).exists());
        log.release_before(u64::MAX, |n| n == 4).expect("release");
        assert_eq!(log.live(), [last.segment], "the open segment is never released");
        assert!(!log.path_of(4).exists() && log.kept_path(4).exists(), "a kept segment is set aside");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
