//! Every operation the host calls on a plugin, named once. Errors, the
//! watchdog, both runtimes and the run record use these names, which are
//! the WIT's (`allocator.store-rows`, `cursor.next`, ...).

use std::fmt;

use super::Kind;

macro_rules! ops {
    ($($(#[$doc:meta])* $op:ident = $name:literal, $kind:ident;)*) => {
        /// An operation on a plugin, as the WIT names it.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[repr(u8)]
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

            /// Which strategy the operation goes to.
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
    /// The code the watchdog's slots store (0 is idle).
    pub(crate) fn code(self) -> u8 {
        self as u8 + 1
    }

    /// The operation a slot's code names.
    pub(crate) fn from_code(code: u8) -> Option<Op> {
        Op::ALL.get(usize::from(code.checked_sub(1)?)).copied()
    }

    /// The kind's `describe` operation.
    pub fn describe(kind: Kind) -> Op {
        kind.spec().describe
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::Op;

    #[test]
    fn codes_round_trip_and_names_are_unique() {
        for &op in Op::ALL {
            assert_eq!(Op::from_code(op.code()), Some(op));
        }
        assert_eq!(Op::from_code(0), None);
        let mut names: Vec<_> = Op::ALL.iter().map(|o| o.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Op::ALL.len());
    }
}
