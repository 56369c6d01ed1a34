//! The host's reference model of a memtable: the contract of
//! `wit/memtable.wit` written as plainly as possible, for differential
//! tests and `memlab check`.

use std::collections::BTreeMap;
use std::ops::Bound;

/// Sort key → (timestamp, ref) of the winning entry.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ReferenceMemtable {
    entries: BTreeMap<Vec<u8>, (u64, u64)>,
}

impl ReferenceMemtable {
    /// Applies one insert: the higher timestamp wins, a tie goes to the
    /// later insert.
    pub fn insert(&mut self, key: &[u8], timestamp: u64, reference: u64) {
        match self.entries.get_mut(key) {
            Some(slot) if timestamp < slot.0 => {}
            Some(slot) => *slot = (timestamp, reference),
            None => {
                self.entries.insert(key.to_vec(), (timestamp, reference));
            }
        }
    }

    /// The winning entry for `key`.
    pub fn get(&self, key: &[u8]) -> Option<(u64, u64)> {
        self.entries.get(key).copied()
    }

    /// Entries with `start <= key < end`, at most `limit`.
    pub fn scan(&self, start: &[u8], end: Option<&[u8]>, limit: usize) -> Vec<(Vec<u8>, u64, u64)> {
        self.entries
            .range::<[u8], _>((Bound::Included(start), Bound::Unbounded))
            .take_while(|(k, _)| end.is_none_or(|end| k.as_slice() < end))
            .take(limit)
            .map(|(k, &(t, r))| (k.clone(), t, r))
            .collect()
    }

    /// Every entry in key order.
    pub fn all(&self) -> Vec<(Vec<u8>, u64, u64)> {
        self.scan(&[], None, usize::MAX)
    }

    /// How many keys.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}
