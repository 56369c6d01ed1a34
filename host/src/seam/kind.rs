//! The kinds of strategy, as data: one descriptor per kind says its
//! names (WIT interface, world, config table and keys), its operations,
//! and how the other kinds stand in beside it. Code that treats every
//! kind alike iterates `KINDS` or looks a kind up; code that treats one
//! kind its own way matches on `Kind`.

use super::Op;

/// A kind of strategy: the contract's, named once in the SDK.
pub use memlab_sdk::Kind;

/// What memlab knows of a kind, in one place.
#[derive(Debug)]
pub struct KindSpec {
    /// The kind.
    pub kind: Kind,
    /// The WIT interface (without package), the config's table
    /// (`[memtable.NAME]`) and a variant's key (`memtable = "..."`).
    pub name: &'static str,
    /// What prose calls a strategy of the kind ("a commit log").
    pub noun: &'static str,
    /// Its counters' line in a summary.
    pub title: &'static str,
    /// The client phases of the time breakdown a strategy of the kind
    /// moves directly (what `Why` credits it with); a serializer runs on
    /// the flush threads, felt by clients only as backpressure.
    pub phases: &'static [&'static str],
    /// The WIT world a plugin of the kind is built against.
    pub world: &'static str,
    /// The prefixes of its operations' names (`memtable.`, `cursor.`).
    pub op_prefixes: &'static [&'static str],
    /// The operation that creates an instance's strategy (instantiation
    /// is watched as it, since a start function runs guest code).
    pub create: Op,
    /// Its `describe` operation.
    pub describe: Op,
    /// The SDK trait a plugin of the kind implements.
    pub sdk_trait: &'static str,
    /// The bundled plugin that stands in for the kind beside a plugin of
    /// another kind (a new crate's bench config, a check's partner).
    pub stand_in: &'static str,
    /// Two bundled plugins a new one of the kind is benched against.
    pub rivals: [&'static str; 2],
    /// For a kind a variant may go without (the commit log): the line a
    /// variant adds to run one. Such a kind stands in beside no other.
    pub optional: Option<&'static str>,
    /// Whether a shard's instance holds one, so that the tape records its
    /// calls and twins of it replay them (`bench::described`).
    pub taped: bool,
}

/// Every kind's descriptor, in pipeline order (as `Kind::ALL`).
pub const KINDS: [KindSpec; Kind::COUNT] = [
    KindSpec {
        kind: Kind::Memtable,
        name: "memtable",
        noun: "memtable",
        title: "Memtable",
        phases: &["memtable calls", "lock wait", "crossing"],
        world: "memtable-plugin",
        op_prefixes: &["memtable.", "cursor."],
        create: Op::MemtableCreate,
        describe: Op::MemtableDescribe,
        sdk_trait: "Memtable",
        stand_in: "skiplist",
        rivals: ["btree", "skiplist"],
        optional: None,
        taped: true,
    },
    KindSpec {
        kind: Kind::Allocator,
        name: "allocator",
        noun: "allocator",
        title: "Allocator",
        phases: &["allocator calls", "crossing"],
        world: "allocator-plugin",
        op_prefixes: &["allocator."],
        create: Op::AllocatorCreate,
        describe: Op::AllocatorDescribe,
        sdk_trait: "Allocator",
        stand_in: "per-row",
        rivals: ["per-row", "per-cell"],
        optional: None,
        taped: true,
    },
    KindSpec {
        kind: Kind::Serializer,
        name: "serializer",
        noun: "serializer",
        title: "Serializer",
        phases: &[],
        world: "serializer-plugin",
        op_prefixes: &["writer.", "reader."],
        create: Op::WriterCreate,
        describe: Op::WriterDescribe,
        sdk_trait: "Serializer",
        stand_in: "lean",
        rivals: ["lean", "naive"],
        optional: None,
        taped: false,
    },
    KindSpec {
        kind: Kind::CommitLog,
        name: "commitlog",
        noun: "commit log",
        title: "Commit-log format",
        phases: &["commit log", "durability wait"],
        world: "commitlog-plugin",
        op_prefixes: &["commitlog."],
        create: Op::CommitLogCreate,
        describe: Op::CommitLogDescribe,
        sdk_trait: "CommitLog",
        stand_in: "plain",
        rivals: ["plain", "batched"],
        optional: Some("commitlog_sync = \"group\""),
        taped: false,
    },
];

/// The host's knowledge of a kind, read from its descriptor.
pub trait KindSpecs {
    /// The kind's descriptor.
    fn spec(self) -> &'static KindSpec;
    /// Whether a variant may go without a strategy of this kind.
    fn optional(self) -> bool;
}

impl KindSpecs for Kind {
    fn spec(self) -> &'static KindSpec {
        &KINDS[self as usize]
    }

    fn optional(self) -> bool {
        self.spec().optional.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::{KINDS, Kind, KindSpecs};

    #[test]
    fn each_descriptor_is_its_kinds_and_names_its_own_operations() {
        for (i, kind) in Kind::ALL.into_iter().enumerate() {
            let spec = kind.spec();
            assert_eq!(spec.kind, kind);
            assert_eq!(KINDS[i].kind, kind, "KINDS is in Kind::ALL's order");
            assert_eq!(spec.describe.kind(), kind);
            assert_eq!(spec.create.kind(), kind);
            assert_eq!(spec.world, format!("{}-plugin", spec.name));
            assert_eq!(spec.name, kind.name());
        }
        for &op in crate::seam::Op::ALL {
            assert!(op.kind().spec().op_prefixes.iter().any(|p| op.name().starts_with(p)), "{op} is named after its kind's interface");
        }
    }

    /// host/build.rs takes the kinds from the WIT's `KIND-plugin` worlds:
    /// the descriptors must be those worlds, in the same order.
    #[test]
    fn the_descriptors_are_the_wits_plugin_worlds_in_order() {
        let wit = include_str!("../../../wit/worlds.wit");
        let worlds: Vec<&str> = wit.lines().filter_map(|l| l.trim().strip_prefix("world ")?.strip_suffix(" {")).filter(|w| w.ends_with("-plugin")).collect();
        let ours: Vec<&str> = KINDS.iter().map(|k| k.world).collect();
        assert_eq!(worlds, ours);
    }
}
