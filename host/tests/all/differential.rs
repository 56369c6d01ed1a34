//! The `btree` memtable and `per-row` allocator, called through the wasm
//! boundary, against the host's reference model: seeded random batches
//! with overwrites, equal timestamps, tombstones, empty and long keys,
//! point reads, scans, and the final cursor.

use std::collections::HashMap;
use std::sync::Arc;

use memlab::ReferenceMemtable;
use memlab::pool::{MemoryPool, PoolMode};
use memlab::seam::Kind;
use memlab::seam::Shard;
use memlab::workload::SplitMix;
use memlab_sdk::{Cell, Entry, Packed, encode_row};

use crate::support::host;

fn shard(memtable: &str, allocator: &str) -> Shard {
    let host = host();
    let m = host.load_as(memtable, Kind::Memtable).expect("memtable");
    let a = host.load_as(allocator, Kind::Allocator).expect("allocator");
    let pool = Arc::new(MemoryPool::new(1 << 30, PoolMode::FetchAdd));
    host.strategy(&m).shard(&[], &host.strategy(&a), &[], pool, 0).expect("shard")
}

fn random_key(rng: &mut SplitMix) -> Vec<u8> {
    match rng.below(100) {
        0 => Vec::new(),
        1 => vec![b'k'; 4096 + rng.below(512) as usize],
        // Short keys over a few byte values, 0x00 and 0xff among them, are
        // often prefixes of one another: tries split, branch and grow here.
        2..=30 => (0..rng.below(5)).map(|_| [0x00, 0x01, 0x41, 0x42, 0x7f, 0x80, 0xc3, 0xfe, 0xff][rng.below(9) as usize]).collect(),
        // One prefix, then any byte: a node with up to 256 children, so a
        // trie's sparse nodes fill, grow through every size and turn dense.
        31..=45 => vec![b'w', rng.below(256) as u8, rng.below(3) as u8],
        // A small key space forces overwrites.
        _ => format!("key-{:04}", rng.below(500)).into_bytes(),
    }
}

fn random_row(rng: &mut SplitMix, key: &[u8], timestamp: u64) -> Vec<u8> {
    let mut row = Vec::new();
    let tombstone = rng.below(10) == 0;
    let values: Vec<Vec<u8>> = (0..rng.below(4)).map(|i| vec![b'a' + i as u8; rng.below(200) as usize]).collect();
    let cells = values.iter().enumerate().filter(|_| !tombstone).map(|(c, v)| Cell { column: c as u16, value: v });
    encode_row(&mut row, key, b"ck", timestamp, tombstone, cells);
    row
}

fn entries_of(p: &Packed) -> Vec<(Vec<u8>, u64, u64)> {
    p.iter()
        .map(|r| {
            let e = Entry::decode(r).expect("entry");
            (e.key.to_vec(), e.timestamp, e.reference)
        })
        .collect()
}

