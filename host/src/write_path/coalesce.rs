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
//!   `MAX_WINDOW`, and never once every client's batch is queued;
//! - `window`: as `group`, but every leader first waits a fixed window
//!   (in µs) for company, however few clients there are: the fixed
//!   strategy CASSANDRA-8457 measured as a loss at low concurrency.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Mutex, MutexGuard};
use std::thread::Thread;
use std::time::{Duration, Instant};

use memlab_sdk::Packed;

use super::WritePath;
use crate::commitlog::Position;
use crate::router::RoutedBatch;
use crate::seam::SeamError;

/// How client batches reach the plugins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Coalescing {
    /// One call per client batch.
    #[default]
    None,
    /// Leader/follower group commit.
    Group,
    /// Group commit with a moving-average window.
    Adaptive,
    /// Group commit after a fixed wait, in µs (`{ window = 100 }`).
    Window(u32),
}

/// The longest fixed window a config may ask for, in µs.
pub const MAX_FIXED_WINDOW_US: u32 = 100_000;

impl std::fmt::Display for Coalescing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Coalescing::None => "none",
            Coalescing::Group => "group",
            Coalescing::Adaptive => "adaptive",
            Coalescing::Window(us) => return write!(f, "window {us} µs"),
        })
    }
}

/// The longest an adaptive leader waits for company.
const MAX_WINDOW: Duration = Duration::from_micros(200);
/// A group never takes more than this many client batches.
const MAX_GROUP: usize = 64;
/// Groups one leader writes in a row before it hands over.
const MAX_LEADS: usize = 8;

/// A written batch and where its group's log record ends, if logged.
type Outcome = (RoutedBatch, Result<Option<Position>, SeamError>);

/// One shard's queue.
#[derive(Default)]
pub(super) struct Group {
    state: Mutex<GroupState>,
}

/// A queued client batch: its ticket, the batch, when it arrived, and the
/// thread to wake when it is written.
type Job = (u64, RoutedBatch, Instant, Thread);

#[derive(Default)]
struct GroupState {
    queue: Vec<Job>,
    /// The leader, while one is gathering or writing a group.
    leader: Option<Thread>,
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

/// How long a parked writer sleeps before it looks again by itself:
/// every wake-up is explicit, this only bounds a missed one. Short
/// rechecks would cost a hundred parked threads a wake-up each, every
/// time (at 1 ms, 100,000 context switches a second).
const RECHECK: Duration = Duration::from_millis(50);

/// Waits up to `left`: short waits yield (a timed sleep overshoots by
/// the kernel's timer slack, ~50 µs), longer ones park until woken.
fn pause(left: Duration) {
    if left > Duration::from_micros(150) {
        std::thread::park_timeout(left - Duration::from_micros(100));
    } else {
        std::thread::yield_now();
    }
}

impl WritePath {
    /// Writes `batch` as part of a group; returns when it is written.
    /// Each writer waits on its own wake-up (the leader unparks exactly
    /// the writers it wrote for), so a group of many threads costs no
    /// thundering herd.
    pub(super) fn write_grouped(&self, batch: &mut RoutedBatch, mode: Coalescing) -> Result<Option<Position>, SeamError> {
        let group = &self.groups[batch.shard];
        let me = std::thread::current();
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
        state.queue.push((ticket, std::mem::take(batch), now, me.clone()));
        // A leader gathering company counts again.
        if let Some(leader) = &state.leader {
            leader.unpark();
        }
        loop {
            if let Some((written, result)) = state.done.remove(&ticket) {
                *batch = written;
                return result;
            }
            if state.leader.is_some() {
                drop(state);
                std::thread::park_timeout(RECHECK);
                state = group.lock();
                continue;
            }
            state.leader = Some(me.clone());
            // A leader keeps leading while batches wait (up to
            // `MAX_LEADS` groups): handing over would cost a wake-up, a
            // gap in which nobody writes.
            for round in 1..=MAX_LEADS {
                state = self.gather(group, state, mode);
                let take = state.queue.len().min(MAX_GROUP);
                let jobs: Vec<Job> = state.queue.drain(..take).collect();
                drop(state);
                let started = Instant::now();
                let waited: u64 = jobs.iter().map(|(_, _, at, _)| started.duration_since(*at).as_nanos() as u64).sum();
                self.metrics.coalesce_wait_ns.fetch_add(waited, Ordering::Relaxed);
                self.metrics.groups.fetch_add(1, Ordering::Relaxed);
                let (outcomes, writers) = self.write_jobs(jobs);
                let call_ns = started.elapsed().as_nanos() as f64;
                state = group.lock();
                state.mean_call_ns += (call_ns - state.mean_call_ns) / 8.0;
                state.done.extend(outcomes);
                writers.iter().filter(|t| t.id() != me.id()).for_each(Thread::unpark);
                if state.queue.is_empty() || round == MAX_LEADS {
                    break;
                }
            }
            state.leader = None;
            // The next queued writer leads the next group.
            if let Some((_, _, _, next)) = state.queue.first() {
                next.unpark();
            }
        }
    }

