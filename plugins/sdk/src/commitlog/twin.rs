//! The commit-log format's instance, as the export glue and the host's
//! native twins drive it: the replay loop lives here once.

use crate::params::construct;
use crate::{CommitLog, Decoded, Description, Error, Packed, Stats, Tail};

/// A commit-log format and what it applied.
pub struct CommitLogInstance<L: CommitLog> {
    log: L,
    description: Description,
}

/// What a replay returns: the rows of the intact records, the bytes they
/// span, and where it stopped (commitlog contract 2).
#[derive(Debug)]
pub struct Replayed {
    /// The rows, in order.
    pub rows: Packed,
    /// Bytes from the start the intact records span.
    pub intact: u64,
    /// Where the replay stopped.
    pub tail: Tail,
}

impl<L: CommitLog> CommitLogInstance<L> {
    /// `create` with its parameters.
    pub fn create(params: Vec<(String, String)>) -> Result<Self, Error> {
        let (log, description) = construct(L::NAME, L::VERSION, params, L::create)?;
        Ok(CommitLogInstance { log, description })
    }

    /// One log record of `rows`, appended to `out`.
    pub fn encode(&mut self, rows: &Packed, out: &mut Vec<u8>) -> Result<(), Error> {
        let start = out.len();
        self.log.encode(rows, out)?;
        match out.get(start) {
            Some(0) => Err(Error::Other("commitlog contract 1: a record began with a zero byte".into())),
            None => Err(Error::Other("commitlog contract 1: a record of no bytes".into())),
            Some(_) => Ok(()),
        }
    }

    /// The intact records' rows from the start of `segment`, stopping
    /// after the record that brings them to `max_rows` (commitlog
    /// contracts 2 and 3).
    pub fn replay(&self, segment: &[u8], max_rows: u32) -> Replayed {
        let mut rows = Packed::new();
        let mut at = 0usize;
        let tail = loop {
            let rest = &segment[at..];
            if rest.is_empty() || rows.len() >= max_rows as usize {
                break Tail::Clean;
            }
            // Zeros end a segment (direct I/O's padding) only when nothing
            // but zeros follows: a record's first byte zeroed is damage.
            if rest[0] == 0 {
                break if rest.iter().all(|&b| b == 0) { Tail::Clean } else { Tail::Damaged };
            }
            let before = rows.len();
            match self.log.decode(rest, &mut rows) {
                Decoded::Record(len) if len > 0 && len <= rest.len() => at += len,
                Decoded::Record(_) | Decoded::Damaged => {
                    rows.truncate(before);
                    break Tail::Damaged;
                }
                Decoded::Torn => {
                    rows.truncate(before);
                    break Tail::Torn;
                }
            }
        };
        Replayed { rows, intact: at as u64, tail }
    }

    /// What `create` applied.
    pub fn description(&self) -> &Description {
        &self.description
    }

    /// The format's counters.
    pub fn stats(&self) -> Stats {
        self.log.stats()
    }
}
