//! memlab: try out the write path of an LSM engine, with its strategies
//! (memtable, allocator, flush serializer) as sandboxed WebAssembly
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
pub mod flush;
pub mod fuzz;
pub mod input;
pub mod model;
pub mod native;
pub mod plugin;
pub mod pool;
pub mod read_probe;
pub mod record;
pub mod registry;
pub mod report;
pub mod router;
pub mod scaffold;
pub mod seam;
pub mod segment;
pub mod session;
pub mod util;
pub mod verify;
pub mod workload;
pub mod write_path;

/// Every host allocation is counted per thread, so a flush's heap
/// allocation is measured (`util::heap`).
#[global_allocator]
static HEAP: util::heap::Counting = util::heap::Counting;
