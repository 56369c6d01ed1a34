//! The checked shard's calls once no writer is in: the flush's cursor and
//! loads, the counters held to what the host saw, a recovery's fresh
//! instances. Each first gathers the writers' books (`writers`), so what
//! it holds the plugins to is every writer's.

use memlab_sdk::{Description, Packed, Stat, Stats};

use super::books::packed_bytes;
use super::budget::FRAMING_PER_ROW;
use super::describe::bounded;
use super::ledger::Settled;
use super::shard::Side;
use super::watch::during;
use super::writers::most_at_once;
use super::{Boundary, Kind, Op, SeamError, Shard};

impl Shard {
    /// The writers' books into the shard's.
    pub(super) fn gather(&mut self) {
        self.writers.gather(&mut self.books, &mut self.inserts);
    }

    /// A call the flush made, counted in the shard's own books.
    fn tally(&mut self, bytes_in: u64) {
        self.books.count(bytes_in);
    }

    /// Takes `fresh`'s strategies in place of this shard's, which
    /// trapped: a recovery, which replays the generation into them next.
    /// The host's checks (ledger, sample, counts) carry on: they hold the
    /// rows already handed over.
    pub fn recover_with(&mut self, fresh: Shard) {
        self.gather();
        self.runtime = fresh.runtime;
        self.allocator_baseline = fresh.allocator_baseline;
        self.books.observed = super::budget::Observed::default();
        self.writers.untape();
        self.cursor_open = false;
    }

    /// The ledger, settled for the flush (once the cursor is open).
    pub fn take_ledger(&mut self) -> Option<Settled> {
        self.gather();
        self.books.ledger.take().map(super::ledger::Ledger::settle)
    }

    /// The most writers seen inside its memtable at once (concurrent
    /// writers; 0 for one caller at a time).
    pub fn most_inside(&mut self) -> u64 {
        self.gather();
        most_at_once(&self.inserts)
    }

    /// Freezes the memtable and opens its flush cursor.
    pub fn open_cursor(&mut self) -> Result<(), SeamError> {
        self.gather();
        self.tally(0);
        during(Op::MemtableOpenCursor, self.shard, || self.runtime.alone().open_cursor()).map_err(|f| self.fault(Side::Memtable, Op::MemtableOpenCursor, f))?;
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
        self.tally(4);
        out.clear();
        during(Op::CursorNext, self.shard, || self.runtime.alone().next_entries(max_bytes, out)).map_err(|f| self.fault(Side::Memtable, OP, f))?;
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
        self.tally(8 * refs.len() as u64);
        let expected = refs.len();
        let before = self.runtime.memory_of(Kind::Allocator);
        out.clear();
        during(Op::AllocatorLoad, self.shard, || self.runtime.alone().load(refs, out)).map_err(|f| self.fault(Side::Allocator, OP, f))?;
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
        self.tally(0);
        let memtable = self.runtime.alone().memtable_stats().map_err(|f| self.fault(Side::Memtable, Op::MemtableStats, f))?;
        bounded(&memtable).map_err(|detail| self.contract(Side::Memtable, Op::MemtableStats, detail))?;
        self.tally(0);
        let allocator = self.runtime.alone().allocator_stats().map_err(|f| self.fault(Side::Allocator, Op::AllocatorStats, f))?;
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
    pub fn check_stats(&mut self, memtable: &Stats, allocator: &Stats, cursor_entries: u64) -> Result<(), SeamError> {
        self.gather();
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
        self.gather();
        self.tally(0);
        let memtable = self.runtime.alone().describe_memtable().map_err(|f| self.fault(Side::Memtable, Op::MemtableDescribe, f))?;
        self.tally(0);
        let allocator = self.runtime.alone().describe_allocator().map_err(|f| self.fault(Side::Allocator, Op::AllocatorDescribe, f))?;
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
    pub fn boundary(&mut self) -> Boundary {
        self.gather();
        self.books.boundary
    }
}
