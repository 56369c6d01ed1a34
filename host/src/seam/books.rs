//! The host's books on a shard's write calls, and the checks they hold a
//! store or an insert to, written once for both ways a shard is called:
//! a shard called by one caller at a time keeps one set of books, and a
//! shard with concurrent writers gives each its own set (`writers`).

use memlab_sdk::Packed;

use super::Boundary;
use super::budget::{FRAMING_PER_ROW, Observed};
use super::ledger::{Ledger, Noted};
use super::sample::Sample;

/// Bytes a packed batch takes across the boundary: data plus end offsets.
pub(super) fn packed_bytes(p: &Packed) -> u64 {
    (p.data_len() + 4 * p.len()) as u64
}

/// Why an allocator's `pool-full` is a lie: the pool refused nothing.
pub(super) const UNREFUSED_POOL_FULL: &str = "returned `pool-full`, but the pool refused no reservation in this call";

/// What the host counted of the calls one keeper of books saw.
#[derive(Debug, Default)]
pub(super) struct Books {
    pub(super) boundary: Boundary,
    pub(super) observed: Observed,
    /// The host's ledger of what it handed the generation, which the
    /// flush holds the cursor and the loads to (off where the variant
    /// does not verify).
    pub(super) ledger: Option<Ledger>,
}

impl Books {
    /// Books that keep a ledger when `like` does.
    pub(super) fn like(like: &Books) -> Books {
        Books { ledger: like.ledger.as_ref().map(Ledger::empty_like), ..Books::default() }
    }

    pub(super) fn count(&mut self, bytes_in: u64) {
        self.boundary.calls += 1;
        self.boundary.bytes_in += bytes_in;
    }

    /// Allocator contract 1, one ref a row, then the rows counted as held.
    pub(super) fn stored(&mut self, rows: &Packed, refs: &[u64]) -> Result<(), String> {
        self.boundary.bytes_out += 8 * refs.len() as u64;
        if refs.len() != rows.len() {
            return Err(format!("returned {} refs for {} rows", refs.len(), rows.len()));
        }
        self.observed.rows += rows.len() as u64;
        self.observed.row_bytes += rows.data_len() as u64;
        self.observed.largest_batch = self.observed.largest_batch.max(packed_bytes(rows));
        Ok(())
    }

    /// Notes entries the memtable accepted, hashed ahead as `noted` where
    /// the writer did (`Noted`).
    pub(super) fn inserted(&mut self, entries: &Packed, noted: Option<&Noted>) {
        if let Some(ledger) = &mut self.ledger {
            match noted {
                Some(noted) => ledger.noted(noted),
                None => ledger.inserted(entries),
            }
        }
    }

    /// Takes `other`'s books into these: another writer's, at the switch.
    pub(super) fn absorb(&mut self, other: Books) {
        self.boundary.add(other.boundary);
        let (mine, theirs) = (&mut self.observed, other.observed);
        mine.rows += theirs.rows;
        mine.row_bytes += theirs.row_bytes;
        mine.largest_batch = mine.largest_batch.max(theirs.largest_batch);
        mine.load_growth += theirs.load_growth;
        if let (Some(ledger), Some(theirs)) = (&mut self.ledger, other.ledger) {
            ledger.absorb(theirs);
        }
    }
}

/// Allocator contract 3 at the call: what the rows hold, with the least
/// framing a store keeps, must be reserved from the pool now.
pub(super) fn within_reservations(observed: &Observed, reserved: u64) -> Result<(), String> {
    let held = observed.framed_bytes();
    if reserved >= held {
        return Ok(());
    }
    Err(format!(
        "it holds {} rows of {} bytes ({held} with {FRAMING_PER_ROW} bytes of framing each, the least a store keeps) but has reserved only {reserved} bytes from the pool",
        observed.rows, observed.row_bytes
    ))
}

/// Holds a read's answers to the host's sample, where there is one.
pub(super) fn sampled(sample: Option<&mut Sample>, check: impl FnOnce(&mut Sample) -> Result<(), String>) -> Result<(), String> {
    match sample.map(check) {
        Some(Err(detail)) => Err(format!("the host's sample of this generation: {detail}")),
        _ => Ok(()),
    }
}
