//! Concurrent instances as the native table drives them: through a
//! shared reference, from every writer thread at once. The contract's
//! state rule (no insert once a cursor opened) is an atomic flag; the
//! flush's one cursor sits behind a lock no writer takes.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use super::{ConcurrentAllocator, ConcurrentMemtable};
use crate::allocator::native::HostPool;
use crate::contract::{Kind, Op};
use crate::native::entry::{limit, unknown};
use crate::native::{Answer, Input, Made, SharedHosted, encode_description, encode_stats};
use crate::params::construct;
use crate::{Description, Entry, Error};

/// A concurrent memtable, its freeze flag and its flush cursor.
pub struct SharedMemtable<M: ConcurrentMemtable> {
    table: M,
    description: Description,
    frozen: AtomicBool,
    position: Mutex<Option<M::Position>>,
}

impl<M: ConcurrentMemtable> Made for SharedMemtable<M> {
    const KIND: Kind = Kind::Memtable;
    const NAME: &'static str = M::NAME;
    const VERSION: &'static str = M::VERSION;

    fn create(_op: Op, params: Vec<(String, String)>, _a: &[u8], _b: &[u8]) -> Result<Self, Error> {
        let (table, description) = construct(M::NAME, M::VERSION, params, M::create)?;
        Ok(SharedMemtable { table, description, frozen: AtomicBool::new(false), position: Mutex::new(None) })
    }
}

impl<M: ConcurrentMemtable> SharedHosted for SharedMemtable<M> {
    fn call(&self, op: Op, mut input: Input<'_>, answer: &mut Answer) -> Result<(), Error> {
        match op {
            Op::MemtableInsert => {
                if self.frozen.load(Ordering::Acquire) {
                    return Err(Error::InvalidState("insert after a cursor was opened".into()));
                }
                self.table.insert_batch(input.packed()?)?;
            }
            Op::MemtableGet => {
                for key in input.packed()?.iter() {
                    match self.table.get(key) {
                        Some(v) => answer.packed.push_with(|buf| Entry { key, timestamp: v.timestamp, reference: v.reference }.encode(buf)),
                        None => answer.packed.push(&[]),
                    }
                }
                answer.seal();
            }
            Op::MemtableScan => {
                self.table.scan(input.a, input.b, limit(input.n) as usize, &mut answer.packed);
                answer.seal();
            }
            Op::MemtableOpenCursor => {
                self.frozen.store(true, Ordering::Release);
                *self.position.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(self.table.cursor());
            }
            Op::CursorNext => {
                let mut position = self.position.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                let position = position.as_mut().ok_or_else(|| Error::InvalidState("no cursor is open".into()))?;
                self.table.next(position, limit(input.n) as usize, &mut answer.packed);
                answer.seal();
            }
            Op::MemtableDescribe => answer.put(encode_description(&self.description)),
            Op::MemtableStats => answer.put(encode_stats(&self.table.stats())),
            other => return Err(unknown(other, "memtable")),
        }
        Ok(())
    }
}

/// A concurrent allocator and what it applied.
pub struct SharedArena<A: ConcurrentAllocator> {
    arena: A,
    description: Description,
}

impl<A: ConcurrentAllocator> Made for SharedArena<A> {
    const KIND: Kind = Kind::Allocator;
    const NAME: &'static str = A::NAME;
    const VERSION: &'static str = A::VERSION;

    fn create(_op: Op, params: Vec<(String, String)>, _a: &[u8], _b: &[u8]) -> Result<Self, Error> {
        let (arena, description) = construct(A::NAME, A::VERSION, params, A::create)?;
        Ok(SharedArena { arena, description })
    }
}

impl<A: ConcurrentAllocator> SharedHosted for SharedArena<A> {
    fn call(&self, op: Op, mut input: Input<'_>, answer: &mut Answer) -> Result<(), Error> {
        match op {
            Op::AllocatorStoreRows => {
                let pool = input.pool.ok_or_else(|| Error::InvalidState("store without a pool".into()))?;
                let rows = input.packed()?;
                let mut refs = Vec::with_capacity(rows.len());
                self.arena.store_batch(&mut HostPool(pool), rows, &mut refs)?;
                answer.bytes.extend(refs.iter().flat_map(|r| r.to_le_bytes()));
            }
            Op::AllocatorLoad => {
                for &reference in input.refs()? {
                    answer.packed.push(self.arena.load(reference)?);
                }
                answer.seal();
            }
            Op::AllocatorDescribe => answer.put(encode_description(&self.description)),
            Op::AllocatorStats => answer.put(encode_stats(&self.arena.stats())),
            other => return Err(unknown(other, "allocator")),
        }
        Ok(())
    }
}