    /// A leader's wait for company before it takes the queue: a fixed
    /// window, or the adaptive one while arrivals come faster than a call.
    fn gather<'g>(&self, group: &'g Group, mut state: MutexGuard<'g, GroupState>, mode: Coalescing) -> MutexGuard<'g, GroupState> {
        let (window, enough) = match mode {
            Coalescing::Window(us) => (Some(Duration::from_micros(u64::from(us))), MAX_GROUP),
            Coalescing::Adaptive if state.queue.len() < self.clients.min(MAX_GROUP) && state.mean_gap_ns < state.mean_call_ns => {
                (Some(Duration::from_nanos(state.mean_gap_ns as u64).min(MAX_WINDOW)), self.clients.min(MAX_GROUP))
            }
            _ => (None, 0),
        };
        if let Some(window) = window {
            let until = Instant::now() + window;
            while state.queue.len() < enough {
                let left = until.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    break;
                }
                drop(state);
                pause(left);
                state = group.lock();
            }
        }
        state
    }

    /// One store call and one insert call for all `jobs` of one shard.
    /// Returns each job's outcome, and the threads to wake.
    fn write_jobs(&self, mut jobs: Vec<Job>) -> (Vec<(u64, Outcome)>, Vec<Thread>) {
        // A group of one is written as it is: no copy into a shared batch.
        if let [(ticket, batch, _, thread)] = jobs.as_mut_slice() {
            let result = self.write_alone(batch);
            return (vec![(*ticket, (std::mem::take(batch), result))], vec![thread.clone()]);
        }
        let shard = jobs[0].1.shard;
        let mut rows = Packed::with_capacity(jobs.iter().map(|j| j.1.rows.len()).sum(), jobs.iter().map(|j| j.1.rows.data_len()).sum());
        for (_, b, _, _) in &jobs {
            b.rows.iter().for_each(|r| rows.push(r));
        }
        // Hashed for the ledger before the lock, job by job in the order written.
        let noted = self.ledgered.then(|| {
            crate::seam::ledger::Noted::concat(
                jobs.iter_mut().map(|(_, b, _, _)| b.noted.take().unwrap_or_else(|| crate::seam::ledger::Noted::of(&b.rows, &b.entries))),
            )
        });
        // The group's rows are logged as one record, by the leader: one
        // append, and in `batch` mode one sync, for the group (RocksDB's
        // write group).
        let mut times = super::CallTimes::default();
        let mut turn = self.lock(shard);
        let result = self.logged_apply(shard, &mut turn, &mut times, &mut rows, noted.as_ref(), |live, calls, rows| {
            let mut clock = super::CallClock::start();
            let refs = live.store_rows(rows)?;
            clock.stored(calls, rows.data_len());
            let mut entries = Packed::new();
            let mut at = 0;
            for (_, b, _, _) in &mut jobs {
                let n = b.rows.len();
                b.set_refs(refs.get(at..at + n).unwrap_or_default());
                at += n;
                b.entries.iter().for_each(|e| entries.push(e));
            }
            live.insert_noted(&mut entries, noted.as_ref())?;
            clock.inserted(calls, entries.data_len());
            Ok(())
        });
        self.unlock(turn);
        self.timed(&times);
        jobs.into_iter()
            .map(|(ticket, batch, _, thread)| {
                let outcome = match &result {
                    Ok(at) => Ok(*at),
                    Err(e) => Err(e.clone()),
                };
                ((ticket, (batch, outcome)), thread)
            })
            .unzip()
    }
}
