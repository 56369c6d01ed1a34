//! memlab: try out the write path of an LSM engine, with its strategies
//! (memtable, allocator, flush serializer, commit log) as sandboxed WebAssembly
//! components.
//!
//! The modules follow the pipeline:
//! `workload → router → write_path (shards) → flush → segment → verify →
//! report`; `pool` is the shards' shared memory budget, and `plugin` the
//! only module that touches wasmtime.

#![deny(missing_docs)]

pub mod bench;
pub mod check;
pub mod cli;
pub mod commitlog;
pub mod config;
pub mod fuzz;
pub mod native;
pub mod plugin;
pub mod pool;
pub mod record;
pub mod registry;
pub mod report;
pub mod router;
pub mod seam;
pub mod segment;
pub mod session;
pub mod verify;
pub mod workload;

// Stages only the pipeline itself reaches; what a test or the binary
// needs from them is re-exported below.
mod flush;
mod input;
mod model;
mod read_probe;
mod scaffold;
mod util;
mod write_path;

pub use model::ReferenceMemtable;
pub use scaffold::scaffold;
pub use util::panic_message;
pub use util::text::for_terminal;

/// Every host allocation is counted per thread, so a flush's heap
/// allocation is measured (`util::heap`).
#[global_allocator]
static HEAP: util::heap::Counting = util::heap::Counting;
