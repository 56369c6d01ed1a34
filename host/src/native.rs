//! Native twins: the bundled strategies' plain-Rust logic linked into the
//! host, run through the same `ShardStrategies` interface as the wasm
//! components, so the sandbox's price shows on one stream in one run.

use std::sync::Arc;

use memlab_sdk::{
    Allocator, Description, Error, Finished, Memtable, Packed, Params, Pool, SegmentReader, Serializer, Stats,
};

use crate::plugin::PluginError;
use crate::strategy::{Boundary, FlushStrategy, SegmentReading, ShardStrategies};
use crate::pool::MemoryPool;

fn construct<T>(
    name: &str,
    version: &str,
    given: &[(String, String)],
    build: impl FnOnce(&mut Params) -> Result<T, Error>,
) -> Result<(T, Description), Error> {
    let mut params = Params::new(given.to_vec());
    let value = build(&mut params)?;
    let applied = params.finish()?;
    Ok((value, Description { name: name.into(), version: version.into(), params: applied }))
}

trait MemtableOps: Send {
    fn insert(&mut self, entries: &Packed) -> Result<(), Error>;
    fn get(&self, key: &[u8], out: &mut Packed);
    fn scan(&self, start: &[u8], end: Option<&[u8]>, limit: usize, out: &mut Packed);
    fn open_cursor(&mut self);
    fn next(&mut self, max_bytes: usize, out: &mut Packed) -> Result<(), Error>;
    fn stats(&self) -> Stats;
}

struct NativeMemtable<M: Memtable> {
    table: M,
    position: Option<M::Position>,
}

impl<M: Memtable + Send> MemtableOps for NativeMemtable<M>
where
    M::Position: Send,
{
    fn insert(&mut self, entries: &Packed) -> Result<(), Error> {
        if self.position.is_some() {
            return Err(Error::InvalidState("insert after a cursor was opened".into()));
        }
        self.table.insert_batch(entries)
    }

    fn get(&self, key: &[u8], out: &mut Packed) {
        match self.table.get(key) {
            Some(entry) => out.push_with(|buf| entry.encode(buf)),
            None => out.push(&[]),
        }
    }

    fn scan(&self, start: &[u8], end: Option<&[u8]>, limit: usize, out: &mut Packed) {
        self.table.scan(start, end, limit, out);
    }

    fn open_cursor(&mut self) {
        if self.position.is_none() {
            self.table.freeze();
        }
        self.position = Some(self.table.cursor());
    }

    fn next(&mut self, max_bytes: usize, out: &mut Packed) -> Result<(), Error> {
        let position = self.position.as_mut().ok_or_else(|| Error::InvalidState("no cursor is open".into()))?;
        self.table.next(position, max_bytes, out);
        Ok(())
    }

    fn stats(&self) -> Stats {
        self.table.stats()
    }
}

trait AllocatorOps: Send {
    fn store_batch(&mut self, pool: &mut dyn Pool, rows: &Packed, refs: &mut Vec<u64>) -> Result<(), Error>;
    fn load(&self, reference: u64) -> Result<&[u8], Error>;
    fn stats(&self) -> Stats;
}

impl<A: Allocator + Send> AllocatorOps for A {
    fn store_batch(&mut self, pool: &mut dyn Pool, rows: &Packed, refs: &mut Vec<u64>) -> Result<(), Error> {
        Allocator::store_batch(self, pool, rows, refs)
    }

    fn load(&self, reference: u64) -> Result<&[u8], Error> {
        Allocator::load(self, reference)
    }

    fn stats(&self) -> Stats {
        Allocator::stats(self)
    }
}

/// The host pool, as a native allocator sees it.
struct NativePool {
    pool: Arc<MemoryPool>,
    reserved: u64,
}

impl Pool for NativePool {
    fn reserve(&mut self, bytes: u64) -> Result<(), Error> {
        self.pool.reserve(bytes).map_err(|_| Error::PoolFull)?;
        self.reserved += bytes;
        Ok(())
    }

