//! `batched`: one frame, so one checksum, per batch or coalesced group:
//! 13 bytes of framing a group and 4 a row.

use memlab_sdk::{CommitLog, Decoded, Error, Packed, Params, Stats};

/// The per-group framed log.
pub struct Batched {
    frames: u64,
}

const TAG: u8 = 0x42;

impl CommitLog for Batched {
    const NAME: &'static str = "batched";
    const VERSION: &'static str = "0.1.0";

    fn create(_params: &mut Params) -> Result<Self, Error> {
        Ok(Batched { frames: 0 })
    }

    fn encode(&mut self, rows: &Packed, out: &mut Vec<u8>) -> Result<(), Error> {
        if rows.is_empty() {
            return Err(Error::InvalidState("commitlog contract 1: an empty batch".into()));
        }
        logframe::put(out, TAG, |o| logframe::put_rows(o, rows));
        self.frames += 1;
        Ok(())
    }

    fn decode(&self, bytes: &[u8], out: &mut Packed) -> Decoded {
        match logframe::read(bytes) {
            logframe::Frame::Whole { tag: TAG, payload, len } if logframe::take_rows(payload, out) => Decoded::Record(len),
            logframe::Frame::Whole { .. } => Decoded::Damaged,
            logframe::Frame::Bad(bad) => bad,
        }
    }

    fn stats(&self) -> Stats {
        vec![("frames".into(), self.frames)]
    }
}

memlab_sdk::export!(commitlog: Batched);
