//! Concurrent instances as the native table drives them: through a
//! shared reference, from every writer thread at once, by the kind's one
//! dispatch and the same loops as a serialized build (`Serialized`, the
//! wasm export's). The contract's state rule (no insert once a cursor
//! opened) is an atomic flag; the flush's one cursor sits behind a lock
//! no writer takes.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};

use super::{ConcurrentAllocator, ConcurrentMemtable, Serialized};
use crate::allocator::native::{AllocatorCalls, dispatch as allocator_call};
use crate::contract::{Kind, Op};
use crate::memtable::native::{MemtableCalls, dispatch as memtable_call, no_cursor};
use crate::native::{Answer, Input, Made, SharedHosted};
use crate::twin::{AllocatorInstance, MemtableInstance};
use crate::{Error, Memtable, Packed, Pool};

/// A concurrent memtable, its freeze flag and its flush cursor.
pub struct SharedMemtable<M: ConcurrentMemtable> {
    instance: MemtableInstance<Serialized<M>>,
    frozen: AtomicBool,
    position: Mutex<Option<M::Position>>,
}

impl<M: ConcurrentMemtable> Made for SharedMemtable<M> {
    const KIND: Kind = Kind::Memtable;
    const NAME: &'static str = M::NAME;
    const VERSION: &'static str = M::VERSION;

    fn create(_op: Op, params: Vec<(String, String)>, _a: &[u8], _b: &[u8]) -> Result<Self, Error> {
        Ok(SharedMemtable { instance: MemtableInstance::create(params)?, frozen: AtomicBool::new(false), position: Mutex::new(None) })
    }
}

impl<M: ConcurrentMemtable> MemtableCalls for &SharedMemtable<M> {
    type Table = Serialized<M>;

    fn instance(&self) -> &MemtableInstance<Serialized<M>> {
        &self.instance
    }

    fn insert(&mut self, entries: &Packed) -> Result<(), Error> {
        if self.frozen.load(Ordering::Acquire) {
            return Err(Error::InvalidState("insert after a cursor was opened".into()));
        }
        self.instance.table().inner().insert_batch(entries)
    }

    fn open_cursor(&mut self) {
        self.frozen.store(true, Ordering::Release);
        *self.position.lock().unwrap_or_else(PoisonError::into_inner) = Some(self.instance.table().cursor());
    }

    fn next(&mut self, max_bytes: u32, out: &mut Packed) -> Result<(), Error> {
        let mut position = self.position.lock().unwrap_or_else(PoisonError::into_inner);
        self.instance.next(position.as_mut().ok_or_else(no_cursor)?, max_bytes, out);
        Ok(())
    }
}

impl<M: ConcurrentMemtable> SharedHosted for SharedMemtable<M> {
    fn call(&self, op: Op, input: Input<'_>, answer: &mut Answer) -> Result<(), Error> {
        memtable_call(&mut &*self, op, input, answer)
    }
}

/// A concurrent allocator and what it applied.
pub struct SharedArena<A: ConcurrentAllocator> {
    instance: AllocatorInstance<Serialized<A>>,
}

impl<A: ConcurrentAllocator> Made for SharedArena<A> {
    const KIND: Kind = Kind::Allocator;
    const NAME: &'static str = A::NAME;
    const VERSION: &'static str = A::VERSION;

    fn create(_op: Op, params: Vec<(String, String)>, _a: &[u8], _b: &[u8]) -> Result<Self, Error> {
        Ok(SharedArena { instance: AllocatorInstance::create(params)? })
    }
}

impl<A: ConcurrentAllocator> AllocatorCalls for &SharedArena<A> {
    type Arena = Serialized<A>;

    fn instance(&self) -> &AllocatorInstance<Serialized<A>> {
        &self.instance
    }

    fn store(&mut self, pool: &mut dyn Pool, rows: &Packed) -> Result<Vec<u64>, Error> {
        let mut refs = Vec::with_capacity(rows.len());
        self.instance.arena().inner().store_batch(pool, rows, &mut refs)?;
        Ok(refs)
    }
}

impl<A: ConcurrentAllocator> SharedHosted for SharedArena<A> {
    fn call(&self, op: Op, input: Input<'_>, answer: &mut Answer) -> Result<(), Error> {
        allocator_call(&mut &*self, op, input, answer)
    }
}
