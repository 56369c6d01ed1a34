//! How many pooled instance slots a bench needs: enough that every
//! generation a config can hold alive reuses a warm slot.

use crate::config::BenchConfig;
use crate::seam::Kind;

/// Largest pool of instance slots a bench reserves (4 GiB of address
/// space each); a config that could need more allocates on demand.
const MAX_INSTANCE_SLOTS: u64 = 8192;

/// Instance slots for the pooling allocator that cover every wasm variant
/// of `config`: two per shard for the live generation, each frozen one the
/// budget can hold (one per cleanup threshold) and the spare started ahead,
/// plus serializers and readers, and a commit-log format per shard and
/// one to read the log back. 0 (on demand) when that is more than
/// `MAX_INSTANCE_SLOTS`.
pub fn instance_slots(config: &BenchConfig) -> u32 {
    let needed = config
        .variants
        .iter()
        .filter(|v| v.runtime == crate::config::Runtime::Wasm)
        .map(|v| {
            let generations = (1.0 / v.threshold()).ceil() as u64 + 2;
            let logs = if v.plugin(Kind::CommitLog).is_empty() { 0 } else { v.shards as u64 + 1 };
            v.shards as u64 * 2 * generations + 2 * v.flush_writers as u64 + logs + 16
        })
        .max()
        .unwrap_or(0)
        .max(u64::from(crate::plugin::DEFAULT_INSTANCE_SLOTS));
    if needed > MAX_INSTANCE_SLOTS { 0 } else { needed as u32 }
}
