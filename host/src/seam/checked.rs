//! The checking and metering layer: every call across the seam, wasm or
//! native, goes through here once. It counts the boundary traffic, names
//! the plugin, operation and shard of a failure, and enforces the
//! contract checks the host can make on a result.

use memlab_sdk::{Description, Entry, Packed, Stat, Stats};

use super::books::{Books, UNREFUSED_POOL_FULL, packed_bytes, sampled, within_reservations};
use super::ledger::{Ledger, Noted, Settled};
use super::sample::Sample;
use super::watch::during;
use super::{Boundary, Fault, Kind, Op, SeamError, ShardRuntime};

use super::budget::{FRAMING_PER_ROW, Memory, Observed};
use super::describe::{bounded, show_key};

/// Memtable contract 3: one record per key asked, each absent or the
/// asked key's entry.
pub(super) fn answers_get(asked: &Packed, out: &Packed) -> Result<(), String> {
    if out.len() != asked.len() {
        return Err(format!("returned {} records for {} keys", out.len(), asked.len()));
    }
    for (i, (key, answer)) in asked.iter().zip(out.iter()).enumerate() {
        if answer.is_empty() {
            continue;
        }
        let entry = Entry::decode(answer).map_err(|e| format!("answer {i} is not an entry: {e}"))?;
        if entry.key != key {
            return Err(format!("asked for key {}, answered with key {}", show_key(key), show_key(entry.key)));
        }
    }
    Ok(())
}

/// Memtable contract 4: a scan's entries are in [start, end), ascending,
/// at most `limit`.
pub(super) fn answers_scan(start: &[u8], end: Option<&[u8]>, limit: u32, out: &Packed) -> Result<(), String> {
    if out.len() > limit as usize {
        return Err(format!("returned {} entries for a limit of {limit}", out.len()));
    }
    let mut previous: Option<&[u8]> = None;
    for (i, record) in out.iter().enumerate() {
        let entry = Entry::decode(record).map_err(|e| format!("entry {i} does not decode: {e}"))?;
        let out_of_range = entry.key < start || end.is_some_and(|end| entry.key >= end);
        if out_of_range || previous.is_some_and(|p| entry.key <= p) {
            let why = if out_of_range { "outside the range asked for" } else { "out of order" };
            return Err(format!("entry {i}, key {}, is {why} (from {})", show_key(entry.key), show_key(start)));
        }
        previous = Some(entry.key);
    }
    Ok(())
}

/// Which of a shard's two strategies a call goes to.
#[derive(Clone, Copy)]
enum Side {
    Memtable,
    Allocator,
}

impl Side {
    fn stats(self) -> Op {
        match self {
            Side::Memtable => Op::MemtableStats,
            Side::Allocator => Op::AllocatorStats,
        }
    }
}

/// A shard's memtable and allocator for one generation, checked and metered.
pub struct Shard {
    pub(super) runtime: Box<dyn ShardRuntime>,
    pub(super) memtable: String,
    pub(super) allocator: String,
    pub(super) shard: usize,
    /// The host's counts and ledger of the calls.
    pub(super) books: Books,
    pub(super) cursor_open: bool,
    /// The allocator's linear memory once created (wasm).
    pub(super) allocator_baseline: Option<u64>,
    /// Hold `bytes-used` to the row bytes stored (off for allocators that
    /// keep nothing by design, in `verify = false` variants).
    pub(super) holds_rows: bool,
    /// The host's sample of what the live memtable holds, which reads and
    /// scans are held to (off where the variant does not verify).
    pub(super) sample: Option<Sample>,
    /// The tape of this instance's stores and inserts, while it has room.
    pub(super) tape: Option<super::tape::Tape>,
}

impl Shard {
    /// Wraps a runtime's shard; the names are the plugins' as configured.
    pub fn new(runtime: Box<dyn ShardRuntime>, memtable: &str, allocator: &str, shard: usize) -> Self {
        let allocator_baseline = runtime.allocator_baseline();
        Shard {
            runtime,
            memtable: memtable.into(),
            allocator: allocator.into(),
            shard,
            books: Books::default(),
            cursor_open: false,
            allocator_baseline,
            holds_rows: true,
            sample: None,
            tape: None,
        }
    }

