//! What each thread of a bench is calling across the seam, for that
//! bench's watchdog: a plugin call that never returns (with no deadline,
//! wasm cannot be interrupted) is seen as a slot whose call stays the
//! same while its count does not move. Two relaxed stores a call, on the
//! thread's own slot; the epoch deadline that could interrupt the call
//! instead costs 5-11% of the row rate (`epoch-deadline-cost` run).
//!
//! Each bench has a `Board` of its own and its threads `enter` it, so two
//! benches in one process (a test binary) never see each other's calls;
//! a thread that entered no board is not watched.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU8, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::Op;

#[derive(Debug, Default)]
struct Slot {
    call: AtomicU8,
    shard: AtomicU32,
    done: AtomicU64,
}

/// One bench's threads and what each is calling.
#[derive(Debug, Default)]
pub struct Board {
    slots: Mutex<Vec<Arc<Slot>>>,
}

thread_local! {
    /// The slot of the board this thread entered, if any.
    static MINE: RefCell<Option<Arc<Slot>>> = const { RefCell::new(None) };
}

/// While it lives, this thread's calls are on its board.
#[derive(Debug)]
pub struct Entered {
    previous: Option<Arc<Slot>>,
}

impl Drop for Entered {
    fn drop(&mut self) {
        let previous = self.previous.take();
        MINE.with(|m| *m.borrow_mut() = previous);
    }
}

impl Board {
    /// A board with no threads on it.
    pub fn new() -> Arc<Board> {
        Arc::default()
    }

    /// Puts this thread's calls on the board until the guard drops (a
    /// board entered before is restored then).
    pub fn enter(&self) -> Entered {
        let slot = Arc::new(Slot::default());
        self.slots.lock().unwrap_or_else(|p| p.into_inner()).push(Arc::clone(&slot));
        let previous = MINE.with(|m| m.borrow_mut().replace(slot));
        Entered { previous }
    }

    /// A watchdog's view of this board.
    pub fn watch(self: &Arc<Self>) -> Watch {
        Watch { board: Arc::clone(self), seen: Vec::new() }
    }
}

/// Every operation's code fits a slot's byte, 0 meaning idle.
const _: () = assert!(Op::ALL.len() < u8::MAX as usize);

/// Runs `f` as `call` on `shard`, visible to the thread's board meanwhile.
/// Both runtimes' call funnels (`plugin::wasm::Caller::call`, the native
/// table's calls) run every plugin call through here, so none is
/// unwatched; a call the seam already marked, with its shard, keeps
/// that mark.
pub(crate) fn during<R>(call: Op, shard: usize, f: impl FnOnce() -> R) -> R {
    // Borrowed for the call, never cloned: no atomic counter moves on
    // the hot path. A nested call only borrows again.
    MINE.with(|mine| match mine.borrow().as_ref() {
        None => f(),
        Some(slot) if slot.call.load(Ordering::Relaxed) != 0 => f(),
        Some(slot) => {
            slot.shard.store(shard as u32, Ordering::Relaxed);
            slot.call.store(call.code() as u8, Ordering::Relaxed);
            let result = f();
            slot.call.store(0, Ordering::Relaxed);
            slot.done.store(slot.done.load(Ordering::Relaxed).wrapping_add(1), Ordering::Relaxed);
            result
        }
    })
}

/// A call in flight, unchanged for a while.
#[derive(Debug, Clone, Copy)]
pub struct Stall {
    /// The call.
    pub call: Op,
    /// Its shard (or flush part).
    pub shard: usize,
    /// How long it has made no progress.
    pub for_: Duration,
}

/// The watchdog's memory of what it saw in each slot of its board.
#[derive(Debug)]
pub struct Watch {
    board: Arc<Board>,
    seen: Vec<Option<(u8, u64, Instant)>>,
}

impl Watch {
    /// The first call that has stayed in flight, with no call finishing on
    /// its thread, for longer than `limit`.
    pub fn stalled(&mut self, limit: Duration) -> Option<Stall> {
        let now = Instant::now();
        let slots = self.board.slots.lock().unwrap_or_else(|p| p.into_inner()).clone();
        self.seen.resize(slots.len(), None);
        let mut found = None;
        for (i, slot) in slots.iter().enumerate() {
            let (call, done) = (slot.call.load(Ordering::Relaxed), slot.done.load(Ordering::Relaxed));
            if call == 0 {
                self.seen[i] = None;
                continue;
            }
            match self.seen[i] {
                Some((c, d, since)) if c == call && d == done => {
                    if now - since > limit && found.is_none() {
                        let call = Op::from_code(u32::from(call))?;
                        found = Some(Stall { call, shard: slot.shard.load(Ordering::Relaxed) as usize, for_: now - since });
                    }
                }
                _ => self.seen[i] = Some((call, done, now)),
            }
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::{Board, during};
    use crate::seam::Op;
    use std::time::Duration;

    #[test]
    fn a_stalled_call_shows_on_its_own_board_only() {
        let (mine, other) = (Board::new(), Board::new());
        let (mut watched, mut elsewhere) = (mine.watch(), other.watch());
        let _entered = mine.enter();
        during(Op::MemtableGet, 3, || {
            assert!(watched.stalled(Duration::ZERO).is_none(), "first seen");
            std::thread::sleep(Duration::from_millis(5));
            let stall = watched.stalled(Duration::from_millis(1)).expect("stalled");
            assert_eq!((stall.call, stall.shard), (Op::MemtableGet, 3));
            assert!(elsewhere.stalled(Duration::ZERO).is_none() && elsewhere.stalled(Duration::ZERO).is_none(), "another bench's board");
        });
        assert!(watched.stalled(Duration::ZERO).is_none(), "the call ended");
    }
}
