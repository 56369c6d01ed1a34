//! Flush writers: drain a frozen generation's shards in token order
//! through a serializer into one segment, then release the pool.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub(crate) mod audit;

use memlab_sdk::{Entry, Packed, encode_flush_record};

use crate::pool::MemoryPool;
use crate::seam::ledger::{Mismatch, Tally};
use crate::seam::{self, Boundary, Kind, Op, SeamError};
use crate::segment::{SegmentError, SegmentWriter};
use crate::util::{heap, mib, panic_message};
use crate::write_path::FlushJob;

/// Entries pulled from a memtable cursor per call.
const CURSOR_CHUNK: u32 = 256 << 10;

/// Creates the serializer for one flush (the argument is the part).
pub type SerializerFactory = dyn Fn(usize) -> Result<seam::Serializer, SeamError> + Send + Sync;

/// A flush that failed.
#[derive(Debug, thiserror::Error)]
pub enum FlushError {
    #[error("flush of generation {generation}: {source}")]
    /// A plugin call of the flush failed.
    Plugin {
        /// The generation being flushed.
        generation: u64,
        /// The underlying error.
        source: SeamError,
    },
    #[error("flush of generation {generation}: {source}")]
    /// The segment could not be written.
    Segment {
        /// The generation being flushed.
        generation: u64,
        /// The underlying error.
        source: SegmentError,
    },
    #[error("flush of generation {generation}: the flush thread panicked: {message}")]
    /// The flush panicked.
    Panic {
        /// The generation being flushed.
        generation: u64,
        /// What went wrong.
        message: String,
    },
}

/// Figures of one flush, as Cassandra's "Completed flushing" line has them.
#[derive(Debug, Clone, Default)]
pub struct FlushReport {
    /// The memtable generation.
    pub generation: u64,
    /// Seconds from the run's start to the flush's start.
    pub started_at: f64,
    /// Which part of it.
    pub part: usize,
    /// The data file, if any rows were written.
    pub segment: Option<PathBuf>,
    /// Rows flushed.
    pub rows: u64,
    /// Partitions flushed (as the serializer counted them).
    pub partitions: u64,
    /// Bytes of data, index and metadata written.
    pub bytes: u64,
    /// Bytes of the rows as the stream made them (the allocator's loads,
    /// which the audit holds to each entry): what `bytes` compresses.
    pub raw_bytes: u64,
    /// Wall time.
    pub wall: Duration,
    /// CPU time of the flush thread.
    pub cpu: Duration,
    /// Linear memory of the serializer's instance at the end (wasm).
    pub serializer_memory: u64,
    /// How much of that the serializer grew during this flush.
    pub serializer_grew: u64,
    /// Bytes the flush thread allocated on the host heap during the
    /// flush (host-measured: the memtable's cursor, the loads and the
    /// serializer of a native twin; a wasm plugin's own allocations are
    /// in its linear memory, and reported by the SDK instead).
    pub heap_allocated: u64,
    /// Of that, what the serializer's calls allocated (a native twin's
    /// own work; for wasm, the host's side of the crossing).
    pub serializer_heap: u64,
    /// Linear memory of the flushed shards (wasm).
    pub shard_memory: u64,
    /// Each kind's counters, by kind: the memtable's and the allocator's
    /// summed over the flushed shards, the serializer's own (reported by
    /// the plugin).
    pub stats: BTreeMap<Kind, BTreeMap<String, u64>>,
    /// Boundary traffic of the flushed shards over their whole life.
    pub shard_boundary: Boundary,
    /// Boundary traffic of the serializer.
    pub serializer_boundary: Boundary,
    /// The host's tally of the records handed to the serializer, which
    /// the segment read back must match (none where the variant does not
    /// verify). Keyed by the per-process secret: never saved.
    pub digest: Option<Tally>,
}

impl FlushReport {
    /// The "Completed flushing" log line.
    pub fn log_line(&self) -> String {
        let secs = self.wall.as_secs_f64().max(1e-9);
        format!(
            "Completed flushing {} ({:.3}MiB), time spent: {} ms, bytes flushed: {}/({:.3}MiB per sec), partitions flushed: {}/({:.0} per sec), rows: {}/({:.0} per sec), cpu time: {} ms, allocated: {:.3}MiB, serializer memory: {:.3}MiB (grew {:.3}MiB)",
            self.segment.as_ref().map_or_else(|| "(empty)".into(), |p| p.display().to_string()),
            mib(self.bytes),
            self.wall.as_millis(),
            self.bytes,
            mib(self.bytes) / secs,
            self.partitions,
            self.partitions as f64 / secs,
            self.rows,
            self.rows as f64 / secs,
            self.cpu.as_millis(),
            mib(self.heap_allocated),
            mib(self.serializer_memory),
            mib(self.serializer_grew),
        )
    }
}

