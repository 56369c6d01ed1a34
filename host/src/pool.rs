//! The global memtable memory pool (`memtable_space`), shared by every
//! shard's allocator. How it counts is the subject of CASSANDRA-20226, so
//! the counting is a config choice (`pool` in a variant).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use crossbeam::utils::CachePadded;

/// How the pool counts what it owns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PoolMode {
    /// Read, check the limit, compare-and-swap; retry on conflict.
    CasLoop,
    /// One `fetch_add` on one shared counter, undone when it overshoots.
    #[default]
    FetchAdd,
    /// LongAdder-like: each thread adds to its own cache-line-padded cell;
    /// the limit is checked against the sum once a cell has grown by
    /// `STRIPE_CHECK` bytes since its last check.
    Striped,
    /// `striped` without the padding: the cells sit side by side, four to
    /// a cache line, so threads on neighbouring cells share a line (false
    /// sharing). CASSANDRA-20226's padding step is `striped-packed` →
    /// `striped`.
    StripedPacked,
}

impl PoolMode {
    /// Every mode.
    pub const ALL: [PoolMode; 4] = [PoolMode::CasLoop, PoolMode::FetchAdd, PoolMode::Striped, PoolMode::StripedPacked];
}

impl std::fmt::Display for PoolMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            PoolMode::CasLoop => "cas-loop",
            PoolMode::FetchAdd => "fetch-add",
            PoolMode::Striped => "striped",
            PoolMode::StripedPacked => "striped-packed",
        })
    }
}

/// The reservation would pass the pool's hard limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("memory pool hard limit reached")]
pub struct PoolFull;

/// Bytes a striped cell may grow between checks of the sum.
const STRIPE_CHECK: u64 = 64 << 10;

/// The global memtable memory budget.
#[derive(Debug)]
pub struct MemoryPool {
    budget: u64,
    hard_limit: u64,
    mode: PoolMode,
    /// The counter of `cas-loop` and `fetch-add`; `striped` adds its cells.
    owns: AtomicU64,
    /// Per-thread counters (wrapping: a cell released by another thread
    /// than the one that reserved may go "negative"), a cache line each.
    cells: Box<[CachePadded<Cell>]>,
    /// The same, side by side (`striped-packed`).
    packed: Box<[Cell]>,
    reclaiming: AtomicU64,
    cas_retries: AtomicU64,
    /// Reservations refused, counted here whatever the plugin reports.
    refusals: AtomicU64,
    /// Bytes the host charged for memory an allocator held unreserved.
    charged: AtomicU64,
    /// Of those, the ones not given back yet: they count toward the
    /// budget, not against the hard limit a plugin's reservation meets.
    charged_now: AtomicU64,
    sum_checks: AtomicU64,
    room: Mutex<()>,
    room_freed: Condvar,
}

#[derive(Debug, Default)]
struct Cell {
    bytes: AtomicU64,
    since_check: AtomicU64,
}

impl MemoryPool {
    /// A pool of `budget` bytes. Writers block at the budget; a single
    /// reservation fails only past twice the budget.
    pub fn new(budget: u64, mode: PoolMode) -> Self {
        let stripes = crate::util::stripe::stripes_for_this_machine();
        let (padded, packed) = match mode {
            PoolMode::Striped => (stripes, 0),
            PoolMode::StripedPacked => (0, stripes),
            _ => (0, 0),
        };
        MemoryPool {
            budget,
            // Capped at 2^62 so that no mode's sum (striped cells may run
            // a check behind) comes near wrapping.
            hard_limit: budget.saturating_mul(2).min(1 << 62),
            mode,
            owns: AtomicU64::new(0),
            cells: (0..padded).map(|_| CachePadded::new(Cell::default())).collect(),
            packed: (0..packed).map(|_| Cell::default()).collect(),
            reclaiming: AtomicU64::new(0),
            cas_retries: AtomicU64::new(0),
            refusals: AtomicU64::new(0),
            charged: AtomicU64::new(0),
            charged_now: AtomicU64::new(0),
            sum_checks: AtomicU64::new(0),
            room: Mutex::new(()),
            room_freed: Condvar::new(),
        }
    }

