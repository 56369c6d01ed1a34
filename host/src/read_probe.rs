//! Point reads from the live memtables once the writers stop: the read
//! side of a memtable's trade-off (a `vector` memtable writes fastest and
//! reads slowest). Keys come from the stream itself, spread over threads
//! and op indices, so every variant reads the same keys.

use std::time::{Duration, Instant};

use memlab_sdk::{Entry, Packed};

use crate::plugin::PluginError;
use crate::router::RoutedBatch;
use crate::workload::{Op, OpKind, Stream};
use crate::write_path::WritePath;

/// Keys per `get` call.
const KEYS_PER_CALL: usize = 100;

/// What the probe measured.
#[derive(Debug, Clone, Copy, Default, serde::Serialize, serde::Deserialize)]
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
pub fn probe(stream: &Stream, path: &WritePath, count: u64) -> Result<ReadProbe, PluginError> {
    let shards = path.router().shards();
    let mut keys: Vec<Packed> = vec![Packed::new(); shards];
    let mut source = stream.ops();
    let (mut op, mut routed) = (Op::default(), RoutedBatch::default());
    let mut result = ReadProbe::default();
    let threads = stream.threads() as u64;
    // A stream run for a duration has no fixed length: probe its first
    // `count` ops per thread's share.
    let ops: u64 = (0..stream.threads()).map(|t| stream.ops_for(t).unwrap_or(count / threads + 1)).sum();
    for i in 0..count.min(ops) {
        // Spread the probes evenly over the whole stream.
        let at = i * ops / count.min(ops).max(1);
        let (thread, index) = ((at % threads) as usize, at / threads);
        if !source.op(thread, index, &mut op) || op.kind != OpKind::Insert {
            continue;
        }
        routed.route(path.router(), &op.rows).map_err(|e| PluginError::Contract {
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