    fn reserve_each(&mut self, sizes: &[u64]) -> Result<(), Error> {
        self.reserved += self.pool.reserve_each(sizes).map_err(|_| Error::PoolFull)?;
        Ok(())
    }

    fn release(&mut self, bytes: u64) {
        let bytes = bytes.min(self.reserved);
        self.pool.release(bytes);
        self.reserved -= bytes;
    }
}

/// A native strategy and what it says of itself.
type Built<T> = Result<(Box<T>, Description), Error>;

fn new_memtable(name: &str, params: &[(String, String)]) -> Option<Built<dyn MemtableOps>> {
    fn make<M: Memtable + Send>(params: &[(String, String)]) -> Built<dyn MemtableOps>
    where
        M::Position: Send,
    {
        let (table, d) = construct(M::NAME, M::VERSION, params, M::create)?;
        Ok((Box::new(NativeMemtable::<M> { table, position: None }), d))
    }
    Some(match name {
        "btree" => make::<memtable_btree::BTreeMemtable>(params),
        "skiplist" => make::<memtable_skiplist::SkipList>(params),
        "trie" => make::<memtable_trie::Trie>(params),
        "vector" => make::<memtable_vector::VectorMemtable>(params),
        "null" => make::<memtable_null::NullMemtable>(params),
        _ => return None,
    })
}

fn new_allocator(name: &str, params: &[(String, String)]) -> Option<Built<dyn AllocatorOps>> {
    fn make<A: Allocator + Send>(params: &[(String, String)]) -> Built<dyn AllocatorOps> {
        let (arena, d) = construct(A::NAME, A::VERSION, params, A::create)?;
        Ok((Box::new(arena), d))
    }
    Some(match name {
        "per-row" => make::<alloc_per_row::PerRowAllocator>(params),
        "per-cell" => make::<alloc_per_cell::PerCellAllocator>(params),
        "region" => make::<alloc_region::RegionAllocator>(params),
        "heap" => make::<alloc_heap::HeapAllocator>(params),
        "null" => make::<alloc_null::NullAllocator>(params),
        _ => return None,
    })
}

fn no_twin(name: &str, shard: usize) -> PluginError {
    PluginError::Contract {
        plugin: name.into(),
        operation: "create".into(),
        shard,
        detail: "no native twin with this name (only bundled strategies have one)".into(),
    }
}

/// A shard's native memtable and allocator.
pub struct NativeShard {
    names: (String, String),
    shard: usize,
    memtable: Box<dyn MemtableOps>,
    allocator: Box<dyn AllocatorOps>,
    descriptions: (Description, Description),
    pool: NativePool,
    boundary: Boundary,
}

impl NativeShard {
    /// Creates a shard's native twins.
    pub fn new(
        memtable: &str,
        memtable_params: &[(String, String)],
        allocator: &str,
        allocator_params: &[(String, String)],
        pool: Arc<MemoryPool>,
        shard: usize,
    ) -> Result<Self, PluginError> {
        let guest = |plugin: &str, operation: &str, e: Error| PluginError::Guest {
            plugin: plugin.into(),
            operation: operation.into(),
            shard,
            error: e.to_string(),
        };
        let (m, md) = new_memtable(memtable, memtable_params)
            .ok_or_else(|| no_twin(memtable, shard))?
            .map_err(|e| guest(memtable, "memtable.create", e))?;
        let (a, ad) = new_allocator(allocator, allocator_params)
            .ok_or_else(|| no_twin(allocator, shard))?
            .map_err(|e| guest(allocator, "arena.create", e))?;
        Ok(NativeShard {
            names: (memtable.into(), allocator.into()),
            shard,
            memtable: m,
            allocator: a,
            descriptions: (md, ad),
            pool: NativePool { pool, reserved: 0 },
            boundary: Boundary::default(),
        })
    }

    fn fail(&self, memtable: bool, operation: &str, e: Error) -> PluginError {
        let plugin = if memtable { &self.names.0 } else { &self.names.1 };
        PluginError::Guest { plugin: plugin.clone(), operation: operation.into(), shard: self.shard, error: e.to_string() }
    }

