//! Write memlab strategies in plain Rust.
//!
//! A plugin implements one trait — [`Memtable`], [`Allocator`] or
//! [`Serializer`] — and names it with [`export!`]. The same type links
//! natively into the memlab host as the plugin's "native twin", so the
//! sandbox's cost is measured on the same code.
//!
//! ```ignore
//! struct MyTable { /* ... */ }
//! impl memlab_sdk::Memtable for MyTable { /* ... */ }
//! memlab_sdk::export!(memtable: MyTable);
//! ```
//!
//! Enable the cargo feature of the kind you export (`memtable`,
//! `allocator` or `serializer`), and build with
//! `cargo build --release --target wasm32-unknown-unknown`.
#![deny(missing_docs)]

// The generated bindings name this crate by its path, from inside it too.
#[cfg(target_arch = "wasm32")]
extern crate self as memlab_sdk;

mod allocator;
mod chunks;
mod compare;
mod error;
mod layout;
mod memtable;
mod packed;
mod params;
mod serializer;
pub mod twin;

pub use allocator::{Allocator, Pool, reserve_rows};
pub use chunks::ChunkStore;
pub use compare::compare_keys;
pub use error::Error;
pub use layout::{Cell, Cells, Entry, FlushRecord, RowHead, RowView, encode_flush_record, encode_row};
pub use memtable::Memtable;
pub use packed::Packed;
pub use params::{Description, Params, Stat, Stats};
pub use serializer::{Finished, SegmentMeta, SegmentReader, Serializer};

#[cfg(target_arch = "wasm32")]
#[doc(hidden)]
pub mod __private;

/// Exports a strategy type as the component's implementation.
///
/// `export!(memtable: T)`, `export!(allocator: T)` or
/// `export!(serializer: T)`. Outside wasm32 it only names the type
/// (`MemlabStrategy`, which memlab's registry links natively), so the
/// crate also builds as the native twin.
#[macro_export]
macro_rules! export {
    (memtable: $t:ty) => {
        /// The strategy this crate exports; the memlab host links it as the native twin.
        pub type MemlabStrategy = $t;
        #[cfg(target_arch = "wasm32")]
        const _: () = {
            type MemlabExport = $crate::__private::memtable::Export<$t>;
            $crate::__private::memtable::__memlab_export_memtable_world!(
                MemlabExport with_types_in $crate::__private::memtable
            );
        };
    };
    (allocator: $t:ty) => {
        /// The strategy this crate exports; the memlab host links it as the native twin.
        pub type MemlabStrategy = $t;
        #[cfg(target_arch = "wasm32")]
        const _: () = {
            type MemlabExport = $crate::__private::allocator::Export<$t>;
            $crate::__private::allocator::__memlab_export_allocator_world!(
                MemlabExport with_types_in $crate::__private::allocator
            );
        };
    };
    (serializer: $t:ty) => {
        /// The strategy this crate exports; the memlab host links it as the native twin.
        pub type MemlabStrategy = $t;
        #[cfg(target_arch = "wasm32")]
        const _: () = {
            type MemlabExport = $crate::__private::serializer::Export<$t>;
            $crate::__private::serializer::__memlab_export_serializer_world!(
                MemlabExport with_types_in $crate::__private::serializer
            );
        };
    };
}
