//! The commit log read back (commitlog contract 2): a replay is held to
//! what the host appended, row by row, by the rows' hashes keyed by the
//! per-process secret, so a plugin cannot answer a hash it never saw.
//! A whole segment gives back every row and stops clean at its end; a
//! damaged copy says `damaged` and keeps every row of the records before
//! the damage; a cut copy says `torn` (or stops clean exactly at the cut)
//! and keeps every row of the records before the cut.

use memlab_sdk::Tail;
use memlab_sdk::twin::Replayed;

use crate::commitlog::Appended;
use crate::seam::ledger::hash;

/// A published digest of rows in order (FNV-1a 128 over each row's own,
/// chained), which a later process can hold a kept log to: the per-process
/// secret's hashes mean nothing outside the run.
pub fn rows_digest<'r>(rows: impl IntoIterator<Item = &'r [u8]>) -> u128 {
    let mut pair = [0u8; 32];
    rows.into_iter().fold(0u128, |acc, row| {
        pair[..16].copy_from_slice(&acc.to_le_bytes());
        pair[16..].copy_from_slice(&super::key_hash(row).to_le_bytes());
        super::key_hash(&pair)
    })
}

/// Which copy of a segment was replayed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Copy {
    /// The segment as appended (possibly zero-padded after its end).
    Whole,
    /// One byte changed at this offset.
    Damaged(u64),
    /// Cut short to this many bytes.
    Cut(u64),
}

/// Holds a replay of `copy` to what was `appended`; says what is wrong.
pub fn hold(replayed: &Replayed, copy: Copy, appended: &Appended) -> Result<(), String> {
    let n = replayed.rows.len();
    if n > appended.rows.len() {
        return Err(format!("gave back {n} rows, but {} were appended", appended.rows.len()));
    }
    if let Some(i) = replayed.rows.iter().zip(&appended.rows).position(|(row, &want)| hash(row) != want) {
        return Err(format!("row {i} of {n} differs from the row appended there"));
    }
    let (tail, intact) = (replayed.tail, replayed.intact);
    let kept = |offset: u64, what: &str| match appended.rows_before(offset) {
        before if (n as u64) < before => Err(format!("{what} gave back {n} rows, but the {before} rows of the records before it are intact")),
        _ => Ok(()),
    };
    match copy {
        Copy::Whole if tail != Tail::Clean => Err(format!("an intact segment replayed as {tail:?} at byte {intact}")),
        Copy::Whole if n != appended.rows.len() || intact != appended.len() => {
            Err(format!("an intact segment gave back {n} of {} rows, {intact} of {} bytes", appended.rows.len(), appended.len()))
        }
        Copy::Whole => Ok(()),
        Copy::Damaged(at) if tail != Tail::Damaged => Err(format!("a copy with byte {at} changed replayed as {tail:?}, not damaged")),
        Copy::Damaged(at) if intact > at => Err(format!("a copy with byte {at} changed was intact up to byte {intact}, past the damage")),
        Copy::Damaged(at) => kept(at, &format!("a copy with byte {at} changed")),
        Copy::Cut(len) => match tail {
            Tail::Torn if intact < len => kept(len, &format!("a copy cut to {len} bytes")),
            // Clean at the cut only where a record ends there: at one of
            // the host's, or inside one after a row of it (a format that
            // frames each row).
            Tail::Clean if intact == len && (len == 0 || appended.records.iter().any(|r| r.0 == len) || n as u64 > appended.rows_before(len)) => {
                kept(len, &format!("a copy cut to {len} bytes"))
            }
            other => Err(format!("a copy cut to {len} bytes replayed as {other:?} with {intact} bytes intact")),
        },
    }
}

#[cfg(test)]
mod tests {
    use memlab_sdk::twin::Replayed;
    use memlab_sdk::{Packed, Tail};

    use super::{Appended, Copy, hold};
    use crate::seam::ledger::hash;

    fn rows(bodies: &[&[u8]]) -> Packed {
        let mut p = Packed::new();
        bodies.iter().for_each(|b| p.push(b));
        p
    }

    /// Two records of two rows, 10 bytes each.
    fn appended() -> Appended {
        let mut a = Appended::default();
        a.note([hash(b"a"), hash(b"b")], 10);
        a.note([hash(b"c"), hash(b"d")], 20);
        a
    }

    #[test]
    fn each_copy_is_held_to_what_was_appended() {
        let a = appended();
        let all = || rows(&[b"a", b"b", b"c", b"d"]);
        assert_eq!(hold(&Replayed { rows: all(), intact: 20, tail: Tail::Clean }, Copy::Whole, &a), Ok(()));
        let lie = Replayed { rows: rows(&[b"a", b"b", b"x", b"d"]), intact: 20, tail: Tail::Clean };
        assert!(hold(&lie, Copy::Whole, &a).expect_err("refused").contains("row 2"));
        let short = Replayed { rows: rows(&[b"a", b"b"]), intact: 10, tail: Tail::Clean };
        assert!(hold(&short, Copy::Whole, &a).is_err(), "a whole segment gives back every row");
        let damaged = Replayed { rows: rows(&[b"a", b"b"]), intact: 10, tail: Tail::Damaged };
        assert_eq!(hold(&damaged, Copy::Damaged(15), &a), Ok(()));
        assert!(hold(&damaged, Copy::Damaged(5), &a).expect_err("refused").contains("past the damage"));
        let unnoticed = Replayed { rows: all(), intact: 20, tail: Tail::Clean };
        assert!(hold(&unnoticed, Copy::Damaged(15), &a).expect_err("refused").contains("not damaged"));
        let gave_up = Replayed { rows: Packed::new(), intact: 0, tail: Tail::Damaged };
        assert!(hold(&gave_up, Copy::Damaged(15), &a).expect_err("refused").contains("intact"), "rows before the damage are kept");
        assert_eq!(hold(&Replayed { rows: rows(&[b"a", b"b"]), intact: 10, tail: Tail::Torn }, Copy::Cut(14), &a), Ok(()));
        assert_eq!(hold(&Replayed { rows: rows(&[b"a", b"b"]), intact: 10, tail: Tail::Clean }, Copy::Cut(10), &a), Ok(()));
        assert!(hold(&Replayed { rows: rows(&[b"a", b"b"]), intact: 10, tail: Tail::Clean }, Copy::Cut(14), &a).is_err());
        let torn_as_clean = Replayed { rows: rows(&[b"a", b"b"]), intact: 14, tail: Tail::Clean };
        assert!(hold(&torn_as_clean, Copy::Cut(14), &a).is_err(), "a tear inside a record is not its clean end");
        let row_framed = Replayed { rows: rows(&[b"a", b"b", b"c"]), intact: 14, tail: Tail::Clean };
        assert_eq!(hold(&row_framed, Copy::Cut(14), &a), Ok(()), "a format that frames each row ends cleanly between rows");
    }
}