    fn count(&mut self, bytes_in: usize) {
        self.boundary.calls += 1;
        self.boundary.bytes_in += bytes_in as u64;
    }
}

impl ShardStrategies for NativeShard {
    fn store_rows(&mut self, rows: &mut Packed) -> Result<Vec<u64>, PluginError> {
        self.count(rows.data_len());
        let mut refs = Vec::with_capacity(rows.len());
        self.allocator
            .store_batch(&mut self.pool, rows, &mut refs)
            .map_err(|e| self.fail(false, "arena.store", e))?;
        Ok(refs)
    }

    fn insert(&mut self, entries: &mut Packed) -> Result<(), PluginError> {
        self.count(entries.data_len());
        self.memtable.insert(entries).map_err(|e| self.fail(true, "memtable.insert", e))
    }

    fn get(&mut self, keys: Packed) -> Result<Packed, PluginError> {
        self.count(keys.data_len());
        let mut out = Packed::new();
        for key in keys.iter() {
            self.memtable.get(key, &mut out);
        }
        Ok(out)
    }

    fn scan(&mut self, start: &[u8], end: Option<&[u8]>, limit: u32) -> Result<Packed, PluginError> {
        self.count(start.len());
        let mut out = Packed::new();
        self.memtable.scan(start, end, limit as usize, &mut out);
        Ok(out)
    }

    fn open_cursor(&mut self) -> Result<(), PluginError> {
        self.count(0);
        self.memtable.open_cursor();
        Ok(())
    }

    fn next_entries(&mut self, max_bytes: u32) -> Result<Packed, PluginError> {
        self.count(4);
        let mut out = Packed::new();
        self.memtable.next(max_bytes as usize, &mut out).map_err(|e| self.fail(true, "cursor.next", e))?;
        Ok(out)
    }

    fn load(&mut self, refs: Vec<u64>) -> Result<Packed, PluginError> {
        self.count(8 * refs.len());
        let mut out = Packed::with_capacity(refs.len(), refs.len() * 128);
        for reference in refs {
            let row = self.allocator.load(reference).map_err(|e| self.fail(false, "arena.load", e))?;
            out.push(row);
        }
        Ok(out)
    }

    fn stats(&mut self) -> Result<(Stats, Stats), PluginError> {
        Ok((self.memtable.stats(), self.allocator.stats()))
    }

    fn describe(&mut self) -> Result<(Description, Description), PluginError> {
        Ok(self.descriptions.clone())
    }

    fn reserved_bytes(&self) -> u64 {
        self.pool.reserved
    }

    fn guest_memory_bytes(&self) -> u64 {
        0
    }

    fn boundary(&self) -> Boundary {
        self.boundary
    }
}

/// A native serializer.
pub struct NativeSerializer<S: Serializer> {
    writer: Option<S>,
    description: Description,
    boundary: Boundary,
}

fn serializer_error(name: &str, operation: &str, e: Error) -> PluginError {
    PluginError::Guest { plugin: name.into(), operation: operation.into(), shard: 0, error: e.to_string() }
}

/// Creates the native twin of serializer `name`.
pub fn serializer(name: &str, params: &[(String, String)]) -> Result<Box<dyn FlushStrategy>, PluginError> {
    fn make<S: Serializer + Send>(name: &str, params: &[(String, String)]) -> Result<Box<dyn FlushStrategy>, PluginError> {
        let (writer, description) =
            construct(S::NAME, S::VERSION, params, S::create).map_err(|e| serializer_error(name, "writer.create", e))?;
        Ok(Box::new(NativeSerializer { writer: Some(writer), description, boundary: Boundary::default() }))
    }
    match name {
        "naive" => make::<flush_naive::NaiveWriter>(name, params),
        "lean" => make::<flush_lean::LeanWriter>(name, params),
        "block" => make::<flush_block::BlockWriter>(name, params),
        _ => Err(no_twin(name, 0)),
    }
}

