//! Reads a block segment back. `open` checks the footer, the index and
//! every block's CRC32, so later reads meet only verified bytes; decoding
//! still checks every length.

use memlab_sdk::{Error, Packed, Params, RowView, SegmentReader, encode_flush_record};

use crate::format::{BLOCK_TRAILER, FOOTER, MAGIC, corrupt, get_u32, get_u64, get_varint, take};

/// A verified block segment.
#[derive(Debug)]
pub struct BlockReader {
    data: Vec<u8>,
    blocks: Vec<Block>,
    /// Where `next` stands: block, entry offset in it, the previous key.
    block: usize,
    at: usize,
    key: Vec<u8>,
}

/// A key found in a block, and its row.
type Found<'a> = (Vec<u8>, &'a [u8]);

#[derive(Debug)]
struct Block {
    first_key: Vec<u8>,
    start: usize,
    /// Where the entries end and the restart array begins.
    entries_end: usize,
    restarts: usize,
}

impl Block {
    fn entries<'a>(&self, data: &'a [u8]) -> &'a [u8] {
        &data[self.start..self.entries_end]
    }

    fn restart(&self, data: &[u8], i: usize) -> Result<usize, Error> {
        Ok(get_u32(data, self.entries_end + 4 * i)? as usize)
    }
}

/// Decodes the entry at `*at`, rebuilding its key in `key` from the
/// previous one; returns the row and moves `*at` past the entry.
fn decode_entry<'a>(entries: &'a [u8], at: &mut usize, key: &mut Vec<u8>) -> Result<&'a [u8], Error> {
    let entry_at = *at;
    let shared = get_varint(entries, at)?;
    let unshared = get_varint(entries, at)?;
    let row_len = get_varint(entries, at)?;
    if shared > key.len() as u64 {
        return Err(corrupt(format_args!("entry at {entry_at} shares {shared} bytes of a {}-byte key", key.len())));
    }
    key.truncate(shared as usize);
    key.extend_from_slice(take(entries, at, unshared, "key")?);
    let row = take(entries, at, row_len, "row")?;
    RowView::decode(row)?;
    Ok(row)
}

impl BlockReader {
    fn parse_index(index: &[u8], body_len: usize, data: &[u8]) -> Result<Vec<Block>, Error> {
        let count = get_u32(index, 0)? as usize;
        let mut blocks = Vec::with_capacity(count.min(index.len() / 16));
        let (mut at, mut expect) = (4usize, 0usize);
        for i in 0..count {
            let key_len = get_u32(index, at)?;
            at += 4;
            let first_key = take(index, &mut at, key_len.into(), "index key")?.to_vec();
            let offset = get_u64(index, at)?;
            let len = get_u32(index, at + 8)? as usize;
            at += 12;
            if offset != expect as u64 || len < BLOCK_TRAILER || expect + len > body_len {
                return Err(corrupt(format_args!("index entry {i}: block at {offset} of {len} bytes does not follow block end {expect}")));
            }
            let bytes = &data[expect..expect + len];
            let stored = get_u32(bytes, len - 4)?;
            let crc = crc32fast::hash(&bytes[..len - 4]);
            if crc != stored {
                return Err(corrupt(format_args!("block {i} at {offset}: crc32 {crc:#010x} != stored {stored:#010x}")));
            }
            let restarts = get_u32(bytes, len - 8)? as usize;
            let entries_len = restarts
                .checked_mul(4)
                .and_then(|r| (len - BLOCK_TRAILER).checked_sub(r))
                .ok_or_else(|| corrupt(format_args!("block {i}: {restarts} restarts do not fit in {len} bytes")))?;
            blocks.push(Block { first_key, start: expect, entries_end: expect + entries_len, restarts });
            expect += len;
        }
        if at != index.len() {
            return Err(corrupt("trailing bytes in the index"));
        }
        if expect != body_len {
            return Err(corrupt(format_args!("blocks end at {expect} but the footer starts at {body_len}")));
        }
        Ok(blocks)
    }

    /// The entry for `key` inside block `b`, if any.
    fn find_in_block(&self, b: &Block, wanted: &[u8]) -> Result<Option<Found<'_>>, Error> {
        let entries = b.entries(&self.data);
        // The last restart whose (whole) key is <= wanted.
        let (mut lo, mut hi) = (0, b.restarts);
        let mut key = Vec::new();
        while lo + 1 < hi {
            let mid = (lo + hi) / 2;
            let mut at = b.restart(&self.data, mid)?;
            key.clear();
            decode_entry(entries, &mut at, &mut key)?;
            if key.as_slice() <= wanted {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let mut at = if b.restarts == 0 { 0 } else { b.restart(&self.data, lo)? };
        key.clear();
        while at < entries.len() {
            let row = decode_entry(entries, &mut at, &mut key)?;
            if key.as_slice() == wanted {
                return Ok(Some((key, row)));
            }
            if key.as_slice() > wanted {
                break;
            }
        }
        Ok(None)
    }
}

impl SegmentReader for BlockReader {
    fn open(params: &mut Params, data: Vec<u8>, index: Vec<u8>) -> Result<Self, Error> {
        // The writer's parameters come along; the format carries its own.
        let _: usize = params.get("block_size", 4096)?;
        let _: usize = params.get("restart_interval", 16)?;
        let body_len = data.len().checked_sub(FOOTER).ok_or_else(|| corrupt(format_args!("{} bytes is shorter than the footer", data.len())))?;
        let footer = &data[body_len..];
        if get_u64(footer, 24)? != MAGIC {
            return Err(corrupt("bad magic"));
        }
        let (footer_crc, stored) = (crc32fast::hash(&footer[..20]), get_u32(footer, 20)?);
        if footer_crc != stored {
            return Err(corrupt(format_args!("footer crc32 {footer_crc:#010x} != stored {stored:#010x}")));
        }
        let (index_crc, stored) = (crc32fast::hash(&index), get_u32(footer, 16)?);
        if index_crc != stored {
            return Err(corrupt(format_args!("index crc32 {index_crc:#010x} != stored {stored:#010x}")));
        }
        let blocks = Self::parse_index(&index, body_len, &data)?;
        let stored_blocks = get_u64(&data, body_len)?;
        if stored_blocks != blocks.len() as u64 {
            return Err(corrupt(format_args!("footer says {stored_blocks} blocks, index has {}", blocks.len())));
        }
        Ok(BlockReader { data, blocks, block: 0, at: 0, key: Vec::new() })
    }

    fn next(&mut self, max_bytes: usize, out: &mut Packed) -> Result<(), Error> {
        while let Some(b) = self.blocks.get(self.block) {
            let entries = b.entries(&self.data);
            if self.at >= entries.len() {
                self.block += 1;
                self.at = 0;
                self.key.clear();
                continue;
            }
            let row = decode_entry(entries, &mut self.at, &mut self.key)?;
            out.push_with(|buf| encode_flush_record(buf, &self.key, row));
            if out.data_len() >= max_bytes {
                break;
            }
        }
        Ok(())
    }

    fn get(&self, key: &[u8], out: &mut Packed) -> Result<(), Error> {
        let b = self.blocks.partition_point(|b| b.first_key.as_slice() <= key);
        let found = match b.checked_sub(1) {
            Some(b) => self.find_in_block(&self.blocks[b], key)?,
            None => None,
        };
        match found {
            Some((key, row)) => out.push_with(|buf| encode_flush_record(buf, &key, row)),
            None => out.push(&[]),
        }
        Ok(())
    }
}
