//! The checked shard against a fake runtime, taking concurrent writers
//! and one caller at a time: its books, its checks, and the host locks
//! its writers take.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use memlab_sdk::{Entry, Packed};

use crate::seam::stub::Stub;
use crate::seam::writers::{HOST_LOCKS, most_at_once};
use crate::seam::{Fault, Kind, Pooled, SerialShardRuntime, Shard, ShardRuntime};

/// A memtable and allocator that take concurrent calls (where
/// `concurrent`): each row reserves `reserve_per_row` bytes past its own,
/// the first `reserving_calls` stores only; `short_refs` returns one ref
/// too few.
#[derive(Default)]
struct Fake {
    entries: Mutex<BTreeMap<Vec<u8>, u64>>,
    reserved: AtomicU64,
    next_ref: AtomicU64,
    stores: AtomicU64,
    reserve_per_row: u64,
    reserving_calls: Option<u64>,
    short_refs: bool,
    concurrent: bool,
}

impl ShardRuntime for Fake {
    fn store_rows(&self, rows: &mut Packed) -> (Result<Vec<u64>, Fault>, Pooled) {
        let call = self.stores.fetch_add(1, Ordering::SeqCst);
        if self.reserving_calls.is_none_or(|n| call < n) {
            let bytes: u64 = rows.iter().map(|r| r.len() as u64 + self.reserve_per_row).sum();
            self.reserved.fetch_add(bytes, Ordering::SeqCst);
        }
        let n = rows.len() as u64 - u64::from(self.short_refs);
        let refs = (0..n).map(|_| self.next_ref.fetch_add(1, Ordering::Relaxed)).collect();
        (Ok(refs), Pooled { reserved: self.reserved.load(Ordering::SeqCst), ..Pooled::default() })
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

    fn reservations(&self) -> u64 {
        0
    }

    fn charge(&self, _: u64) {}

    fn charged_bytes(&self) -> u64 {
        0
    }

    fn guest_memory_bytes(&self) -> u64 {
        0
    }

    fn memory_of(&self, _: Kind) -> Option<u64> {
        None
    }

    fn concurrent(&self) -> bool {
        true
    }

    fn alone(&mut self) -> &mut dyn SerialShardRuntime {
        self
    }

    fn into_concurrent(self: Box<Self>) -> Result<Box<dyn ShardRuntime>, Box<dyn ShardRuntime>> {
        Ok(self)
    }
}

/// The fake for one caller: what the tests ask of a `Shard`.
impl Stub for Fake {
    fn insert(&mut self, entries: &mut Packed) -> Result<(), Fault> {
        ShardRuntime::insert(self, entries)
    }
    fn store_rows(&mut self, rows: &mut Packed) -> Result<Vec<u64>, Fault> {
        ShardRuntime::store_rows(self, rows).0
    }
    fn reserved_bytes(&self) -> u64 {
        ShardRuntime::reserved_bytes(self)
    }
    fn shared(self: Box<Self>) -> Result<Box<dyn ShardRuntime>, Box<Self>> {
        if self.concurrent { Ok(self) } else { Err(self) }
    }
}

/// A shard of `fake` keeping a ledger, taking concurrent writers where
/// the fake does.
fn shard_of(fake: Fake, sample_every: Option<u64>) -> Shard {
    let concurrent = fake.concurrent;
    let shard = Shard::new(Box::new(fake), "fake-memtable", "fake-allocator", 3).with_ledger(0);
    let shard = match sample_every {
        Some(every) => shard.with_sample(every),
        None => shard,
    };
    match shard.share() {
        Ok(shared) => shared,
        Err(alone) => {
            assert!(!concurrent, "the fake takes concurrent writers");
            *alone
        }
    }
}

fn shared(fake: Fake, sample_every: Option<u64>) -> Shard {
    shard_of(Fake { concurrent: true, ..fake }, sample_every)
}

/// One writer's batch `b` of 3 rows of 20 bytes, keyed by writer and batch.
fn write(shard: &Shard, writer: u8, b: u16) -> Result<(), crate::seam::SeamError> {
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
fn race(shard: &Shard, batches: u16) -> Vec<u64> {
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
    let mut shard = shared(Fake { reserve_per_row: 4, ..Fake::default() }, None);
    assert!(shard.concurrent());
    assert_eq!(race(&shard, 50), vec![0; 4], "a writer took a host lock");
    let most = shard.most_inside();
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
    assert_eq!(most_at_once(&[(0, 10), (5, 15), (6, 7)]), 3);
    assert_eq!(most_at_once(&[(0, 10), (10, 20)]), 1);
    assert_eq!(most_at_once(&[]), 0);
}

/// One caller at a time keeps one set of books, so every writer's rows
/// together are held to the reservations at the call: the second
/// writer's batch, which reserved nothing, fails there. With concurrent
/// writers each holds its own rows at the call, and the flush holds the
/// sum (`check_stats`).
#[test]
fn one_caller_at_a_time_holds_every_writers_rows_at_the_call() {
    let fake = || Fake { reserve_per_row: 4, reserving_calls: Some(1), ..Fake::default() };
    // The first writer stays alive while the second writes: a thread's
    // books may pass to a later thread once it exits.
    let two_writers = |shard: &Shard| {
        let (first_done, second_done) = (std::sync::Barrier::new(2), std::sync::Barrier::new(2));
        std::thread::scope(|s| {
            s.spawn(|| {
                write(shard, 1, 0).expect("the first batch is reserved");
                first_done.wait();
                second_done.wait();
            });
            let second = s.spawn(|| {
                first_done.wait();
                let written = write(shard, 2, 0);
                second_done.wait();
                written
            });
            second.join().expect("a writer")
        })
    };
    let alone = shard_of(fake(), None);
    assert!(!alone.concurrent());
    let err = two_writers(&alone).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(err.contains("has reserved only 72 bytes") && err.contains("fake-allocator"), "{err}");
    assert!(two_writers(&shared(fake(), None)).is_ok(), "each concurrent writer's own rows are reserved");
}

/// The books a serial shard's writers kept are the shard's once
/// gathered, whichever thread wrote.
#[test]
fn a_serial_shards_books_count_every_writer() {
    let mut alone = shard_of(Fake { reserve_per_row: 4, ..Fake::default() }, None);
    assert_eq!(race(&alone, 10).len(), 4);
    assert_eq!(alone.boundary().calls, 4 * 10 * 2);
    assert_eq!(alone.most_inside(), 0, "one caller at a time is never timed as overlapping");
    assert_eq!(alone.boundary().bytes_out, 4 * 10 * 3 * 8);
    assert!(alone.take_ledger().is_some());
}
