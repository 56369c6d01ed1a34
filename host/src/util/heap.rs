//! The host heap, counted per thread: what a flush allocated, as
//! Cassandra's flush log reports a flush's heap allocation
//! (CASSANDRA-21083: 953.6 → 204.2 MiB). Native twins allocate on this
//! heap, so their flushes are measured here; a wasm plugin allocates in
//! its own linear memory, which the SDK counts and reports.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// The system allocator, with a running per-thread count of the bytes
/// asked for. A growing `realloc` counts its new size, as a copy would
/// allocate; frees are not subtracted (a volume, not a peak).
pub struct Counting;

thread_local! {
    // Const-initialized and without a destructor: touching it never
    // allocates, so the allocator may use it.
    static ALLOCATED: Cell<u64> = const { Cell::new(0) };
}

fn note(bytes: usize) {
    // `try_with`: a thread being torn down still allocates.
    let _ = ALLOCATED.try_with(|n| n.set(n.get().wrapping_add(bytes as u64)));
}

/// Bytes this thread has allocated so far; differences measure a span.
pub fn allocated() -> u64 {
    ALLOCATED.try_with(Cell::get).unwrap_or(0)
}

/// Bytes allocated inside some calls on this thread, summed.
#[derive(Debug, Default)]
pub struct Span {
    /// The sum so far.
    pub bytes: u64,
}

impl Span {
    /// Runs `f`, adding what it allocated on this thread.
    pub fn count<T>(&mut self, f: impl FnOnce() -> T) -> T {
        let before = allocated();
        let out = f();
        self.bytes = self.bytes.wrapping_add(allocated().wrapping_sub(before));
        out
    }
}

#[expect(unsafe_code, reason = "a global allocator is an unsafe trait; every call forwards to System unchanged")]
// SAFETY: each method forwards its arguments to `System` untouched, so
// `System`'s guarantees hold; the count has no effect on the memory.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        // SAFETY: the caller's contract for `alloc`, passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        // SAFETY: as `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > layout.size() {
            note(new_size);
        }
        // SAFETY: the caller's contract for `realloc`, passed on.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_threads_allocations_are_its_own() {
        let before = super::allocated();
        let v: Vec<u8> = Vec::with_capacity(1 << 20);
        std::hint::black_box(&v);
        assert!(super::allocated() - before >= 1 << 20);
        let here = super::allocated();
        std::thread::spawn(|| std::hint::black_box(vec![0u8; 4 << 20])).join().expect("joins");
        assert!(super::allocated() - here < 1 << 20, "another thread's allocation is not counted here");
    }
}
