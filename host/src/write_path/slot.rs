//! One shard's place in the write path. Its live generation sits behind
//! an atomic pointer (`arc-swap`), whose load takes a slot of the
//! writer's own thread: writers of a concurrent shard take no lock and
//! write no shared line. A shard whose runtime takes one caller at a time
//! has, beside it, the lock its writers take in turn (`Turn`), which
//! orders a batch's log record with its store and insert, and under which
//! a trapped shard recovers. A switch swaps the fresh generation in, then
//! waits for the last writer inside to let go of the old one: then the
//! generation is the flush's alone (Cassandra's `OpOrder` barrier does
//! the same job).

use std::sync::{Arc, Mutex};

use arc_swap::ArcSwapOption;

use crate::commitlog::Position;
use crate::seam::{CommitLogFormat, SeamError, Shard};

/// What a serial shard's writers do in turn, under its lock.
#[derive(Default)]
pub(super) struct Turn {
    /// The shard's commit-log format, when the variant keeps a log.
    pub(super) format: Option<CommitLogFormat>,
    /// The live generation's log records (end, length), in order: what a
    /// recovery replays.
    pub(super) logged: Vec<(Position, u64)>,
}

/// A shard's live generation (`None` once the write path was drained).
pub(super) struct ShardSlot {
    live: ArcSwapOption<Shard>,
    pub(super) turn: Mutex<Turn>,
}

pub(super) fn drained() -> SeamError {
    SeamError::Host { operation: "write", detail: "the write path was drained".into() }
}

/// `shard` taking concurrent writers, or an error naming what does not.
pub(super) fn share(shard: Shard) -> Result<Shard, SeamError> {
    shard.share().map_err(|s| SeamError::Host {
        operation: "write",
        detail: format!(
            "`{}` and `{}` must both take concurrent writers to run without the shard lock (native, `export!(concurrent ...)`)",
            s.memtable_plugin(),
            s.allocator_plugin()
        ),
    })
}

/// Generation 0 of every shard, taking concurrent writers as `want` says
/// (`PathSettings::concurrent`), and whether they do.
pub(super) fn share_all(shards: Vec<Shard>, want: Option<bool>) -> Result<(Vec<Shard>, bool), SeamError> {
    if want == Some(false) {
        return Ok((shards, false));
    }
    let mut shared = Vec::with_capacity(shards.len());
    let mut rest = shards.into_iter();
    for shard in rest.by_ref() {
        match (shard.share(), want) {
            (Ok(one), _) => shared.push(one),
            (Err(shard), Some(true)) => return Err(share(*shard).err().unwrap_or_else(drained)),
            // The first shard tells: every shard of a variant runs the same strategies.
            (Err(shard), _) => return Ok((std::iter::once(*shard).chain(rest).collect(), false)),
        }
    }
    Ok((shared, true))
}

impl ShardSlot {
    pub(super) fn new(live: Shard) -> Self {
        ShardSlot { live: ArcSwapOption::from_pointee(live), turn: Mutex::default() }
    }

    /// Runs `f` on the live generation, beside other writers.
    pub(super) fn with<R>(&self, f: impl FnOnce(&Shard) -> Result<R, SeamError>) -> Result<R, SeamError> {
        let live = self.live.load();
        f(live.as_deref().ok_or_else(drained)?)
    }

    /// Swaps the live generation for `fresh` once every writer inside
    /// left; the old one, the caller's alone.
    pub(super) fn swap(&self, fresh: Option<Shard>) -> Option<Shard> {
        let mut old = self.live.swap(fresh.map(Arc::new));
        // A writer that loaded the old generation still holds it; once the
        // last one lets go, it is the caller's alone.
        loop {
            match old.map(Arc::try_unwrap) {
                None => return None,
                Some(Ok(shard)) => return Some(shard),
                Some(Err(held)) => {
                    old = Some(held);
                    std::thread::yield_now();
                }
            }
        }
    }

    /// Runs `f` on the live generation alone, then puts it back: a serial
    /// shard's recovery, under its turn (no writer is in).
    pub(super) fn alone<R>(&self, f: impl FnOnce(&mut Shard) -> Result<R, SeamError>) -> Result<R, SeamError> {
        let mut live = self.swap(None).ok_or_else(drained)?;
        let result = f(&mut live);
        self.live.store(Some(Arc::new(live)));
        result
    }
}
