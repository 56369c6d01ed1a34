//! `liar`: a serializer with a plain format (records `[u32 key len][key]
//! [u32 row len][row]`, then `[u64 records][u64 checksum]`), honest with
//! `mode = "none"`, or with one subtle lie: `rows-past` (its metadata
//! counts one row too many once a segment passes 65,536 rows),
//! `checksum-skip` (its checksum covers only the first 64 KiB, so damage past
//! it goes unseen), `tombstones-per-partition` (counts at most one
//! tombstone per partition), `min-gt-max` (swaps the timestamp bounds),
//! `get-absent` (reads by key answer "absent": an index never built),
//! `grow-in-create` (honest, but grows 32 MiB in `create`, where a flush's
//! memory growth used not to be counted from), `key-from-row` (keeps only
//! a key's 8-byte token and rebuilds the rest from the row, as the router
//! would: smaller segments, wrong for any other key), `wrong-row` (every
//! 100th row is written with its last byte changed; its checksum and
//! metadata agree with what it wrote), `key-fallback` (elides only keys
//! shaped as a router makes them, rebuilding them from the row, and keeps
//! any other key verbatim: lossless on every key a plain foreign-key
//! check writes).
//! Never bundled: the trust tests prove memlab catches each.

use std::collections::BTreeMap;

use memlab_sdk::{Error, Finished, FlushRecord, Packed, Params, RowView, SegmentMeta, SegmentReader, Serializer, Stats, encode_flush_record};
use rowfile::{Checksum, SortedMeta};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    None,
    RowsPast,
    ChecksumSkip,
    TombstonesPerPartition,
    MinGtMax,
    GetAbsent,
    GrowInCreate,
    KeyFromRow,
    WrongRow,
    KeyFallback,
}

/// The key a router would build for `row` after the token `head`: the
/// partition with each zero byte escaped, two zero bytes, the clustering.
/// What `key-from-row` assumes of every key, against types contract 3.
fn key_from_row(head: &[u8], row: &RowView<'_>) -> Vec<u8> {
    let mut key = head.to_vec();
    for &b in row.partition {
        key.push(b);
        if b == 0 {
            key.push(0xff);
        }
    }
    key.extend_from_slice(&[0, 0]);
    key.extend_from_slice(row.clustering);
    key
}

/// Whether `key` parses as a router's: a token, an escaped partition
/// ended by two zero bytes, a clustering. `key-fallback` trusts the shape.
fn router_shaped(key: &[u8]) -> bool {
    let mut i = 8;
    while i < key.len() {
        match (key[i], key.get(i + 1)) {
            (0, Some(0xff)) => i += 2,
            (0, Some(0)) => return true,
            (0, _) => return false,
            _ => i += 1,
        }
    }
    false
}

/// The key length's top bit: the key was elided to its token.
const ELIDED: u32 = 1 << 31;

fn mode(params: &mut Params) -> Result<Mode, Error> {
    let mode: String = params.get("mode", "none".to_string())?;
    Ok(match mode.as_str() {
        "none" => Mode::None,
        "rows-past" => Mode::RowsPast,
        "checksum-skip" => Mode::ChecksumSkip,
        "tombstones-per-partition" => Mode::TombstonesPerPartition,
        "min-gt-max" => Mode::MinGtMax,
        "get-absent" => Mode::GetAbsent,
        "grow-in-create" => Mode::GrowInCreate,
        "key-from-row" => Mode::KeyFromRow,
        "wrong-row" => Mode::WrongRow,
        "key-fallback" => Mode::KeyFallback,
        other => return Err(Error::BadParam(format!("unknown mode `{other}`"))),
    })
}

/// Bytes the `checksum-skip` liar covers.
const CHECKED: usize = 64 << 10;

/// The checksum of a body, as `mode` computes it.
fn checksum(mode: Mode, body: &[u8]) -> u64 {
    let mut sum = Checksum::default();
    sum.update(if mode == Mode::ChecksumSkip { &body[..body.len().min(CHECKED)] } else { body });
    sum.value()
}

/// Writes one segment.
#[derive(Debug)]
pub struct LiarWriter {
    mode: Mode,
    body: Vec<u8>,
    meta: SortedMeta,
    tombstone_partitions: u64,
    last_tombstone_partition: Option<Vec<u8>>,
    /// What `grow-in-create` keeps.
    hoard: Vec<u8>,
}

impl Serializer for LiarWriter {
    const NAME: &'static str = "liar";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    type Reader = LiarReader;

    fn create(params: &mut Params) -> Result<Self, Error> {
        let mode = mode(params)?;
        let hoard = if mode == Mode::GrowInCreate { vec![1u8; 32 << 20] } else { Vec::new() };
        Ok(LiarWriter { mode, body: Vec::new(), meta: SortedMeta::default(), tombstone_partitions: 0, last_tombstone_partition: None, hoard })
    }

