//! Point reads from the live memtables once the writers stop: the read
//! side of a memtable's trade-off (a `vector` memtable writes fastest and
//! reads slowest). Keys come from the stream itself, spread over threads
//! and op indices, so every variant reads the same keys.

use std::time::Duration;

use memlab_sdk::{Entry, RowHead, RowView};

use crate::seam::{self, SeamError, show_key};
use crate::verify::{State, key_hash};
use crate::workload::{Op, OpKind, Stream};
use crate::write_path::WritePath;

/// Keys per `get` call.
const KEYS_PER_CALL: usize = 100;

/// What the probe measured.
#[derive(Debug, Clone, Default)]
pub struct ReadProbe {
    /// Keys looked up.
    pub keys: u64,
    /// Keys found (the rest were flushed with an earlier generation).
    pub hits: u64,
    /// Time inside the `get` calls.
    pub elapsed: Duration,
    /// The sort keys of the keys not found, for verification to hold to
    /// the segment the drain wrote: a miss of a key the live memtables
    /// held is a lie.
    pub missed: Vec<Vec<u8>>,
    /// The generation the drain froze right after the probe: the live
    /// memtables the probe read. Only its segments may not hold a miss.
    pub drained: Option<u64>,
}

impl ReadProbe {
    /// Lookups per second.
    pub fn rate(&self) -> f64 {
        self.keys as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// Looks up the first row of `count` ops of the stream, batched per shard.
/// With the stream's final state, each hit is checked against it: the key
/// was written, and no later than its newest write.
pub fn probe(stream: &Stream, path: &WritePath, count: u64, expected: Option<(&State, &str)>) -> Result<ReadProbe, SeamError> {
    let mut source = stream.ops();
    let mut op = Op::default();
    let mut keys: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
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
        let Some(row) = op.rows.get(0) else { continue };
        let RowHead { partition, clustering, .. } = RowView::head(row).map_err(|e| SeamError::Host { operation: "read probe", detail: e.to_string() })?;
        keys.push((partition.to_vec(), clustering.to_vec()));
    }
    let (answers, elapsed) = path.get_many(keys.iter().map(|(p, c)| (p.as_slice(), c.as_slice())), KEYS_PER_CALL)?;
    if let Some((state, memtable)) = expected {
        for answer in answers.iter().filter(|a| !a.is_empty()) {
            check_hit(answer, state, memtable)?;
        }
    }
    let missed = keys
        .iter()
        .zip(&answers)
        .filter(|(_, a)| a.is_empty())
        .map(|((p, c), _)| {
            let mut key = Vec::new();
            crate::router::sort_key(crate::router::token(p), p, c, &mut key);
            key
        })
        .collect();
    Ok(ReadProbe { keys: answers.len() as u64, hits: answers.iter().filter(|a| !a.is_empty()).count() as u64, elapsed, missed, drained: None })
}

/// A hit must be an entry of a key the stream wrote, at a timestamp no
/// newer than that key's newest write.
fn check_hit(answer: &[u8], state: &State, memtable: &str) -> Result<(), SeamError> {
    let wrong = |detail: String| SeamError::contract(memtable, seam::Op::MemtableGet, 0, detail);
    let entry = Entry::decode(answer).map_err(|e| wrong(format!("an answer is not an entry: {e}")))?;
    match state.get(&key_hash(entry.key)) {
        None => Err(wrong(format!("answered with key {}, which the stream never wrote", show_key(entry.key)))),
        Some(&(newest, _)) if entry.timestamp > newest => {
            Err(wrong(format!("answered key {} at timestamp {}, newer than its newest write ({newest})", show_key(entry.key), entry.timestamp)))
        }
        Some(_) => Ok(()),
    }
}
