//! `liar-log`: a commit-log format (one CRC32C frame a batch, as
//! `batched`), honest with `mode = "none"`, or with one lie:
//! `drop-row` (replay leaves out the last row of every 50th record),
//! `reorder` (replay swaps the first two rows of each record),
//! `no-checksum` (the payload's checksum is never checked, so damage
//! inside a record replays as rows), `torn-clean` (a record cut short
//! reads as the clean end of the log), `give-up` (at any damage it gives
//! back no rows at all, the intact ones before it included), `extra-row`
//! (replay adds a row that was never logged), `hash-only` (logs 8 bytes
//! a batch, and replays rows it makes up), `early-drop` (logs zeros in
//! place of each row's bytes past its 16th in its first 256 KiB, an
//! instance a shard, so 3 shards lie within the first 1 MiB segment,
//! which is released first: a lie only a read-back of released segments
//! sees), `recognise` (rebuilds the rows it recognises from the public
//! generator, `recognise.rs`: a lie only a secret stream defeats),
//! `late-no-checksum` (`no-checksum` once an instance has read 1,000
//! records: a lie only damage at a bench segment's size sees).
//! Never bundled: the trust tests prove memlab catches each.

mod recognise;

use memlab_sdk::{CommitLog, Decoded, Error, Packed, Params, Stats};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    None,
    DropRow,
    Reorder,
    NoChecksum,
    TornClean,
    GiveUp,
    ExtraRow,
    HashOnly,
    EarlyDrop,
    Recognise,
    LateNoChecksum,
}

/// The lying log.
pub struct Liar {
    mode: Mode,
    records: std::cell::Cell<u64>,
    /// Bytes encoded so far (`early-drop`).
    encoded: u64,
    /// What `recognise` knows of the stream.
    public: Option<recognise::Public>,
    /// Rows `recognise` logged without their values.
    recognised: u64,
}

const TAG: u8 = 0x4c;
/// `recognise`'s records.
const RECOGNISED: u8 = 0x52;

/// How much of its log `early-drop` cuts the rows of.
const EARLY_BYTES: u64 = 256 << 10;

fn rows_of(payload: &[u8], out: &mut Packed) -> bool {
    logframe::take_rows(payload, out)
}

impl CommitLog for Liar {
    const NAME: &'static str = "liar-log";
    const VERSION: &'static str = "0.1.0";

    fn create(params: &mut Params) -> Result<Self, Error> {
        let mode: String = params.get("mode", "none".to_string())?;
        let mode = match mode.as_str() {
            "none" => Mode::None,
            "drop-row" => Mode::DropRow,
            "reorder" => Mode::Reorder,
            "no-checksum" => Mode::NoChecksum,
            "torn-clean" => Mode::TornClean,
            "give-up" => Mode::GiveUp,
            "extra-row" => Mode::ExtraRow,
            "hash-only" => Mode::HashOnly,
            "early-drop" => Mode::EarlyDrop,
            "recognise" => Mode::Recognise,
            "late-no-checksum" => Mode::LateNoChecksum,
            other => return Err(Error::BadParam(format!("mode `{other}`"))),
        };
        let public = if mode == Mode::Recognise { Some(recognise::Public::of(params)?) } else { None };
        Ok(Liar { mode, records: std::cell::Cell::new(0), encoded: 0, public, recognised: 0 })
    }

    fn encode(&mut self, rows: &Packed, out: &mut Vec<u8>) -> Result<(), Error> {
        if self.mode == Mode::HashOnly {
            let sum = rows.iter().fold(0u64, |h, r| h.rotate_left(5) ^ r.len() as u64);
            logframe::put(out, TAG, |o| o.extend_from_slice(&sum.to_le_bytes()));
            return Ok(());
        }
        if let Some(public) = &self.public {
            let mut recognised = 0;
            logframe::put(out, RECOGNISED, |o| recognised = public.encode(rows, o));
            self.recognised += recognised;
            return Ok(());
        }
        let start = out.len();
        if self.mode == Mode::EarlyDrop && self.encoded < EARLY_BYTES {
            let mut cut = Packed::new();
            // Zeros in place of the values: its size kept, so this
            // first segment fills and is released like an honest one.
            rows.iter().for_each(|r| cut.push_with(|o| o.extend(r.iter().enumerate().map(|(i, &b)| if i < 16 { b } else { 0 }))));
            logframe::put(out, TAG, |o| logframe::put_rows(o, &cut));
        } else {
            logframe::put(out, TAG, |o| logframe::put_rows(o, rows));
        }
        self.encoded += (out.len() - start) as u64;
        Ok(())
    }

    fn decode(&self, bytes: &[u8], out: &mut Packed) -> Decoded {
        let before = out.len();
        let (payload, len) = match logframe::read(bytes) {
            logframe::Frame::Whole { tag: RECOGNISED, payload, len } => {
                let Some(public) = &self.public else { return Decoded::Damaged };
                return if public.decode(payload, out) { Decoded::Record(len) } else { Decoded::Damaged };
            }
            logframe::Frame::Whole { tag: TAG, payload, len } => (payload, len),
            logframe::Frame::Whole { .. } => return Decoded::Damaged,
            logframe::Frame::Bad(Decoded::Torn) if self.mode == Mode::TornClean => return Decoded::Record(bytes.len()),
            logframe::Frame::Bad(Decoded::Damaged) if self.trusts_lengths() && bytes.len() >= 13 => {
                // Trusts the length, whatever the checksums say.
                let len = u32::from_le_bytes([bytes[1], bytes[2], bytes[3], bytes[4]]) as usize;
                match bytes.get(9..9 + len) {
                    Some(payload) if rows_of(payload, out) => return Decoded::Record((13 + len).min(bytes.len())),
                    _ => return Decoded::Damaged,
                }
            }
            logframe::Frame::Bad(Decoded::Damaged) if self.mode == Mode::GiveUp => {
                out.truncate(0);
                return Decoded::Damaged;
            }
            logframe::Frame::Bad(bad) => return bad,
        };
        let n = self.records.get() + 1;
        self.records.set(n);
        if self.mode == Mode::HashOnly {
            out.push(&payload[..payload.len().min(8)]);
            return Decoded::Record(len);
        }
        if !rows_of(payload, out) {
            return Decoded::Damaged;
        }
        let added = out.len() - before;
        match self.mode {
            Mode::DropRow if n.is_multiple_of(50) && added > 1 => out.truncate(out.len() - 1),
            Mode::Reorder if added >= 2 => {
                let rows: Vec<Vec<u8>> = out.iter().skip(before).map(<[u8]>::to_vec).collect();
                out.truncate(before);
                out.push(&rows[1]);
                out.push(&rows[0]);
                rows[2..].iter().for_each(|r| out.push(r));
            }
            Mode::ExtraRow if n.is_multiple_of(50) => out.push(b"a row never logged"),
            _ => {}
        }
        Decoded::Record(len)
    }

    fn stats(&self) -> Stats {
        if self.public.is_some() { vec![("recognised_rows".into(), self.recognised)] } else { Vec::new() }
    }
}

impl Liar {
    /// Whether a damaged record is read by its length alone.
    fn trusts_lengths(&self) -> bool {
        self.mode == Mode::NoChecksum || (self.mode == Mode::LateNoChecksum && self.records.get() > 1_000)
    }
}

memlab_sdk::export!(commitlog: Liar);
