//! `naive`: the flush serializer before CASSANDRA-21083. Metadata is
//! updated per row (clustering bounds copied on every change), and each
//! row is re-encoded cell by cell through a scratch buffer of its own.
//!
//! Data file: records `key-len: u32, key, row-len: u32, row`, then a
//! trailer `records: u64, checksum: u64, magic: u64`. The checksum is
//! FNV-1a 64 over every byte before the trailer. Index file: `count: u32`,
//! then every 32nd record's `key-len: u32, key, offset: u64`.

use memlab_sdk::{
    Error, Finished, FlushRecord, Packed, Params, RowView, SegmentMeta, SegmentReader, Serializer,
    Stats, encode_flush_record, encode_row,
};

const MAGIC: u64 = u64::from_le_bytes(*b"MLNAIVE1");
const TRAILER: usize = 24;
const INDEX_EVERY: u64 = 32;

/// FNV-1a 64: simple, and enough to detect a flipped bit.
#[derive(Debug, Clone, Copy)]
struct Fnv(u64);

impl Fnv {
    const fn new() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }

    fn update(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

/// Writes one segment.
#[derive(Debug)]
pub struct NaiveWriter {
    meta: SegmentMeta,
    last_partition: Option<Vec<u8>>,
    offset: u64,
    checksum: Fnv,
    index: Vec<u8>,
    index_count: u32,
    scratch_rows: u64,
}

impl Serializer for NaiveWriter {
    const NAME: &'static str = "naive";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    type Reader = NaiveReader;

    fn create(_params: &mut Params) -> Result<Self, Error> {
        Ok(NaiveWriter {
            meta: SegmentMeta::default(),
            last_partition: None,
            offset: 0,
            checksum: Fnv::new(),
            index: 0u32.to_le_bytes().to_vec(),
            index_count: 0,
            scratch_rows: 0,
        })
    }

    fn write(&mut self, record: FlushRecord<'_>, out: &mut Vec<u8>) -> Result<(), Error> {
        let row = record.row;
        // Per-row metadata, the shape CASSANDRA-21083 removed.
        let m = &mut self.meta;
        if m.rows == 0 || row.timestamp < m.min_timestamp {
            m.min_timestamp = row.timestamp;
        }
        if m.rows == 0 || row.timestamp > m.max_timestamp {
            m.max_timestamp = row.timestamp;
        }
        if m.rows == 0 || row.clustering < m.min_clustering.as_slice() {
            m.min_clustering = row.clustering.to_vec();
        }
        if m.rows == 0 || row.clustering > m.max_clustering.as_slice() {
            m.max_clustering = row.clustering.to_vec();
        }
        if self.last_partition.as_deref() != Some(row.partition) {
            m.partitions += 1;
            self.last_partition = Some(row.partition.to_vec());
        }
        m.tombstones += u64::from(row.tombstone);
        if m.rows % INDEX_EVERY == 0 {
            self.index.extend_from_slice(&(record.key.len() as u32).to_le_bytes());
            self.index.extend_from_slice(record.key);
            self.index.extend_from_slice(&self.offset.to_le_bytes());
            self.index_count += 1;
        }
        m.rows += 1;

        // Generic re-encoding through a scratch buffer per row.
        let mut scratch = Vec::new();
        encode_row(&mut scratch, row.partition, row.clustering, row.timestamp, row.tombstone, row.cells());
        self.scratch_rows += 1;
        let start = out.len();
        out.extend_from_slice(&(record.key.len() as u32).to_le_bytes());
        out.extend_from_slice(record.key);
        out.extend_from_slice(&(scratch.len() as u32).to_le_bytes());
        out.extend_from_slice(&scratch);
        self.checksum.update(&out[start..]);
        self.offset += (out.len() - start) as u64;
        Ok(())
    }

    fn finish(&mut self, tail: &mut Vec<u8>) -> Result<Finished, Error> {
        let checksum = self.checksum.0;
        tail.extend_from_slice(&self.meta.rows.to_le_bytes());
        tail.extend_from_slice(&checksum.to_le_bytes());
        tail.extend_from_slice(&MAGIC.to_le_bytes());
        self.index[..4].copy_from_slice(&self.index_count.to_le_bytes());
        let mut meta = std::mem::take(&mut self.meta);
        meta.checksum = checksum;
        Ok(Finished { index: std::mem::take(&mut self.index), meta })
    }

    fn stats(&self) -> Stats {
        vec![
            ("rows".into(), self.meta.rows),
            ("bytes".into(), self.offset),
            ("scratch-buffers".into(), self.scratch_rows),
        ]
    }
}

/// Reads a `naive` segment back.
#[derive(Debug)]
pub struct NaiveReader {
    data: Vec<u8>,
    body_len: usize,
    index: Vec<(Vec<u8>, usize)>,
    position: usize,
}

fn corrupt(what: impl std::fmt::Display) -> Error {
    Error::Corrupt(format!("naive segment: {what}"))
}

fn read_u32(bytes: &[u8], at: usize) -> Result<u32, Error> {
    bytes
        .get(at..at + 4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .ok_or_else(|| corrupt(format_args!("truncated at byte {at}")))
}

fn read_u64(bytes: &[u8], at: usize) -> Result<u64, Error> {
    let b = bytes.get(at..at + 8).ok_or_else(|| corrupt(format_args!("truncated at byte {at}")))?;
    let mut a = [0u8; 8];
    a.copy_from_slice(b);
    Ok(u64::from_le_bytes(a))
}

impl NaiveReader {
    /// Decodes the record at `at`: its key, row bytes, and where the next starts.
    fn record_at(&self, at: usize) -> Result<(&[u8], &[u8], usize), Error> {
        let body = &self.data[..self.body_len];
        let key_len = read_u32(body, at)? as usize;
        let key = body.get(at + 4..at + 4 + key_len).ok_or_else(|| corrupt(format_args!("key at {at} overruns")))?;
        let row_at = at + 4 + key_len;
        let row_len = read_u32(body, row_at)? as usize;
        let row = body.get(row_at + 4..row_at + 4 + row_len).ok_or_else(|| corrupt(format_args!("row at {row_at} overruns")))?;
        RowView::decode(row)?;
        Ok((key, row, row_at + 4 + row_len))
    }
}

impl SegmentReader for NaiveReader {
    fn open(_params: &mut Params, data: Vec<u8>, index: Vec<u8>) -> Result<Self, Error> {
        if data.len() < TRAILER {
            return Err(corrupt(format_args!("{} bytes is shorter than the trailer", data.len())));
        }
        let body_len = data.len() - TRAILER;
        if read_u64(&data, body_len + 16)? != MAGIC {
            return Err(corrupt("bad magic"));
        }
        let mut sum = Fnv::new();
        sum.update(&data[..body_len]);
        let stored = read_u64(&data, body_len + 8)?;
        if sum.0 != stored {
            return Err(corrupt(format_args!("checksum {:#x} != stored {stored:#x}", sum.0)));
        }
        let count = read_u32(&index, 0)? as usize;
        let mut entries = Vec::with_capacity(count.min(index.len() / 12));
        let mut at = 4;
        let mut last = 0usize;
        for i in 0..count {
            let key_len = read_u32(&index, at)? as usize;
            let key = index.get(at + 4..at + 4 + key_len).ok_or_else(|| corrupt(format_args!("index entry {i} overruns")))?;
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
        Ok(NaiveReader { data, body_len, index: entries, position: 0 })
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

memlab_sdk::export!(serializer: NaiveWriter);
