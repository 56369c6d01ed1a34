//! A client batch's ledger hashes, made before its shard's lock is taken
//! (or once per process for a stream routed ahead), so the ledger only
//! appends them under the lock.

use memlab_sdk::{Entry, Packed};

use super::ledger::hash;

/// A client batch hashed for the ledger before its shard's lock is
/// taken: (key, timestamp, row) hashes, entry by entry.
#[derive(Debug, Default, Clone)]
pub struct Noted(Vec<(u64, u64, u64)>);

impl Noted {
    /// Replaces its hashes with `from`'s in `range` (none past its end).
    pub fn copy_from(&mut self, from: &Noted, range: std::ops::Range<usize>) {
        self.0.clear();
        self.0.extend_from_slice(from.0.get(range).unwrap_or_default());
    }

    /// Moves `more`'s hashes after its own.
    pub fn append(&mut self, mut more: Noted) {
        self.0.append(&mut more.0);
    }

    /// The bytes its hashes take.
    pub fn bytes(&self) -> u64 {
        (self.0.len() * size_of::<(u64, u64, u64)>()) as u64
    }

    /// Hashes `entries` and their `rows` (entry i holds row i).
    pub fn of(rows: &Packed, entries: &Packed) -> Self {
        let lines =
            entries.iter().zip(rows.iter()).filter_map(|(record, row)| Entry::decode(record).ok().map(|e| (hash(e.key), e.timestamp, hash(row)))).collect();
        Noted(lines)
    }

    /// Its (key, timestamp, row) hashes, entry by entry.
    pub(super) fn lines(&self) -> &[(u64, u64, u64)] {
        &self.0
    }

    /// The rows' hashes, in order (what the commit log keeps of each).
    pub fn row_hashes(&self) -> impl Iterator<Item = u64> + '_ {
        self.0.iter().map(|&(_, _, row)| row)
    }

    /// Batches noted one after another, as one.
    pub fn concat(batches: impl IntoIterator<Item = Noted>) -> Self {
        Noted(batches.into_iter().flat_map(|b| b.0).collect())
    }
}
