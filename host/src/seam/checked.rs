//! The checking and metering layer: every call across the seam, wasm or
//! native, goes through here once. It counts the boundary traffic, names
//! the plugin, operation and shard of a failure, and enforces the
//! contract checks the host can make on a result.

use memlab_sdk::{Description, Finished, Packed, Stats};

use super::{Boundary, Fault, ReaderRuntime, SeamError, SerializerRuntime, ShardRuntime};

/// Bytes a packed batch takes across the boundary: data plus end offsets.
fn packed_bytes(p: &Packed) -> u64 {
    (p.data_len() + 4 * p.len()) as u64
}

/// Which of a shard's two strategies a call goes to.
#[derive(Clone, Copy)]
enum Side {
    Memtable,
    Allocator,
}

/// A shard's memtable and allocator for one generation, checked and metered.
pub struct Shard {
    runtime: Box<dyn ShardRuntime>,
    memtable: String,
    allocator: String,
    shard: usize,
    boundary: Boundary,
    cursor_open: bool,
}

impl Shard {
    /// Wraps a runtime's shard; the names are the plugins' as configured.
    pub fn new(runtime: Box<dyn ShardRuntime>, memtable: &str, allocator: &str, shard: usize) -> Self {
        Shard { runtime, memtable: memtable.into(), allocator: allocator.into(), shard, boundary: Boundary::default(), cursor_open: false }
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

    fn fault(&self, side: Side, operation: &str, fault: Fault) -> SeamError {
        SeamError::from_fault(fault, self.plugin(side), operation, self.shard)
    }

    fn contract(&self, side: Side, operation: &str, detail: impl ToString) -> SeamError {
        SeamError::Contract { plugin: self.plugin(side).to_string(), operation: operation.into(), shard: self.shard, detail: detail.to_string() }
    }

    fn count(&mut self, bytes_in: u64) {
        self.boundary.calls += 1;
        self.boundary.bytes_in += bytes_in;
    }

    /// Stores rows in the allocator; one ref per row. The batch is lent
    /// and comes back unchanged.
    pub fn store_rows(&mut self, rows: &mut Packed) -> Result<Vec<u64>, SeamError> {
        const OP: &str = "arena.store";
        self.count(packed_bytes(rows));
        let expected = rows.len();
        let refs = self.runtime.store_rows(rows).map_err(|f| self.fault(Side::Allocator, OP, f))?;
        self.boundary.bytes_out += 8 * refs.len() as u64;
        if refs.len() != expected {
            return Err(self.contract(Side::Allocator, OP, format_args!("returned {} refs for {expected} rows", refs.len())));
        }
        Ok(refs)
    }

    /// Inserts entries into the memtable; lent as in `store_rows`.
    pub fn insert(&mut self, entries: &mut Packed) -> Result<(), SeamError> {
        self.count(packed_bytes(entries));
        self.runtime.insert(entries).map_err(|f| self.fault(Side::Memtable, "memtable.insert", f))
    }

    /// Batched point reads: one record per key, empty for a miss.
    pub fn get(&mut self, keys: Packed) -> Result<Packed, SeamError> {
        const OP: &str = "memtable.get";
        self.count(packed_bytes(&keys));
        let expected = keys.len();
        let out = self.runtime.get(keys).map_err(|f| self.fault(Side::Memtable, OP, f))?;
        self.boundary.bytes_out += packed_bytes(&out);
        if out.len() != expected {
            return Err(self.contract(Side::Memtable, OP, format_args!("returned {} records for {expected} keys", out.len())));
        }
        Ok(out)
    }

    /// A range scan: entries with `start <= key < end`, at most `limit`.
    pub fn scan(&mut self, start: &[u8], end: Option<&[u8]>, limit: u32) -> Result<Packed, SeamError> {
        self.count((start.len() + end.map_or(0, <[u8]>::len)) as u64);
        let out = self.runtime.scan(start, end, limit).map_err(|f| self.fault(Side::Memtable, "memtable.scan", f))?;
        self.boundary.bytes_out += packed_bytes(&out);
        Ok(out)
    }

    /// Freezes the memtable and opens its flush cursor.
    pub fn open_cursor(&mut self) -> Result<(), SeamError> {
        self.count(0);
        self.runtime.open_cursor().map_err(|f| self.fault(Side::Memtable, "memtable.cursor", f))?;
        self.cursor_open = true;
        Ok(())
    }

    /// The next entries in key order; empty when done.
    pub fn next_entries(&mut self, max_bytes: u32) -> Result<Packed, SeamError> {
        const OP: &str = "cursor.next";
        if !self.cursor_open {
            return Err(SeamError::Host { operation: OP.into(), detail: format!("no cursor is open on shard {}", self.shard) });
        }
        self.count(4);
        let out = self.runtime.next_entries(max_bytes).map_err(|f| self.fault(Side::Memtable, OP, f))?;
        self.boundary.bytes_out += packed_bytes(&out);
        // Memtable contract 5: entries until `max_bytes` is reached, so all
        // but the last fit below it; more is a plugin flooding the host.
        let before_last = out.data_len() - out.get(out.len().wrapping_sub(1)).map_or(0, <[u8]>::len);
        if before_last >= max_bytes as usize && out.len() > 1 {
            let detail = format!("returned {} entries of {} bytes when asked for at most {max_bytes}", out.len(), out.data_len());
            return Err(self.contract(Side::Memtable, OP, detail));
        }
        Ok(out)
    }

    /// Loads rows by ref, one per ref.
    pub fn load(&mut self, refs: Vec<u64>) -> Result<Packed, SeamError> {
        const OP: &str = "arena.load";
        self.count(8 * refs.len() as u64);
        let expected = refs.len();
        let out = self.runtime.load(refs).map_err(|f| self.fault(Side::Allocator, OP, f))?;
        self.boundary.bytes_out += packed_bytes(&out);
        if out.len() != expected {
            return Err(self.contract(Side::Allocator, OP, format_args!("returned {} rows for {expected} refs", out.len())));
        }
        Ok(out)
    }

    /// The memtable's and the allocator's counters.
    pub fn stats(&mut self) -> Result<(Stats, Stats), SeamError> {
        self.count(0);
        let memtable = self.runtime.memtable_stats().map_err(|f| self.fault(Side::Memtable, "memtable.stats", f))?;
        self.count(0);
        let allocator = self.runtime.allocator_stats().map_err(|f| self.fault(Side::Allocator, "arena.stats", f))?;
        Ok((memtable, allocator))
    }

    /// What ran: memtable, then allocator.
    pub fn describe(&mut self) -> Result<(Description, Description), SeamError> {
        self.count(0);
        let memtable = self.runtime.describe_memtable().map_err(|f| self.fault(Side::Memtable, "memtable.describe", f))?;
        self.count(0);
        let allocator = self.runtime.describe_allocator().map_err(|f| self.fault(Side::Allocator, "arena.describe", f))?;
        Ok((memtable, allocator))
    }

    /// Bytes reserved from the pool and not released.
    pub fn reserved_bytes(&self) -> u64 {
        self.runtime.reserved_bytes()
    }

    /// Linear memory (wasm) held by the instances; 0 for native twins.
    pub fn guest_memory_bytes(&self) -> u64 {
        self.runtime.guest_memory_bytes()
    }

    /// Boundary traffic so far.
    pub fn boundary(&self) -> Boundary {
        self.boundary
    }
}

/// One segment's serializer, checked and metered.
pub struct Serializer {
    runtime: Box<dyn SerializerRuntime>,
    name: String,
    shard: usize,
    boundary: Boundary,
}

impl Serializer {
    /// Wraps a runtime's writer for the flush of `shard` (or part).
    pub fn new(runtime: Box<dyn SerializerRuntime>, name: &str, shard: usize) -> Self {
        Serializer { runtime, name: name.into(), shard, boundary: Boundary::default() }
    }