    /// Accounts `bytes` against the budget. A reservation larger than
    /// the hard limit is refused before any counter moves, so no sum can
    /// wrap (a plugin may ask for `u64::MAX`).
    pub fn reserve(&self, bytes: u64) -> Result<(), PoolFull> {
        // A refusal a plugin swallows is still the host's to see.
        self.reserve_counted(bytes).inspect_err(|_| {
            self.refusals.fetch_add(1, Ordering::Relaxed);
        })
    }

    fn reserve_counted(&self, bytes: u64) -> Result<(), PoolFull> {
        if bytes > self.hard_limit {
            return Err(PoolFull);
        }
        match self.mode {
            PoolMode::FetchAdd => {
                let before = self.owns.fetch_add(bytes, Ordering::Relaxed);
                if before.checked_add(bytes).is_none_or(|after| after > self.limit()) {
                    self.owns.fetch_sub(bytes, Ordering::Relaxed);
                    return Err(PoolFull);
                }
                Ok(())
            }
            PoolMode::CasLoop => {
                let mut current = self.owns.load(Ordering::Relaxed);
                loop {
                    let Some(next) = current.checked_add(bytes).filter(|&n| n <= self.limit()) else {
                        return Err(PoolFull);
                    };
                    match self.owns.compare_exchange_weak(current, next, Ordering::Relaxed, Ordering::Relaxed) {
                        Ok(_) => return Ok(()),
                        Err(seen) => {
                            current = seen;
                            self.cas_retries.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                }
            }
            PoolMode::Striped | PoolMode::StripedPacked => {
                let cell = self.my_cell();
                cell.bytes.fetch_add(bytes, Ordering::Relaxed);
                let grown = cell.since_check.fetch_add(bytes, Ordering::Relaxed) + bytes;
                if grown >= STRIPE_CHECK {
                    self.sum_checks.fetch_add(1, Ordering::Relaxed);
                    if self.owns() > self.limit() {
                        // Still due a check: the next reservation sums again.
                        cell.bytes.fetch_sub(bytes, Ordering::Relaxed);
                        cell.since_check.fetch_sub(bytes, Ordering::Relaxed);
                        return Err(PoolFull);
                    }
                    cell.since_check.store(0, Ordering::Relaxed);
                }
                Ok(())
            }
        }
    }

    /// Accounts each of `sizes` as its own reservation, in order, and
    /// returns their sum; on refusal gives back what this call reserved.
    pub fn reserve_each(&self, sizes: &[u64]) -> Result<u64, PoolFull> {
        let mut granted = 0u64;
        for &bytes in sizes {
            if let Err(full) = self.reserve(bytes) {
                if granted > 0 {
                    self.release(granted);
                }
                return Err(full);
            }
            // Each is at most the hard limit, and together they fit in it.
            granted = granted.saturating_add(bytes);
        }
        Ok(granted)
    }

    /// Accounts `bytes` the host found an allocator holding beyond its
    /// reservations: never refused (the memory is already taken), given
    /// back with `release` like a reservation.
    pub fn charge(&self, bytes: u64) {
        self.charged.fetch_add(bytes, Ordering::Relaxed);
        self.charged_now.fetch_add(bytes, Ordering::Relaxed);
        match self.mode {
            PoolMode::Striped | PoolMode::StripedPacked => self.my_cell().bytes.fetch_add(bytes, Ordering::Relaxed),
            _ => self.owns.fetch_add(bytes, Ordering::Relaxed),
        };
    }

    /// Gives back `bytes` that `charge` took.
    pub fn discharge(&self, bytes: u64) {
        let _ = self.charged_now.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |c| Some(c.saturating_sub(bytes)));
        self.release(bytes);
    }

    /// What the counters may reach: the hard limit, past what the host
    /// charged (a plugin's reservation is not refused for it).
    fn limit(&self) -> u64 {
        self.hard_limit.saturating_add(self.charged_now.load(Ordering::Relaxed))
    }

    /// Gives bytes back from a live generation.
    pub fn release(&self, bytes: u64) {
        match self.mode {
            PoolMode::Striped | PoolMode::StripedPacked => self.my_cell().bytes.fetch_sub(bytes, Ordering::Relaxed),
            _ => self.owns.fetch_sub(bytes, Ordering::Relaxed),
        };
        self.room_freed.notify_all();
    }

    /// Marks a frozen generation's bytes as on their way out.
    pub fn freeze(&self, bytes: u64) {
        self.reclaiming.fetch_add(bytes, Ordering::Relaxed);
    }

    /// A flushed generation is no longer on its way out: its `freeze`d
    /// bytes leave the reclaiming count. (Its shards gave back what they
    /// held themselves, as they went: `flush::Held`.)
    pub fn unfreeze(&self, bytes: u64) {
        let _ = self.reclaiming.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |r| Some(r.saturating_sub(bytes)));
        self.room_freed.notify_all();
    }

