//! Each kind's native table, driven in-process as memlab drives every
//! native strategy: created, every operation called through the seam, a
//! panic at one operation caught at the table's boundary (named with its
//! plugin and operation, the instance poisoned from then on), then
//! dropped. The tables wrap the bundled strategies, so the calls are the
//! real ones.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use memlab::pool::{MemoryPool, PoolMode};
use memlab_sdk::native::{Answer, Hosted, Input, Made, NativeTable, table};
use memlab_sdk::twin::{AllocatorOf, CommitLogOf, MemtableOf, SerializerOf};
use memlab_sdk::{Cell, Entry, Error, Kind, Op, Packed, encode_flush_record, encode_row};

/// `H`, but its operation numbered `OP` panics.
struct PanicsAt<H, const OP: u32>(H);

impl<H: Hosted, const OP: u32> Made for PanicsAt<H, OP> {
    const KIND: Kind = H::KIND;
    const NAME: &'static str = H::NAME;
    const VERSION: &'static str = H::VERSION;

    fn create(op: Op, params: Vec<(String, String)>, a: &[u8], b: &[u8]) -> Result<Self, Error> {
        assert_ne!(op.code(), OP, "a strategy that panics in {op}");
        H::create(op, params, a, b).map(PanicsAt)
    }
}

impl<H: Hosted, const OP: u32> Hosted for PanicsAt<H, OP> {
    fn call(&mut self, op: Op, input: Input<'_>, answer: &mut Answer) -> Result<(), Error> {
        assert_ne!(op.code(), OP, "a strategy that panics in {op}");
        self.0.call(op, input, answer)
    }
}

static MEMTABLE: NativeTable = table::<PanicsAt<MemtableOf<memtable_btree::MemlabStrategy>, { Op::MemtableScan.code() }>>();
static ALLOCATOR: NativeTable = table::<PanicsAt<AllocatorOf<alloc_per_row::MemlabStrategy>, { Op::AllocatorStats.code() }>>();
static SERIALIZER: NativeTable = table::<PanicsAt<SerializerOf<flush_lean::MemlabStrategy>, { Op::ReaderGet.code() }>>();
static SERIALIZER_CREATE: NativeTable = table::<PanicsAt<SerializerOf<flush_lean::MemlabStrategy>, { Op::WriterCreate.code() }>>();
static LOG: NativeTable = table::<PanicsAt<CommitLogOf<commitlog_plain::MemlabStrategy>, { Op::CommitLogStats.code() }>>();

fn rows(n: usize) -> Packed {
    let mut rows = Packed::new();
    for i in 0..n {
        let cells = [Cell { column: 0, value: b"value" }];
        rows.push_with(|buf| encode_row(buf, format!("pk-{i:03}").as_bytes(), b"ck", i as u64 + 1, false, cells));
    }
    rows
}

/// Runs `f`, which must panic at the table's boundary, naming the plugin
/// and the operation; the message.
fn panics(what: &str, f: impl FnOnce()) -> String {
    let panic = catch_unwind(AssertUnwindSafe(f)).expect_err(what);
    let message = memlab::panic_message(panic.as_ref());
    assert!(message.contains("native plugin") && message.contains("panicked in"), "{what}: {message}");
    message
}

fn pool() -> Arc<MemoryPool> {
    Arc::new(MemoryPool::new(1 << 26, PoolMode::FetchAdd))
}

