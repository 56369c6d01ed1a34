//! Pool reservations through `reserve-each`: one crossing per batch, but
//! the pool still sees one reservation per row (`per-row`, `heap`) or per
//! cell plus one per row (`per-cell`), in wasm and native alike, so the
//! allocation-batching experiments keep their meaning; a refused batch
//! keeps nothing.

use std::sync::Arc;

use memlab::native;
use memlab::pool::{MemoryPool, PoolMode};
use memlab::seam::Kind;
use memlab::seam::Shard;
use memlab_sdk::{Cell, Packed, encode_row};

use crate::support::host;

/// `n` rows with 0 to 4 cells of `value_len` bytes; and their cell count.
fn rows(n: usize, value_len: usize) -> (Packed, u64) {
    let mut rows = Packed::new();
    let value = vec![b'v'; value_len];
    let mut cells = 0;
    for i in 0..n {
        let count = i % 5;
        cells += count as u64;
        let row_cells = (0..count as u16).map(|column| Cell { column, value: &value });
        rows.push_with(|buf| encode_row(buf, format!("pk-{i}").as_bytes(), b"ck", i as u64 + 1, false, row_cells));
    }
    (rows, cells)
}

/// The same allocator as a wasm shard and as its native twin, each with a
/// pool of its own of `budget` bytes.
fn shards(allocator: &str, budget: u64) -> Vec<(&'static str, Shard, Arc<MemoryPool>)> {
    let host = host();
    let memtable = host.load_as("btree", Kind::Memtable).expect("btree");
    let plugin = host.load_as(allocator, Kind::Allocator).expect("allocator");
    let pool = || Arc::new(MemoryPool::new(budget, PoolMode::FetchAdd));
    let (wasm_pool, native_pool) = (pool(), pool());
    vec![
        ("wasm", host.shard(&memtable, &[], &plugin, &[], wasm_pool.clone(), 0).expect("wasm shard"), wasm_pool),
        ("native", native::shard("btree", &[], allocator, &[], native_pool.clone(), 0).expect("native shard"), native_pool),
    ]
}

fn counter(stats: &[(String, u64)], name: &str) -> u64 {
    stats.iter().find(|(k, _)| k == name).map(|(_, v)| *v).unwrap_or_else(|| panic!("no `{name}` counter"))
}

#[test]
fn the_pool_sees_one_reservation_per_row_or_per_cell() {
    for allocator in ["per-row", "per-cell", "heap"] {
        for (runtime, mut shard, _) in shards(allocator, 1 << 30) {
            let (mut batch, cells) = rows(50, 24);
            let refs = shard.store_rows(&mut batch).expect("store");
            assert_eq!(refs.len(), 50, "{allocator} {runtime}");
            let (_, stats) = shard.stats().expect("stats");
            let expected = if allocator == "per-cell" { 50 + cells } else { 50 };
            assert_eq!(counter(&stats, "reservations"), expected, "{allocator} {runtime}");
            assert_eq!(counter(&stats, "bytes-reserved"), shard.reserved_bytes(), "{allocator} {runtime}");
        }
    }
}

#[test]
fn a_refused_batch_keeps_nothing_and_the_next_one_fits() {
    for allocator in ["per-row", "per-cell", "heap"] {
        // 8 KiB budget, 16 KiB hard limit: 50 rows of ~1 KiB cannot fit.
        for (runtime, mut shard, pool) in shards(allocator, 8 << 10) {
            let (mut big, _) = rows(50, 250);
            let err = shard.store_rows(&mut big).expect_err("past the hard limit");
            assert_eq!(err.guest_error(), Some(&memlab_sdk::Error::PoolFull), "{allocator} {runtime}: {err}");
            assert!(pool.refusals() >= 1, "{allocator} {runtime}: the host counted the refusal itself");
            assert_eq!(shard.reserved_bytes(), 0, "{allocator} {runtime}");
            assert_eq!(pool.owns(), 0, "{allocator} {runtime}");
            let (mut small, _) = rows(3, 10);
            shard.store_rows(&mut small).expect("a small batch fits");
            let (_, stats) = shard.stats().expect("stats");
            assert!(counter(&stats, "bytes-used") > 0, "{allocator} {runtime}");
            assert_eq!(counter(&stats, "bytes-reserved"), shard.reserved_bytes(), "{allocator} {runtime}");
            assert_eq!(pool.owns(), shard.reserved_bytes(), "{allocator} {runtime}");
        }
    }
}
