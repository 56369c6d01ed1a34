//! Per-thread stripes of what many threads move at once (Java's
//! `LongAdder` cells): each thread takes its own stripe, on a cache line
//! of its own, so writers rarely contend; a reader merges them all.

use std::sync::atomic::{AtomicUsize, Ordering};

/// This thread's stripe: numbered as threads first ask, so the first
/// threads of a run each have their own (LongAdder's probe, made once).
pub fn thread_stripe() -> usize {
    thread_local! {
        static STRIPE: usize = NEXT_STRIPE.fetch_add(1, Ordering::Relaxed);
    }
    static NEXT_STRIPE: AtomicUsize = AtomicUsize::new(0);
    STRIPE.with(|s| *s)
}

/// Stripes enough that the machine's threads seldom share one: four a
/// core, a power of two.
pub fn stripes_for_this_machine() -> usize {
    std::thread::available_parallelism().map_or(4, |n| n.get() * 4).next_power_of_two()
}
