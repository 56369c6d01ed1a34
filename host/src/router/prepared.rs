//! A replayed stream routed ahead, once per process and off the clients'
//! clock: each insert's entries (sort keys), its token and the ledger's
//! hashes of it are made before the first variant runs, so a client's op
//! is a copy into its batch and a shard lookup. The shard is the only part
//! of routing that depends on a variant (its shard count).
//!
//! The cost is memory: about the stream's rows again, their entries and
//! 24 bytes of hashes a row, held for the whole bench (`Prepared::bytes`).
//! A thread's rows, entries and hashes are each kept back to back in op
//! order, so a client reads them as one stream the CPU's prefetcher
//! follows (one buffer per op left every op's bytes cold: routing took
//! 4.3% of the client time).
//! A stream generated on the fly is not prepared: it is generated and
//! routed on the clock, as before.

use memlab_sdk::Packed;

use super::{RoutedBatch, Router};
use crate::seam::ledger::Noted;
use crate::workload::{Fingerprint, Op, OpKind, Stream, StreamFileError};

/// The most a stream routed ahead may hold; a bigger one is routed on the
/// clock instead (a 4 GiB stream file would need about 5 GiB more).
pub const MAX_PREPARED_BYTES: u64 = 2 << 30;

/// Every thread's ops routed ahead, with the fingerprint after each.
#[derive(Debug)]
pub struct Prepared {
    threads: Vec<Thread>,
    bytes: u64,
}

#[derive(Debug, Default)]
struct Thread {
    ops: Vec<Slot>,
    /// Every insert's rows, in op order.
    rows: Packed,
    /// Their entries (refs zero), row for row.
    entries: Packed,
    /// The ledger's hashes of them, row for row.
    noted: Noted,
    /// Point reads and scans, as the stream holds them.
    others: Vec<Op>,
    /// The fingerprint of the first `i` ops, for `i` in `0..=ops.len()`.
    fingerprints: Vec<Fingerprint>,
    /// Their shape prints, likewise.
    shapes: Vec<Fingerprint>,
}

#[derive(Debug, Clone, Copy)]
enum Slot {
    /// An insert: its partition's token and its rows' place in `rows`.
    Insert { token: i64, first: u32, count: u32 },
    /// `others[i]`.
    Other(u32),
}

/// One op of a thread, routed ahead.
#[derive(Debug, Clone, Copy)]
pub enum Ahead<'a> {
    /// An insert, to copy into a client's batch (`InsertAhead::route`).
    Insert(InsertAhead<'a>),
    /// A point read or a scan.
    Other(&'a Op),
}

/// An insert routed ahead.
#[derive(Debug, Clone, Copy)]
pub struct InsertAhead<'a> {
    thread: &'a Thread,
    token: i64,
    first: usize,
    count: usize,
}

impl InsertAhead<'_> {
    /// Copies the insert into `batch`, routed by `router`.
    pub fn route(self, router: &Router, batch: &mut RoutedBatch) {
        batch.shard = router.shard_of(self.token);
        let records = self.first..self.first + self.count;
        batch.rows.clear();
        batch.rows.extend_from(&self.thread.rows, records.clone());
        batch.entries.clear();
        batch.entries.extend_from(&self.thread.entries, records.clone());
        batch.noted.get_or_insert_with(Noted::default).copy_from(&self.thread.noted, records);
    }
}

