//! Tail records: where most keys end. `[len: u8, tail bytes, timestamp,
//! ref]` in the byte vector, pointed at by `TAIL | offset`. A key's unique
//! tail and its stamp cost `len + 17` bytes here, where a chain node, its
//! bytes and a separate stamp cost `len + 28`: that was a fifth of the index.

use memlab_sdk::{Entry, Error};

use crate::{CHAIN, PREFIX, Stamp, TAIL, Trie};

/// The longest tail a record holds (its length is one byte); a longer one
/// keeps its head in chains.
pub(crate) const MAX_TAIL: usize = u8::MAX as usize;

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    let mut word = [0u8; 8];
    word.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(word)
}

impl Trie {
    /// Appends a record for `tail` (at most `MAX_TAIL` bytes) and `stamp`.
    pub(crate) fn tail_record(&mut self, tail: &[u8], stamp: Stamp) -> Result<u32, Error> {
        let record = self.bytes.len();
        if record + 1 + tail.len() >= TAIL as usize {
            return Err(Error::Other("trie byte buffer passed 1 GiB".into()));
        }
        self.bytes.push(tail.len() as u8);
        self.bytes.extend_from_slice(tail);
        self.bytes.extend_from_slice(&stamp.timestamp.to_le_bytes());
        self.bytes.extend_from_slice(&stamp.reference.to_le_bytes());
        self.tails += 1;
        Ok(TAIL | record as u32)
    }

    fn stamp_at(ptr: u32, bytes: &[u8]) -> usize {
        let record = (ptr & !TAIL) as usize;
        record + 1 + bytes[record] as usize
    }

    pub(crate) fn record_stamp(&self, ptr: u32) -> Stamp {
        let at = Self::stamp_at(ptr, &self.bytes);
        Stamp { timestamp: u64_at(&self.bytes, at), reference: u64_at(&self.bytes, at + 8) }
    }

    pub(crate) fn set_record_stamp(&mut self, ptr: u32, stamp: Stamp) {
        let at = Self::stamp_at(ptr, &self.bytes);
        self.bytes[at..at + 8].copy_from_slice(&stamp.timestamp.to_le_bytes());
        self.bytes[at + 8..at + 16].copy_from_slice(&stamp.reference.to_le_bytes());
    }

    /// Splits the tail record at `ptr` (in `slot`) after its first `common`
    /// bytes, where the new key's `rest` leaves it. The shared head stays
    /// where it is, as a chain over the record's own bytes.
    pub(crate) fn split_tail(&mut self, slot: usize, ptr: u32, common: usize, rest: &[u8], entry: &Entry<'_>) -> Result<(), Error> {
        let record = (ptr & !TAIL) as usize;
        let (at, len) = (record + 1, self.bytes[record] as usize);
        let stamp = self.record_stamp(ptr);
        let branch = if common == len {
            // The old key is a proper prefix of the new one.
            let old = self.leaf_of(stamp)?;
            let new = self.new_tail(&rest[common..], entry)?;
            self.tails -= 1;
            self.dead_bytes += 17;
            self.alloc(PREFIX, 0, &[old, new], 0)?
        } else if common == rest.len() {
            // The new key is a proper prefix of the old one. Below a chain
            // the old remainder needs a header of its own: a new record.
            let old = if common == 0 {
                ptr
            } else {
                let remainder = self.bytes[at + common..at + len].to_vec();
                self.tails -= 1;
                self.dead_bytes += (1 + len - common + 16) as u64;
                self.tail_record(&remainder, stamp)?
            };
            let new = self.new_leaf(entry)?;
            self.alloc(PREFIX, 0, &[new, old], 0)?
        } else {
            // They part at byte `common`: that byte becomes a label, and its
            // place the header of the old key's remainder, so the record is
            // reused where it lies.
            let (old_label, new_label) = (self.bytes[at + common], rest[common]);
            self.bytes[at + common] = (len - common - 1) as u8;
            let old = TAIL | (at + common) as u32;
            self.dead_bytes += 1;
            let new = self.new_tail(&rest[common + 1..], entry)?;
            let (labels, children) = if old_label < new_label { ([old_label, new_label], [old, new]) } else { ([new_label, old_label], [new, old]) };
            self.alloc_sparse(&labels, &children)?
        };
        self.nodes[slot] = if common > 0 { self.alloc(CHAIN, common, &[at as u32, branch], 0)? } else { branch };
        Ok(())
    }
}
