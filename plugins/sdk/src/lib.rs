//! Write memlab strategies in plain Rust.
//!
//! A plugin implements one trait — [`Memtable`], [`Allocator`],
//! [`Serializer`] or [`CommitLog`] — and names it with [`export!`]. The same type links
//! natively into the memlab host as the plugin's "native twin", so the
//! sandbox's cost is measured on the same code.
//!
//! ```
//! use std::collections::BTreeMap;
//!
//! use memlab_sdk::{Entry, Error, Memtable, Packed, Params, Stat, Stats};
//!
//! /// A memtable over a `BTreeMap`: key -> (timestamp, ref).
//! pub struct MyTable {
//!     map: BTreeMap<Vec<u8>, (u64, u64)>,
//! }
//!
//! impl Memtable for MyTable {
//!     const NAME: &'static str = "my-table";
//!     const VERSION: &'static str = "0.1.0";
//!     type Position = usize;
//!
//!     fn create(params: &mut Params) -> Result<Self, Error> {
//!         let _fanout: usize = params.get("fanout", 16)?; // unknown params are refused for you
//!         Ok(MyTable { map: BTreeMap::new() })
//!     }
//!
//!     fn insert(&mut self, entry: Entry<'_>) -> Result<(), Error> {
//!         let slot = self.map.entry(entry.key.to_vec()).or_insert((entry.timestamp, entry.reference));
//!         if entry.timestamp >= slot.0 {
//!             *slot = (entry.timestamp, entry.reference); // the higher timestamp wins; a tie, the later write
//!         }
//!         Ok(())
//!     }
//!
//!     fn get<'a>(&'a self, key: &'a [u8]) -> Option<Entry<'a>> {
//!         self.map.get_key_value(key).map(|(k, &(timestamp, reference))| Entry { key: k, timestamp, reference })
//!     }
//!
//!     fn scan(&self, start: &[u8], end: Option<&[u8]>, limit: usize, out: &mut Packed) {
//!         let range = self.map.range(start.to_vec()..).take_while(|(k, _)| end.is_none_or(|e| k.as_slice() < e));
//!         for (k, &(timestamp, reference)) in range.take(limit) {
//!             out.push_with(|buf| Entry { key: k, timestamp, reference }.encode(buf));
//!         }
//!     }
//!
//!     fn cursor(&self) -> usize {
//!         0
//!     }
//!
//!     fn next(&self, position: &mut usize, max_bytes: usize, out: &mut Packed) {
//!         for (k, &(timestamp, reference)) in self.map.iter().skip(*position) {
//!             out.push_with(|buf| Entry { key: k, timestamp, reference }.encode(buf));
//!             *position += 1;
//!             if out.data_len() >= max_bytes {
//!                 break;
//!             }
//!         }
//!     }
//!
//!     fn stats(&self) -> Stats {
//!         let index: usize = self.map.keys().map(|k| k.len() + 16 + 32).sum();
//!         vec![Stat::Entries.with(self.map.len() as u64), Stat::IndexBytes.with(index as u64)]
//!     }
//! }
//!
//! memlab_sdk::export!(memtable: MyTable);
//!
//! // The same type runs natively, as its "native twin" does in memlab.
//! let mut table = MyTable::create(&mut Params::new(Vec::new())).unwrap();
//! table.insert(Entry { key: b"k", timestamp: 1, reference: 7 }).unwrap();
//! assert_eq!(table.get(b"k").map(|e| e.reference), Some(7));
//! ```
//!
//! Enable the cargo feature of the kind you export (`memtable`,
//! `allocator`, `serializer` or `commitlog`), and build with
//! `cargo build --release --target wasm32-unknown-unknown`.
#![deny(missing_docs)]

// The generated bindings name this crate by its path, from inside it too.
#[cfg(target_arch = "wasm32")]
extern crate self as memlab_sdk;

mod allocator;
mod chunks;
mod commitlog;
mod compare;
mod concurrent;
mod contract;
mod error;
mod heap;
mod layout;
mod memtable;
mod packed;
mod params;
mod serializer;

/// One instance of each kind, with the contract's state rules, as both the
/// wasm export glue and the memlab host's native twins drive it: the batch
/// loops live once, in each kind's `twin.rs`, so the sandbox and the native
/// run do the same work per call. Plugin authors do not need this module.
#[doc(hidden)]
pub mod twin {
    pub use crate::allocator::twin::AllocatorInstance;
    pub use crate::commitlog::twin::{CommitLogInstance, Replayed};
    pub use crate::memtable::twin::MemtableInstance;
    pub use crate::serializer::twin::{ReaderInstance, WriterInstance};