    /// Tapes this instance's stores and inserts into `tape`.
    pub fn taped(mut self, tape: super::tape::Tape) -> Self {
        self.tape = Some(tape);
        self
    }

    /// Keeps the host's ledger of every row handed over, and of one scan
    /// start in `scan_every`, for the flush to hold the plugins to.
    pub fn with_ledger(mut self, scan_every: u64) -> Self {
        self.books.ledger = Some(Ledger::new(scan_every));
        self
    }

    /// The ledger, settled for the flush (once the cursor is open).
    pub fn take_ledger(&mut self) -> Option<Settled> {
        self.books.ledger.take().map(Ledger::settle)
    }

    /// Holds reads and scans to a sample of one partition in `every`.
    pub fn with_sample(mut self, every: u64) -> Self {
        self.sample = Some(Sample::new(every));
        self
    }

    /// Stops holding `bytes-used` to the row bytes stored: for variants
    /// that do not verify (the `null` allocator keeps nothing).
    pub fn without_row_accounting(mut self) -> Self {
        self.holds_rows = false;
        self
    }

    /// The allocator's name, as configured.
    pub fn allocator_plugin(&self) -> &str {
        &self.allocator
    }

    /// The memtable's name, as configured.
    pub fn memtable_plugin(&self) -> &str {
        &self.memtable
    }

    /// The shard's index.
    pub fn index(&self) -> usize {
        self.shard
    }

    fn plugin(&self, side: Side) -> &str {
        match side {
            Side::Memtable => &self.memtable,
            Side::Allocator => &self.allocator,
        }
    }

    fn fault(&self, side: Side, operation: Op, fault: Fault) -> SeamError {
        SeamError::call(self.plugin(side), operation, self.shard, fault)
    }

    fn contract(&self, side: Side, operation: Op, detail: impl ToString) -> SeamError {
        SeamError::contract(self.plugin(side), operation, self.shard, detail.to_string())
    }

    fn count(&mut self, bytes_in: u64) {
        self.books.count(bytes_in);
    }

    /// Whether this shard keeps the host's ledger (then a writer may hash
    /// its batch ahead, outside the lock: `Noted`).
    pub fn has_ledger(&self) -> bool {
        self.books.ledger.is_some()
    }

    /// Stores rows in the allocator; one ref per row. The batch is lent
    /// and comes back unchanged.
    pub fn store_rows(&mut self, rows: &mut Packed) -> Result<Vec<u64>, SeamError> {
        const OP: Op = Op::AllocatorStoreRows;
        self.count(packed_bytes(rows));
        let refs = match during(OP, self.shard, || self.runtime.store_rows(rows)) {
            Ok(refs) => refs,
            // A failed op is left out of verification: one the plugin
            // failed on its own, calling the pool full, would hide rows.
            Err(Fault::Guest(memlab_sdk::Error::PoolFull)) if !self.runtime.pool_refused() => {
                return Err(self.contract(Side::Allocator, OP, UNREFUSED_POOL_FULL));
            }
            Err(f) => return Err(self.fault(Side::Allocator, OP, f)),
        };
        self.books.stored(rows, &refs).map_err(|detail| self.contract(Side::Allocator, OP, detail))?;
        // At the call, not at the flush: what it holds is reserved now.
        if self.holds_rows {
            within_reservations(&self.books.observed, self.runtime.reserved_bytes()).map_err(|d| self.fault(Side::Allocator, OP, Fault::Budget(d)))?;
        }
        self.check_allocator_memory(OP)?;
        self.tape = self.tape.take().filter(|t| t.stored(rows, &refs));
        Ok(refs)
    }

    /// Takes `fresh`'s strategies in place of this shard's, which
    /// trapped: a recovery, which replays the generation into them next.
    /// The host's checks (ledger, sample, counts) carry on: they hold the
    /// rows already handed over.
    pub fn recover_with(&mut self, fresh: Shard) {
        self.runtime = fresh.runtime;
        self.allocator_baseline = fresh.allocator_baseline;
        self.books.observed = Observed::default();
        self.tape = None;
        self.cursor_open = false;
    }

    /// Inserts entries replayed from the commit log: the ledger and the
    /// sample have them already.
    pub fn insert_replayed(&mut self, entries: &mut Packed) -> Result<(), SeamError> {
        self.count(packed_bytes(entries));
        during(Op::MemtableInsert, self.shard, || self.runtime.insert(entries)).map_err(|f| self.fault(Side::Memtable, Op::MemtableInsert, f))
    }