/// `reads` is the share of steps, in percent, that read instead of write.
fn run(seed: u64, ops: usize, memtable: &str, allocator: &str, reads: u64) {
    let mut rng = SplitMix::new(&[seed]);
    let mut plugin = shard(memtable, allocator);
    let mut model = ReferenceMemtable::default();
    let mut rows_by_ref: HashMap<u64, Vec<u8>> = HashMap::new();
    let mut done = 0;
    while done < ops {
        let step = rng.below(100);
        match step {
            _ if step < reads / 2 => {
                let keys: Vec<Vec<u8>> = (0..1 + rng.below(20)).map(|_| random_key(&mut rng)).collect();
                let mut packed = Packed::new();
                keys.iter().for_each(|k| packed.push(k));
                let got = plugin.get(packed).expect("get");
                assert_eq!(got.len(), keys.len());
                for (key, record) in keys.iter().zip(got.iter()) {
                    let want = model.get(key);
                    let have = (!record.is_empty()).then(|| {
                        let e = Entry::decode(record).expect("entry");
                        assert_eq!(e.key, key.as_slice());
                        (e.timestamp, e.reference)
                    });
                    assert_eq!(have, want, "{memtable} seed {seed}: get {:?}", String::from_utf8_lossy(key));
                }
            }
            _ if step < reads => {
                let (a, b) = (random_key(&mut rng), random_key(&mut rng));
                let end = (rng.below(4) != 0).then_some(b);
                let limit = rng.below(50) as u32;
                let got = plugin.scan(&a, end.as_deref(), limit).expect("scan");
                assert_eq!(entries_of(&got), model.scan(&a, end.as_deref(), limit as usize), "{memtable} seed {seed}: scan");
            }
            _ => {
                let n = 1 + rng.below(50) as usize;
                let mut rows = Packed::new();
                let mut keys = Vec::new();
                for _ in 0..n {
                    let key = random_key(&mut rng);
                    // A narrow timestamp range forces equal timestamps.
                    let timestamp = rng.below(64);
                    rows.push(&random_row(&mut rng, &key, timestamp));
                    keys.push((key, timestamp));
                }
                let stored: Vec<Vec<u8>> = rows.iter().map(<[u8]>::to_vec).collect();
                let refs = plugin.store_rows(&mut rows).expect("store");
                let mut entries = Packed::new();
                for ((key, timestamp), (reference, row)) in keys.iter().zip(refs.iter().zip(stored)) {
                    entries.push_with(|b| Entry { key, timestamp: *timestamp, reference: *reference }.encode(b));
                    model.insert(key, *timestamp, *reference);
                    rows_by_ref.insert(*reference, row);
                }
                plugin.insert(&mut entries).expect("insert");
                done += n;
            }
        }
    }
    plugin.open_cursor().expect("cursor");
    let mut all = Vec::new();
    loop {
        let batch = plugin.next_entries(1 + rng.below(4096) as u32).expect("next");
        if batch.is_empty() {
            break;
        }
        all.extend(entries_of(&batch));
    }
    assert_eq!(all, model.all(), "{memtable} seed {seed}: cursor");
    let refs: Vec<u64> = all.iter().map(|e| e.2).collect();
    let rows = plugin.load(refs.clone()).expect("load");
    for (reference, row) in refs.iter().zip(rows.iter()) {
        assert_eq!(Some(row), rows_by_ref.get(reference).map(Vec::as_slice), "seed {seed}: row behind ref {reference:#x}");
    }
    let (memtable_stats, allocator_stats) = plugin.stats().expect("stats");
    let entries = memtable_stats.iter().find(|(k, _)| k == "entries").map(|(_, v)| *v);
    assert_eq!(entries, Some(model.len() as u64));
    assert!(allocator_stats.iter().any(|(k, v)| k == "bytes-used" && *v > 0));

    let mut late = Packed::new();
    late.push_with(|b| Entry { key: b"late", timestamp: 1, reference: 0 }.encode(b));
    let err = plugin.insert(&mut late).expect_err("insert after cursor");
    assert!(err.guest_error().is_some() && err.to_string().contains("invalid state"), "{err}");
}

const ALLOCATORS: [&str; 4] = ["per-row", "per-cell", "region", "heap"];

/// 100k seeded writes per memtable, spread over four fixed seeds and
/// allocators, then one stream drawn afresh each run.
fn check_memtable(memtable: &str, reads: u64) {
    for (seed, allocator) in (1..=4).zip(ALLOCATORS) {
        run(seed, 25_000, memtable, allocator, reads);
    }
    let seed = crate::support::drawn_seed(&format!("differential ({memtable})"));
    run(seed, 10_000, memtable, ALLOCATORS[(seed % 4) as usize], reads);
}

#[test]
fn btree_matches_the_reference_model() {
    check_memtable("btree", 20);
}

#[test]
fn skiplist_matches_the_reference_model() {
    check_memtable("skiplist", 20);
}

#[test]
fn trie_matches_the_reference_model() {
    check_memtable("trie", 20);
}

#[test]
fn vector_matches_the_reference_model() {
    // Reads before the freeze scan everything: fewer of them.
    check_memtable("vector", 2);
}

#[test]
fn unknown_parameters_are_rejected_by_name() {
    let host = host();
    let m = host.load_as("btree", Kind::Memtable).expect("memtable");
    let a = host.load_as("per-row", Kind::Allocator).expect("allocator");
    let pool = Arc::new(MemoryPool::new(1 << 20, PoolMode::FetchAdd));
    let bad = [("chunk_sise".to_string(), "4096".to_string())];
    let err = host.strategy(&m).shard(&[], &host.strategy(&a), &bad, pool, 3).err().expect("unknown parameter");
    let message = err.to_string();
    assert!(message.contains("chunk_sise") && message.contains("per-row") && message.contains("shard 3"), "{message}");
}
