//! A replayed stream routed ahead, once per process and off the clients'
//! clock: each insert's entries (sort keys), its token and the ledger's
//! hashes of it are made before the first variant runs, so a client's op
//! is a copy into its batch and a shard lookup. The shard is the only part
//! of routing that depends on a variant (its shard count).
//!
//! The cost is memory: about the stream's rows again, their entries and
//! 24 bytes of hashes a row, held for the whole bench (`Prepared::bytes`).
//! A stream generated on the fly is not prepared: it is generated and
//! routed on the clock, as before.

use memlab_sdk::Packed;

use super::{RoutedBatch, Router};
use crate::seam::ledger::Noted;
use crate::workload::{Fingerprint, Op, OpKind, Stream, StreamFileError};

/// One op of a thread, routed ahead.
#[derive(Debug)]
pub enum PreparedOp {
    /// An insert: its rows, their entries (refs zero), its partition's
    /// token and the ledger's hashes of rows and entries.
    Insert {
        /// The partition's token.
        token: i64,
        /// Encoded rows.
        rows: Packed,
        /// Encoded entries.
        entries: Packed,
        /// What the ledger notes of them.
        noted: Noted,
    },
    /// A point read or a scan, as the stream holds it.
    Other(Op),
}

/// The most a stream routed ahead may hold; a bigger one is routed on the
/// clock instead (a 4 GiB stream file would need about 5 GiB more).
pub const MAX_PREPARED_BYTES: u64 = 2 << 30;

/// Every thread's ops routed ahead, with the fingerprint after each.
#[derive(Debug)]
pub struct Prepared {
    threads: Vec<Thread>,
    bytes: u64,
}

#[derive(Debug)]
struct Thread {
    ops: Vec<PreparedOp>,
    /// The fingerprint of the first `i` ops, for `i` in `0..=ops.len()`.
    fingerprints: Vec<Fingerprint>,
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
            let (mut ops, mut fingerprints) = (Vec::with_capacity(count), Vec::with_capacity(count + 1));
            let mut fingerprint = Fingerprint::default();
            fingerprints.push(fingerprint);
            let (mut op, mut batch) = (Op::default(), RoutedBatch::default());
            for index in 0..count as u64 {
                if !file.op(thread, index, &mut op) {
                    break;
                }
                fingerprint.add(&op);
                fingerprints.push(fingerprint);
                ops.push(match op.kind {
                    OpKind::Insert => {
                        batch.route(&any_router, &op.rows).map_err(unusable)?;
                        let head = op.rows.get(0).map(memlab_sdk::RowView::head).transpose().map_err(unusable)?;
                        let token = head.map_or(0, |h| super::token(h.partition));
                        let noted = Noted::of(&batch.rows, &batch.entries);
                        bytes += (batch.rows.data_len() + batch.entries.data_len() + 8 * batch.rows.len()) as u64 + noted.bytes();
                        if bytes > MAX_PREPARED_BYTES {
                            return Ok(None);
                        }
                        PreparedOp::Insert { token, rows: batch.rows.clone(), entries: batch.entries.clone(), noted }
                    }
                    OpKind::Read | OpKind::Scan => {
                        bytes += (op.partition.len() + op.clustering.len()) as u64;
                        PreparedOp::Other(Op { rows: Packed::new(), ..op.clone() })
                    }
                });
            }
            threads.push(Thread { ops, fingerprints });
        }
        Ok(Some(Prepared { threads, bytes }))
    }

    /// Ops of `thread`.
    pub fn ops_for(&self, thread: usize) -> u64 {
        self.threads.get(thread).map_or(0, |t| t.ops.len() as u64)
    }

    /// Op `index` of `thread`, or `None` past its last.
    pub fn op(&self, thread: usize, index: u64) -> Option<&PreparedOp> {
        self.threads.get(thread)?.ops.get(usize::try_from(index).ok()?)
    }

    /// Copies insert `op` into `batch`, routed by `router`.
    pub fn route(op: &PreparedOp, router: &Router, batch: &mut RoutedBatch) {
        if let PreparedOp::Insert { token, rows, entries, noted } = op {
            batch.shard = router.shard_of(*token);
            batch.rows.clone_from(rows);
            batch.entries.clone_from(entries);
            match &mut batch.noted {
                Some(kept) => kept.clone_from(noted),
                none => *none = Some(noted.clone()),
            }
        }
    }

    /// The fingerprint of `thread`'s first `taken` ops: what a client
    /// that took them would have folded.
    pub fn fingerprint(&self, thread: usize, taken: u64) -> Fingerprint {
        let fingerprints = self.threads.get(thread).map(|t| t.fingerprints.as_slice()).unwrap_or_default();
        usize::try_from(taken).ok().and_then(|i| fingerprints.get(i)).or(fingerprints.last()).copied().unwrap_or_default()
    }

    /// About what it holds, in bytes: rows, entries, refs' room and hashes.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}
