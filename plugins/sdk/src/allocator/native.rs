//! The allocator's instance as the native table drives it: each operation
//! by its code, its answer in the thread's buffers. One dispatch serves
//! both an instance one caller at a time calls (`AllocatorOf`) and a
//! concurrent one every writer stores into at once (`&SharedArena`), and
//! both run `AllocatorInstance`'s loops, as the wasm export does.

use crate::contract::{Kind, Op};
use crate::native::entry::unknown;
use crate::native::{Answer, Hosted, Input, Made, PoolTable, encode_description, encode_stats, status};
use crate::twin::AllocatorInstance;
use crate::{Allocator, Error, Packed, Pool};

/// An allocator instance as the native table calls it.
pub(crate) trait AllocatorCalls {
    /// The strategy whose loops run.
    type Arena: Allocator;
    /// The instance: its loads, description and counters.
    fn instance(&self) -> &AllocatorInstance<Self::Arena>;
    /// Stores a batch of rows; one ref per row.
    fn store(&mut self, pool: &mut dyn Pool, rows: &Packed) -> Result<Vec<u64>, Error>;
}

/// Runs `op` on `a`, its answer in `answer`.
pub(crate) fn dispatch(a: &mut impl AllocatorCalls, op: Op, mut input: Input<'_>, answer: &mut Answer) -> Result<(), Error> {
    match op {
        Op::AllocatorStoreRows => {
            let pool = input.pool.ok_or_else(|| Error::InvalidState("store without a pool".into()))?;
            let refs = a.store(&mut HostPool(pool), input.packed()?)?;
            answer.bytes.extend(refs.iter().flat_map(|r| r.to_le_bytes()));
        }
        Op::AllocatorLoad => {
            a.instance().load(input.refs()?, &mut answer.packed)?;
            answer.seal();
        }
        Op::AllocatorDescribe => answer.put(encode_description(a.instance().description())),
        Op::AllocatorStats => answer.put(encode_stats(&a.instance().stats())),
        other => return Err(unknown(other, "allocator")),
    }
    Ok(())
}

/// The host's pool as the allocator sees it, for one call.
pub(crate) struct HostPool<'a>(pub(crate) &'a PoolTable);

fn pool_result(code: u32) -> Result<(), Error> {
    match code {
        status::OK => Ok(()),
        _ => Err(Error::PoolFull),
    }
}

impl Pool for HostPool<'_> {
    fn reserve(&mut self, bytes: u64) -> Result<(), Error> {
        // SAFETY: the host lent this table and its context for the call.
        pool_result(unsafe { (self.0.reserve)(self.0.ctx, bytes) })
    }

    fn reserve_each(&mut self, sizes: &[u64]) -> Result<(), Error> {
        // SAFETY: as above; `sizes` outlives the call.
        pool_result(unsafe { (self.0.reserve_each)(self.0.ctx, sizes.as_ptr(), sizes.len()) })
    }

    fn release(&mut self, bytes: u64) {
        // SAFETY: as above.
        unsafe { (self.0.release)(self.0.ctx, bytes) }
    }
}

/// An allocator as the native table holds it.
pub struct AllocatorOf<A: Allocator>(AllocatorInstance<A>);

impl<A: Allocator + Send> Made for AllocatorOf<A> {
    const KIND: Kind = Kind::Allocator;
    const NAME: &'static str = A::NAME;
    const VERSION: &'static str = A::VERSION;

    fn create(_op: Op, params: Vec<(String, String)>, _a: &[u8], _b: &[u8]) -> Result<Self, Error> {
        AllocatorInstance::create(params).map(AllocatorOf)
    }
}

impl<A: Allocator> AllocatorCalls for AllocatorOf<A> {
    type Arena = A;

    fn instance(&self) -> &AllocatorInstance<A> {
        &self.0
    }

    fn store(&mut self, pool: &mut dyn Pool, rows: &Packed) -> Result<Vec<u64>, Error> {
        self.0.store(pool, rows)
    }
}

impl<A: Allocator + Send> Hosted for AllocatorOf<A> {
    fn call(&mut self, op: Op, input: Input<'_>, answer: &mut Answer) -> Result<(), Error> {
        dispatch(self, op, input, answer)
    }
}
