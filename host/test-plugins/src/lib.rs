//! The components memlab's tests load by path: the hostile memtable and
//! the lying allocator, serializer and commit-log format (`plugins/test-*`), built for
//! wasm32 and wrapped by this crate's build script, as wasmtime's
//! `test-programs` artifacts are. The product's build never builds them.

#![deny(missing_docs)]

use std::path::PathBuf;

/// The test plugins: `hostile`, `liar-alloc`, `liar-flush` and `liar-log`.
pub const NAMES: [&str; 4] = ["hostile", "liar-alloc", "liar-flush", "liar-log"];

/// The component file of the test plugin `name` (one of [`NAMES`]).
pub fn path(name: &str) -> PathBuf {
    PathBuf::from(env!("MEMLAB_TEST_PLUGINS")).join(format!("{name}.wasm"))
}

/// Where the bundled plugins' core modules were built (before wrapping),
/// for tests that wrap one themselves.
pub fn core_modules() -> PathBuf {
    PathBuf::from(env!("MEMLAB_CORE_MODULES"))
}