/// Flushes one job into `dir` and releases its memory from `pool`, whether
/// the flush succeeds, fails or panics.
pub fn flush(job: FlushJob, serializer: &SerializerFactory, dir: &Path, pool: &MemoryPool, run_started: Instant) -> Result<FlushReport, FlushError> {
    let (reserved, generation) = (job.reserved, job.generation);
    let started_at = run_started.elapsed().as_secs_f64();
    // A panic (a host bug) must still release the memory, or the writers
    // would wait for room forever.
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| flush_inner(job, serializer, dir, pool)))
        .unwrap_or_else(|panic| Err(FlushError::Panic { generation, message: panic_message(panic.as_ref()) }))
        .map(|report| FlushReport { started_at, ..report });
    pool.unfreeze(reserved);
    result
}

/// A frozen shard that gives back, when it goes, exactly what its store
/// still holds from the pool: what it reserved before the switch, less
/// what it released since, plus what it reserved after (an allocator may
/// reserve in `load` or `stats` during the flush). Whatever ends the
/// flush (success, an error, a panic), nothing stays reserved.
pub(crate) struct Held<'p> {
    pub(crate) shard: seam::Shard,
    pool: &'p MemoryPool,
}

impl<'p> Held<'p> {
    pub(crate) fn new(shard: seam::Shard, pool: &'p MemoryPool) -> Self {
        Held { shard, pool }
    }
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        crate::write_path::give_back(self.pool, &self.shard);
    }
}

fn flush_inner(job: FlushJob, serializer: &SerializerFactory, dir: &Path, pool: &MemoryPool) -> Result<FlushReport, FlushError> {
    let generation = job.generation;
    // First, so that every way out below gives the shards' bytes back;
    // they go when the flush ends, not as each shard is done.
    let mut shards: Vec<Held<'_>> = job.shards.into_iter().map(|s| Held::new(s, pool)).collect();
    let plugin = |source| FlushError::Plugin { generation, source };
    let started = Instant::now();
    let cpu_started = cpu_time::ThreadTime::try_now().ok();
    let heap_started = heap::allocated();
    let mut in_serializer = heap::Span::default();
    let writer = in_serializer.count(|| serializer(job.part)).map_err(plugin)?;
    let segment = SegmentWriter::create(dir, generation, job.part).map_err(|source| FlushError::Segment { generation, source })?;
    let mut flush = Flush::new(FlushReport { generation, part: job.part, ..FlushReport::default() }, writer, segment, in_serializer);
    for held in &mut shards {
        flush.shard(&mut held.shard)?;
    }
    let mut report = flush.finish()?;
    report.wall = started.elapsed();
    report.heap_allocated = heap::allocated().wrapping_sub(heap_started);
    report.cpu = cpu_started.map(|t| t.elapsed()).unwrap_or_default();
    Ok(report)
}

/// One flush under way: its serializer and segment, and the chunk's
/// buffers, lent to every call and reused across chunks and shards, so a
/// flush allocates them once, at their largest.
struct Flush {
    report: FlushReport,
    writer: seam::Serializer,
    segment: SegmentWriter,
    /// What a serializer grows from before its `create` is this flush's.
    memory_at_start: u64,
    in_serializer: heap::Span,
    entries: Packed,
    rows: Packed,
    records: Packed,
    refs: Vec<u64>,
    bytes: Vec<u8>,
    /// The chunk's entries, decoded once; the buffer outlives each chunk.
    decoded: Vec<Entry<'static>>,
    /// The previous key, for the order check.
    last_key: Option<Vec<u8>>,
    tally: audit::MetaTally,
    rows_audit: audit::RowAudit,
    digest: Option<Tally>,
}

/// An empty buffer of entries, taken for entries of another borrow: an
/// in-place collection of an empty vector keeps its allocation.
#[expect(clippy::unnecessary_filter_map, reason = "`filter` cannot change the entries' borrow; the vector is empty")]
fn reuse<'b>(mut v: Vec<Entry<'_>>) -> Vec<Entry<'b>> {
    v.clear();
    v.into_iter().filter_map(|_| None).collect()
}

