//! The native runtime behind the seam. Every native strategy runs through
//! the SDK's C-ABI table: a bundled plugin's linked into the host (its
//! `MEMLAB_NATIVE`, listed by host/build.rs with the registry of
//! components), an outside crate's loaded from the library memlab built
//! for this machine (`--build --native`). One path, so the sandbox's
//! price shows on one stream in one run, and `seam` checks and meters
//! both as it does the components.

mod instance;
#[expect(unsafe_code, reason = "a native table is raw pointers and extern \"C\" functions; a built library is loaded with dlopen")]
mod library;
mod shard;
mod strategy;

pub use library::Library;
pub use strategy::{built, bundled, linked};

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::pool::MemoryPool;
    use crate::seam::Kind;
    use memlab_sdk::{Entry, Packed};

    #[test]
    fn entries_survive_a_native_round_trip() {
        let pool = Arc::new(MemoryPool::new(1 << 20, Default::default()));
        let allocator = bundled("per-row", Kind::Allocator).expect("a twin");
        let mut shard = bundled("btree", Kind::Memtable).and_then(|m| m.shard(&[], &allocator, &[], pool, 0)).expect("twins exist");
        let mut entries = Packed::new();
        entries.push_with(|b| Entry { key: b"k", timestamp: 1, reference: 9 }.encode(b));
        shard.insert(&mut entries).expect("insert");
        shard.open_cursor().expect("cursor");
        let out = shard.next_entries(1024).expect("next");
        assert_eq!(out.len(), 1);
        assert_eq!(Entry::decode(out.get(0).expect("one")).expect("entry").reference, 9);
    }
}
