//! `plain`: each row its own frame, a length and a CRC32C each (as
//! Cassandra frames each mutation): 13 bytes of framing a row, and a
//! checksum computed per row.

use memlab_sdk::{CommitLog, Decoded, Error, Packed, Params, Stats};

/// The per-row framed log.
pub struct Plain {
    frames: u64,
}

const TAG: u8 = 0x50;

impl CommitLog for Plain {
    const NAME: &'static str = "plain";
    const VERSION: &'static str = "0.1.0";

    fn create(_params: &mut Params) -> Result<Self, Error> {
        Ok(Plain { frames: 0 })
    }

    fn encode(&mut self, rows: &Packed, out: &mut Vec<u8>) -> Result<(), Error> {
        if rows.is_empty() {
            return Err(Error::InvalidState("commitlog contract 1: an empty batch".into()));
        }
        for row in rows.iter() {
            logframe::put(out, TAG, |o| o.extend_from_slice(row));
        }
        self.frames += rows.len() as u64;
        Ok(())
    }

    fn decode(&self, bytes: &[u8], out: &mut Packed) -> Decoded {
        match logframe::read(bytes) {
            logframe::Frame::Whole { tag: TAG, payload, len } => {
                out.push(payload);
                Decoded::Record(len)
            }
            logframe::Frame::Whole { .. } => Decoded::Damaged,
            logframe::Frame::Bad(bad) => bad,
        }
    }

    fn stats(&self) -> Stats {
        vec![("frames".into(), self.frames)]
    }
}

memlab_sdk::export!(commitlog: Plain);
