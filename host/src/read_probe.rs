//! Point reads from the live memtables once the writers stop: the read
//! side of a memtable's trade-off (a `vector` memtable writes fastest and
//! reads slowest). Keys come from the stream itself, spread over threads
//! and op indices, so every variant reads the same keys.

use std::time::{Duration, Instant};

use memlab_sdk::{Entry, Packed};

use crate::plugin::PluginError;
use crate::router::RoutedBatch;
use crate::workload::{Generator, Profile};
use crate::write_path::WritePath;

/// Keys per `get` call.
const KEYS_PER_CALL: usize = 100;

/// What the probe measured.
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct ReadProbe {
    /// Keys looked up.
    pub keys: u64,
    /// Keys found (the rest were flushed with an earlier generation).
    pub hits: u64,
    /// Time inside the `get` calls.
    pub elapsed: Duration,
}

impl ReadProbe {
    /// Lookups per second.
    pub fn rate(&self) -> f64 {
        self.keys as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// Looks up the first row of `count` ops of the stream, batched per shard.
pub fn probe(profile: &Profile, path: &WritePath, count: u64) -> Result<ReadProbe, PluginError> {
    let shards = path.router().shards();
    let mut keys: Vec<Packed> = vec![Packed::new(); shards];
    let mut generator = Generator::new(profile);
    let (mut rows, mut routed) = (Packed::new(), RoutedBatch::default());
    let mut result = ReadProbe::default();
    let threads = profile.threads as u64;
    for i in 0..count.min(profile.ops) {
        // Spread the probes evenly over the whole stream.
        let op = i * profile.ops / count.min(profile.ops).max(1);
        let (thread, index) = ((op % threads) as usize, op / threads);
        if index >= profile.ops_for(thread) {
            continue;
        }
        generator.batch(thread, index, &mut rows);
        routed.route(path.router(), &rows).map_err(|e| PluginError::Contract {
            plugin: "memlab".into(),
            operation: "read probe".into(),
            shard: 0,
            detail: e.to_string(),
        })?;
        let Some(entry) = routed.entries.get(0) else { continue };
        keys[routed.shard].push(&entry[Entry::HEADER..]);
        if keys[routed.shard].len() == KEYS_PER_CALL {
            get(path, routed.shard, &mut keys[routed.shard], &mut result)?;
        }
    }
    for (shard, batch) in keys.iter_mut().enumerate() {
        if !batch.is_empty() {
            get(path, shard, batch, &mut result)?;
        }
    }
    Ok(result)
}

fn get(path: &WritePath, shard: usize, keys: &mut Packed, result: &mut ReadProbe) -> Result<(), PluginError> {
    let batch = std::mem::take(keys);
    let n = batch.len() as u64;
    let started = Instant::now();
    let found = path.with_shard(shard, |s| s.get(batch))?;
    result.elapsed += started.elapsed();
    result.keys += n;
    result.hits += found.iter().filter(|r| !r.is_empty()).count() as u64;
    Ok(())
}
