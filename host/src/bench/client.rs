//! A client thread: takes its ops from the stream in order, paces them to
//! the target rate, and times each from its intended start.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use super::failures::Failures;
use super::histogram;
use super::live::Live;
use crate::record::Failure;
use crate::router::{Ahead, Prepared, RoutedBatch};
use crate::seam::{Fault, SeamError};
use crate::workload::{Fingerprint, Op, OpKind, Stream};
use crate::write_path::WritePath;

/// When a client stops and how fast it goes.
pub(super) struct Plan {
    /// Stop this long after the start (duration mode).
    pub duration: Option<Duration>,
    /// Ops per second for this client (target rate mode).
    pub rate: Option<f64>,
    /// Ctrl-C: stop as `stop` would.
    pub interrupt: Option<std::sync::Arc<AtomicBool>>,
}

/// What each client brings back.
pub(super) struct ClientOutcome {
    /// Latency per op kind, in `OpKind` order.
    pub histograms: [Histogram<u64>; 3],
    /// Ops per kind that succeeded or failed.
    pub ops: [u64; 3],
    /// Rows inserted.
    pub rows: u64,
    /// Ops that failed.
    pub errors: u64,
    /// (thread, index) of every failed op.
    pub failed_ops: Vec<(usize, u64)>,
    /// Ops taken from the stream, failed ones included.
    pub taken: u64,
    /// The fingerprint of the ops taken.
    pub fingerprint: Fingerprint,
    /// Their shape print (the same whatever the salt).
    pub shape: Fingerprint,
    /// Point reads that found their row.
    pub read_hits: u64,
    /// Rows scans returned.
    pub scan_rows: u64,
    /// The first error, fatal or not, as its message.
    pub first_error: Option<String>,
    /// This thread's CPU time (its own clock: a noisy neighbour that
    /// takes the core does not count).
    pub cpu: Duration,
    /// Where this thread's wall time went.
    pub time: ClientTime,
}

/// A client thread's wall time by phase, from clock reads between an op's
/// steps (one op is one client batch): the phases tile the thread's time.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct ClientTime {
    /// From the thread's start to its last op's end.
    pub wall_ns: u64,
    /// Taking the next op from the stream, and the previous op's
    /// bookkeeping (histogram, fingerprint, interval counters).
    pub generate_ns: u64,
    /// Sleeping until an op's intended start (target rate).
    pub pace_ns: u64,
    /// Routing an insert's rows to its shard.
    pub route_ns: u64,
    /// `WritePath::write`: what the write path's own counters split up.
    pub write_ns: u64,
    /// Point reads and scans.
    pub read_ns: u64,
    /// Clock reads made for this breakdown alone.
    pub clock_reads: u64,
}

/// Where a client's ops come from.
#[derive(Clone, Copy)]
pub(super) enum Feed<'a> {
    /// Generated (or decoded from a stream file) and routed on the clock.
    Live(&'a Stream),
    /// Routed ahead, before the first variant (`Prepared`).
    Prepared(&'a Prepared),
}

/// Runs client `thread` until its ops end, the deadline passes, or a
/// failure stops the run. A fatal error (a trap, a broken contract) is
/// reported; a plugin's own `error` (say, pool-full) only fails the op.
pub(super) fn run(feed: Feed<'_>, thread: usize, path: &WritePath, live: &Live, plan: &Plan, failures: &Failures) -> ClientOutcome {
    let mut client = Client::new(feed, thread, plan);
    let (mut op, mut batch) = (Op::default(), RoutedBatch::default());
    for index in 0.. {
        if client.stops(index, failures) {
            break;
        }
        let Some(ahead) = client.take(index, &mut op) else { break };
        let op = match ahead {
            Some(Ahead::Other(other)) => other,
            Some(Ahead::Insert(_)) => {
                op.kind = OpKind::Insert;
                &op
            }
            None => &op,
        };
        let (intended, began) = client.pace(index);
        let (result, routed) = client.apply(path, op, ahead, &mut batch, began);
        client.tally((index, op.kind), result, [intended, began, routed], live, failures);
    }
    client.finish()
}

/// One client thread's state between its ops.
struct Client<'a> {
    out: ClientOutcome,
    feed: Feed<'a>,
    thread: usize,
    plan: &'a Plan,
    /// The live stream's ops, when they are not routed ahead.
    source: Option<crate::workload::OpSource>,
    limit: Option<u64>,
    cpu: Option<cpu_time::ThreadTime>,
    started: Instant,
    deadline: Option<Instant>,
    /// When the last op ended: the next one's generating starts there.
    last: Instant,
}

impl<'a> Client<'a> {
    fn new(feed: Feed<'a>, thread: usize, plan: &'a Plan) -> Self {
        let out = ClientOutcome {
            histograms: [histogram(), histogram(), histogram()],
            ops: [0; 3],
            rows: 0,
            errors: 0,
            failed_ops: Vec::new(),
            taken: 0,
            fingerprint: Fingerprint::default(),
            shape: Fingerprint::default(),
            read_hits: 0,
            scan_rows: 0,
            first_error: None,
            cpu: Duration::ZERO,
            time: ClientTime::default(),
        };
        let (limit, source) = match feed {
            Feed::Live(stream) => (stream.ops_for(thread), Some(stream.ops())),
            Feed::Prepared(prepared) => (Some(prepared.ops_for(thread)), None),
        };
        let cpu = cpu_time::ThreadTime::try_now().ok();
        let started = Instant::now();
        Client { out, feed, thread, plan, source, limit, cpu, started, deadline: plan.duration.map(|d| started + d), last: started }
    }