    /// Inserts entries into the memtable; lent as in `store_rows`.
    pub fn insert(&mut self, entries: &mut Packed) -> Result<(), SeamError> {
        self.insert_noted(entries, None)
    }

    /// `insert`, the ledger noting `noted`: the batch, rows and entries,
    /// hashed ahead by the writer outside the shard's lock. A shard with
    /// a ledger must be given it (without, the rows' hashes are missing
    /// and the flush fails loudly).
    pub fn insert_noted(&mut self, entries: &mut Packed, noted: Option<&Noted>) -> Result<(), SeamError> {
        self.count(packed_bytes(entries));
        during(Op::MemtableInsert, self.shard, || self.runtime.insert(entries)).map_err(|f| self.fault(Side::Memtable, Op::MemtableInsert, f))?;
        if let Some(sample) = &mut self.sample {
            sample.inserted(entries);
        }
        self.books.inserted(entries, noted);
        self.tape = self.tape.take().filter(|t| t.inserted(entries));
        Ok(())
    }

    /// Holds a read's answers to the host's sample.
    fn sampled(&mut self, operation: Op, check: impl FnOnce(&mut Sample) -> Result<(), String>) -> Result<(), SeamError> {
        sampled(self.sample.as_mut(), check).map_err(|detail| self.contract(Side::Memtable, operation, detail))
    }

    /// An allocator's memory may grow only with what it reserved: one that
    /// keeps bytes without reserving them would slip past the budget. What
    /// it holds past its reservations and the call's copies, within the
    /// allowance, the host charges to the pool: under-reserving buys no
    /// budget.
    fn check_allocator_memory(&mut self, operation: Op) -> Result<(), SeamError> {
        let (Some(baseline), Some(now)) = (self.allocator_baseline, self.runtime.memory_of(Kind::Allocator)) else { return Ok(()) };
        let (reserved, charged) = (self.runtime.reserved_bytes(), self.runtime.charged_bytes());
        let (largest, loads) = (self.books.observed.largest_batch, self.books.observed.load_growth);
        match (Memory { baseline, now, reserved, charged, largest, loads }).unreserved() {
            Err(detail) => Err(SeamError::call(&self.allocator, operation, self.shard, Fault::Budget(detail))),
            Ok(unreserved) => {
                if unreserved > 0 {
                    self.runtime.charge(unreserved);
                }
                Ok(())
            }
        }
    }

    /// Batched point reads: one record per key, empty for a miss.
    pub fn get(&mut self, keys: Packed) -> Result<Packed, SeamError> {
        const OP: Op = Op::MemtableGet;
        self.count(packed_bytes(&keys));
        // The keys go to the runtime; keep them to check the answers by.
        let asked = keys.clone();
        let out = during(Op::MemtableGet, self.shard, || self.runtime.get(keys)).map_err(|f| self.fault(Side::Memtable, OP, f))?;
        self.books.boundary.bytes_out += packed_bytes(&out);
        answers_get(&asked, &out).map_err(|detail| self.contract(Side::Memtable, OP, detail))?;
        self.sampled(OP, |s| s.check_get(&asked, &out))?;
        Ok(out)
    }

    /// A range scan: entries with `start <= key < end`, at most `limit`.
    pub fn scan(&mut self, start: &[u8], end: Option<&[u8]>, limit: u32) -> Result<Packed, SeamError> {
        const OP: Op = Op::MemtableScan;
        self.count((start.len() + end.map_or(0, <[u8]>::len)) as u64);
        let out = during(Op::MemtableScan, self.shard, || self.runtime.scan(start, end, limit)).map_err(|f| self.fault(Side::Memtable, OP, f))?;
        self.books.boundary.bytes_out += packed_bytes(&out);
        answers_scan(start, end, limit, &out).map_err(|detail| self.contract(Side::Memtable, OP, detail))?;
        self.sampled(OP, |s| s.check_scan(start, end, limit, &out))?;
        if let Some(ledger) = &mut self.books.ledger {
            ledger.scanned(start, end, limit, &out);
        }
        Ok(out)
    }

