//! A shard runtime for unit tests that answers only what a test gives
//! it: every other call fails as "not called in this test". One stub for
//! every test of the checked types, so no test writes the traits out.

use memlab_sdk::{Description, Packed, Stats};

use super::{AllocatorRuntime, Fault, Kind, MemtableRuntime, SerialShardRuntime, ShardRuntime};

fn no<T>() -> Result<T, Fault> {
    Err(Fault::Contract("not called in this test".into()))
}

/// What a test's runtime answers; the rest of a shard's calls fail.
pub(crate) trait Stub: Send + 'static {
    /// `MemtableRuntime::insert`.
    fn insert(&mut self, _entries: &mut Packed) -> Result<(), Fault> {
        no()
    }
    /// `AllocatorRuntime::store_rows`.
    fn store_rows(&mut self, _rows: &mut Packed) -> Result<Vec<u64>, Fault> {
        no()
    }
    /// `AllocatorRuntime::reserved_bytes`.
    fn reserved_bytes(&self) -> u64 {
        0
    }
    /// The shard taking concurrent writers, where the test's runtime does.
    fn shared(self: Box<Self>) -> Result<Box<dyn ShardRuntime>, Box<Self>> {
        Err(self)
    }
}

impl<T: Stub> MemtableRuntime for T {
    fn insert(&mut self, entries: &mut Packed) -> Result<(), Fault> {
        Stub::insert(self, entries)
    }
    fn get(&mut self, _: Packed) -> Result<Packed, Fault> {
        no()
    }
    fn scan(&mut self, _: &[u8], _: Option<&[u8]>, _: u32) -> Result<Packed, Fault> {
        no()
    }
    fn open_cursor(&mut self) -> Result<(), Fault> {
        no()
    }
    fn next_entries(&mut self, _: u32, _: &mut Packed) -> Result<(), Fault> {
        no()
    }
    fn memtable_stats(&mut self) -> Result<Stats, Fault> {
        no()
    }
    fn describe_memtable(&mut self) -> Result<Description, Fault> {
        no()
    }
}

impl<T: Stub> AllocatorRuntime for T {
    fn store_rows(&mut self, rows: &mut Packed) -> Result<Vec<u64>, Fault> {
        Stub::store_rows(self, rows)
    }
    fn load(&mut self, _: &[u64], _: &mut Packed) -> Result<(), Fault> {
        no()
    }
    fn allocator_stats(&mut self) -> Result<Stats, Fault> {
        no()
    }
    fn describe_allocator(&mut self) -> Result<Description, Fault> {
        no()
    }
    fn reserved_bytes(&self) -> u64 {
        Stub::reserved_bytes(self)
    }
    fn reservations(&self) -> u64 {
        0
    }
    fn pool_refused(&self) -> bool {
        false
    }
    fn allocator_baseline(&self) -> Option<u64> {
        None
    }
}

impl<T: Stub> SerialShardRuntime for T {
    fn guest_memory_bytes(&self) -> u64 {
        0
    }
    fn memory_of(&self, _: Kind) -> Option<u64> {
        None
    }
    fn into_shared(self: Box<Self>) -> Result<Box<dyn ShardRuntime>, Box<dyn SerialShardRuntime>> {
        self.shared().map_err(|back| back as Box<dyn SerialShardRuntime>)
    }
}