    /// Whether op `index` is past the client's end.
    fn stops(&self, index: u64, failures: &Failures) -> bool {
        let interrupted = self.plan.interrupt.as_ref().is_some_and(|i| i.load(Ordering::Relaxed));
        self.limit.is_some_and(|n| index >= n) || failures.stopped() || interrupted || self.deadline.is_some_and(|d| Instant::now() >= d)
    }

    /// Takes op `index`: generated (or decoded) into `op` and folded into
    /// the fingerprint, or as routed ahead (its fingerprint read at the
    /// end). `None` when the stream has no more.
    #[inline]
    fn take(&mut self, index: u64, op: &mut Op) -> Option<Option<Ahead<'a>>> {
        let ahead = match (&mut self.source, self.feed) {
            (Some(source), _) => {
                if !source.op(self.thread, index, op) {
                    return None;
                }
                self.out.fingerprint.add(op);
                self.out.shape.add_shape(op);
                None
            }
            (None, Feed::Prepared(prepared)) => Some(prepared.op(self.thread, index)?),
            (None, Feed::Live(_)) => return None,
        };
        self.out.taken += 1;
        Some(ahead)
    }

    /// Waits until op `index`'s intended start under a target rate: the
    /// intended start, and when the op began.
    #[inline]
    fn pace(&mut self, index: u64) -> (Instant, Instant) {
        let generated = Instant::now();
        self.out.time.generate_ns += nanos(generated - self.last);
        let Some(rate) = self.plan.rate else { return (generated, generated) };
        let at = self.started + Duration::from_secs_f64(index as f64 / rate);
        if let Some(wait) = at.checked_duration_since(generated) {
            std::thread::sleep(wait);
        }
        // Sleeping to the intended start, or to the end of a late wake-up.
        let began = at.max(generated);
        self.out.time.pace_ns += nanos(began - generated);
        (at, began)
    }

    /// Routes and writes an insert, or reads: the rows written, and when
    /// routing ended.
    #[inline]
    fn apply(&mut self, path: &WritePath, op: &Op, ahead: Option<Ahead<'_>>, batch: &mut RoutedBatch, began: Instant) -> (Result<u64, SeamError>, Instant) {
        let mut routed = began;
        let result = match op.kind {
            OpKind::Insert => match ahead {
                Some(Ahead::Insert(insert)) => {
                    insert.route(path.router(), batch);
                    Ok(())
                }
                _ => batch.route(path.router(), &op.rows),
            }
            .map_err(|e| SeamError::Host { operation: "route", detail: e.to_string() })
            .and_then(|()| {
                routed = Instant::now();
                self.out.time.clock_reads += 1;
                path.write(batch)
            })
            .map(|()| batch.rows.len() as u64),
            OpKind::Read => path.get(&op.partition, &op.clustering).map(|found| {
                self.out.read_hits += u64::from(found.is_some());
                0
            }),
            OpKind::Scan => path.scan(&op.partition, op.limit).map(|found| {
                self.out.scan_rows += found.len() as u64;
                0
            }),
        };
        (result, routed)
    }

    /// Counts an op's time, latency and outcome; a fatal failure is
    /// reported.
    #[inline]
    fn tally(
        &mut self,
        (index, kind): (u64, OpKind),
        result: Result<u64, SeamError>,
        [intended, began, routed]: [Instant; 3],
        live: &Live,
        failures: &Failures,
    ) {
        let (out, end) = (&mut self.out, Instant::now());
        out.time.route_ns += nanos(routed - began);
        match kind {
            OpKind::Insert => out.time.write_ns += nanos(end - routed),
            _ => out.time.read_ns += nanos(end - began),
        }
        self.last = end;
        let latency = nanos(end - intended).max(1);
        let _ = out.histograms[kind as usize].record(latency);
        out.ops[kind as usize] += 1;
        match result {
            Ok(rows) => {
                out.rows += rows;
                live.record(self.thread, latency, rows, false);
            }
            Err(e) => {
                out.errors += 1;
                out.first_error.get_or_insert_with(|| e.to_string());
                out.failed_ops.push((self.thread, index));
                live.record(self.thread, latency, 0, true);
                // A poisoned shard is the echo of a trap another client
                // reports: the trap is the failure to report.
                if e.is_fatal() && !matches!(e.fault(), Some(Fault::Poisoned(_))) {
                    failures.report(Failure::from(&e));
                }
            }
        }
    }

    fn finish(mut self) -> ClientOutcome {
        if let Feed::Prepared(prepared) = self.feed {
            self.out.fingerprint = prepared.fingerprint(self.thread, self.out.taken);
            self.out.shape = prepared.shape(self.thread, self.out.taken);
        }
        self.out.cpu = self.cpu.and_then(|c| c.try_elapsed().ok()).unwrap_or_default();
        self.out.time.wall_ns = nanos(self.last - self.started);
        self.out
    }
}

fn nanos(d: Duration) -> u64 {
    d.as_nanos() as u64
}
