//! Write coalescing at the boundary. One call costs about as much as ~100
//! rows of work, so client batches bound for one shard can share a call:
//! - `none`: one store and one insert call per client batch;
//! - `group`: leader/follower group commit, as RocksDB's write thread: the
//!   first writer to find no leader leads, takes every queued batch for
//!   the shard, writes them in one store and one insert call, and hands
//!   each follower its result;
//! - `adaptive`: as `group`, but a leader that finds fewer batches queued
//!   than there are clients first waits for more, when the moving average
//!   of the gap between arrivals says the next one comes sooner than a
//!   call takes (CASSANDRA-8457's idea); never longer than that gap nor
//!   `MAX_WINDOW`, and never once every client's batch is queued.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use memlab_sdk::Packed;

use super::WritePath;
use crate::router::RoutedBatch;
use crate::seam::SeamError;

/// How client batches reach the plugins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Coalescing {
    /// One call per client batch.
    #[default]
    None,
    /// Leader/follower group commit.
    Group,
    /// Group commit with a moving-average window.
    Adaptive,
}

impl std::fmt::Display for Coalescing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Coalescing::None => "none",
            Coalescing::Group => "group",
            Coalescing::Adaptive => "adaptive",
        })
    }
}

/// The longest an adaptive leader waits for company.
const MAX_WINDOW: Duration = Duration::from_micros(200);
/// A group never takes more than this many client batches.
const MAX_GROUP: usize = 64;

type Outcome = (RoutedBatch, Result<(), SeamError>);

/// One shard's queue.
#[derive(Default)]
pub(super) struct Group {
    state: Mutex<GroupState>,
    changed: Condvar,
}

#[derive(Default)]
struct GroupState {
    queue: Vec<(u64, RoutedBatch, Instant)>,
    leading: bool,
    done: HashMap<u64, Outcome>,
    next_ticket: u64,
    last_arrival: Option<Instant>,
    mean_gap_ns: f64,
    mean_call_ns: f64,
}

impl Group {
    fn lock(&self) -> MutexGuard<'_, GroupState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl WritePath {
    /// Writes `batch` as part of a group; returns when it is written.
    pub(super) fn write_grouped(&self, batch: &mut RoutedBatch, adaptive: bool) -> Result<(), SeamError> {
        let group = &self.groups[batch.shard];
        let mut state = group.lock();
        let ticket = state.next_ticket;
        state.next_ticket += 1;
        let now = Instant::now();
        if let Some(last) = state.last_arrival {
            // An exponential moving average of the gap, weight 1/8.
            let gap = now.duration_since(last).as_nanos() as f64;
            state.mean_gap_ns += (gap - state.mean_gap_ns) / 8.0;
        }
        state.last_arrival = Some(now);
        state.queue.push((ticket, std::mem::take(batch), now));
        group.changed.notify_all();
        loop {
            if let Some((written, result)) = state.done.remove(&ticket) {
                *batch = written;
                return result;
            }
            if state.leading {
                state = group.changed.wait(state).unwrap_or_else(|p| p.into_inner());
                continue;
            }
            state.leading = true;
            let enough = self.clients.min(MAX_GROUP);
            if adaptive && state.queue.len() < enough && state.mean_gap_ns < state.mean_call_ns {
                let until = Instant::now() + Duration::from_nanos(state.mean_gap_ns as u64).min(MAX_WINDOW);
                while state.queue.len() < enough {
                    let left = until.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        break;
                    }
                    state = group.changed.wait_timeout(state, left).unwrap_or_else(|p| p.into_inner()).0;
                }
            }
            let take = state.queue.len().min(MAX_GROUP);
            let jobs: Vec<_> = state.queue.drain(..take).collect();
            drop(state);
            let started = Instant::now();
            let waited: u64 = jobs.iter().map(|(_, _, at)| started.duration_since(*at).as_nanos() as u64).sum();
            self.metrics.coalesce_wait_ns.fetch_add(waited, Ordering::Relaxed);
            self.metrics.groups.fetch_add(1, Ordering::Relaxed);
            let outcomes = self.write_jobs(jobs);
            let call_ns = started.elapsed().as_nanos() as f64;
            state = group.lock();
            state.mean_call_ns += (call_ns - state.mean_call_ns) / 8.0;
            state.done.extend(outcomes);
            state.leading = false;
            group.changed.notify_all();
        }
    }

    /// One store call and one insert call for all `jobs` of one shard.
    fn write_jobs(&self, mut jobs: Vec<(u64, RoutedBatch, Instant)>) -> Vec<(u64, Outcome)> {
        let shard = jobs[0].1.shard;
        let mut rows = Packed::with_capacity(jobs.iter().map(|j| j.1.rows.len()).sum(), jobs.iter().map(|j| j.1.rows.data_len()).sum());
        for (_, b, _) in &jobs {
            b.rows.iter().for_each(|r| rows.push(r));
        }
        let result = (|| -> Result<(), SeamError> {
            let mut slot = self.lock(shard);
            let (live, calls) = slot.timed()?;
            let mut clock = super::CallClock::start();
            let refs = live.store_rows(&mut rows)?;
            clock.stored(calls, rows.data_len());
            let mut entries = Packed::new();
            let mut at = 0;
            for (_, b, _) in &mut jobs {
                let n = b.rows.len();
                b.set_refs(refs.get(at..at + n).unwrap_or_default());
                at += n;
                b.entries.iter().for_each(|e| entries.push(e));
            }
            live.insert(&mut entries)?;
            clock.inserted(calls, entries.data_len());
            Ok(())
        })();
        jobs.into_iter()
            .map(|(ticket, batch, _)| {
                let outcome = match &result {
                    Ok(()) => Ok(()),
                    Err(e) => Err(e.clone()),
                };
                (ticket, (batch, outcome))
            })
            .collect()
    }
}