    fn fault(&self, operation: &str, fault: Fault) -> SeamError {
        SeamError::from_fault(fault, &self.name, operation, self.shard)
    }

    /// Encodes flush records; returns bytes for the data file.
    pub fn write(&mut self, records: Packed) -> Result<Vec<u8>, SeamError> {
        self.boundary.calls += 1;
        self.boundary.bytes_in += packed_bytes(&records);
        let out = self.runtime.write(records).map_err(|f| self.fault("writer.write", f))?;
        self.boundary.bytes_out += out.len() as u64;
        Ok(out)
    }

    /// Ends the segment: the data file's tail, the index and the metadata.
    pub fn finish(&mut self) -> Result<(Vec<u8>, Finished), SeamError> {
        self.boundary.calls += 1;
        let (tail, finished) = self.runtime.finish().map_err(|f| self.fault("writer.finish", f))?;
        self.boundary.bytes_out += (tail.len() + finished.index.len()) as u64;
        Ok((tail, finished))
    }

    /// What ran.
    pub fn describe(&mut self) -> Result<Description, SeamError> {
        self.boundary.calls += 1;
        self.runtime.describe().map_err(|f| self.fault("writer.describe", f))
    }

    /// Linear memory (wasm) held; 0 for native twins.
    pub fn guest_memory_bytes(&self) -> u64 {
        self.runtime.guest_memory_bytes()
    }

    /// Boundary traffic so far.
    pub fn boundary(&self) -> Boundary {
        self.boundary
    }
}

/// One segment's reader, checked.
pub struct Reader {
    runtime: Box<dyn ReaderRuntime>,
    name: String,
}

impl Reader {
    /// Wraps a runtime's reader of serializer `name`.
    pub fn new(runtime: Box<dyn ReaderRuntime>, name: &str) -> Self {
        Reader { runtime, name: name.into() }
    }

    /// The serializer's name, as configured.
    pub fn plugin(&self) -> &str {
        &self.name
    }

    /// The next flush records in written order; empty when done.
    pub fn next(&mut self, max_bytes: u32) -> Result<Packed, SeamError> {
        self.runtime.next(max_bytes).map_err(|f| SeamError::from_fault(f, &self.name, "reader.next", 0))
    }

    /// Batched point reads: one record per key, empty for a miss.
    pub fn get(&mut self, keys: Packed) -> Result<Packed, SeamError> {
        const OP: &str = "reader.get";
        let expected = keys.len();
        let out = self.runtime.get(keys).map_err(|f| SeamError::from_fault(f, &self.name, OP, 0))?;
        if out.len() != expected {
            let detail = format!("returned {} records for {expected} keys", out.len());
            return Err(SeamError::Contract { plugin: self.name.clone(), operation: OP.into(), shard: 0, detail });
        }
        Ok(out)
    }
}
