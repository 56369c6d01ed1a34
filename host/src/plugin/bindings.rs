//! The only place that generates wasmtime bindings: the host's view of the
//! WIT package, with every interface a plugin may import or export.

wasmtime::component::bindgen!({
    path: "../wit",
    world: "host",
});

pub use self::memlab::strategy::types;
// Each kind's exports, by its interface's name (`memtable`, ...).
pub use exports::memlab::strategy::*;
