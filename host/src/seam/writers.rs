//! Who keeps a shard's books while it takes writes. A shard whose runtime
//! takes one caller at a time keeps one set, in the calls' one order: its
//! ledger keeps scans where they fell, and its tape records. A shard whose
//! writers call at once gives each writer its own set, on a cache line of
//! its own, so that a batch writes no line another writer writes; the
//! sets are gathered when no writer is in (the flush's).

use std::cell::RefCell;
use std::sync::{Mutex, MutexGuard, PoisonError};

use crossbeam::utils::CachePadded;
use thread_local::ThreadLocal;

use super::books::Books;
use super::tape::Tape;

/// Inserts a writer keeps the times of, a generation: enough for any
/// generation of a bench, and a bound on what the books hold.
const MAX_TIMED_INSERTS: usize = 1 << 20;

#[cfg(test)]
thread_local! {
    /// Host locks this thread took through `locked`: the tests hold a
    /// concurrent writer's batches to none.
    pub(super) static HOST_LOCKS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Every host lock the checked shard takes.
pub(super) fn locked<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    #[cfg(test)]
    HOST_LOCKS.with(|c| c.set(c.get() + 1));
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One keeper's books.
#[derive(Debug, Default)]
pub(super) struct Writer {
    pub(super) books: Books,
    /// When each of its inserts began and ended, in ns from the shard's
    /// start (concurrent writers only): how many were inside at once.
    pub(super) inserts: Vec<(u64, u64)>,
    /// The tape of its stores and inserts, while it has room (one caller
    /// only: a tape replays one order).
    pub(super) tape: Option<Tape>,
}

impl Writer {
    pub(super) fn timed(&mut self, began: u64, ended: u64) {
        if self.inserts.len() < MAX_TIMED_INSERTS {
            self.inserts.push((began, ended));
        }
    }
}

/// The books of a shard's writers.
pub(super) enum Writers {
    /// One caller at a time.
    One(Mutex<Writer>),
    /// Writers at once, each with its own books.
    Each(Box<ThreadLocal<CachePadded<RefCell<Writer>>>>),
}

impl Writers {
    /// Whether the calls have one order (one caller at a time).
    pub(super) fn ordered(&self) -> bool {
        matches!(self, Writers::One(_))
    }

    /// Runs `f` on the calling writer's books; a writer new to the shard
    /// starts with books `like` the shard's (a ledger where it keeps one).
    pub(super) fn mine<R>(&self, like: &Books, f: impl FnOnce(&mut Writer) -> R) -> R {
        match self {
            Writers::One(one) => f(&mut locked(one)),
            Writers::Each(each) => {
                let fresh = || CachePadded::new(RefCell::new(Writer { books: Books::like(like), ..Writer::default() }));
                f(&mut each.get_or(fresh).borrow_mut())
            }
        }
    }

    /// Every writer's books so far into `books`, their inserts' times
    /// into `inserts`; the writers go on from empty books.
    pub(super) fn gather(&mut self, books: &mut Books, inserts: &mut Vec<(u64, u64)>) {
        let mut take = |writer: &mut Writer| {
            books.absorb(std::mem::replace(&mut writer.books, Books::like(books)));
            inserts.append(&mut writer.inserts);
        };
        match self {
            Writers::One(one) => take(one.get_mut().unwrap_or_else(PoisonError::into_inner)),
            Writers::Each(each) => each.iter_mut().for_each(|w| take(w.get_mut())),
        }
    }

    /// Stops taping (the runtime changed under the tape).
    pub(super) fn untape(&mut self) {
        if let Writers::One(one) = self {
            one.get_mut().unwrap_or_else(PoisonError::into_inner).tape = None;
        }
    }
}

/// The most intervals that overlap at one instant: writers inside the
/// memtable's `insert` at once.
pub(super) fn most_at_once(inserts: &[(u64, u64)]) -> u64 {
    // Ends sort before starts at one instant: touching is not overlapping.
    let mut edges: Vec<(u64, bool)> = inserts.iter().flat_map(|&(began, ended)| [(began, true), (ended, false)]).collect();
    edges.sort_unstable();
    let (mut inside, mut most) = (0u64, 0u64);
    for (_, starts) in edges {
        if starts {
            inside += 1;
            most = most.max(inside);
        } else {
            inside = inside.saturating_sub(1);
        }
    }
    most
}