#[test]
fn a_memtable_and_an_allocator_table_take_every_call_and_catch_a_panic() {
    let memtable = memlab::native::linked("btree-table", &MEMTABLE).expect("a memtable table");
    let allocator = memlab::native::linked("per-row-table", &ALLOCATOR).expect("an allocator table");
    assert_eq!((memtable.kind(), allocator.kind()), (Kind::Memtable, Kind::Allocator));
    let mut shard = memtable.shard(&[], &allocator, &[], pool(), 0).expect("create both");
    let mut batch = rows(20);
    let refs = shard.store_rows(&mut batch).expect("allocator.store-rows");
    assert_eq!(shard.load(refs.clone()).expect("allocator.load"), batch, "rows come back as stored");
    let mut entries = Packed::new();
    for (i, r) in refs.iter().enumerate() {
        let key = format!("key-{i:03}");
        entries.push_with(|buf| Entry { key: key.as_bytes(), timestamp: 1, reference: *r }.encode(buf));
    }
    shard.insert(&mut entries).expect("memtable.insert");
    let mut keys = Packed::new();
    keys.push(b"key-007");
    keys.push(b"absent");
    let got = shard.get(keys).expect("memtable.get");
    assert_eq!((Entry::decode(got.get(0).expect("hit")).expect("entry").reference, got.get(1)), (refs[7], Some(&[][..])));
    let (described_m, described_a) = shard.describe().expect("both describe");
    assert_eq!((described_m.name.as_str(), described_a.name.as_str()), ("btree", "per-row"));
    let message = panics("allocator.stats panics", || drop(shard.stats()));
    assert!(message.contains("per-row-table") && message.contains("allocator.stats"), "{message}");
    let message = panics("memtable.scan panics", || drop(shard.scan(b"", None, 10)));
    assert!(message.contains("btree-table") && message.contains("memtable.scan"), "{message}");
    // Poisoned: no call reaches the memtable again.
    let message = panics("a poisoned memtable", || drop(shard.open_cursor()));
    assert!(message.contains("poisoned"), "{message}");
    drop(shard);
}

#[test]
fn a_memtables_cursor_and_counters_cross_its_table() {
    let memtable = memlab::native::linked("btree-table", &MEMTABLE).expect("a memtable table");
    let allocator = memlab::native::bundled("per-row", Kind::Allocator).expect("bundled");
    let mut shard = memtable.shard(&[], &allocator, &[], pool(), 1).expect("create");
    let mut entries = Packed::new();
    entries.push_with(|buf| Entry { key: b"k", timestamp: 1, reference: 9 }.encode(buf));
    shard.insert(&mut entries).expect("memtable.insert");
    shard.open_cursor().expect("memtable.open-cursor");
    assert_eq!(shard.next_entries(1 << 20).expect("cursor.next").len(), 1);
    assert!(shard.next_entries(1 << 20).expect("cursor.next").is_empty());
    let (m, _) = shard.stats().expect("memtable.stats");
    assert!(m.iter().any(|(name, n)| name == "entries" && *n == 1), "{m:?}");
}

#[test]
fn a_serializer_table_writes_reads_and_catches_a_panic() {
    let serializer = memlab::native::linked("lean-table", &SERIALIZER).expect("a serializer table");
    let mut writer = serializer.serializer(&[], 0).expect("writer.create");
    let mut records = Packed::new();
    let row = rows(1);
    for key in [&b"a"[..], b"b", b"c"] {
        records.push_with(|buf| encode_flush_record(buf, key, row.get(0).expect("a row")));
    }
    let mut data = writer.write(records.clone()).expect("writer.write");
    let (tail, finished) = writer.finish().expect("writer.finish");
    data.extend_from_slice(&tail);
    assert_eq!(finished.meta.rows, 3);
    assert_eq!(writer.describe().expect("writer.describe").name, "lean");
    writer.stats().expect("writer.stats");
    let mut reader = serializer.reader(&[], &data, &finished.index).expect("reader.open");
    assert_eq!(reader.next(1 << 20).expect("reader.next"), records);
    let mut keys = Packed::new();
    keys.push(b"b");
    let message = panics("reader.get panics", || drop(reader.get(keys)));
    assert!(message.contains("lean-table") && message.contains("reader.get"), "{message}");
    drop(reader);
    let creating = memlab::native::linked("lean-create", &SERIALIZER_CREATE).expect("a serializer table");
    let message = panics("writer.create panics", || drop(creating.serializer(&[], 0)));
    assert!(message.contains("lean-create") && message.contains("writer.create"), "{message}");
}

#[test]
fn a_commit_log_table_encodes_replays_and_catches_a_panic() {
    let log = memlab::native::linked("plain-table", &LOG).expect("a log table");
    let mut format = log.commitlog_format(&[], 0).expect("commitlog.create");
    let mut batch = rows(5);
    let record = format.encode(&mut batch).expect("commitlog.encode");
    let replayed = format.replay(&record, 100).expect("commitlog.replay");
    assert_eq!((replayed.rows, replayed.intact), (batch, record.len() as u64));
    assert_eq!(format.describe().expect("commitlog.describe").name, "plain");
    let message = panics("commitlog.stats panics", || drop(format.stats()));
    assert!(message.contains("plain-table") && message.contains("commitlog.stats"), "{message}");
    // A table of one kind refuses to stand in for another's.
    assert!(log.serializer(&[], 0).is_err());
}