    fn write(&mut self, record: FlushRecord<'_>, out: &mut Vec<u8>) -> Result<(), Error> {
        let row = record.row;
        self.meta.observe(&row);
        if row.tombstone && self.last_tombstone_partition.as_deref() != Some(row.partition) {
            self.tombstone_partitions += 1;
            self.last_tombstone_partition = Some(row.partition.to_vec());
        }
        let start = out.len();
        let elide = match self.mode {
            Mode::KeyFromRow => true,
            Mode::KeyFallback => router_shaped(record.key),
            _ => false,
        };
        let key = if elide { &record.key[..record.key.len().min(8)] } else { record.key };
        out.extend_from_slice(&(key.len() as u32 | if elide { ELIDED } else { 0 }).to_le_bytes());
        out.extend_from_slice(key);
        out.extend_from_slice(&(row.as_bytes().len() as u32).to_le_bytes());
        out.extend_from_slice(row.as_bytes());
        if self.mode == Mode::WrongRow
            && self.meta.rows() % 100 == 1
            && let Some(last) = out.last_mut()
        {
            *last ^= 0x20;
        }
        self.body.extend_from_slice(&out[start..]);
        Ok(())
    }

    fn finish(&mut self, tail: &mut Vec<u8>) -> Result<Finished, Error> {
        let rows = self.meta.rows();
        let sum = checksum(self.mode, &self.body);
        tail.extend_from_slice(&rows.to_le_bytes());
        tail.extend_from_slice(&sum.to_le_bytes());
        let mut meta: SegmentMeta = self.meta.finish(sum);
        match self.mode {
            Mode::RowsPast if rows > 65_536 => meta.rows += 1,
            Mode::TombstonesPerPartition => meta.tombstones = self.tombstone_partitions,
            Mode::MinGtMax => std::mem::swap(&mut meta.min_timestamp, &mut meta.max_timestamp),
            _ => {}
        }
        Ok(Finished { index: Vec::new(), meta })
    }

    fn stats(&self) -> Stats {
        vec![("bytes".into(), self.body.len() as u64), ("hoard".into(), std::hint::black_box(self.hoard.len()) as u64)]
    }
}

fn corrupt(what: impl std::fmt::Display) -> Error {
    Error::Corrupt(format!("liar segment: {what}"))
}

fn u32_at(bytes: &[u8], at: usize) -> Result<usize, Error> {
    let b = bytes.get(at..at.saturating_add(4)).ok_or_else(|| corrupt(format_args!("truncated at byte {at}")))?;
    Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
}

/// Reads a segment back.
#[derive(Debug)]
pub struct LiarReader {
    mode: Mode,
    records: Vec<(Vec<u8>, Vec<u8>)>,
    by_key: BTreeMap<Vec<u8>, usize>,
    position: usize,
}

impl SegmentReader for LiarReader {
    fn open(params: &mut Params, data: Vec<u8>, _index: Vec<u8>) -> Result<Self, Error> {
        let mode = mode(params)?;
        let body_len = data.len().checked_sub(16).ok_or_else(|| corrupt("shorter than its trailer"))?;
        let (body, trailer) = data.split_at(body_len);
        let mut word = [0u8; 8];
        word.copy_from_slice(&trailer[..8]);
        let count = u64::from_le_bytes(word);
        word.copy_from_slice(&trailer[8..]);
        if checksum(mode, body) != u64::from_le_bytes(word) {
            return Err(corrupt("checksum mismatch"));
        }
        let (mut records, mut at) = (Vec::new(), 0);
        while at < body.len() {
            let stored = u32_at(body, at)?;
            let (key_len, elided) = (stored & !(ELIDED as usize), stored & ELIDED as usize != 0);
            let key = body.get(at + 4..at + 4 + key_len).ok_or_else(|| corrupt("key overruns"))?;
            let row_at = at + 4 + key_len;
            let row_len = u32_at(body, row_at)?;
            let row = body.get(row_at + 4..row_at + 4 + row_len).ok_or_else(|| corrupt("row overruns"))?;
            let view = RowView::decode(row)?;
            let key = if elided { key_from_row(key, &view) } else { key.to_vec() };
            records.push((key, row.to_vec()));
            at = row_at + 4 + row_len;
        }
        if records.len() as u64 != count {
            return Err(corrupt(format_args!("{} records, the trailer says {count}", records.len())));
        }
        let by_key = records.iter().enumerate().map(|(i, (k, _))| (k.clone(), i)).collect();
        Ok(LiarReader { mode, records, by_key, position: 0 })
    }

    fn next(&mut self, max_bytes: usize, out: &mut Packed) -> Result<(), Error> {
        while let Some((key, row)) = self.records.get(self.position) {
            out.push_with(|buf| encode_flush_record(buf, key, row));
            self.position += 1;
            if out.data_len() >= max_bytes {
                break;
            }
        }
        Ok(())
    }

    fn get(&self, key: &[u8], out: &mut Packed) -> Result<(), Error> {
        let found = if self.mode == Mode::GetAbsent { None } else { self.by_key.get(key) };
        match found.and_then(|&i| self.records.get(i)) {
            Some((key, row)) => out.push_with(|buf| encode_flush_record(buf, key, row)),
            None => out.push(&[]),
        }
        Ok(())
    }
}

memlab_sdk::export!(serializer: LiarWriter);
