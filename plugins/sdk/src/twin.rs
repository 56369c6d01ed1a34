//! One instance of each kind, with the contract's state rules, as both the
//! wasm export glue and the memlab host's native twins drive it: the batch
//! loops live here once, so the sandbox and the native run do the same
//! work per call. Plugin authors do not need this module.

use crate::{Allocator, CommitLog, Decoded, Description, Error, Finished, FlushRecord, Memtable, Packed, Params, Pool, SegmentReader, Serializer, Stats, Tail};

/// Runs a constructor's parameter handling: build, then reject leftovers.
fn construct<T>(
    name: &str,
    version: &str,
    given: Vec<(String, String)>,
    build: impl FnOnce(&mut Params) -> Result<T, Error>,
) -> Result<(T, Description), Error> {
    let mut params = Params::new(given);
    let value = build(&mut params)?;
    let applied = params.finish()?;
    Ok((value, Description { name: name.to_string(), version: version.to_string(), params: applied }))
}

/// A memtable and its freeze state (memtable contract: no insert once a
/// cursor was opened).
pub struct MemtableInstance<T: Memtable> {
    table: T,
    frozen: bool,
    description: Description,
}

impl<T: Memtable> MemtableInstance<T> {
    /// `create` with its parameters.
    pub fn create(params: Vec<(String, String)>) -> Result<Self, Error> {
        let (table, description) = construct(T::NAME, T::VERSION, params, T::create)?;
        Ok(MemtableInstance { table, frozen: false, description })
    }

    /// Inserts a batch of entries.
    pub fn insert(&mut self, entries: &Packed) -> Result<(), Error> {
        if self.frozen {
            return Err(Error::InvalidState("insert after a cursor was opened".into()));
        }
        self.table.insert_batch(entries)
    }

    /// One record per key: the entry, or empty for a miss.
    pub fn get(&self, keys: &Packed, out: &mut Packed) {
        for key in keys.iter() {
            match self.table.get(key) {
                Some(entry) => out.push_with(|buf| entry.encode(buf)),
                None => out.push(&[]),
            }
        }
    }

    /// Entries with `start <= key < end`, at most `limit`.
    pub fn scan(&self, start: &[u8], end: Option<&[u8]>, limit: u32, out: &mut Packed) {
        self.table.scan(start, end, limit as usize, out);
    }

    /// Freezes the memtable (once) and opens a cursor before the first entry.
    pub fn cursor(&mut self) -> T::Position {
        if !self.frozen {
            self.frozen = true;
            self.table.freeze();
        }
        self.table.cursor()
    }

    /// The next entries after `position`, up to `max_bytes`.
    pub fn next(&self, position: &mut T::Position, max_bytes: u32, out: &mut Packed) {
        self.table.next(position, max_bytes as usize, out);
    }

    /// What `create` applied.
    pub fn description(&self) -> &Description {
        &self.description
    }

    /// The memtable's counters.
    pub fn stats(&self) -> Stats {
        self.table.stats()
    }
}

/// An allocator and what it applied.
pub struct ArenaInstance<A: Allocator> {
    arena: A,
    description: Description,
}

impl<A: Allocator> ArenaInstance<A> {
    /// `create` with its parameters.
    pub fn create(params: Vec<(String, String)>) -> Result<Self, Error> {
        let (arena, description) = construct(A::NAME, A::VERSION, params, A::create)?;
        Ok(ArenaInstance { arena, description })
    }

    /// Stores a batch of rows; one ref per row.
    pub fn store(&mut self, pool: &mut dyn Pool, rows: &Packed) -> Result<Vec<u64>, Error> {
        let mut refs = Vec::with_capacity(rows.len());
        self.arena.store_batch(pool, rows, &mut refs)?;
        Ok(refs)
    }

    /// The rows behind `refs`, in order.
    pub fn load(&self, refs: &[u64], out: &mut Packed) -> Result<(), Error> {
        for &reference in refs {
            out.push(self.arena.load(reference)?);
        }
        Ok(())
    }

    /// What `create` applied.
    pub fn description(&self) -> &Description {
        &self.description
    }

