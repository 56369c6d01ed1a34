//! Segment helpers shared by the bundled serializers: the row-file format
//! of `naive` and `lean` (which differ in how much work they do per row,
//! not in what they write), and [`SortedMeta`], the per-partition metadata
//! of `lean` and `block`.
//!
//! Data file: records `key-len: u32, key, row-len: u32, row`, then a
//! trailer `records: u64, checksum: u64, magic: u64`; the checksum
//! ([`Checksum`]) covers every byte before the trailer, the record count
//! and the index file, so a flipped bit in either file is caught at open.
//! Index file: `count: u32`, then every `INDEX_EVERY`th record's
//! `key-len: u32, key, offset: u64`.

mod meta;

pub use meta::SortedMeta;

use memlab_sdk::{Error, Packed, Params, RowView, SegmentReader, encode_flush_record};

const MAGIC: u64 = u64::from_le_bytes(*b"MLROWS01");
const TRAILER: usize = 24;
/// One index entry per this many records.
pub const INDEX_EVERY: u64 = 32;

/// A 64-bit checksum over 8-byte words: each step (xor, multiply by an
/// odd constant, rotate) is a bijection, so any change to one word
/// changes the result, as FNV's would, at an eighth of the steps. The
/// result does not depend on how the bytes are split across `update`s.
#[derive(Debug, Clone, Copy)]
pub struct Checksum {
    state: u64,
    pending: [u8; 8],
    pending_len: usize,
    bytes: u64,
}

impl Default for Checksum {
    fn default() -> Self {
        Checksum { state: 0xcbf2_9ce4_8422_2325, pending: [0; 8], pending_len: 0, bytes: 0 }
    }
}

fn fold(state: u64, word: u64) -> u64 {
    (state ^ word).wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(29)
}

impl Checksum {
    /// Folds `bytes` in.
    pub fn update(&mut self, mut bytes: &[u8]) {
        self.bytes += bytes.len() as u64;
        if self.pending_len > 0 {
            let take = (8 - self.pending_len).min(bytes.len());
            self.pending[self.pending_len..self.pending_len + take].copy_from_slice(&bytes[..take]);
            self.pending_len += take;
            bytes = &bytes[take..];
            if self.pending_len < 8 {
                return;
            }
            self.state = fold(self.state, u64::from_le_bytes(self.pending));
            self.pending_len = 0;
        }
        let mut words = bytes.chunks_exact(8);
        for word in &mut words {
            let mut w = [0u8; 8];
            w.copy_from_slice(word);
            self.state = fold(self.state, u64::from_le_bytes(w));
        }
        let rest = words.remainder();
        self.pending[..rest.len()].copy_from_slice(rest);
        self.pending_len = rest.len();
    }

    /// The checksum so far.
    pub fn value(&self) -> u64 {
        let mut last = [0u8; 8];
        last[..self.pending_len].copy_from_slice(&self.pending[..self.pending_len]);
        fold(fold(self.state, u64::from_le_bytes(last)), self.bytes)
    }
}

/// Appends records and keeps the checksum and the sparse index.
#[derive(Debug)]
pub struct RowFileWriter {
    records: u64,
    offset: u64,
    checksum: Checksum,
    index: Vec<u8>,
    index_count: u32,
}

impl Default for RowFileWriter {
    fn default() -> Self {
        RowFileWriter { records: 0, offset: 0, checksum: Checksum::default(), index: 0u32.to_le_bytes().to_vec(), index_count: 0 }
    }
}

impl RowFileWriter {
    /// Appends one record to `out`.
    pub fn append(&mut self, key: &[u8], row: &[u8], out: &mut Vec<u8>) {
        if self.records.is_multiple_of(INDEX_EVERY) {
            self.index.extend_from_slice(&(key.len() as u32).to_le_bytes());
            self.index.extend_from_slice(key);
            self.index.extend_from_slice(&self.offset.to_le_bytes());
            self.index_count += 1;
        }
        let start = out.len();
        out.extend_from_slice(&(key.len() as u32).to_le_bytes());
        out.extend_from_slice(key);
        out.extend_from_slice(&(row.len() as u32).to_le_bytes());
        out.extend_from_slice(row);
        self.checksum.update(&out[start..]);
        self.offset += (out.len() - start) as u64;
        self.records += 1;
    }

    /// Bytes of records written.
    pub fn bytes(&self) -> u64 {
        self.offset
    }

    /// Appends the trailer to `tail`; returns the index and the checksum.
    pub fn finish(&mut self, tail: &mut Vec<u8>) -> (Vec<u8>, u64) {
        self.index[..4].copy_from_slice(&self.index_count.to_le_bytes());
        self.checksum.update(&self.records.to_le_bytes());
        self.checksum.update(&self.index);
        let checksum = self.checksum.value();
        tail.extend_from_slice(&self.records.to_le_bytes());
        tail.extend_from_slice(&checksum.to_le_bytes());
        tail.extend_from_slice(&MAGIC.to_le_bytes());
        (std::mem::take(&mut self.index), checksum)
    }
}

/// Reads a row file back.
#[derive(Debug)]
pub struct RowFileReader {
    data: Vec<u8>,
    body_len: usize,
    index: Vec<(Vec<u8>, usize)>,
    position: usize,
}

