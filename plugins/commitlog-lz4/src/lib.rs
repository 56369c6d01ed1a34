//! `lz4`: one frame per batch or coalesced group, its rows compressed
//! with LZ4 (`lz4_flex`, the block format with the raw size in front);
//! the checksum covers the compressed bytes, so damage is found before
//! anything is decompressed. A group smaller than `min_bytes` is kept
//! raw: LZ4 on a few short rows costs more than it saves.

use memlab_sdk::{CommitLog, Decoded, Error, Packed, Params, Stats};

/// The compressed log.
pub struct Lz4 {
    min_bytes: usize,
    raw_bytes: u64,
    compressed_bytes: u64,
    scratch: Vec<u8>,
}

const RAW: u8 = 0x52;
const COMPRESSED: u8 = 0x5a;

impl CommitLog for Lz4 {
    const NAME: &'static str = "lz4";
    const VERSION: &'static str = "0.1.0";

    fn create(params: &mut Params) -> Result<Self, Error> {
        let min_bytes: usize = params.get("min_bytes", 256)?;
        Ok(Lz4 { min_bytes, raw_bytes: 0, compressed_bytes: 0, scratch: Vec::new() })
    }

    fn encode(&mut self, rows: &Packed, out: &mut Vec<u8>) -> Result<(), Error> {
        if rows.is_empty() {
            return Err(Error::InvalidState("commitlog contract 1: an empty batch".into()));
        }
        self.scratch.clear();
        logframe::put_rows(&mut self.scratch, rows);
        self.raw_bytes += self.scratch.len() as u64;
        if self.scratch.len() < self.min_bytes {
            logframe::put(out, RAW, |o| o.extend_from_slice(&self.scratch));
            self.compressed_bytes += self.scratch.len() as u64;
        } else {
            let before = out.len();
            logframe::put(out, COMPRESSED, |o| o.extend_from_slice(&lz4_flex::compress_prepend_size(&self.scratch)));
            self.compressed_bytes += (out.len() - before - logframe::OVERHEAD) as u64;
        }
        Ok(())
    }

    fn decode(&self, bytes: &[u8], out: &mut Packed) -> Decoded {
        match logframe::read(bytes) {
            logframe::Frame::Whole { tag: RAW, payload, len } if logframe::take_rows(payload, out) => Decoded::Record(len),
            logframe::Frame::Whole { tag: COMPRESSED, payload, len } => {
                // LZ4 expands at most 255-fold: a larger stated size is a
                // forged segment, refused before anything is allocated.
                let stated = payload.get(..4).map_or(u32::MAX, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
                if stated as usize > payload.len().saturating_mul(255) {
                    return Decoded::Damaged;
                }
                match lz4_flex::decompress_size_prepended(payload) {
                    Ok(raw) if logframe::take_rows(&raw, out) => Decoded::Record(len),
                    _ => Decoded::Damaged,
                }
            }
            logframe::Frame::Whole { .. } => Decoded::Damaged,
            logframe::Frame::Bad(bad) => bad,
        }
    }

    fn stats(&self) -> Stats {
        vec![("raw-bytes".into(), self.raw_bytes), ("compressed-bytes".into(), self.compressed_bytes)]
    }
}

memlab_sdk::export!(commitlog: Lz4);
