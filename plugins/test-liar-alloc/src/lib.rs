//! `liar`: an allocator that keeps each row in a heap buffer of its own,
//! honestly (`mode = "none"`) or with one subtle lie: `stop-reserving`
//! (after `after` rows it keeps rows without reserving them: the budget
//! cheat), `alias` (every 10,000th row gets the previous row's ref),
//! `halve-used` (reports half its `bytes-used`), `default-lie` (describes
//! a default for `pad` that it does not use), `hollow` (every 4th row
//! loses its last value byte: the row's key and timestamp still load
//! right), `bare-reserve` (reserves only the rows' bytes, its framing
//! unreserved), `pool-sniff` (honest in a pool that grants 1.5 GiB at
//! once, as check's fixed 1 GiB pool did; `hollow` in any smaller one, as
//! a default bench's is), `thin-framing` (keeps a heap box a row, as the
//! bundled `heap`, but reserves each row's bytes and the least framing
//! only, 4 bytes: its memory past that is the budget cheat the host
//! charges), `late-default-lie` (`default-lie` past its 5,000th row: a
//! probe's fixed workload of 2,000 rows never sees it, the bench's own
//! rows do), `probe-pad` (honours its `pad` on the first 2,048 rows, all
//! a probe's fixed workload sends, then gives the pads back: on a bench's
//! rows `pad` changes nothing, though the probe saw it work). Built like
//! the bundled
//! plugins but never bundled: the trust tests prove memlab catches each.

use memlab_sdk::{Allocator, Error, Packed, Params, Pool, RowView, Stat, Stats};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    None,
    StopReserving,
    Alias,
    HalveUsed,
    /// Reports a thousandth of the reservations it made.
    FewReservations,
    /// Says the pool is full for every 7th row past `after`, without
    /// asking the pool: those ops fail and leave verification.
    FakePoolFull,
    /// Reserves half of each row's cost past `after`; its counters tell
    /// the truth about it.
    UnderReserve,
    /// Reserves each row honestly, but keeps three more copies of it
    /// past `after`, unreserved: memory the budget never sees.
    HiddenCopies,
    /// Takes 32 MiB in `create`, unreserved, and keeps rows there.
    GrowInCreate,
    /// Its `pad` parameter (bytes reserved per row) defaults to 64 but
    /// is described as `0` when not configured: a default it never uses.
    DefaultLie,
    /// `DefaultLie` from its 5,000th row on.
    LateDefaultLie,
    /// Keeps every 4th row without its last byte's value.
    Hollow,
    /// Reserves (and counts as used) only each row's bytes, though it
    /// keeps a 16-byte pointer and length beside each: framing hidden in
    /// the memory slack.
    BareReserve,
    /// Asks for 1.5 GiB on its first row, to tell the pool's size: given
    /// back and honest if granted, `Hollow` if refused.
    PoolSniff,
    /// Reserves (and counts as used) each row's bytes and 4 more, the
    /// least framing the host allows, while its boxes cost more.
    ThinFraming,
    /// Pads each row by `pad` (default 64) as described, on the rows a
    /// probe's fixed workload sends; past them it gives the pads back and
    /// pads nothing, so on a bench's rows `pad` changes nothing.
    ProbePad,
}

/// Rows past a probe's fixed workload (2,000): where `probe-pad` stops.
const PROBED_ROWS: u64 = 2_048;

/// `pad` as `default-lie` takes it: unset, it pads 64 and shows 0.
struct Pad {
    bytes: u64,
    shown: u64,
}

impl std::str::FromStr for Pad {
    type Err = std::num::ParseIntError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        s.parse().map(|bytes| Pad { bytes, shown: bytes })
    }
}

impl std::fmt::Display for Pad {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.shown)
    }
}

/// Bytes reserved per row besides its own: the buffer's pointer and length.
const OVERHEAD: u64 = 16;

/// The lying allocator.
#[derive(Debug)]
pub struct Liar {
    mode: Mode,
    after: u64,
    rows: Vec<Box<[u8]>>,
    used: u64,
    reserved: u64,
    reservations: u64,
    hidden: Vec<Box<[u8]>>,
    pad: u64,
}

