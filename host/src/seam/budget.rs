//! What an allocator may hold, as the checked shard holds it: its memory
//! against its reservations (past the allowance a budget failure, within
//! it a charge to the pool), and the least framing a store keeps per row.

use crate::util::mib;

/// Linear memory an allocator may hold beyond what it held once created,
/// what it reserved from the pool, twice the largest batch it was asked to
/// store (the canonical ABI copies a call's arguments into the guest's own
/// heap) and what it grew while answering loads (its answers are built in
/// that heap too): a quarter of its reservations (the heap's bookkeeping
/// and growth steps) plus 4 MiB.
pub const MEMORY_SLACK_BYTES: u64 = 4 << 20;

/// The allowance for an allocator that holds `baseline` bytes once
/// created, reserved `reserved` bytes, was given batches of at most
/// `largest_batch` bytes to store, and grew `load_growth` bytes in loads.
pub fn memory_allowance(baseline: u64, reserved: u64, largest_batch: u64, load_growth: u64) -> u64 {
    baseline + reserved + reserved / 4 + 2 * largest_batch + load_growth + MEMORY_SLACK_BYTES
}

/// Bytes of framing an allocator keeps per row at the least, beyond the
/// row's own bytes: where the row starts and how long it is, a `u32`
/// length at the least (allocator contract 3). Reservations and
/// `bytes-used` are held to the rows' bytes plus this per row, so framing
/// kept unreserved (a hidden length prefix) is caught at the call.
pub const FRAMING_PER_ROW: u64 = 4;

/// What the host saw go into a shard, to hold its stats to.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Observed {
    pub(super) rows: u64,
    pub(super) row_bytes: u64,
    /// The largest batch given to the allocator to store, in bytes.
    pub(super) largest_batch: u64,
    /// Linear memory the allocator grew while answering loads.
    pub(super) load_growth: u64,
}

impl Observed {
    /// The rows' bytes with the least framing a store keeps per row.
    pub(super) fn framed_bytes(&self) -> u64 {
        self.row_bytes.saturating_add(self.rows.saturating_mul(FRAMING_PER_ROW))
    }
}

/// Unreserved memory an allocator instance may hold before the host
/// charges it: its start (its heap's first segment and the SDK's buffers,
/// about 420 KiB for the bundled ones) and one 1 MiB chunk's unused tail
/// (`ChunkStore`'s default). A cheat gains at most this much an instance.
const CHARGE_FREE: u64 = 3 << 19;

/// An allocator instance's linear memory as the host sees it after a call.
pub(super) struct Memory {
    /// Before `create`.
    pub(super) baseline: u64,
    /// Now.
    pub(super) now: u64,
    /// Reserved from the pool and not released.
    pub(super) reserved: u64,
    /// Charged by the host so far and not given back.
    pub(super) charged: u64,
    /// The largest batch stored, in bytes.
    pub(super) largest: u64,
    /// Grown while answering loads.
    pub(super) loads: u64,
}

impl Memory {
    /// Bytes to charge the pool now; past the allowance, why it fails.
    pub(super) fn unreserved(&self) -> Result<u64, String> {
        let Memory { baseline, now, reserved, charged, largest, loads } = *self;
        let allowed = memory_allowance(baseline, reserved, largest, loads);
        if now > allowed {
            return Err(format!(
                "its linear memory grew to {:.1} MiB, but it reserved only {:.1} MiB from the pool (allowed {:.1} MiB: {:.1} MiB once created + the reservations + 25% + twice the largest batch stored, {:.1} MiB + {:.1} MiB grown in loads + {} MiB)",
                mib(now),
                mib(reserved),
                mib(allowed),
                mib(baseline),
                mib(largest),
                mib(loads),
                MEMORY_SLACK_BYTES >> 20
            ));
        }
        Ok(now.saturating_sub(baseline + reserved + charged + 2 * largest + loads + CHARGE_FREE))
    }
}
