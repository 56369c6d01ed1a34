//! The strategy registry: every bundled plugin, its component embedded in
//! the binary and its native twin linked beside it. `host/build.rs`
//! generates the table from `host/Cargo.toml`: a plugin crate listed there
//! under `[dependencies]` with a `[package.metadata.memlab]` kind is
//! bundled, so adding a strategy is that one line plus its crate.

use crate::native::{self, AllocatorTwin, MemtableTwin, ReaderTwin, WriterTwin};
use crate::seam::Kind;

type Params = Vec<(String, String)>;

/// How to create a bundled strategy's native twin.
pub enum Twin {
    /// A memtable.
    Memtable(fn(Params) -> Result<Box<dyn MemtableTwin>, memlab_sdk::Error>),
    /// An allocator.
    Allocator(fn(Params) -> Result<Box<dyn AllocatorTwin>, memlab_sdk::Error>),
    /// A serializer: its writer and its reader.
    Serializer {
        /// Starts a segment.
        writer: fn(Params) -> Result<Box<dyn WriterTwin>, memlab_sdk::Error>,
        /// Opens a segment: parameters, data file, index file.
        reader: fn(Params, Vec<u8>, Vec<u8>) -> Result<Box<dyn ReaderTwin>, memlab_sdk::Error>,
    },
}

impl std::fmt::Debug for Twin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Twin::Memtable(_) => "Twin::Memtable",
            Twin::Allocator(_) => "Twin::Allocator",
            Twin::Serializer { .. } => "Twin::Serializer",
        })
    }
}

/// One bundled plugin.
#[derive(Debug)]
pub struct Bundled {
    /// The name config uses (the strategy's `NAME`).
    pub name: &'static str,
    /// What it implements.
    pub kind: Kind,
    /// The crate it was built from (under `plugins/`).
    pub crate_name: &'static str,
    /// The component's bytes.
    pub component: &'static [u8],
    /// Its native twin.
    pub twin: Twin,
}

static BUNDLED: &[Bundled] = include!(concat!(env!("OUT_DIR"), "/registry.rs"));

/// Every bundled plugin, in table order.
pub fn all() -> &'static [Bundled] {
    BUNDLED
}

/// The bundled plugin of `kind` called `name`.
pub fn find_kind(name: &str, kind: Kind) -> Option<&'static Bundled> {
    BUNDLED.iter().find(|b| b.name == name && b.kind == kind)
}

/// The first bundled plugin called `name`.
pub fn find(name: &str) -> Option<&'static Bundled> {
    BUNDLED.iter().find(|b| b.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_has_a_bundled_strategy_and_the_twin_matches_its_kind() {
        for kind in Kind::ALL {
            assert!(all().iter().any(|b| b.kind == kind), "no bundled {kind}");
        }
        for b in all() {
            let twin_kind = match b.twin {
                Twin::Memtable(_) => Kind::Memtable,
                Twin::Allocator(_) => Kind::Allocator,
                Twin::Serializer { .. } => Kind::Serializer,
            };
            assert_eq!(twin_kind, b.kind, "{}", b.name);
        }
    }
}