impl Prepared {
    /// `stream` routed ahead, or `None` for a stream generated on the fly
    /// or one that would hold more than `MAX_PREPARED_BYTES`. A stream
    /// file was checked whole when read: an insert whose row does not
    /// decode has no place in one.
    pub fn of(stream: &Stream) -> Result<Option<Prepared>, StreamFileError> {
        let Stream::Replayed(file) = stream else { return Ok(None) };
        let unusable = |e: memlab_sdk::Error| StreamFileError::Unusable { path: file.path().display().to_string(), what: format!("routing it ahead: {e}") };
        let mut bytes = 0u64;
        let mut threads = Vec::with_capacity(file.threads());
        let any_router = Router::new(1);
        for thread in 0..file.threads() {
            let count = file.ops_for(thread) as usize;
            let mut t = Thread { ops: Vec::with_capacity(count), fingerprints: Vec::with_capacity(count + 1), ..Thread::default() };
            t.shapes.reserve(count + 1);
            let (mut fingerprint, mut shape) = (Fingerprint::default(), Fingerprint::default());
            t.fingerprints.push(fingerprint);
            t.shapes.push(shape);
            let (mut op, mut batch) = (Op::default(), RoutedBatch::default());
            for index in 0..count as u64 {
                if !file.op(thread, index, &mut op) {
                    break;
                }
                fingerprint.add(&op);
                t.fingerprints.push(fingerprint);
                shape.add_shape(&op);
                t.shapes.push(shape);
                let slot = match op.kind {
                    OpKind::Insert => {
                        batch.route(&any_router, &op.rows).map_err(unusable)?;
                        let head = op.rows.get(0).map(memlab_sdk::RowView::head).transpose().map_err(unusable)?;
                        let noted = Noted::of(&batch.rows, &batch.entries);
                        bytes += (batch.rows.data_len() + batch.entries.data_len() + 8 * batch.rows.len()) as u64 + noted.bytes();
                        // Under the cap, every offset fits the u32 a `Packed` keeps.
                        if bytes > MAX_PREPARED_BYTES {
                            return Ok(None);
                        }
                        let first = t.rows.len() as u32;
                        t.rows.extend_from(&batch.rows, 0..batch.rows.len());
                        t.entries.extend_from(&batch.entries, 0..batch.entries.len());
                        t.noted.append(noted);
                        Slot::Insert { token: head.map_or(0, |h| super::token(h.partition)), first, count: batch.rows.len() as u32 }
                    }
                    OpKind::Read | OpKind::Scan => {
                        bytes += (op.partition.len() + op.clustering.len()) as u64;
                        t.others.push(Op { rows: Packed::new(), ..op.clone() });
                        Slot::Other(t.others.len() as u32 - 1)
                    }
                };
                t.ops.push(slot);
            }
            threads.push(t);
        }
        Ok(Some(Prepared { threads, bytes }))
    }

    /// Ops of `thread`.
    pub fn ops_for(&self, thread: usize) -> u64 {
        self.threads.get(thread).map_or(0, |t| t.ops.len() as u64)
    }

    /// Op `index` of `thread`, or `None` past its last.
    pub fn op(&self, thread: usize, index: u64) -> Option<Ahead<'_>> {
        let t = self.threads.get(thread)?;
        Some(match *t.ops.get(usize::try_from(index).ok()?)? {
            Slot::Insert { token, first, count } => Ahead::Insert(InsertAhead { thread: t, token, first: first as usize, count: count as usize }),
            Slot::Other(i) => Ahead::Other(t.others.get(i as usize)?),
        })
    }

    /// The fingerprint of `thread`'s first `taken` ops: what a client
    /// that took them would have folded.
    pub fn fingerprint(&self, thread: usize, taken: u64) -> Fingerprint {
        at(self.threads.get(thread).map(|t| t.fingerprints.as_slice()).unwrap_or_default(), taken)
    }

    /// The shape print of `thread`'s first `taken` ops.
    pub fn shape(&self, thread: usize, taken: u64) -> Fingerprint {
        at(self.threads.get(thread).map(|t| t.shapes.as_slice()).unwrap_or_default(), taken)
    }

    /// About what it holds, in bytes: rows, entries, refs' room and hashes.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

/// The print after `taken` ops (all of them, past the end).
fn at(prints: &[Fingerprint], taken: u64) -> Fingerprint {
    usize::try_from(taken).ok().and_then(|i| prints.get(i)).or(prints.last()).copied().unwrap_or_default()
}