    // Each kind's instance as the native table holds it (`KindOf`), and
    // a concurrent one's, which every writer calls at once.
    #[cfg(not(target_arch = "wasm32"))]
    pub use crate::allocator::native::AllocatorOf;
    #[cfg(not(target_arch = "wasm32"))]
    pub use crate::commitlog::native::CommitLogOf;
    #[cfg(not(target_arch = "wasm32"))]
    pub use crate::concurrent::native::{SharedArena, SharedMemtable};
    #[cfg(not(target_arch = "wasm32"))]
    pub use crate::memtable::native::MemtableOf;
    #[cfg(not(target_arch = "wasm32"))]
    pub use crate::serializer::native::SerializerOf;
}

pub use allocator::{Allocator, Pool, reserve_rows};
pub use chunks::ChunkStore;
pub use commitlog::{CommitLog, Decoded, Tail};
pub use compare::compare_keys;
pub use concurrent::{ConcurrentAllocator, ConcurrentMemtable, Serialized, Version};
/// The contract's kinds and operations, named once for plugin and host.
/// Plugin authors do not need them.
#[doc(hidden)]
pub use contract::{Kind, Op};
pub use error::Error;
pub use layout::{Cell, Cells, Entry, FlushRecord, RowHead, RowView, encode_flush_record, encode_row};
pub use memtable::Memtable;
pub use packed::Packed;
pub use params::{Description, Params, Stat, Stats};
pub use serializer::{Finished, SegmentMeta, SegmentReader, Serializer};

#[cfg(target_arch = "wasm32")]
#[doc(hidden)]
pub mod __private;

/// The C-ABI table a crate built for the host exports, and the host's
/// side of it. Plugin authors do not need this module.
#[cfg(not(target_arch = "wasm32"))]
#[doc(hidden)]
#[expect(unsafe_code, reason = "a shared library's entry table is raw pointers and extern \"C\" functions")]
pub mod native;

/// The native table `export!` emits outside wasm32: the one way memlab
/// runs a strategy natively, linked into the host (a bundled plugin) or
/// loaded from the crate built for it (`--build --native`, which turns
/// on `native-entry` and with it the table's exported entry).
#[cfg(not(target_arch = "wasm32"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __native_table {
    ($hosted:ty) => {
        /// The strategy's native table, through which memlab drives it.
        pub static MEMLAB_NATIVE: $crate::native::NativeTable = $crate::native::table::<$hosted>();
        $crate::__native_entry!();
    };
    (shared $hosted:ty) => {
        /// The strategy's native table, flagged concurrent: memlab calls
        /// it from every writer at once.
        pub static MEMLAB_NATIVE: $crate::native::NativeTable = $crate::native::shared_table::<$hosted>();
        $crate::__native_entry!();
    };
}

/// In wasm the component is the entry: no native table.
#[cfg(target_arch = "wasm32")]
#[doc(hidden)]
#[macro_export]
macro_rules! __native_table {
    ($($hosted:tt)*) => {};
}

/// The exported entry, for a crate built for the host.
#[cfg(all(feature = "native-entry", not(target_arch = "wasm32")))]
#[doc(hidden)]
#[macro_export]
macro_rules! __native_entry {
    () => {
        /// memlab's entry into this crate built for the host.
        #[unsafe(no_mangle)]
        pub extern "C" fn memlab_native_entry_v3() -> *const $crate::native::NativeTable {
            &MEMLAB_NATIVE
        }
    };
}

/// Without `native-entry` (the host linking a bundled crate), no entry:
/// two of them would clash at link time.
#[cfg(not(all(feature = "native-entry", not(target_arch = "wasm32"))))]
#[doc(hidden)]
#[macro_export]
macro_rules! __native_entry {
    () => {};
}

/// Each kind's export glue, by the kind's name, for `export!`.
#[cfg(target_arch = "wasm32")]
#[doc(hidden)]
pub mod __export {
    #[cfg(feature = "allocator")]
    pub use crate::allocator::export as allocator;
    #[cfg(feature = "commitlog")]
    pub use crate::commitlog::export as commitlog;
    #[cfg(feature = "memtable")]
    pub use crate::memtable::export as memtable;
    #[cfg(feature = "serializer")]
    pub use crate::serializer::export as serializer;
}

