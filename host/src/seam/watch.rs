//! What each thread is calling across the seam, for the watchdog: a
//! plugin call that never returns (with no deadline, wasm cannot be
//! interrupted) is seen as a slot whose call stays the same while its
//! count does not move. Two relaxed stores a call, on the thread's own
//! cache line; the epoch deadline that could interrupt the call instead
//! costs 5-11% of the row rate (`epoch-deadline-cost` run).

use std::sync::Mutex;
use std::sync::atomic::{AtomicU8, AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::Op;

struct Slot {
    call: AtomicU8,
    shard: AtomicU32,
    done: AtomicU64,
}

const SLOTS: usize = 512;

#[expect(clippy::declare_interior_mutable_const, reason = "the initializer of a static array of atomics")]
const IDLE: Slot = Slot { call: AtomicU8::new(0), shard: AtomicU32::new(0), done: AtomicU64::new(0) };
static TABLE: [Slot; SLOTS] = [IDLE; SLOTS];
static FREE: Mutex<Vec<usize>> = Mutex::new(Vec::new());
static NEXT: AtomicU32 = AtomicU32::new(0);

/// A thread's slot, handed back when the thread ends.
struct Owned(usize);

impl Drop for Owned {
    fn drop(&mut self) {
        TABLE[self.0].call.store(0, Ordering::Relaxed);
        FREE.lock().unwrap_or_else(|p| p.into_inner()).push(self.0);
    }
}

thread_local! {
    static MINE: Owned = Owned(FREE.lock().unwrap_or_else(|p| p.into_inner()).pop().unwrap_or_else(|| NEXT.fetch_add(1, Ordering::Relaxed) as usize % SLOTS));
}

fn my_slot() -> &'static Slot {
    &TABLE[MINE.with(|m| m.0)]
}

/// Runs `f` as `call` on `shard`, visible to the watchdog meanwhile.
pub(crate) fn during<R>(call: Op, shard: usize, f: impl FnOnce() -> R) -> R {
    let slot = my_slot();
    slot.shard.store(shard as u32, Ordering::Relaxed);
    slot.call.store(call.code(), Ordering::Relaxed);
    let result = f();
    slot.call.store(0, Ordering::Relaxed);
    slot.done.store(slot.done.load(Ordering::Relaxed).wrapping_add(1), Ordering::Relaxed);
    result
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

/// The watchdog's memory of what it saw in each slot.
#[derive(Debug)]
pub struct Watch {
    seen: Vec<Option<(u8, u64, Instant)>>,
}

impl Default for Watch {
    fn default() -> Self {
        Watch { seen: vec![None; SLOTS] }
    }
}

impl Watch {
    /// The first call that has stayed in flight, with no call finishing on
    /// its thread, for longer than `limit`.
    pub fn stalled(&mut self, limit: Duration) -> Option<Stall> {
        let now = Instant::now();
        let mut found = None;
        for (i, slot) in TABLE.iter().enumerate() {
            let (call, done) = (slot.call.load(Ordering::Relaxed), slot.done.load(Ordering::Relaxed));
            if call == 0 {
                self.seen[i] = None;
                continue;
            }
            match self.seen[i] {
                Some((c, d, since)) if c == call && d == done => {
                    if now - since > limit && found.is_none() {
                        let call = Op::from_code(call)?;
                        found = Some(Stall { call, shard: slot.shard.load(Ordering::Relaxed) as usize, for_: now - since });
                    }
                }
                _ => self.seen[i] = Some((call, done, now)),
            }
        }
        found
    }
}