    /// Bytes reserved, all generations. For `striped`, the sum of the
    /// cells: exact once writers are quiet, a moment old while they run.
    pub fn owns(&self) -> u64 {
        let counter = self.owns.load(Ordering::Relaxed);
        let cells = self.cells.iter().map(|c| &**c).chain(self.packed.iter());
        cells.fold(counter, |sum, cell| sum.wrapping_add(cell.bytes.load(Ordering::Relaxed)))
    }

    /// Bytes reserved by the live generation.
    pub fn live(&self) -> u64 {
        self.owns().saturating_sub(self.reclaiming.load(Ordering::Relaxed))
    }

    /// The configured budget.
    pub fn budget(&self) -> u64 {
        self.budget
    }

    /// Reservations refused so far.
    pub fn refusals(&self) -> u64 {
        self.refusals.load(Ordering::Relaxed)
    }

    /// Bytes charged so far (`charge`).
    pub fn charged(&self) -> u64 {
        self.charged.load(Ordering::Relaxed)
    }

    /// Compare-and-swap conflicts so far (`cas-loop` only).
    pub fn cas_retries(&self) -> u64 {
        self.cas_retries.load(Ordering::Relaxed)
    }

    /// Times a striped cell summed all cells to check the limit.
    pub fn sum_checks(&self) -> u64 {
        self.sum_checks.load(Ordering::Relaxed)
    }

    /// Blocks while the pool is at its budget.
    pub(crate) fn wait_for_room(&self, timeout: Duration) {
        let guard = self.room.lock().unwrap_or_else(|p| p.into_inner());
        if self.owns() >= self.budget {
            let _ = self.room_freed.wait_timeout(guard, timeout);
        }
    }

