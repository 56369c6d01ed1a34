//! The time breakdown: the client threads' phases (`client::ClientTime`)
//! and the write path's call timers (`CallTimes`, kept per shard), split
//! into what a storage engineer asks about. The crossing cannot be timed
//! from outside a call, so it is calibrated on the boundary probe once per
//! bench and charged per call and per byte; the clock reads the breakdown
//! adds are calibrated too, and their share of the client time is stated
//! beside it.

use std::time::Instant;

use super::client::ClientOutcome;
use crate::flush::FlushReport;
use crate::plugin::PluginHost;
use crate::record::TimeBreakdown;
use crate::write_path::{CallTimes, WriteCounters};

/// What a crossing and a clock read cost on this machine, just now.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Calibration {
    crossing_call_ns: f64,
    crossing_byte_ns: f64,
    clock_read_ns: f64,
}

impl Calibration {
    /// For a variant of this runtime: a native twin's call is a plain
    /// call, with no crossing.
    pub(super) fn for_runtime(self, wasm: bool) -> Self {
        if wasm { self } else { Calibration { crossing_call_ns: 0.0, crossing_byte_ns: 0.0, ..self } }
    }
}

/// Measures the clock, and the crossing when some variant runs wasm;
/// once per bench, before its first run.
pub(super) fn calibrate(host: &PluginHost, wasm: bool) -> Calibration {
    const READS: u32 = 200_000;
    let started = Instant::now();
    for _ in 0..READS {
        std::hint::black_box(Instant::now());
    }
    let clock_read_ns = started.elapsed().as_nanos() as f64 / f64::from(READS);
    let (crossing_call_ns, crossing_byte_ns) =
        if wasm { host.abi_probe().and_then(|mut probe| probe.crossing_cost(20_000, 16 << 10)).unwrap_or_default() } else { (0.0, 0.0) };
    Calibration { crossing_call_ns, crossing_byte_ns, clock_read_ns }
}

/// Folds the run's timers into its breakdown.
pub(super) fn breakdown(clients: &[ClientOutcome], c: &WriteCounters, calls: &CallTimes, flushes: &[FlushReport], cal: Calibration) -> TimeBreakdown {
    let sum = |f: fn(&ClientOutcome) -> u64| clients.iter().map(f).sum::<u64>();
    let crossing = |calls: u64, bytes: u64| (calls as f64 * cal.crossing_call_ns + bytes as f64 * cal.crossing_byte_ns) as u64;
    let (store_crossing, insert_crossing) = (crossing(calls.writes, calls.allocator_bytes), crossing(calls.writes, calls.memtable_bytes));
    let mut t = TimeBreakdown {
        client_wall_ns: sum(|o| o.time.wall_ns),
        generate_ns: sum(|o| o.time.generate_ns),
        route_ns: sum(|o| o.time.route_ns),
        allocator_ns: calls.allocator_ns.saturating_sub(store_crossing),
        memtable_ns: calls.memtable_ns.saturating_sub(insert_crossing),
        crossing_ns: store_crossing.min(calls.allocator_ns) + insert_crossing.min(calls.memtable_ns),
        lock_wait_ns: c.lock_wait_ns,
        backpressure_ns: c.backpressure_ns,
        coalesce_wait_ns: c.coalesce_wait_ns,
        switch_ns: c.generation_start_ns,
        reads_ns: sum(|o| o.time.read_ns),
        pacing_ns: sum(|o| o.time.pace_ns),
        other_ns: 0,
        log_ns: calls.log_ns,
        durability_wait_ns: c.durability_wait_ns,
        flush_wall_ns: flushes.iter().map(|f| f.wall.as_nanos() as u64).sum(),
        flush_cpu_ns: flushes.iter().map(|f| f.cpu.as_nanos() as u64).sum(),
        crossing_call_ns: cal.crossing_call_ns,
        crossing_byte_ns: cal.crossing_byte_ns,
        clock_reads: sum(|o| o.time.clock_reads) + 5 * calls.writes + 2 * calls.log_records,
        clock_read_ns: cal.clock_read_ns,
    };
    // What `write` spent beyond the parts its own counters name. Lock
    // waits of reads and of switches are in `lock_wait_ns` too, so this
    // is a floor.
    let named = t.allocator_ns
        + t.memtable_ns
        + t.crossing_ns
        + t.lock_wait_ns
        + t.backpressure_ns
        + t.coalesce_wait_ns
        + t.log_ns
        + t.durability_wait_ns
        + t.switch_ns;
    t.other_ns = sum(|o| o.time.write_ns).saturating_sub(named);
    t
}
