//! Issue 6's P2 shape: ingest rows/s of one memtable shard, one writer, no
//! flush: 1M rows of 24-byte keys and 120-byte values, 100 rows per store
//! and insert call, keys in random order or 10 consecutive keys per
//! partition (RocksDB's memtable figures on this machine were measured on
//! the same shape). The rows are built before the clock starts; the clock
//! covers the store call, the refs and the insert call. Variants run
//! interleaved, several times; the median is printed.
//!
//! `cargo bench -p memlab --bench ingest [-- ROWS REPEATS]`

use std::sync::Arc;
use std::time::{Duration, Instant};

use memlab::native;
use memlab::plugin::PluginHost;
use memlab::pool::{MemoryPool, PoolMode};
use memlab::seam::Kind;
use memlab::seam::Shard;
use memlab::workload::SplitMix;
use memlab_sdk::{Cell, Entry, Packed, encode_row};

const ROWS_PER_CALL: usize = 100;
const KEY: usize = 24;
const VALUE: usize = 120;

/// One call's worth: rows for the allocator, entries (refs to fill) for
/// the memtable.
struct Batch {
    rows: Packed,
    keys: Vec<([u8; KEY], u64)>,
    entries: Packed,
}

fn key(clustered: bool, rng: &mut SplitMix, i: u64, partition: &mut [u8; 16]) -> [u8; KEY] {
    let mut key = [0u8; KEY];
    if clustered {
        // A new random partition every 10 rows; the last 8 bytes count.
        if i.is_multiple_of(10) {
            partition.iter_mut().for_each(|b| *b = rng.next_u64() as u8);
        }
        key[..16].copy_from_slice(partition);
        key[16..].copy_from_slice(&i.to_be_bytes());
    } else {
        for chunk in key.chunks_mut(8) {
            chunk.copy_from_slice(&rng.next_u64().to_le_bytes());
        }
    }
    key
}

fn stream(rows: u64, clustered: bool) -> Vec<Batch> {
    let mut rng = SplitMix::new(&[6, u64::from(clustered)]);
    let mut partition = [0u8; 16];
    let value = [b'v'; VALUE];
    let mut batches = Vec::new();
    let mut i = 0;
    while i < rows {
        let mut batch = Batch { rows: Packed::new(), keys: Vec::new(), entries: Packed::new() };
        for _ in 0..ROWS_PER_CALL.min((rows - i) as usize) {
            let key = key(clustered, &mut rng, i, &mut partition);
            let cells = [Cell { column: 0, value: &value }];
            batch.rows.push_with(|buf| encode_row(buf, &key, b"", i + 1, false, cells));
            batch.keys.push((key, i + 1));
            i += 1;
        }
        batches.push(batch);
    }
    batches
}

fn ingest(shard: &mut Shard, batches: &mut [Batch]) -> Duration {
    let started = Instant::now();
    for batch in batches.iter_mut() {
        let refs = shard.store_rows(&mut batch.rows).expect("store");
        batch.entries.clear();
        for ((key, timestamp), reference) in batch.keys.iter().zip(refs) {
            batch.entries.push_with(|buf| Entry { key, timestamp: *timestamp, reference }.encode(buf));
        }
        shard.insert(&mut batch.entries).expect("insert");
    }
    started.elapsed()
}

fn main() {
    // `cargo bench` passes `--bench`; numbers are ours.
    let numbers: Vec<u64> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let rows = numbers.first().copied().unwrap_or(1_000_000);
    let repeats = numbers.get(1).copied().unwrap_or(3);
    let host = PluginHost::new(Default::default()).expect("engine");
    let allocator = host.load_as("per-row", Kind::Allocator).expect("per-row");
    let memtables = ["skiplist", "vector", "btree"];
    println!(
        "ingest: {rows} rows, {KEY}-byte keys, {VALUE}-byte values, {ROWS_PER_CALL} rows per call, per-row allocator, 1 writer, no flush; median of {repeats}"
    );
    for clustered in [false, true] {
        let mut batches = stream(rows, clustered);
        let mut seen: Vec<(String, Vec<f64>)> = Vec::new();
        for _ in 0..repeats {
            for memtable in memtables {
                for wasm in [true, false] {
                    let pool = Arc::new(MemoryPool::new(u64::MAX / 4, PoolMode::FetchAdd));
                    let mut shard: Shard = if wasm {
                        let plugin = host.load_as(memtable, Kind::Memtable).expect("memtable");
                        host.strategy(&plugin).shard(&[], &host.strategy(&allocator), &[], pool, 0).expect("shard")
                    } else {
                        native::bundled(memtable, Kind::Memtable)
                            .and_then(|m| m.shard(&[], &native::bundled("per-row", Kind::Allocator)?, &[], pool, 0))
                            .expect("native shard")
                    };
                    let took = ingest(&mut shard, &mut batches);
                    let name = format!("{memtable} {}", if wasm { "wasm" } else { "native" });
                    let rate = rows as f64 / took.as_secs_f64();
                    match seen.iter_mut().find(|(n, _)| *n == name) {
                        Some((_, rates)) => rates.push(rate),
                        None => seen.push((name, vec![rate])),
                    }
                }
            }
        }
        let order = if clustered { "clustered (10 consecutive keys per partition)" } else { "random" };
        println!("\n{order}");
        let median = |rates: &mut Vec<f64>| {
            rates.sort_by(f64::total_cmp);
            rates[rates.len() / 2]
        };
        let mut medians: Vec<(String, f64)> = seen
            .into_iter()
            .map(|(n, mut r)| {
                let m = median(&mut r);
                (n, m)
            })
            .collect();
        for (name, rate) in &medians {
            println!("  {name:<16} {:>12.0} rows/s", rate);
        }
        medians.sort_by(|a, b| a.0.cmp(&b.0));
        for memtable in memtables {
            let get = |suffix: &str| medians.iter().find(|(n, _)| *n == format!("{memtable} {suffix}")).map(|m| m.1);
            if let (Some(w), Some(n)) = (get("wasm"), get("native")) {
                println!("  {memtable:<16} wasm/native {:.2}", w / n);
            }
        }
    }
}