    fn my_cell(&self) -> &Cell {
        let stripe = crate::util::stripe::thread_stripe();
        match self.cells.len() {
            0 => &self.packed[stripe & (self.packed.len() - 1)],
            n => &self.cells[stripe & (n - 1)],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_impossible_reservation_is_refused_not_wrapped() {
        for mode in PoolMode::ALL {
            let pool = MemoryPool::new(64 << 20, mode);
            pool.reserve(1 << 20).expect("room");
            assert_eq!(pool.reserve(u64::MAX), Err(PoolFull), "{mode:?}");
            assert_eq!(pool.reserve(u64::MAX - (1 << 20) + 1), Err(PoolFull), "{mode:?}");
            assert_eq!(pool.reserve_each(&[u64::MAX, u64::MAX]), Err(PoolFull), "{mode:?}");
            assert_eq!(pool.reserve_each(&[1 << 20, u64::MAX]), Err(PoolFull), "{mode:?}");
            assert_eq!(pool.owns(), 1 << 20, "{mode:?}: a refusal leaves the pool as it was");
            // A budget near the top of u64: the hard limit is capped at
            // 2^62, and no sum wraps past it.
            let huge = MemoryPool::new(u64::MAX / 2 + 1, mode);
            huge.reserve(1 << 62).expect("at the cap");
            assert_eq!(huge.reserve(1 << 62), Err(PoolFull), "{mode:?}");
            assert_eq!(huge.reserve(u64::MAX - 10), Err(PoolFull), "{mode:?}");
            assert_eq!(huge.owns(), 1 << 62, "{mode:?}");
        }
    }

    #[test]
    fn every_mode_counts_reservations_from_many_threads_exactly() {
        for mode in PoolMode::ALL {
            let pool = MemoryPool::new(1 << 30, mode);
            std::thread::scope(|s| {
                for t in 0..4u64 {
                    let pool = &pool;
                    s.spawn(move || {
                        for i in 0..10_000u64 {
                            pool.reserve(1 + (i + t) % 100).expect("room");
                            if i % 3 == 0 {
                                pool.release(1);
                            }
                        }
                    });
                }
            });
            let want: u64 = (0..4u64).map(|t| (0..10_000u64).map(|i| 1 + (i + t) % 100).sum::<u64>() - 3334).sum();
            assert_eq!(pool.owns(), want, "{mode:?}");
            // Released by a thread that reserved nothing.
            std::thread::spawn(move || {
                pool.release(want);
                assert_eq!(pool.owns(), 0, "{mode:?}");
            })
            .join()
            .expect("releasing thread");
        }
    }

    #[test]
    fn striped_cells_have_a_line_each_and_packed_cells_share_one() {
        let address = |c: &Cell| std::ptr::from_ref(c) as usize;
        let padded = MemoryPool::new(1 << 20, PoolMode::Striped);
        let (a, b) = (address(&padded.cells[0]), address(&padded.cells[1]));
        assert!(b - a >= 64 && padded.packed.is_empty(), "a cache line (or more) per cell");
        let packed = MemoryPool::new(1 << 20, PoolMode::StripedPacked);
        let (a, b) = (address(&packed.packed[0]), address(&packed.packed[1]));
        assert!(b - a == size_of::<Cell>() && b - a < 64 && packed.cells.is_empty(), "side by side: neighbours share a line");
    }

    #[test]
    fn every_mode_refuses_past_the_hard_limit() {
        for mode in PoolMode::ALL {
            let pool = MemoryPool::new(1 << 20, mode);
            let refused = (0..10_000).map(|_| pool.reserve(4096)).position(|r| r.is_err()).expect("a refusal");
            // Striped checks the sum every 64 KiB per cell: it may pass the
            // limit by that much before refusing.
            let limit = 2 << 20;
            let slack = if matches!(mode, PoolMode::Striped | PoolMode::StripedPacked) { STRIPE_CHECK } else { 0 };
            let owned = pool.owns();
            assert!(owned <= limit + slack && owned + 4096 > limit, "{mode:?}: {owned} after {refused}");
            // The host counts the refusal itself, whatever a plugin reports.
            assert_eq!(pool.refusals(), 1, "{mode:?}");
            assert!(pool.reserve(u64::MAX).is_err() && pool.reserve_each(&[4096; 4]).is_err());
            assert_eq!(pool.refusals(), 3, "{mode:?}: one a refused call");
        }
    }

    #[test]
    fn reserve_each_is_all_or_nothing() {
        for mode in PoolMode::ALL {
            let pool = MemoryPool::new(1 << 20, mode);
            assert_eq!(pool.reserve_each(&[100, 200, 300]), Ok(600), "{mode:?}");
            assert_eq!(pool.owns(), 600, "{mode:?}");
            // Far past the hard limit (twice the budget): refused, and the
            // sizes granted before the refusal are given back.
            let sizes = vec![64 << 10; 64];
            assert!(pool.reserve_each(&sizes).is_err(), "{mode:?}");
            assert_eq!(pool.owns(), 600, "{mode:?}");
        }
    }
}