fn corrupt(what: impl std::fmt::Display) -> Error {
    Error::Corrupt(format!("row file: {what}"))
}

fn read_u32(bytes: &[u8], at: usize) -> Result<u32, Error> {
    bytes.get(at..at.saturating_add(4)).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]])).ok_or_else(|| corrupt(format_args!("truncated at byte {at}")))
}

fn read_u64(bytes: &[u8], at: usize) -> Result<u64, Error> {
    let b = bytes.get(at..at.saturating_add(8)).ok_or_else(|| corrupt(format_args!("truncated at byte {at}")))?;
    let mut a = [0u8; 8];
    a.copy_from_slice(b);
    Ok(u64::from_le_bytes(a))
}

fn slice(bytes: &[u8], at: usize, len: usize, what: &str) -> Result<(), Error> {
    at.checked_add(len).filter(|&end| end <= bytes.len()).map(|_| ()).ok_or_else(|| corrupt(format_args!("{what} at {at} overruns")))
}

impl RowFileReader {
    /// Decodes the record at `at`: its key, row bytes, and where the next starts.
    fn record_at(&self, at: usize) -> Result<(&[u8], &[u8], usize), Error> {
        let body = &self.data[..self.body_len];
        let key_len = read_u32(body, at)? as usize;
        slice(body, at + 4, key_len, "key")?;
        let key = &body[at + 4..at + 4 + key_len];
        let row_at = at + 4 + key_len;
        let row_len = read_u32(body, row_at)? as usize;
        slice(body, row_at + 4, row_len, "row")?;
        let row = &body[row_at + 4..row_at + 4 + row_len];
        RowView::decode(row)?;
        Ok((key, row, row_at + 4 + row_len))
    }
}

impl SegmentReader for RowFileReader {
    fn open(_params: &mut Params, data: Vec<u8>, index: Vec<u8>) -> Result<Self, Error> {
        if data.len() < TRAILER {
            return Err(corrupt(format_args!("{} bytes is shorter than the trailer", data.len())));
        }
        let body_len = data.len() - TRAILER;
        if read_u64(&data, body_len + 16)? != MAGIC {
            return Err(corrupt("bad magic"));
        }
        let mut sum = Checksum::default();
        sum.update(&data[..body_len]);
        sum.update(&data[body_len..body_len + 8]);
        sum.update(&index);
        let stored = read_u64(&data, body_len + 8)?;
        if sum.value() != stored {
            return Err(corrupt(format_args!("checksum {:#x} != stored {stored:#x}", sum.value())));
        }
        let count = read_u32(&index, 0)? as usize;
        let mut entries = Vec::with_capacity(count.min(index.len() / 12));
        let mut at = 4;
        let mut last = 0usize;
        for i in 0..count {
            let key_len = read_u32(&index, at)? as usize;
            slice(&index, at + 4, key_len, "index key")?;
            let key = &index[at + 4..at + 4 + key_len];
            let offset = read_u64(&index, at + 4 + key_len)? as usize;
            if offset < last || offset >= body_len.max(1) {
                return Err(corrupt(format_args!("index entry {i} points at {offset}")));
            }
            last = offset;
            entries.push((key.to_vec(), offset));
            at += 12 + key_len;
        }
        if at != index.len() {
            return Err(corrupt("trailing bytes in the index"));
        }
        Ok(RowFileReader { data, body_len, index: entries, position: 0 })
    }

    fn next(&mut self, max_bytes: usize, out: &mut Packed) -> Result<(), Error> {
        while self.position < self.body_len {
            let (key, row, next) = self.record_at(self.position)?;
            out.push_with(|buf| encode_flush_record(buf, key, row));
            self.position = next;
            if out.data_len() >= max_bytes {
                break;
            }
        }
        Ok(())
    }

    fn get(&self, key: &[u8], out: &mut Packed) -> Result<(), Error> {
        let block = self.index.partition_point(|(k, _)| k.as_slice() <= key);
        let Some(&(_, mut at)) = block.checked_sub(1).and_then(|b| self.index.get(b)) else {
            out.push(&[]);
            return Ok(());
        };
        while at < self.body_len {
            let (k, row, next) = self.record_at(at)?;
            if k == key {
                out.push_with(|buf| encode_flush_record(buf, k, row));
                return Ok(());
            }
            if k > key {
                break;
            }
            at = next;
        }
        out.push(&[]);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::Checksum;

    #[test]
    fn the_checksum_ignores_chunking_and_sees_every_flipped_bit() {
        let data: Vec<u8> = (0..1000u32).map(|i| (i * 7 % 251) as u8).collect();
        let mut whole = Checksum::default();
        whole.update(&data);
        for split in [1, 3, 7, 8, 9, 500] {
            let mut parts = Checksum::default();
            data.chunks(split).for_each(|c| parts.update(c));
            assert_eq!(parts.value(), whole.value(), "split {split}");
        }
        for at in 0..data.len() {
            let mut bad = data.clone();
            bad[at] ^= 1 << (at % 8);
            let mut sum = Checksum::default();
            sum.update(&bad);
            assert_ne!(sum.value(), whole.value(), "byte {at}");
        }
        let mut short = Checksum::default();
        short.update(&data[..999]);
        assert_ne!(short.value(), whole.value());
    }
}
