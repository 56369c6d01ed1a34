//! The frame the bundled commit-log formats share, after Cassandra's
//! mutation framing: `tag: u8` (never zero), `len: u32`, the CRC32C of
//! tag and length (so a damaged length reads as damage, not as a tear),
//! then `len` payload bytes and their CRC32C. Not a plugin: a crate that
//! calls `export!` must not be linked into another plugin.

use memlab_sdk::{Decoded, Packed};

/// Bytes a frame adds around its payload.
pub const OVERHEAD: usize = 1 + 4 + 4 + 4;
const HEAD: usize = 9;

/// Appends one frame with `tag` whose payload `write` appends.
pub fn put(out: &mut Vec<u8>, tag: u8, write: impl FnOnce(&mut Vec<u8>)) {
    debug_assert_ne!(tag, 0, "commitlog contract 1: a record never begins with zero");
    let start = out.len();
    out.extend_from_slice(&[tag, 0, 0, 0, 0, 0, 0, 0, 0]);
    write(out);
    let len = (out.len() - start - HEAD) as u32;
    out[start + 1..start + 5].copy_from_slice(&len.to_le_bytes());
    let head = crc32c::crc32c(&out[start..start + 5]);
    out[start + 5..start + HEAD].copy_from_slice(&head.to_le_bytes());
    let body = crc32c::crc32c(&out[start + HEAD..]);
    out.extend_from_slice(&body.to_le_bytes());
}

/// A frame read from the start of some bytes.
pub enum Frame<'a> {
    /// A whole, intact frame: its tag, its payload, and its length.
    Whole { tag: u8, payload: &'a [u8], len: usize },
    /// Bytes that end inside the frame, or a frame that fails its checks.
    Bad(Decoded),
}

fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    bytes.get(at..at + 4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// Reads the frame at the start of `bytes`.
pub fn read(bytes: &[u8]) -> Frame<'_> {
    if bytes.len() < HEAD {
        return Frame::Bad(Decoded::Torn);
    }
    let (Some(len), Some(head)) = (u32_at(bytes, 1), u32_at(bytes, 5)) else { return Frame::Bad(Decoded::Torn) };
    if crc32c::crc32c(&bytes[..5]) != head {
        return Frame::Bad(Decoded::Damaged);
    }
    let end = HEAD + len as usize;
    let Some(body) = u32_at(bytes, end) else { return Frame::Bad(Decoded::Torn) };
    let payload = &bytes[HEAD..end];
    if crc32c::crc32c(payload) != body {
        return Frame::Bad(Decoded::Damaged);
    }
    Frame::Whole { tag: bytes[0], payload, len: end + 4 }
}

/// Appends rows as `len: u32, row` pairs.
pub fn put_rows(out: &mut Vec<u8>, rows: &Packed) {
    for row in rows.iter() {
        out.extend_from_slice(&(row.len() as u32).to_le_bytes());
        out.extend_from_slice(row);
    }
}

/// Reads `len: u32, row` pairs into `out`; `false` when they do not fill
/// `payload` exactly (a checksum passed over framing that is wrong).
pub fn take_rows(mut payload: &[u8], out: &mut Packed) -> bool {
    while !payload.is_empty() {
        let Some(len) = u32_at(payload, 0) else { return false };
        let Some(row) = payload.get(4..4 + len as usize) else { return false };
        out.push(row);
        payload = &payload[4 + len as usize..];
    }
    true
}

#[cfg(test)]
mod tests {
    use memlab_sdk::{Decoded, Packed};

    use super::{Frame, put, put_rows, read, take_rows};

    #[test]
    fn a_frame_reads_back_and_any_changed_or_missing_byte_is_found() {
        let mut rows = Packed::new();
        rows.push(b"first row");
        rows.push(b"");
        rows.push(b"third");
        let mut out = Vec::new();
        put(&mut out, 7, |o| put_rows(o, &rows));
        let Frame::Whole { tag: 7, payload, len } = read(&out) else { panic!("intact frame not read") };
        assert_eq!(len, out.len());
        let mut back = Packed::new();
        assert!(take_rows(payload, &mut back));
        assert_eq!(back.iter().collect::<Vec<_>>(), rows.iter().collect::<Vec<_>>());
        for i in 0..out.len() {
            let mut bad = out.clone();
            bad[i] ^= 0x20;
            assert!(matches!(read(&bad), Frame::Bad(Decoded::Damaged)), "a changed byte {i} is damage");
            assert!(matches!(read(&out[..i]), Frame::Bad(Decoded::Torn)), "a cut at {i} is a tear");
        }
    }
}
