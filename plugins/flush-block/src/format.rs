//! The block segment format.
//!
//! Data file: blocks, then a footer `blocks: u64, rows: u64, index-crc32:
//! u32, footer-crc32: u32` (over the 20 bytes before it) and `magic: u64`;
//! so a flipped bit anywhere in either file is caught at open.
//! A block is its entries, then `restarts: [u32; n]` (offsets of the
//! entries that store their key whole), `n: u32`, and `crc32: u32` over
//! everything before it in the block. An entry is `shared: varint`,
//! `unshared: varint`, `row-len: varint`, the key's bytes after the first
//! `shared` of the previous key's, and the row.
//!
//! Index file: `count: u32`, then per block `key-len: u32, first key,
//! offset: u64, len: u32`.

use memlab_sdk::Error;

pub(crate) const MAGIC: u64 = u64::from_le_bytes(*b"MLBLKS01");
pub(crate) const FOOTER: usize = 32;
/// `n: u32` and `crc32: u32` close every block.
pub(crate) const BLOCK_TRAILER: usize = 8;

pub(crate) fn corrupt(what: impl std::fmt::Display) -> Error {
    Error::Corrupt(format!("block segment: {what}"))
}

pub(crate) fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push(value as u8 | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// Reads a varint at `*at` within `bytes`, moving `*at` past it.
pub(crate) fn get_varint(bytes: &[u8], at: &mut usize) -> Result<u64, Error> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *bytes.get(*at).ok_or_else(|| corrupt(format_args!("varint runs past byte {at}")))?;
        *at += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err(corrupt(format_args!("varint longer than 10 bytes before byte {at}")))
}

pub(crate) fn get_u32(bytes: &[u8], at: usize) -> Result<u32, Error> {
    let b = bytes.get(at..at.saturating_add(4)).ok_or_else(|| corrupt(format_args!("truncated at byte {at}")))?;
    Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

pub(crate) fn get_u64(bytes: &[u8], at: usize) -> Result<u64, Error> {
    let b = bytes.get(at..at.saturating_add(8)).ok_or_else(|| corrupt(format_args!("truncated at byte {at}")))?;
    let mut a = [0u8; 8];
    a.copy_from_slice(b);
    Ok(u64::from_le_bytes(a))
}

/// `len` bytes at `*at`, moving `*at` past them.
pub(crate) fn take<'a>(bytes: &'a [u8], at: &mut usize, len: u64, what: &str) -> Result<&'a [u8], Error> {
    let end = usize::try_from(len).ok().and_then(|len| at.checked_add(len)).filter(|&end| end <= bytes.len());
    let end = end.ok_or_else(|| corrupt(format_args!("{what} of {len} bytes at {at} overruns {}", bytes.len())))?;
    let taken = &bytes[*at..end];
    *at = end;
    Ok(taken)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip_and_reject_truncation() {
        for value in [0, 1, 127, 128, 300, u32::MAX as u64, u64::MAX] {
            let mut out = Vec::new();
            put_varint(&mut out, value);
            let mut at = 0;
            assert_eq!(get_varint(&out, &mut at).expect("varint"), value);
            assert_eq!(at, out.len());
            assert!(get_varint(&out[..out.len() - 1], &mut 0).is_err());
        }
    }
}
