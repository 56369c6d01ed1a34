//! The boundary, measured with criterion: what one call costs by batch
//! size, `list<list<u8>>` against the packed `list<u8>, list<u32>`, and a
//! wasm shard against its native twin on the same rows, and what a new
//! generation's shard costs to start.
//!
//! `cargo bench -p memlab --bench boundary`

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use memlab::native;
use memlab::plugin::{EngineSettings, PluginHost};
use memlab::pool::{MemoryPool, PoolMode};
use memlab::router::{RoutedBatch, Router};
use memlab::seam::Kind;
use memlab::seam::Shard;
use memlab_sdk::{Cell, Packed, encode_row};

const BATCHES: [usize; 4] = [1, 10, 100, 1000];

fn host() -> Arc<PluginHost> {
    PluginHost::new(EngineSettings::default()).expect("engine")
}

fn rows(n: usize, salt: u64) -> Packed {
    let mut rows = Packed::new();
    let value = [b'v'; 16];
    for i in 0..n as u64 {
        let pk = format!("pk-{salt:012}-{i:06}");
        let cells = (0..5).map(|c| Cell { column: c, value: &value });
        rows.push_with(|buf| encode_row(buf, pk.as_bytes(), b"clustering", salt * 10_000 + i + 1, false, cells));
    }
    rows
}

fn abi_shapes(c: &mut Criterion) {
    let mut probe = host().abi_probe().expect("probe");
    let mut group = c.benchmark_group("abi shape (100-byte rows)");
    for n in BATCHES {
        let list: Vec<Vec<u8>> = (0..n).map(|i| vec![i as u8; 100]).collect();
        let data: Vec<u8> = list.concat();
        let ends: Vec<u32> = (1..=n as u32).map(|i| i * 100).collect();
        group.throughput(Throughput::Elements(n as u64));
        group.bench_with_input(BenchmarkId::new("list<list<u8>>", n), &n, |b, _| b.iter(|| probe.take_list(black_box(&list)).expect("call")));
        group.bench_with_input(BenchmarkId::new("packed", n), &n, |b, _| b.iter(|| probe.take_packed(black_box(&data), black_box(&ends)).expect("call")));
    }
    group.finish();
}

/// Writes `iters` batches of `n` fresh rows into `shard` as the write path
/// does (store, then insert); returns the time taken.
fn write_batches(shard: &mut Shard, n: usize, iters: u64, salt: &mut u64) -> Duration {
    let router = Router::new(1);
    let mut batch = RoutedBatch::default();
    let mut elapsed = Duration::ZERO;
    for _ in 0..iters {
        *salt += 1;
        let rows = rows(n, *salt);
        batch.route(&router, &rows).expect("route");
        let started = Instant::now();
        let refs = shard.store_rows(&mut batch.rows).expect("store");
        batch.set_refs(&refs);
        shard.insert(&mut batch.entries).expect("insert");
        elapsed += started.elapsed();
    }
    elapsed
}

fn wasm_vs_native(c: &mut Criterion) {
    let host = host();
    let memtable = host.load_as("skiplist", Kind::Memtable).expect("skiplist");
    let allocator = host.load_as("per-row", Kind::Allocator).expect("per-row");
    let mut group = c.benchmark_group("write call, skiplist + per-row");
    for n in BATCHES {
        group.throughput(Throughput::Elements(n as u64));
        let mut salt = 0;
        group.bench_with_input(BenchmarkId::new("wasm", n), &n, |b, &n| {
            b.iter_custom(|iters| {
                let pool = Arc::new(MemoryPool::new(u64::MAX / 4, PoolMode::FetchAdd));
                let mut shard = host.strategy(&memtable).shard(&[], &host.strategy(&allocator), &[], pool, 0).expect("shard");
                write_batches(&mut shard, n, iters, &mut salt)
            })
        });
        group.bench_with_input(BenchmarkId::new("native", n), &n, |b, &n| {
            b.iter_custom(|iters| {
                let pool = Arc::new(MemoryPool::new(u64::MAX / 4, PoolMode::FetchAdd));
                let mut shard = native::bundled("skiplist", Kind::Memtable)
                    .and_then(|m| m.shard(&[], &native::bundled("per-row", Kind::Allocator)?, &[], pool, 0))
                    .expect("native shard");
                write_batches(&mut shard, n, iters, &mut salt)
            })
        });
    }
    group.finish();
}

/// P5: what starting a shard's new generation costs (a store, two
/// instances, `create` of each) and dropping it again: wasm with the
/// pooling allocator, wasm allocating on demand, and the native twins.
fn generation_start(c: &mut Criterion) {
    let pooled = host();
    let on_demand = PluginHost::new(EngineSettings { instance_slots: 0, ..EngineSettings::default() }).expect("engine");
    let pool = Arc::new(MemoryPool::new(u64::MAX / 4, PoolMode::FetchAdd));
    let mut group = c.benchmark_group("new generation, one shard + per-row");
    for name in ["skiplist", "trie", "vector"] {
        for (label, host) in [("wasm pooled", &pooled), ("wasm on demand", &on_demand)] {
            let memtable = host.load_as(name, Kind::Memtable).expect("memtable");
            let allocator = host.load_as("per-row", Kind::Allocator).expect("per-row");
            group.bench_function(BenchmarkId::new(label, name), |b| {
                b.iter(|| host.strategy(&memtable).shard(&[], &host.strategy(&allocator), &[], Arc::clone(&pool), 0).expect("shard"))
            });
        }
        group.bench_function(BenchmarkId::new("native", name), |b| {
            b.iter(|| {
                native::bundled(name, Kind::Memtable)
                    .and_then(|m| m.shard(&[], &native::bundled("per-row", Kind::Allocator)?, &[], Arc::clone(&pool), 0))
                    .expect("native shard")
            })
        });
    }
    group.finish();
}

criterion_group! {
    name = boundary;
    config = Criterion::default().sample_size(20).measurement_time(Duration::from_secs(2)).warm_up_time(Duration::from_millis(500));
    targets = abi_shapes, wasm_vs_native, generation_start
}
criterion_main!(boundary);
