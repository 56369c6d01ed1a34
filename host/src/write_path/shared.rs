//! The write path of a concurrent shard: its live generation behind an
//! atomic pointer (`arc-swap`), whose load takes a slot of the writer's
//! own thread, so writers take no lock and write no shared line; they call
//! the memtable and the allocator at once. A switch swaps the fresh
//! generation in, then waits for the last writer inside to let go of the
//! old one: then the generation is the flush's alone (Cassandra's
//! `OpOrder` barrier does the same job). What a writer measures it keeps
//! on a line of its own.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use arc_swap::ArcSwapOption;
use crossbeam::utils::CachePadded;
use thread_local::ThreadLocal;

use super::metrics::{CallClock, CallTimes, OwnCallTimes};
use crate::router::RoutedBatch;
use crate::seam::ledger::Noted;
use crate::seam::{SeamError, Shard, SharedShard};

/// Every shard's live generation, and what writers measured of it.
pub(super) struct SharedSlots {
    live: Vec<ArcSwapOption<SharedShard>>,
    /// Call times, each writer's its own (timing its calls moves no
    /// counter another writer moves).
    calls: ThreadLocal<CachePadded<OwnCallTimes>>,
    /// The most writers the host saw inside one memtable at once.
    most_inside: AtomicU64,
}

fn drained() -> SeamError {
    SeamError::Host { operation: "write", detail: "the write path was drained".into() }
}

/// `shard` taking concurrent writers, or an error naming what is not.
pub(super) fn share(shard: Shard) -> Result<SharedShard, SeamError> {
    shard.share().map_err(|s| SeamError::Host {
        operation: "write",
        detail: format!(
            "`{}` and `{}` must both take concurrent writers to run without the shard lock (native, `export!(concurrent ...)`)",
            s.memtable_plugin(),
            s.allocator_plugin()
        ),
    })
}

impl SharedSlots {
    /// Generation 0 of every shard, taking concurrent writers as `want`
    /// says (`PathSettings::concurrent`); the shards back where they stay
    /// under the lock.
    pub(super) fn new(shards: Vec<Shard>, want: Option<bool>) -> Result<Result<Self, Vec<Shard>>, SeamError> {
        if want == Some(false) {
            return Ok(Err(shards));
        }
        let mut live = Vec::with_capacity(shards.len());
        let mut rest = shards.into_iter();
        for shard in rest.by_ref() {
            match (shard.share(), want) {
                (Ok(shared), _) => live.push(ArcSwapOption::from_pointee(shared)),
                (Err(shard), Some(true)) => return Err(share(*shard).err().unwrap_or_else(drained)),
                // The first shard tells: every shard of a variant runs the same strategies.
                (Err(shard), _) => return Ok(Err(std::iter::once(*shard).chain(rest).collect())),
            }
        }
        Ok(Ok(SharedSlots { live, calls: ThreadLocal::new(), most_inside: AtomicU64::new(0) }))
    }

    /// Runs `f` on shard `i`'s live generation, beside other writers.
    pub(super) fn with<R>(&self, i: usize, f: impl FnOnce(&SharedShard) -> Result<R, SeamError>) -> Result<R, SeamError> {
        let live = self.live[i].load();
        f(live.as_deref().ok_or_else(drained)?)
    }

    /// One client batch: its rows stored and its entries inserted, while
    /// other writers do the same in the same shard.
    pub(super) fn write(&self, batch: &mut RoutedBatch, ledgered: bool) -> Result<(), SeamError> {
        let RoutedBatch { rows, entries, noted: ahead, shard } = batch;
        let hashed = (ledgered && ahead.is_none()).then(|| Noted::of(rows, entries));
        let noted = if ledgered { hashed.as_ref().or(ahead.as_ref()) } else { None };
        let mut times = CallTimes::default();
        self.with(*shard, |live| {
            let mut clock = CallClock::start();
            let refs = live.store_rows(rows)?;
            clock.stored(&mut times, rows.data_len());
            crate::router::set_refs(entries, &refs);
            live.insert_noted(entries, noted)?;
            clock.inserted(&mut times, entries.data_len());
            Ok(())
        })?;
        self.calls.get_or(CachePadded::default).add(&times);
        Ok(())
    }

    /// Swaps shard `i`'s generation for `fresh` once every writer inside
    /// left; the old one, for the flush.
    pub(super) fn swap(&self, i: usize, fresh: Option<Shard>) -> Result<Option<Shard>, SeamError> {
        let fresh = fresh.map(share).transpose()?;
        let mut old = self.live[i].swap(fresh.map(Arc::new));
        // A writer that loaded the old generation still holds it; once the
        // last one lets go, it is the flush's alone.
        let old = loop {
            match old.map(Arc::try_unwrap) {
                None => break None,
                Some(Ok(shard)) => break Some(shard),
                Some(Err(held)) => {
                    old = Some(held);
                    std::thread::yield_now();
                }
            }
        };
        Ok(old.map(|old| {
            let (shard, most) = old.into_shard();
            self.most_inside.fetch_max(most, Ordering::Relaxed);
            shard
        }))
    }

    /// The writers' call times, summed.
    pub(super) fn call_times(&self) -> CallTimes {
        let mut sum = CallTimes::default();
        for own in self.calls.iter() {
            sum.add(&own.get());
        }
        sum
    }

    /// The most writers seen inside one memtable at once, over the
    /// generations switched so far (the drain switches the last).
    pub(super) fn most_inside(&self) -> u64 {
        self.most_inside.load(Ordering::Relaxed)
    }
}
