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

use crate::support::{host, liar_plugin};

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
        ("wasm", host.strategy(&memtable).shard(&[], &host.strategy(&plugin), &[], wasm_pool.clone(), 0).expect("wasm shard"), wasm_pool),
        (
            "native",
            native::bundled("btree", Kind::Memtable)
                .and_then(|m| m.shard(&[], &native::bundled(allocator, Kind::Allocator)?, &[], native_pool.clone(), 0))
                .expect("native shard"),
            native_pool,
        ),
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
            assert_eq!(pool.owns(), shard.held_bytes(), "{allocator} {runtime}: its reservations and what the host charged");
        }
    }
}

/// Memory an allocator holds past its reservations is charged to the pool
/// by the host (issue 49, class 6): `thin-framing` keeps a heap box a row
/// as `heap` does but reserves each row's bytes and 4 more, so the pool is
/// charged the rest (past 1.5 MiB an instance) and under-reserving buys
/// no budget; `heap`, which reserves its boxes, is charged only for its
/// vector's growth peaks.
#[test]
fn memory_held_unreserved_is_charged_to_the_pool() {
    let host = host();
    let memtable = host.load_as("btree", Kind::Memtable).expect("btree");
    let thin = vec![("mode".to_string(), "thin-framing".to_string())];
    for (allocator, params) in [("heap".to_string(), Vec::new()), (liar_plugin("liar-alloc"), thin)] {
        let plugin = host.load_as(&allocator, Kind::Allocator).expect("allocator");
        let pool = Arc::new(MemoryPool::new(1 << 30, PoolMode::FetchAdd));
        let shard = host.strategy(&memtable).shard(&[], &host.strategy(&plugin), &params, pool.clone(), 0).expect("shard");
        for _ in 0..600 {
            let (mut batch, _) = rows(500, 24);
            shard.store_rows(&mut batch).expect("store");
        }
        let (charged, rows) = (pool.charged(), 300_000);
        assert_eq!(pool.owns(), shard.held_bytes(), "{allocator}: what the pool counts, the shard gives back");
        if params.is_empty() {
            // Only its vector of boxes' growth peaks, about a byte a row.
            assert!(charged < 2 * rows, "heap was charged {charged} bytes for {rows} rows");
        } else {
            // 12 bytes a row it kept unreserved, less the 1.5 MiB an
            // instance holds free.
            assert!(charged >= 12 * rows - (2 << 20), "thin-framing was charged only {charged} bytes for {rows} rows");
        }
    }
}