impl Flush {
    fn new(report: FlushReport, writer: seam::Serializer, segment: SegmentWriter, in_serializer: heap::Span) -> Self {
        let memory_at_start = writer.memory_before_create();
        Flush {
            report,
            writer,
            segment,
            memory_at_start,
            in_serializer,
            entries: Packed::new(),
            rows: Packed::new(),
            records: Packed::new(),
            refs: Vec::new(),
            bytes: Vec::new(),
            decoded: Vec::new(),
            last_key: None,
            tally: audit::MetaTally::default(),
            rows_audit: audit::RowAudit::default(),
            digest: Some(Tally::default()),
        }
    }

    fn plugin(&self, source: SeamError) -> FlushError {
        FlushError::Plugin { generation: self.report.generation, source }
    }

    /// Flushes one frozen shard: its cursor's chunks, each row held to
    /// the ledger, then its counters held to what the cursor returned.
    fn shard(&mut self, strategies: &mut seam::Shard) -> Result<(), FlushError> {
        strategies.open_cursor().map_err(|e| self.plugin(e))?;
        let settled = strategies.take_ledger();
        let mut ledger = settled.as_ref().map(seam::ledger::Settled::audit);
        if ledger.is_none() {
            self.digest = None;
        }
        let mut cursor_entries = 0;
        loop {
            strategies.next_entries_into(CURSOR_CHUNK, &mut self.entries).map_err(|e| self.plugin(e))?;
            if self.entries.is_empty() {
                break;
            }
            cursor_entries += self.chunk(strategies, ledger.as_mut())?;
        }
        if let Some(ledger) = ledger {
            ledger.finish().map_err(|m| mismatch(self.report.generation, strategies, m))?;
        }
        // After the cursor: a frozen memtable counts its entries cheaply.
        let (memtable, allocator) = strategies.stats().map_err(|e| self.plugin(e))?;
        strategies.check_stats(&memtable, &allocator, cursor_entries).map_err(|e| self.plugin(e))?;
        merge(self.report.stats.entry(Kind::Memtable).or_default(), memtable);
        merge(self.report.stats.entry(Kind::Allocator).or_default(), allocator);
        self.report.shard_memory += strategies.guest_memory_bytes();
        self.report.shard_boundary.add(strategies.boundary());
        Ok(())
    }

    /// One chunk of the cursor: its entries decoded once and checked in
    /// order, their rows loaded and audited, written through the
    /// serializer; the entries it held.
    fn chunk(&mut self, strategies: &mut seam::Shard, mut ledger: Option<&mut seam::ledger::FlushAudit<'_>>) -> Result<u64, FlushError> {
        let generation = self.report.generation;
        let cursor = |detail: String| broke(generation, strategies.memtable_plugin(), Op::CursorNext, strategies.index(), detail);
        let mut decoded = reuse(std::mem::take(&mut self.decoded));
        self.refs.clear();
        for raw in self.entries.iter() {
            let entry = Entry::decode(raw).map_err(|e| cursor(format!("returned a bad entry: {e}")))?;
            if self.last_key.as_deref().is_some_and(|last| entry.key <= last) {
                return Err(cursor("returned keys out of order".into()));
            }
            let last = self.last_key.get_or_insert_with(Vec::new);
            last.clear();
            last.extend_from_slice(entry.key);
            self.refs.push(entry.reference);
            decoded.push(entry);
        }
        strategies.load_into(&self.refs, &mut self.rows).map_err(|e| self.plugin(e))?;
        self.records.clear();
        for (entry, row) in decoded.iter().zip(self.rows.iter()) {
            let aliased = |detail| broke(generation, strategies.allocator_plugin(), Op::AllocatorLoad, strategies.index(), detail);
            self.tally.observe(&self.rows_audit.check(entry, row).map_err(aliased)?);
            if let (Some(ledger), Some(digest)) = (ledger.as_deref_mut(), self.digest.as_mut()) {
                let (key, row) = ledger.see(entry.key, entry.timestamp, row).map_err(|m| mismatch(generation, strategies, m))?;
                digest.add(key, entry.timestamp, row);
            }
            self.records.push_with(|buf| encode_flush_record(buf, entry.key, row));
        }
        let n = decoded.len() as u64;
        self.decoded = reuse(decoded);
        self.report.rows += n;
        self.report.raw_bytes += self.rows.data_len() as u64;
        let (writer, records, bytes) = (&mut self.writer, &mut self.records, &mut self.bytes);
        self.in_serializer.count(|| writer.write_into(records, bytes)).map_err(|e| self.plugin(e))?;
        self.segment.append(&self.bytes).map_err(|source| FlushError::Segment { generation: self.report.generation, source })?;
        Ok(n)
    }

