//! The memtable's instance, as the export glue and the host's native
//! twins drive it (the contract's state rules, the batch loops).

use crate::params::construct;
use crate::{Description, Error, Memtable, Packed, Stats};

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

    /// The memtable itself (a concurrent one's inserts and cursor take
    /// `&self`).
    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) fn table(&self) -> &T {
        &self.table
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
