//! `SharedShard` against a fake concurrent runtime: its books, its checks,
//! and the host locks its writers take.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use memlab_sdk::{Entry, Packed};

use super::{HOST_LOCKS, SharedShard, most_at_once};
use crate::seam::stub::Stub;
use crate::seam::{Fault, Shard, ShardRuntime, SharedShardRuntime};

/// A concurrent memtable and allocator: each row reserves `reserve_per_row`
/// bytes; `short_refs` returns one ref too few.
#[derive(Default)]
struct Fake {
    entries: Mutex<BTreeMap<Vec<u8>, u64>>,
    reserved: AtomicU64,
    next_ref: AtomicU64,
    reserve_per_row: u64,
    short_refs: bool,
}

impl SharedShardRuntime for Fake {
    fn store_rows(&self, rows: &mut Packed, _refused: &mut bool) -> Result<Vec<u64>, Fault> {
        let bytes: u64 = rows.iter().map(|r| r.len() as u64 + self.reserve_per_row).sum();
        self.reserved.fetch_add(bytes, Ordering::SeqCst);
        let n = rows.len() as u64 - u64::from(self.short_refs);
        Ok((0..n).map(|_| self.next_ref.fetch_add(1, Ordering::Relaxed)).collect())
    }

    fn insert(&self, entries: &mut Packed) -> Result<(), Fault> {
        let mut held = self.entries.lock().map_err(|_| Fault::Contract("poisoned".into()))?;
        for record in entries.iter() {
            let e = Entry::decode(record).map_err(|e| Fault::Contract(e.to_string()))?;
            held.insert(e.key.to_vec(), e.timestamp);
        }
        Ok(())
    }

    fn get(&self, _: Packed) -> Result<Packed, Fault> {
        Err(Fault::Contract("not called".into()))
    }

    fn scan(&self, _: &[u8], _: Option<&[u8]>, _: u32) -> Result<Packed, Fault> {
        Err(Fault::Contract("not called".into()))
    }

    fn reserved_bytes(&self) -> u64 {
        self.reserved.load(Ordering::SeqCst)
    }

    fn exclusive(self: Box<Self>) -> Box<dyn ShardRuntime> {
        Box::new(Alone(self))
    }
}

/// The fake for one caller: only what the tests ask of a `Shard`.
struct Alone(Box<Fake>);

impl Stub for Alone {
    fn insert(&mut self, entries: &mut Packed) -> Result<(), Fault> {
        self.0.insert(entries)
    }
    fn store_rows(&mut self, rows: &mut Packed) -> Result<Vec<u64>, Fault> {
        self.0.store_rows(rows, &mut false)
    }
    fn reserved_bytes(&self) -> u64 {
        self.0.reserved_bytes()
    }
    fn shared(self: Box<Self>) -> Result<Box<dyn SharedShardRuntime>, Box<Self>> {
        Ok(self.0)
    }
}

fn shared(fake: Fake, sample_every: Option<u64>) -> SharedShard {
    let shard = Shard::new(Box::new(Alone(Box::new(fake))), "fake-memtable", "fake-allocator", 3).with_ledger(0);
    let shard = match sample_every {
        Some(every) => shard.with_sample(every),
        None => shard,
    };
    shard.share().unwrap_or_else(|_| panic!("the fake takes concurrent writers"))
}

/// One writer's batch `b` of 3 rows of 20 bytes, keyed by writer and batch.
fn write(shard: &SharedShard, writer: u8, b: u16) -> Result<(), crate::seam::SeamError> {
    let mut rows = Packed::new();
    (0..3).for_each(|_| rows.push(&[7u8; 20]));
    let refs = shard.store_rows(&mut rows)?;
    let mut entries = Packed::new();
    for (i, reference) in refs.into_iter().enumerate() {
        let key = [[writer; 8].as_slice(), &b.to_be_bytes(), &[i as u8]].concat();
        entries.push_with(|buf| Entry { key: &key, timestamp: 1, reference }.encode(buf));
    }
    shard.insert_noted(&mut entries, None)
}

/// Writers 4 × `batches` at once; the host locks each writer took.
fn race(shard: &SharedShard, batches: u16) -> Vec<u64> {
    std::thread::scope(|s| {
        let writers: Vec<_> = (0..4u8)
            .map(|w| {
                s.spawn(move || {
                    HOST_LOCKS.with(|c| c.set(0));
                    (0..batches).for_each(|b| write(shard, w, b).expect("an honest write"));
                    HOST_LOCKS.with(std::cell::Cell::get)
                })
            })
            .collect();
        writers.into_iter().map(|w| w.join().expect("a writer")).collect()
    })
}

#[test]
fn writers_keep_their_own_books_and_the_switch_merges_them() {
    let shard = shared(Fake { reserve_per_row: 4, ..Fake::default() }, None);
    assert_eq!(race(&shard, 50), vec![0; 4], "a writer took a host lock");
    let (mut shard, most) = shard.into_shard();
    assert_eq!(shard.boundary().calls, 4 * 50 * 2);
    assert_eq!(shard.boundary().bytes_out, 4 * 50 * 3 * 8);
    assert!((1..=4).contains(&most), "most inside at once: {most}");
    assert!(shard.take_ledger().is_some());
}

#[test]
fn a_writer_takes_the_sample_lock_only_for_a_batch_it_samples() {
    // Every partition sampled: every batch takes the lock, so the count
    // above is a count that can fail.
    let every_batch = shared(Fake { reserve_per_row: 4, ..Fake::default() }, Some(1));
    assert_eq!(race(&every_batch, 20), vec![20; 4]);
    let none = shared(Fake { reserve_per_row: 4, ..Fake::default() }, Some(u64::MAX));
    assert_eq!(race(&none, 20), vec![0; 4]);
}

#[test]
fn an_allocator_that_reserves_less_than_its_rows_fails_at_the_call() {
    let shard = shared(Fake { reserve_per_row: 0, ..Fake::default() }, None);
    let err = write(&shard, 1, 0).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(err.contains("has reserved only") && err.contains("fake-allocator"), "{err}");
}

#[test]
fn a_ref_short_is_a_contract_failure_naming_the_allocator() {
    let shard = shared(Fake { reserve_per_row: 4, short_refs: true, ..Fake::default() }, None);
    let err = write(&shard, 1, 0).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(err.contains("returned 2 refs for 3 rows") && err.contains("fake-allocator"), "{err}");
}

#[test]
fn overlapping_inserts_count_once_each_and_touching_ones_do_not_overlap() {
    assert_eq!(most_at_once(vec![(0, 10), (5, 15), (6, 7)]), 3);
    assert_eq!(most_at_once(vec![(0, 10), (10, 20)]), 1);
    assert_eq!(most_at_once(Vec::new()), 0);
}
