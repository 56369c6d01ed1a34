//! The allocator's instance, as the export glue and the host's native
//! twins drive it.

use crate::params::construct;
use crate::{Allocator, Description, Error, Packed, Pool, Stats};

/// An allocator and what it applied.
pub struct AllocatorInstance<A: Allocator> {
    arena: A,
    description: Description,
}

impl<A: Allocator> AllocatorInstance<A> {
    /// `create` with its parameters.
    pub fn create(params: Vec<(String, String)>) -> Result<Self, Error> {
        let (arena, description) = construct(A::NAME, A::VERSION, params, A::create)?;
        Ok(AllocatorInstance { arena, description })
    }

    /// Stores a batch of rows; one ref per row.
    pub fn store(&mut self, pool: &mut dyn Pool, rows: &Packed) -> Result<Vec<u64>, Error> {
        let mut refs = Vec::with_capacity(rows.len());
        self.arena.store_batch(pool, rows, &mut refs)?;
        Ok(refs)
    }

    /// The allocator itself (a concurrent one's stores take `&self`).
    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) fn arena(&self) -> &A {
        &self.arena
    }

    /// The rows behind `refs`, in order.
    pub fn load(&self, refs: &[u64], out: &mut Packed) -> Result<(), Error> {
        for &reference in refs {
            out.push(self.arena.load(reference)?);
        }
        Ok(())
    }

    /// What `create` applied.
    pub fn description(&self) -> &Description {
        &self.description
    }

    /// The allocator's counters.
    pub fn stats(&self) -> Stats {
        self.arena.stats()
    }
}