/// Each kind's trait by the kind's name, for the rows memlab's build
/// script generates.
#[doc(hidden)]
pub mod __kinds {
    pub use crate::{Allocator as allocator, CommitLog as commitlog, Memtable as memtable, Serializer as serializer};
}

/// Exports a strategy type as the component's implementation.
///
/// `export!(memtable: T)`, `export!(allocator: T)`,
/// `export!(serializer: T)` or `export!(commitlog: T)`; a
/// [`ConcurrentMemtable`] or [`ConcurrentAllocator`] as
/// `export!(concurrent memtable: T)` or `export!(concurrent allocator: T)`. Outside wasm32 it
/// names the type (`MemlabStrategy`) and emits its native table
/// (`MEMLAB_NATIVE`), which memlab links for a bundled plugin; with the
/// `native-entry` feature (memlab's `--build --native`) it also exports
/// the table's entry, through which memlab loads the crate as a shared
/// library.
#[macro_export]
macro_rules! export {
    (concurrent memtable: $t:ty) => {
        /// The strategy this crate exports; the memlab host links it as the native twin.
        pub type MemlabStrategy = $crate::Serialized<$t>;
        $crate::__native_table!(shared $crate::twin::SharedMemtable<$t>);
        #[cfg(target_arch = "wasm32")]
        const _: () = {
            type MemlabExport = $crate::__export::memtable::Export<$crate::Serialized<$t>>;
            $crate::__export::memtable::__memlab_export_memtable_world!(
                MemlabExport with_types_in $crate::__export::memtable
            );
        };
    };
    (concurrent allocator: $t:ty) => {
        /// The strategy this crate exports; the memlab host links it as the native twin.
        pub type MemlabStrategy = $crate::Serialized<$t>;
        $crate::__native_table!(shared $crate::twin::SharedArena<$t>);
        #[cfg(target_arch = "wasm32")]
        const _: () = {
            type MemlabExport = $crate::__export::allocator::Export<$crate::Serialized<$t>>;
            $crate::__export::allocator::__memlab_export_allocator_world!(
                MemlabExport with_types_in $crate::__export::allocator
            );
        };
    };
    (memtable: $t:ty) => {
        /// The strategy this crate exports; the memlab host links it as the native twin.
        pub type MemlabStrategy = $t;
        $crate::__native_table!($crate::twin::MemtableOf<$t>);
        #[cfg(target_arch = "wasm32")]
        const _: () = {
            type MemlabExport = $crate::__export::memtable::Export<$t>;
            $crate::__export::memtable::__memlab_export_memtable_world!(
                MemlabExport with_types_in $crate::__export::memtable
            );
        };
    };
    (allocator: $t:ty) => {
        /// The strategy this crate exports; the memlab host links it as the native twin.
        pub type MemlabStrategy = $t;
        $crate::__native_table!($crate::twin::AllocatorOf<$t>);
        #[cfg(target_arch = "wasm32")]
        const _: () = {
            type MemlabExport = $crate::__export::allocator::Export<$t>;
            $crate::__export::allocator::__memlab_export_allocator_world!(
                MemlabExport with_types_in $crate::__export::allocator
            );
        };
    };
    (serializer: $t:ty) => {
        /// The strategy this crate exports; the memlab host links it as the native twin.
        pub type MemlabStrategy = $t;
        $crate::__native_table!($crate::twin::SerializerOf<$t>);
        #[cfg(target_arch = "wasm32")]
        const _: () = {
            type MemlabExport = $crate::__export::serializer::Export<$t>;
            $crate::__export::serializer::__memlab_export_serializer_world!(
                MemlabExport with_types_in $crate::__export::serializer
            );
        };
    };
    (commitlog: $t:ty) => {
        /// The strategy this crate exports; the memlab host links it as the native twin.
        pub type MemlabStrategy = $t;
        $crate::__native_table!($crate::twin::CommitLogOf<$t>);
        #[cfg(target_arch = "wasm32")]
        const _: () = {
            type MemlabExport = $crate::__export::commitlog::Export<$t>;
            $crate::__export::commitlog::__memlab_export_commitlog_world!(
                MemlabExport with_types_in $crate::__export::commitlog
            );
        };
    };
}