    /// Freezes the memtable and opens its flush cursor.
    pub fn open_cursor(&mut self) -> Result<(), SeamError> {
        self.count(0);
        during(Op::MemtableOpenCursor, self.shard, || self.runtime.open_cursor()).map_err(|f| self.fault(Side::Memtable, Op::MemtableOpenCursor, f))?;
        self.cursor_open = true;
        Ok(())
    }

    /// The next entries in key order; empty when done.
    pub fn next_entries(&mut self, max_bytes: u32) -> Result<Packed, SeamError> {
        let mut out = Packed::new();
        self.next_entries_into(max_bytes, &mut out)?;
        Ok(out)
    }

    /// The next entries in key order into `out`, which is cleared first:
    /// a flush lends one buffer for all its chunks.
    pub fn next_entries_into(&mut self, max_bytes: u32, out: &mut Packed) -> Result<(), SeamError> {
        const OP: Op = Op::CursorNext;
        if !self.cursor_open {
            return Err(SeamError::Host { operation: OP.name(), detail: format!("no cursor is open on shard {}", self.shard) });
        }
        self.count(4);
        out.clear();
        during(Op::CursorNext, self.shard, || self.runtime.next_entries(max_bytes, out)).map_err(|f| self.fault(Side::Memtable, OP, f))?;
        self.books.boundary.bytes_out += packed_bytes(out);
        // Memtable contract 5: entries until `max_bytes` is reached, so all
        // but the last fit below it; more is a plugin flooding the host.
        let before_last = out.data_len() - out.get(out.len().wrapping_sub(1)).map_or(0, <[u8]>::len);
        if before_last >= max_bytes as usize && out.len() > 1 {
            let detail = format!("returned {} entries of {} bytes when asked for at most {max_bytes}", out.len(), out.data_len());
            return Err(self.contract(Side::Memtable, OP, detail));
        }
        Ok(())
    }

    /// Loads rows by ref, one per ref.
    pub fn load(&mut self, refs: Vec<u64>) -> Result<Packed, SeamError> {
        let mut out = Packed::new();
        self.load_into(&refs, &mut out)?;
        Ok(out)
    }

    /// Loads rows by ref into `out`, cleared first (lent, as in
    /// `next_entries_into`).
    pub fn load_into(&mut self, refs: &[u64], out: &mut Packed) -> Result<(), SeamError> {
        const OP: Op = Op::AllocatorLoad;
        self.count(8 * refs.len() as u64);
        let expected = refs.len();
        let before = self.runtime.memory_of(Kind::Allocator);
        out.clear();
        during(Op::AllocatorLoad, self.shard, || self.runtime.load(refs, out)).map_err(|f| self.fault(Side::Allocator, OP, f))?;
        self.books.boundary.bytes_out += packed_bytes(out);
        if let (Some(before), Some(after)) = (before, self.runtime.memory_of(Kind::Allocator)) {
            self.books.observed.load_growth += after.saturating_sub(before);
        }
        if out.len() != expected {
            return Err(self.contract(Side::Allocator, OP, format_args!("returned {} rows for {expected} refs", out.len())));
        }
        Ok(())
    }

    /// The memtable's and the allocator's counters.
    pub fn stats(&mut self) -> Result<(Stats, Stats), SeamError> {
        self.count(0);
        let memtable = self.runtime.memtable_stats().map_err(|f| self.fault(Side::Memtable, Op::MemtableStats, f))?;
        bounded(&memtable).map_err(|detail| self.contract(Side::Memtable, Op::MemtableStats, detail))?;
        self.count(0);
        let allocator = self.runtime.allocator_stats().map_err(|f| self.fault(Side::Allocator, Op::AllocatorStats, f))?;
        bounded(&allocator).map_err(|detail| self.contract(Side::Allocator, Op::AllocatorStats, detail))?;
        Ok((memtable, allocator))
    }

