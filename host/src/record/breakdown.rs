//! Where a run's client-thread time went, as the record stores it: each
//! phase summed over the client threads, from clock reads between a
//! batch's steps (never one per row), and the flush threads beside them.

use super::is_zero;

/// One run's time breakdown, in nanoseconds summed over threads.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct TimeBreakdown {
    /// The client threads' wall time, from each start to its last op.
    pub client_wall_ns: u64,
    /// Taking ops from the stream, and the client's own bookkeeping.
    pub generate_ns: u64,
    /// Routing rows to shards.
    pub route_ns: u64,
    /// In `store-rows` calls, less the crossing (the host's checks of
    /// each call included).
    pub allocator_ns: u64,
    /// In `insert` calls, less the crossing (likewise).
    pub memtable_ns: u64,
    /// The crossing itself: the calibrated cost of those calls' crossings
    /// and the bytes they carried (0 for native twins).
    pub crossing_ns: u64,
    /// Waiting for shard locks.
    pub lock_wait_ns: u64,
    /// Blocked on a full pool.
    pub backpressure_ns: u64,
    /// Queued in a coalescing group.
    pub coalesce_wait_ns: u64,
    /// Getting a fresh generation's shards at a switch.
    pub switch_ns: u64,
    /// Point reads and scans.
    pub reads_ns: u64,
    /// Sleeping to a target rate.
    pub pacing_ns: u64,
    /// The rest of the write path (its bookkeeping, the pool's checks).
    pub other_ns: u64,
    /// Encoding and appending commit-log records (`commitlog.encode` and
    /// the host's append), under the shard's lock.
    #[serde(skip_serializing_if = "is_zero")]
    pub log_ns: u64,
    /// Waiting for writes to be durable (commit log `batch`, `group`).
    #[serde(skip_serializing_if = "is_zero")]
    pub durability_wait_ns: u64,
    /// Flush threads' wall time, beside the clients.
    pub flush_wall_ns: u64,
    /// Flush threads' CPU time.
    pub flush_cpu_ns: u64,
    /// What one crossing cost at calibration, in ns (wasm only).
    pub crossing_call_ns: f64,
    /// What one byte carried across cost at calibration, in ns.
    pub crossing_byte_ns: f64,
    /// Clock reads made for this breakdown alone.
    pub clock_reads: u64,
    /// What one clock read cost at calibration, in ns.
    pub clock_read_ns: f64,
}

impl TimeBreakdown {
    /// The client phases in the order a stacked bar draws them.
    pub fn parts(&self) -> [(&'static str, u64); 14] {
        [
            ("generating", self.generate_ns),
            ("routing", self.route_ns),
            ("allocator calls", self.allocator_ns),
            ("memtable calls", self.memtable_ns),
            ("crossing", self.crossing_ns),
            ("lock wait", self.lock_wait_ns),
            ("backpressure", self.backpressure_ns),
            ("coalescing wait", self.coalesce_wait_ns),
            ("commit log", self.log_ns),
            ("durability wait", self.durability_wait_ns),
            ("switching", self.switch_ns),
            ("reads", self.reads_ns),
            ("pacing", self.pacing_ns),
            ("other write path", self.other_ns),
        ]
    }

    /// What the breakdown's own clock reads cost, as a share of the
    /// client threads' time.
    pub fn own_cost(&self) -> f64 {
        self.clock_reads as f64 * self.clock_read_ns / (self.client_wall_ns as f64).max(1.0)
    }

    /// Adds another run's times (the calibration stays this one's).
    pub fn add(&mut self, o: &TimeBreakdown) {
        self.client_wall_ns += o.client_wall_ns;
        for (mine, theirs) in self.parts_mut().into_iter().zip(o.parts()) {
            *mine += theirs.1;
        }
        self.flush_wall_ns += o.flush_wall_ns;
        self.flush_cpu_ns += o.flush_cpu_ns;
        self.clock_reads += o.clock_reads;
    }

    /// The phases `parts` names, in its order, to add into.
    fn parts_mut(&mut self) -> [&mut u64; 14] {
        [
            &mut self.generate_ns,
            &mut self.route_ns,
            &mut self.allocator_ns,
            &mut self.memtable_ns,
            &mut self.crossing_ns,
            &mut self.lock_wait_ns,
            &mut self.backpressure_ns,
            &mut self.coalesce_wait_ns,
            &mut self.log_ns,
            &mut self.durability_wait_ns,
            &mut self.switch_ns,
            &mut self.reads_ns,
            &mut self.pacing_ns,
            &mut self.other_ns,
        ]
    }

    /// Whether a run recorded one (older records have none).
    pub fn is_empty(&self) -> bool {
        self.client_wall_ns == 0
    }
}
