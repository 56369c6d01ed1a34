//! A wasm plugin's own heap allocations, counted by the SDK: the host
//! cannot see inside a guest's linear memory, so a serializer's
//! allocation per flush (CASSANDRA-21083's figure) is the SDK's count,
//! reported as `heap-allocated-bytes` and labeled as the plugin's word.
//! Natively the host's heap is counted by the host itself.

/// The counter a writer reports.
pub(crate) const STAT: &str = "heap-allocated-bytes";

/// Bytes allocated so far in this instance (wasm only).
pub(crate) fn allocated() -> Option<u64> {
    #[cfg(target_arch = "wasm32")]
    {
        Some(counting::ALLOCATED.load(core::sync::atomic::Ordering::Relaxed))
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        None
    }
}

#[cfg(target_arch = "wasm32")]
mod counting {
    use std::alloc::{GlobalAlloc, Layout, System};
    use std::sync::atomic::{AtomicU64, Ordering};

    /// A guest is one thread: the atomic is only for `static`'s sake.
    pub(super) static ALLOCATED: AtomicU64 = AtomicU64::new(0);

    struct Counting;

    #[global_allocator]
    static HEAP: Counting = Counting;

    #[expect(unsafe_code, reason = "a global allocator is an unsafe trait; every call forwards to System unchanged")]
    // SAFETY: each method forwards its arguments to `System` untouched,
    // so `System`'s guarantees hold; the count has no effect on memory.
    unsafe impl GlobalAlloc for Counting {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            ALLOCATED.fetch_add(layout.size() as u64, Ordering::Relaxed);
            // SAFETY: the caller's contract for `alloc`, passed on.
            unsafe { System.alloc(layout) }
        }

        unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
            ALLOCATED.fetch_add(layout.size() as u64, Ordering::Relaxed);
            // SAFETY: as `alloc`.
            unsafe { System.alloc_zeroed(layout) }
        }

        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            // SAFETY: `ptr` came from `System` with this layout.
            unsafe { System.dealloc(ptr, layout) }
        }

        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            if new_size > layout.size() {
                // A growing realloc counts its new size, as a copy would.
                ALLOCATED.fetch_add(new_size as u64, Ordering::Relaxed);
            }
            // SAFETY: the caller's contract for `realloc`, passed on.
            unsafe { System.realloc(ptr, layout, new_size) }
        }
    }
}