    /// Holds the counters to what the host saw, once the cursor has
    /// returned `cursor_entries` distinct keys: a memtable's `entries` is
    /// that count, and its `index-bytes` at least 16 per entry (the
    /// timestamp and ref each one keeps) and, in wasm, no more than its
    /// instance's memory; an allocator's `bytes-reserved` is what the pool
    /// saw, `bytes-used` lies between the row bytes stored and
    /// `bytes-reserved`, and `waste` is the difference.
    pub fn check_stats(&self, memtable: &Stats, allocator: &Stats, cursor_entries: u64) -> Result<(), SeamError> {
        let counter = |side: Side, stats: &Stats, stat: Stat| {
            stat.of(stats).ok_or_else(|| self.contract(side, side.stats(), format_args!("no `{}` counter", stat.name())))
        };
        let fail = |side: Side, detail: String| Err(self.contract(side, side.stats(), detail));
        let (entries, index) = (counter(Side::Memtable, memtable, Stat::Entries)?, counter(Side::Memtable, memtable, Stat::IndexBytes)?);
        if entries != cursor_entries {
            return fail(Side::Memtable, format!("`entries` = {entries}, but the cursor returned {cursor_entries} distinct keys"));
        }
        if index < 16 * entries {
            return fail(
                Side::Memtable,
                format!("`index-bytes` = {index} for {entries} entries: fewer than the 16 bytes of timestamp and ref each entry keeps"),
            );
        }
        if let Some(memory) = self.runtime.memory_of(Kind::Memtable).filter(|&m| index > m) {
            return fail(Side::Memtable, format!("`index-bytes` = {index}, more than its instance's whole linear memory ({memory} bytes)"));
        }
        let reserved = counter(Side::Allocator, allocator, Stat::BytesReserved)?;
        let used = counter(Side::Allocator, allocator, Stat::BytesUsed)?;
        let waste = counter(Side::Allocator, allocator, Stat::Waste)?;
        counter(Side::Allocator, allocator, Stat::Regions)?;
        let reservations = counter(Side::Allocator, allocator, Stat::Reservations)?;
        if reserved != self.runtime.reserved_bytes() {
            return fail(Side::Allocator, format!("`bytes-reserved` = {reserved}, but the pool saw {} reserved", self.runtime.reserved_bytes()));
        }
        if reservations != self.runtime.reservations() {
            return fail(Side::Allocator, format!("`reservations` = {reservations}, but the pool granted {}", self.runtime.reservations()));
        }
        if used > reserved {
            return fail(Side::Allocator, format!("`bytes-used` = {used} exceeds `bytes-reserved` = {reserved}"));
        }
        let observed = &self.books.observed;
        if self.holds_rows && used < observed.framed_bytes() {
            return fail(
                Side::Allocator,
                format!(
                    "`bytes-used` = {used}, but it holds {} rows of {} bytes, {} with {FRAMING_PER_ROW} bytes of framing each",
                    observed.rows,
                    observed.row_bytes,
                    observed.framed_bytes()
                ),
            );
        }
        if waste != reserved - used {
            return fail(Side::Allocator, format!("`waste` = {waste}, but `bytes-reserved` - `bytes-used` = {}", reserved - used));
        }
        Ok(())
    }

    /// What ran: memtable, then allocator.
    pub fn describe(&mut self) -> Result<(Description, Description), SeamError> {
        self.count(0);
        let memtable = self.runtime.describe_memtable().map_err(|f| self.fault(Side::Memtable, Op::MemtableDescribe, f))?;
        self.count(0);
        let allocator = self.runtime.describe_allocator().map_err(|f| self.fault(Side::Allocator, Op::AllocatorDescribe, f))?;
        Ok((memtable, allocator))
    }

    /// Reservations the pool granted, as the host counted them.
    pub fn reservations(&self) -> u64 {
        self.runtime.reservations()
    }

    /// Bytes reserved from the pool and not released.
    pub fn reserved_bytes(&self) -> u64 {
        self.runtime.reserved_bytes()
    }

    /// What the shard holds from the pool: its reservations and what the
    /// host charged for memory it held unreserved.
    pub fn held_bytes(&self) -> u64 {
        self.runtime.reserved_bytes() + self.runtime.charged_bytes()
    }

    /// What the host charged the pool for memory the allocator held
    /// unreserved, not given back yet.
    pub fn charged_bytes(&self) -> u64 {
        self.runtime.charged_bytes()
    }

    /// Linear memory (wasm) held by the instances; 0 for native twins.
    pub fn guest_memory_bytes(&self) -> u64 {
        self.runtime.guest_memory_bytes()
    }

    /// Boundary traffic so far.
    pub fn boundary(&self) -> Boundary {
        self.books.boundary
    }
}