impl Liar {
    fn keep(&mut self, pool: &mut dyn Pool, row: &[u8]) -> Result<u64, Error> {
        let index = self.rows.len() as u64;
        if self.mode == Mode::FakePoolFull && index >= self.after && index.is_multiple_of(7) {
            // Once: the next call stores this row.
            self.after = index + 1;
            return Err(Error::PoolFull);
        }
        if self.mode == Mode::PoolSniff {
            self.mode = match pool.reserve(3 << 29) {
                Ok(()) => {
                    pool.release(3 << 29);
                    self.reservations += 1;
                    Mode::None
                }
                Err(_) => Mode::Hollow,
            };
        }
        if self.mode == Mode::ProbePad && index == PROBED_ROWS && self.pad > 0 {
            let pads = self.pad * PROBED_ROWS;
            pool.release(pads);
            (self.reserved, self.used, self.pad) = (self.reserved - pads, self.used - pads, 0);
        }
        let cost = match self.mode {
            Mode::BareReserve => row.len() as u64,
            Mode::ThinFraming => row.len() as u64 + 4,
            Mode::LateDefaultLie if index < 5_000 => row.len() as u64 + OVERHEAD,
            _ => row.len() as u64 + OVERHEAD + self.pad,
        };
        if !(self.mode == Mode::StopReserving && index >= self.after) {
            let asked = if self.mode == Mode::UnderReserve && index >= self.after { cost / 2 } else { cost };
            pool.reserve(asked)?;
            self.reserved += asked;
            self.reservations += 1;
        }
        self.used += cost;
        let mut kept: Box<[u8]> = row.into();
        if self.mode == Mode::Hollow
            && index % 4 == 3
            && let Some(last) = kept.last_mut()
        {
            *last ^= 0x20;
        }
        self.rows.push(kept);
        if self.mode == Mode::HiddenCopies && index >= self.after {
            self.hidden.extend((0..3).map(|_| Box::<[u8]>::from(row)));
        }
        if self.mode == Mode::Alias && index % 10_000 == 9_999 {
            return Ok(index - 1);
        }
        Ok(index)
    }
}

impl Allocator for Liar {
    const NAME: &'static str = "liar";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");

    fn create(params: &mut Params) -> Result<Self, Error> {
        let mode: String = params.get("mode", "none".to_string())?;
        let mode = match mode.as_str() {
            "none" => Mode::None,
            "stop-reserving" => Mode::StopReserving,
            "alias" => Mode::Alias,
            "halve-used" => Mode::HalveUsed,
            "few-reservations" => Mode::FewReservations,
            "fake-pool-full" => Mode::FakePoolFull,
            "under-reserve" => Mode::UnderReserve,
            "hidden-copies" => Mode::HiddenCopies,
            "grow-in-create" => Mode::GrowInCreate,
            "default-lie" => Mode::DefaultLie,
            "late-default-lie" => Mode::LateDefaultLie,
            "hollow" => Mode::Hollow,
            "bare-reserve" => Mode::BareReserve,
            "pool-sniff" => Mode::PoolSniff,
            "thin-framing" => Mode::ThinFraming,
            "probe-pad" => Mode::ProbePad,
            other => return Err(Error::BadParam(format!("unknown mode `{other}`"))),
        };
        let after = params.get("after", 1000u64)?;
        let mut hidden = Vec::new();
        if mode == Mode::GrowInCreate {
            // Touched, so the pages are really there.
            hidden.push(vec![1u8; 32 << 20].into_boxed_slice());
        }
        let pad = match mode {
            Mode::DefaultLie | Mode::LateDefaultLie => params.get("pad", Pad { bytes: 64, shown: 0 })?.bytes,
            Mode::ProbePad => params.get("pad", 64u64)?,
            _ => 0,
        };
        Ok(Liar { mode, after, rows: Vec::new(), used: 0, reserved: 0, reservations: 0, hidden, pad })
    }

    fn store(&mut self, pool: &mut dyn Pool, row: RowView<'_>) -> Result<u64, Error> {
        self.keep(pool, row.as_bytes())
    }

    fn store_batch(&mut self, pool: &mut dyn Pool, rows: &Packed, refs: &mut Vec<u64>) -> Result<(), Error> {
        for record in rows.iter() {
            RowView::decode(record)?;
            refs.push(self.keep(pool, record)?);
        }
        Ok(())
    }

    fn load(&self, reference: u64) -> Result<&[u8], Error> {
        self.rows.get(reference as usize).map(|r| &r[..]).ok_or_else(|| Error::Corrupt(format!("no row has ref {reference}")))
    }

    fn stats(&self) -> Stats {
        let used = if self.mode == Mode::HalveUsed { self.used / 2 } else { self.used.min(self.reserved) };
        vec![
            Stat::BytesUsed.with(used),
            Stat::BytesReserved.with(self.reserved),
            Stat::Regions.with(self.rows.len() as u64),
            Stat::Reservations.with(if self.mode == Mode::FewReservations { self.reservations / 1000 } else { self.reservations }),
            Stat::Waste.with(self.reserved - used),
        ]
    }
}

memlab_sdk::export!(allocator: Liar);
