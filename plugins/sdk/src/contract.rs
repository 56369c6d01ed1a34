//! The contract's vocabulary, named once for the plugin and the host: the
//! kinds of strategy and every operation the host calls on one. The wasm
//! glue calls them by their WIT names, the native table by their codes,
//! and the host's errors, watchdog and records by both.

use std::fmt;

/// A kind of strategy, in pipeline order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
#[repr(u32)]
pub enum Kind {
    /// The sorted in-memory index.
    Memtable,
    /// Where row bytes live.
    Allocator,
    /// How a frozen memtable becomes a segment.
    Serializer,
    /// How rows become commit-log bytes, and back.
    #[cfg_attr(feature = "serde", serde(rename = "commitlog"))]
    CommitLog,
}

impl Kind {
    /// How many kinds there are.
    pub const COUNT: usize = 4;

    /// Every kind, in pipeline order.
    pub const ALL: [Kind; Kind::COUNT] = [Kind::Memtable, Kind::Allocator, Kind::Serializer, Kind::CommitLog];

    /// The WIT interface (without package), which is also the config's
    /// table and key (`memtable = "..."`).
    pub const fn name(self) -> &'static str {
        match self {
            Kind::Memtable => "memtable",
            Kind::Allocator => "allocator",
            Kind::Serializer => "serializer",
            Kind::CommitLog => "commitlog",
        }
    }

    /// The kind called `name`, at compile time for generated tables (an
    /// unknown name cannot build).
    pub const fn named(name: &str) -> Kind {
        let mut i = 0;
        while i < Kind::COUNT {
            if eq(Kind::ALL[i].name().as_bytes(), name.as_bytes()) {
                return Kind::ALL[i];
            }
            i += 1;
        }
        panic!("not a kind")
    }

    /// The kind a native table's number names.
    pub fn from_code(code: u32) -> Option<Kind> {
        Kind::ALL.get(usize::try_from(code).ok()?).copied()
    }
}

const fn eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Kind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Kind::ALL.into_iter().find(|k| k.name() == s).ok_or_else(|| {
            let names: Vec<&str> = Kind::ALL.iter().map(|k| k.name()).collect();
            format!("`{s}` is not a kind ({})", names.join(", "))
        })
    }
}

macro_rules! ops {
    ($($(#[$doc:meta])* $op:ident = $name:literal, $kind:ident;)*) => {
        /// An operation on a plugin, as the WIT names it. Its code (its
        /// place here, from 1) is its number in the native table.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[repr(u32)]
        pub enum Op {
            $($(#[$doc])* $op,)*
        }

        impl Op {
            /// Every operation, in declaration order.
            pub const ALL: &[Op] = &[$(Op::$op,)*];

            /// The WIT name: `interface.function` (or `resource.method`).
            pub fn name(self) -> &'static str {
                match self {
                    $(Op::$op => $name,)*
                }
            }

            /// Which kind of strategy the operation goes to.
            pub fn kind(self) -> Kind {
                match self {
                    $(Op::$op => Kind::$kind,)*
                }
            }
        }
    };
}

ops! {
    /// Creates the instance's memtable with its parameters.
    MemtableCreate = "memtable.create", Memtable;
    /// Inserts a batch of entries.
    MemtableInsert = "memtable.insert", Memtable;
    /// Batched point reads.
    MemtableGet = "memtable.get", Memtable;
    /// A range scan.
    MemtableScan = "memtable.scan", Memtable;
    /// Freezes the memtable and opens its cursor.
    MemtableOpenCursor = "memtable.open-cursor", Memtable;
    /// The next entries of the open cursor.
    CursorNext = "cursor.next", Memtable;
    /// The memtable's counters.
    MemtableStats = "memtable.stats", Memtable;
    /// What the memtable says of itself.
    MemtableDescribe = "memtable.describe", Memtable;
    /// Creates the instance's arena with its parameters.
    AllocatorCreate = "allocator.create", Allocator;
    /// Stores a batch of rows.
    AllocatorStoreRows = "allocator.store-rows", Allocator;
    /// Loads rows by reference.
    AllocatorLoad = "allocator.load", Allocator;
    /// The allocator's counters.
    AllocatorStats = "allocator.stats", Allocator;
    /// What the allocator says of itself.
    AllocatorDescribe = "allocator.describe", Allocator;
    /// Creates a segment writer.
    WriterCreate = "writer.create", Serializer;
    /// Encodes flush records.
    WriterWrite = "writer.write", Serializer;
    /// Ends the segment: tail, index and metadata.
    WriterFinish = "writer.finish", Serializer;
    /// What the serializer says of itself.
    WriterDescribe = "writer.describe", Serializer;
    /// The serializer's own counters.
    WriterStats = "writer.stats", Serializer;
    /// Opens a reader over a segment.
    ReaderOpen = "reader.open", Serializer;
    /// The next records in written order.
    ReaderNext = "reader.next", Serializer;
    /// Batched point reads from a segment.
    ReaderGet = "reader.get", Serializer;
    /// Creates the instance's log format with its parameters.
    CommitLogCreate = "commitlog.create", CommitLog;
    /// Frames a batch of rows as a log record.
    CommitLogEncode = "commitlog.encode", CommitLog;
    /// Reads a log segment back into rows.
    CommitLogReplay = "commitlog.replay", CommitLog;
    /// What the log format says of itself.
    CommitLogDescribe = "commitlog.describe", CommitLog;
    /// The log format's own counters.
    CommitLogStats = "commitlog.stats", CommitLog;
}

impl Op {
    /// Its number: its place in `ALL`, from 1 (0 means none).
    pub const fn code(self) -> u32 {
        self as u32 + 1
    }

    /// The operation a number names.
    pub fn from_code(code: u32) -> Option<Op> {
        Op::ALL.get(usize::try_from(code.checked_sub(1)?).ok()?).copied()
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::{Kind, Op};

    #[test]
    fn codes_round_trip_and_names_are_unique_and_their_kinds() {
        for &op in Op::ALL {
            assert_eq!(Op::from_code(op.code()), Some(op));
            assert!(op.name().starts_with(op.kind().name()) || matches!(op.kind(), Kind::Memtable | Kind::Serializer), "{op}");
        }
        assert_eq!(Op::from_code(0), None);
        let mut names: Vec<_> = Op::ALL.iter().map(|o| o.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Op::ALL.len());
        for (i, kind) in Kind::ALL.into_iter().enumerate() {
            assert_eq!((Kind::from_code(i as u32), Kind::named(kind.name()), kind.name().parse()), (Some(kind), kind, Ok(kind)));
        }
    }
}