    /// The allocator's counters.
    pub fn stats(&self) -> Stats {
        self.arena.stats()
    }
}

/// A serializer's writer, unusable once finished.
pub struct WriterInstance<S: Serializer> {
    writer: Option<S>,
    description: Description,
    /// The SDK's heap count at `create` (wasm only).
    heap_at_create: Option<u64>,
    /// The writer's last counters, kept past `finish`.
    finished: Stats,
}

impl<S: Serializer> WriterInstance<S> {
    /// `create` with its parameters.
    pub fn create(params: Vec<(String, String)>) -> Result<Self, Error> {
        let heap_at_create = crate::heap::allocated();
        let (writer, description) = construct(S::NAME, S::VERSION, params, S::create)?;
        Ok(WriterInstance { writer: Some(writer), description, heap_at_create, finished: Stats::new() })
    }

    fn writer(&mut self) -> Result<&mut S, Error> {
        self.writer.as_mut().ok_or_else(|| Error::InvalidState("writer already finished".into()))
    }

    /// Encodes a batch of flush records, appending to `out`.
    pub fn write(&mut self, records: &Packed, out: &mut Vec<u8>) -> Result<(), Error> {
        let writer = self.writer()?;
        for record in records.iter() {
            writer.write(FlushRecord::decode(record)?, out)?;
        }
        Ok(())
    }

    /// Ends the segment, appending the data file's tail to `tail`.
    pub fn finish(&mut self, tail: &mut Vec<u8>) -> Result<Finished, Error> {
        let writer = self.writer()?;
        let before = writer.stats();
        let finished = writer.finish(tail);
        // The host asks for the counters after `finish`: they include it.
        // A writer's counters only grow over its life, so one that starts
        // over in `finish` keeps its value from before.
        let mut after = writer.stats();
        for (name, value) in before {
            match after.iter_mut().find(|(n, _)| *n == name) {
                Some((_, v)) => *v = (*v).max(value),
                None => after.push((name, value)),
            }
        }
        self.finished = after;
        self.writer = None;
        finished
    }

    /// What `create` applied.
    pub fn description(&self) -> &Description {
        &self.description
    }

    /// The writer's counters (as `finish` left them, once finished) and,
    /// in wasm, the SDK's count of what the instance allocated since
    /// `create`.
    pub fn stats(&self) -> Stats {
        let mut stats = self.writer.as_ref().map_or_else(|| self.finished.clone(), Serializer::stats);
        if let (Some(at), Some(now)) = (self.heap_at_create, crate::heap::allocated()) {
            stats.retain(|(name, _)| name != crate::heap::STAT);
            stats.push((crate::heap::STAT.into(), now.wrapping_sub(at)));
        }
        stats
    }
}

/// A segment reader.
pub struct ReaderInstance<R: SegmentReader> {
    reader: R,
}

impl<R: SegmentReader> ReaderInstance<R> {
    /// Opens a segment; parameters as the writer took them.
    pub fn open(params: Vec<(String, String)>, data: Vec<u8>, index: Vec<u8>) -> Result<Self, Error> {
        let mut params = Params::new(params);
        let reader = R::open(&mut params, data, index)?;
        params.finish()?;
        Ok(ReaderInstance { reader })
    }

    /// The next records in written order, up to `max_bytes`.
    pub fn next(&mut self, max_bytes: u32, out: &mut Packed) -> Result<(), Error> {
        self.reader.next(max_bytes as usize, out)
    }

    /// One record per key: the flush record, or empty for a miss.
    pub fn get(&self, keys: &Packed, out: &mut Packed) -> Result<(), Error> {
        for key in keys.iter() {
            self.reader.get(key, out)?;
        }
        Ok(())
    }
}

/// A commit-log format and what it applied.
pub struct LogInstance<L: CommitLog> {
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

impl<L: CommitLog> LogInstance<L> {
    /// `create` with its parameters.
    pub fn create(params: Vec<(String, String)>) -> Result<Self, Error> {
        let (log, description) = construct(L::NAME, L::VERSION, params, L::create)?;
        Ok(LogInstance { log, description })
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
