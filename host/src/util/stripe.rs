//! Per-thread stripes of what many threads move at once (Java's
//! `LongAdder` cells): each thread takes its own stripe, on a cache line
//! of its own, so writers rarely contend; a reader merges them all.

use std::sync::atomic::{AtomicUsize, Ordering};

use crossbeam::utils::CachePadded;

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

/// One `T` a stripe, each on its own cache line.
#[derive(Debug)]
pub struct Striped<T> {
    stripes: Box<[CachePadded<T>]>,
}

impl<T> Striped<T> {
    /// `stripes_for_this_machine()` stripes, each made by `make`.
    pub fn new(mut make: impl FnMut() -> T) -> Self {
        Striped { stripes: (0..stripes_for_this_machine()).map(|_| CachePadded::new(make())).collect() }
    }

    /// The calling thread's stripe.
    pub fn mine(&self) -> &T {
        &self.stripes[thread_stripe() & (self.stripes.len() - 1)]
    }

    /// Every stripe.
    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.stripes.iter().map(|s| &**s)
    }
}

#[cfg(test)]
mod tests {
    use super::Striped;

    #[test]
    fn threads_take_stripes_and_a_merge_sees_them_all() {
        let striped = Striped::new(|| std::sync::atomic::AtomicU64::new(0));
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| (0..1000).for_each(|_| _ = striped.mine().fetch_add(1, std::sync::atomic::Ordering::Relaxed)));
            }
        });
        assert_eq!(striped.iter().map(|c| c.load(std::sync::atomic::Ordering::Relaxed)).sum::<u64>(), 8000);
    }
}