    /// Ends the segment: its tail, its metadata held to the host's own
    /// count, the serializer's description and counters.
    fn finish(mut self) -> Result<FlushReport, FlushError> {
        let generation = self.report.generation;
        let writer = &mut self.writer;
        let (tail, finished) = self.in_serializer.count(|| writer.finish()).map_err(|e| FlushError::Plugin { generation, source: e })?;
        self.tally.compare(&finished.meta).map_err(|detail| broke(generation, self.writer.plugin(), Op::WriterFinish, self.report.part, detail))?;
        let segment_error = |source| FlushError::Segment { generation, source };
        self.segment.append(&tail).map_err(segment_error)?;
        let writer = &mut self.writer;
        let description = self.in_serializer.count(|| writer.describe()).map_err(|e| FlushError::Plugin { generation, source: e })?;
        let stats = self.in_serializer.count(|| writer.stats()).map_err(|e| FlushError::Plugin { generation, source: e })?;
        let mut report = self.report;
        merge(report.stats.entry(Kind::Serializer).or_default(), stats);
        report.partitions = finished.meta.partitions;
        if report.rows > 0 {
            let files = self.segment.finish(generation, report.part, &finished.index, &finished.meta, &description).map_err(segment_error)?;
            report.bytes = files.bytes;
            report.segment = Some(files.data);
        } else {
            self.segment.discard();
        }
        report.serializer_memory = self.writer.guest_memory_bytes();
        report.serializer_grew = report.serializer_memory.saturating_sub(self.memory_at_start);
        report.serializer_boundary = self.writer.boundary();
        report.serializer_heap = self.in_serializer.bytes;
        report.digest = self.digest;
        Ok(report)
    }
}

/// A plugin of `shard` broke its contract in `operation`.
fn broke(generation: u64, plugin: &str, operation: Op, shard: usize, detail: String) -> FlushError {
    FlushError::Plugin { generation, source: SeamError::contract(plugin, operation, shard, detail) }
}

/// A ledger's mismatch, as the failure of the plugin it names.
fn mismatch(generation: u64, strategies: &seam::Shard, m: Mismatch) -> FlushError {
    let (plugin, operation, detail) = match m {
        Mismatch::Memtable(d) => (strategies.memtable_plugin(), Op::CursorNext, d),
        Mismatch::Allocator(d) => (strategies.allocator_plugin(), Op::AllocatorLoad, d),
        Mismatch::Scan(d) => (strategies.memtable_plugin(), Op::MemtableScan, d),
    };
    broke(generation, plugin, operation, strategies.index(), detail)
}

fn merge(into: &mut BTreeMap<String, u64>, stats: Vec<(String, u64)>) {
    for (name, value) in stats {
        *into.entry(name).or_default() += value;
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering};

    use super::Held;
    use crate::pool::{MemoryPool, PoolMode};
    use crate::seam::Shard;
    use crate::seam::stub::Stub;

    /// A shard runtime that only holds a reservation count.
    struct Holding(Arc<AtomicU64>);

    impl Stub for Holding {
        fn reserved_bytes(&self) -> u64 {
            self.0.load(Ordering::Relaxed)
        }
    }

    /// A generation frozen with `at_switch` bytes; `after` changes what its
    /// store holds during the flush; then the flush ends.
    fn flushed(at_switch: u64, after: impl FnOnce(&MemoryPool, &AtomicU64)) -> (u64, u64) {
        let pool = MemoryPool::new(1 << 20, PoolMode::FetchAdd);
        let held = Arc::new(AtomicU64::new(0));
        pool.reserve(at_switch).expect("room");
        held.store(at_switch, Ordering::Relaxed);
        pool.freeze(at_switch);
        let shard = Held::new(Shard::new(Box::new(Holding(Arc::clone(&held))), "m", "a", 0), &pool);
        after(&pool, &held);
        drop(shard);
        pool.unfreeze(at_switch);
        (pool.owns(), pool.live())
    }

    #[test]
    fn a_reservation_made_after_the_freeze_leaves_with_its_generation() {
        let late = |pool: &MemoryPool, held: &AtomicU64| {
            pool.reserve(4096).expect("room");
            held.fetch_add(4096, Ordering::Relaxed);
        };
        assert_eq!(flushed(10_000, late), (0, 0));
    }

    #[test]
    fn a_release_after_the_freeze_is_not_given_back_twice() {
        let early = |pool: &MemoryPool, held: &AtomicU64| {
            pool.release(4000);
            held.fetch_sub(4000, Ordering::Relaxed);
        };
        assert_eq!(flushed(10_000, early), (0, 0));
    }
}