impl<S: Serializer + Send> FlushStrategy for NativeSerializer<S> {
    fn write(&mut self, records: Packed) -> Result<Vec<u8>, PluginError> {
        self.boundary.calls += 1;
        self.boundary.bytes_in += records.data_len() as u64;
        let name = &self.description.name;
        let writer = self
            .writer
            .as_mut()
            .ok_or_else(|| serializer_error(name, "writer.write", Error::InvalidState("writer already finished".into())))?;
        let mut out = Vec::with_capacity(records.data_len() + records.data_len() / 4);
        for record in records.iter() {
            let record = memlab_sdk::FlushRecord::decode(record).map_err(|e| serializer_error(name, "writer.write", e))?;
            writer.write(record, &mut out).map_err(|e| serializer_error(name, "writer.write", e))?;
        }
        Ok(out)
    }

    fn finish(&mut self) -> Result<(Vec<u8>, Finished), PluginError> {
        self.boundary.calls += 1;
        let name = &self.description.name;
        let mut writer = self
            .writer
            .take()
            .ok_or_else(|| serializer_error(name, "writer.finish", Error::InvalidState("writer already finished".into())))?;
        let mut tail = Vec::new();
        let finished = writer.finish(&mut tail).map_err(|e| serializer_error(name, "writer.finish", e))?;
        Ok((tail, finished))
    }

    fn describe(&mut self) -> Result<Description, PluginError> {
        Ok(self.description.clone())
    }

    fn guest_memory_bytes(&self) -> u64 {
        0
    }

    fn boundary(&self) -> Boundary {
        self.boundary
    }
}

struct NativeReader<R: SegmentReader> {
    name: String,
    reader: R,
}

/// Opens a segment with the native twin of serializer `name`.
pub fn reader(name: &str, params: &[(String, String)], data: &[u8], index: &[u8]) -> Result<Box<dyn SegmentReading>, PluginError> {
    fn make<R: SegmentReader + Send>(
        name: &str,
        params: &[(String, String)],
        data: &[u8],
        index: &[u8],
    ) -> Result<Box<dyn SegmentReading>, PluginError> {
        let mut p = Params::new(params.to_vec());
        let reader = R::open(&mut p, data.to_vec(), index.to_vec()).map_err(|e| serializer_error(name, "reader.open", e))?;
        p.finish().map_err(|e| serializer_error(name, "reader.open", e))?;
        Ok(Box::new(NativeReader { name: name.into(), reader }))
    }
    match name {
        "naive" => make::<<flush_naive::NaiveWriter as Serializer>::Reader>(name, params, data, index),
        "lean" => make::<<flush_lean::LeanWriter as Serializer>::Reader>(name, params, data, index),
        "block" => make::<<flush_block::BlockWriter as Serializer>::Reader>(name, params, data, index),
        _ => Err(no_twin(name, 0)),
    }
}

impl<R: SegmentReader + Send> SegmentReading for NativeReader<R> {
    fn next(&mut self, max_bytes: u32) -> Result<Packed, PluginError> {
        let mut out = Packed::new();
        self.reader.next(max_bytes as usize, &mut out).map_err(|e| serializer_error(&self.name, "reader.next", e))?;
        Ok(out)
    }

    fn get(&mut self, keys: Packed) -> Result<Packed, PluginError> {
        let mut out = Packed::new();
        for key in keys.iter() {
            self.reader.get(key, &mut out).map_err(|e| serializer_error(&self.name, "reader.get", e))?;
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use memlab_sdk::Entry;

    #[test]
    fn entries_survive_a_native_round_trip() {
        let pool = Arc::new(MemoryPool::new(1 << 20, Default::default()));
        let mut shard = NativeShard::new("btree", &[], "per-row", &[], pool, 0).expect("twins exist");
        let mut entries = Packed::new();
        entries.push_with(|b| Entry { key: b"k", timestamp: 1, reference: 9 }.encode(b));
        shard.insert(&mut entries).expect("insert");
        shard.open_cursor().expect("cursor");
        let out = shard.next_entries(1024).expect("next");
        assert_eq!(out.len(), 1);
        assert_eq!(Entry::decode(out.get(0).expect("one")).expect("entry").reference, 9);
    }
}
