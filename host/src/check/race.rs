//! `memlab check --native` of a concurrent strategy: writers race one
//! memtable and the allocator they share, as a bench's writers do, while
//! a reader gets and scans. Each answer is held to the contract's
//! concurrent semantics, by when every insert began and ended on one
//! host clock: a read sees every insert that completed before it began,
//! and answers nothing no insert begun before it ended wrote. Once the
//! writers stop, the memtable must hold the model's state, and every
//! ref must load its row. Races do not replay exactly; a failure names
//! the reads and inserts that disagree.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use memlab_sdk::{Cell, Entry, Packed, encode_row};

use super::{CheckOptions, Property, ShardSubject, key, rounds};
use crate::seam::{Shard, show_key};
use crate::workload::SplitMix;

/// Inserts per round.
const PER_ROUND: u64 = 20_000;
/// The most writers a round draws, beside its reader.
const MAX_WRITERS: u64 = 8;
/// The most reads a round's reader makes.
const MAX_READS: usize = 5_000;

/// One row to write: its sort key, its timestamp (unique in the round,
/// in no order the writers keep) and its bytes.
type Planned = (Vec<u8>, u64, Vec<u8>);

/// An insert as the host saw it: what it wrote and when, on the clock.
#[derive(Debug, Clone, Copy)]
struct Written {
    timestamp: u64,
    reference: u64,
    began: u64,
    ended: u64,
}

/// A writer's batch as inserted: which of its batches, the refs its
/// rows were stored at, and when the insert began and ended.
type Done = (usize, Vec<u64>, u64, u64);

/// A read and its answer, with when it began and ended.
struct Read {
    scan: Option<(Vec<u8>, u32)>,
    keys: Vec<Vec<u8>>,
    answer: Packed,
    began: u64,
    ended: u64,
}

/// The property's name.
pub(super) const RACES: &str = "races";

/// The property, where the strategy under check takes concurrent calls
/// natively; `None` for one whose calls are serialized.
pub(super) fn property(subject: &ShardSubject<'_>, options: &CheckOptions) -> Option<Property> {
    subject.draw_from(options.seed, super::ROUND_NEED);
    match subject.shared(subject.params) {
        Ok(Some(_)) => {}
        Ok(None) => return None,
        Err(e) => return Some(Property::fail(RACES, e.to_string())),
    }
    let most = AtomicU64::new(0);
    let raced = rounds(options, PER_ROUND, |seed, ops| {
        subject.draw_from(seed, super::ROUND_NEED);
        let shared = subject.shared(subject.params).map_err(|e| e.to_string())?.ok_or("no longer takes concurrent calls")?;
        round(shared, seed, ops, &most)
    });
    let raced = raced.map(|done| format!("{done}, writers racing a reader; at most {} writers inside the memtable at once", most.into_inner()));
    Some(Property::of(RACES, raced))
}

/// Each writer's batches: keys from a pool small enough that writers
/// often write one key at once, rows bench-shaped in odd rounds.
fn plan(seed: u64, ops: u64) -> (Vec<Vec<Vec<Planned>>>, Vec<Vec<u8>>) {
    let mut rng = SplitMix::new(&[seed, 0x7ace]);
    let writers = 2 + rng.below(MAX_WRITERS - 1) as usize;
    let pool_size = 1 + rng.below(2_000) as usize;
    let bench_like = super::bench_like::round_is_bench_like(seed);
    let mut source = bench_like.then(|| super::bench_like::BenchLike::new(seed));
    let pool: Vec<(Vec<u8>, Vec<u8>)> = (0..pool_size)
        .map(|_| match &mut source {
            Some(s) => s.next_row().into(),
            None => (key(&mut rng), Vec::new()),
        })
        .collect();
    let mut batches = vec![Vec::new(); writers];
    let mut done = 0;
    while done < ops {
        let n = (1 + rng.below(32)).min(ops - done);
        let batch = (0..n)
            .map(|i| {
                let (key, row) = &pool[rng.below(pool_size as u64) as usize];
                // Unique low bits; random high ones, so arrival order is not timestamp order.
                let timestamp = (rng.below(1 << 20) << 24) | (done + i);
                let row = if row.is_empty() { small_row(&mut rng, key, timestamp) } else { row.clone() };
                (key.clone(), timestamp, row)
            })
            .collect();
        batches[rng.below(writers as u64) as usize].push(batch);
        done += n;
    }
    (batches, pool.into_iter().map(|(k, _)| k).collect())
}

impl From<super::bench_like::Row> for (Vec<u8>, Vec<u8>) {
    fn from(row: super::bench_like::Row) -> Self {
        (row.key, row.bytes)
    }
}

fn small_row(rng: &mut SplitMix, key: &[u8], timestamp: u64) -> Vec<u8> {
    let values: Vec<Vec<u8>> = (0..rng.below(4)).map(|c| vec![b'a' + c as u8; rng.below(100) as usize]).collect();
    let cells = values.iter().enumerate().map(|(c, v)| Cell { column: c as u16, value: v });
    let mut out = Vec::new();
    encode_row(&mut out, &key[..key.len().min(300)], &[], timestamp, false, cells);
    out
}

/// One round: the race, then its answers judged, then the state after it.
fn round(mut shared: Shard, seed: u64, ops: u64, most: &AtomicU64) -> Result<(), String> {
    let (batches, pool) = plan(seed, ops);
    let clock = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let (written, reads) = std::thread::scope(|scope| {
        let reader = scope.spawn(|| read_while(&shared, &pool, seed, &clock, &stop));
        let writers: Vec<_> = batches.iter().map(|mine| scope.spawn(|| write(&shared, mine, &clock))).collect();
        let written: Result<Vec<_>, String> = writers.into_iter().map(|w| w.join().unwrap_or_else(|_| Err("a writer panicked".into()))).collect();
        stop.store(true, Ordering::SeqCst);
        (written, reader.join().unwrap_or_else(|_| Err("the reader panicked".into())))
    });
    let (written, reads) = (written?, reads?);
    let mut versions: BTreeMap<&[u8], Vec<Written>> = BTreeMap::new();
    let mut rows: BTreeMap<u64, &[u8]> = BTreeMap::new();
    for (mine, theirs) in batches.iter().zip(&written) {
        for (batch, refs, began, ended) in theirs {
            for ((key, timestamp, row), &reference) in mine[*batch].iter().zip(refs) {
                versions.entry(key).or_default().push(Written { timestamp: *timestamp, reference, began: *began, ended: *ended });
                rows.insert(reference, row);
            }
        }
    }
    reads.iter().try_for_each(|read| judge(read, &versions))?;
    most.fetch_max(shared.most_inside(), Ordering::Relaxed);
    after(shared, &versions, &rows)
}

/// A writer's batches, stored and inserted in turn: which, their refs,
/// and when each insert began and ended.
fn write(shared: &Shard, mine: &[Vec<Planned>], clock: &AtomicU64) -> Result<Vec<Done>, String> {
    let mut out = Vec::with_capacity(mine.len());
    for (b, batch) in mine.iter().enumerate() {
        let mut rows = Packed::new();
        batch.iter().for_each(|(_, _, row)| rows.push(row));
        let refs = shared.store_rows(&mut rows).map_err(|e| e.to_string())?;
        let mut entries = Packed::new();
        for ((key, timestamp, _), &reference) in batch.iter().zip(&refs) {
            entries.push_with(|buf| Entry { key, timestamp: *timestamp, reference }.encode(buf));
        }
        let began = clock.fetch_add(1, Ordering::SeqCst);
        shared.insert_noted(&mut entries, None).map_err(|e| e.to_string())?;
        out.push((b, refs, began, clock.fetch_add(1, Ordering::SeqCst)));
    }
    Ok(out)
}

/// Gets and scans of the pool's keys until the writers stop.
fn read_while(shared: &Shard, pool: &[Vec<u8>], seed: u64, clock: &AtomicU64, stop: &AtomicBool) -> Result<Vec<Read>, String> {
    let mut rng = SplitMix::new(&[seed, 0x4ead]);
    let mut reads = Vec::new();
    while !stop.load(Ordering::SeqCst) && reads.len() < MAX_READS {
        let pick = |rng: &mut SplitMix| pool[rng.below(pool.len() as u64) as usize].clone();
        let (scan, keys) = match rng.below(4) {
            0 => (Some((pick(&mut rng), 1 + rng.below(50) as u32)), Vec::new()),
            _ => (None, (0..1 + rng.below(16)).map(|_| pick(&mut rng)).collect::<Vec<_>>()),
        };
        let began = clock.fetch_add(1, Ordering::SeqCst);
        let answer = match &scan {
            Some((start, limit)) => shared.scan(start, None, *limit),
            None => {
                let mut asked = Packed::new();
                keys.iter().for_each(|k| asked.push(k));
                shared.get(asked)
            }
        };
        let answer = answer.map_err(|e| e.to_string())?;
        reads.push(Read { scan, keys, answer, began, ended: clock.fetch_add(1, Ordering::SeqCst) });
    }
    Ok(reads)
}

/// The newest timestamp of `key` whose insert completed before `began`.
fn floor(versions: Option<&Vec<Written>>, began: u64) -> Option<u64> {
    versions?.iter().filter(|w| w.ended < began).map(|w| w.timestamp).max()
}

/// One key's answer, held to the concurrent semantics.
fn answers(key: &[u8], versions: Option<&Vec<Written>>, answer: Option<(u64, u64)>, (began, ended): (u64, u64)) -> Result<(), String> {
    let floor = floor(versions, began);
    let what = match answer {
        None => match floor {
            None => return Ok(()),
            Some(t) => format!("answered nothing, though an insert of timestamp {t} completed before the read began"),
        },
        Some((t, r)) => {
            let wrote = versions.is_some_and(|v| v.iter().any(|w| (w.timestamp, w.reference) == (t, r) && w.began < ended));
            match floor {
                _ if !wrote => format!("answered timestamp {t} ref {r}, which no insert begun before the read ended wrote"),
                Some(f) if t < f => format!("answered timestamp {t}, stale: an insert of timestamp {f} completed before the read began"),
                _ => return Ok(()),
            }
        }
    };
    Err(format!("{} {what} (clock {began}..{ended})", show_key(key)))
}

fn entries(packed: &Packed) -> Result<Vec<(Vec<u8>, u64, u64)>, String> {
    packed.iter().map(|r| Entry::decode(r).map(|e| (e.key.to_vec(), e.timestamp, e.reference)).map_err(|e| e.to_string())).collect()
}

/// A read's answers, each key held to the semantics; a scan also owes
/// every key it passed over that an insert completed before it began.
fn judge(read: &Read, versions: &BTreeMap<&[u8], Vec<Written>>) -> Result<(), String> {
    let when = (read.began, read.ended);
    let Some((start, limit)) = &read.scan else {
        for (key, record) in read.keys.iter().zip(read.answer.iter()) {
            let answer = if record.is_empty() { None } else { Entry::decode(record).ok().map(|e| (e.timestamp, e.reference)) };
            answers(key, versions.get(key.as_slice()), answer, when).map_err(|e| format!("a get racing the writers: {e}"))?;
        }
        return Ok(());
    };
    let got = entries(&read.answer)?;
    for (key, t, r) in &got {
        answers(key, versions.get(key.as_slice()), Some((*t, *r)), when).map_err(|e| format!("a scan racing the writers: {e}"))?;
    }
    // A scan that stopped at its limit owes keys up to its last one only.
    let upper = match got.last() {
        Some((last, ..)) if got.len() >= *limit as usize => Bound::Included(last.as_slice()),
        _ => Bound::Unbounded,
    };
    let range = versions.range::<[u8], _>((Bound::Included(start.as_slice()), upper));
    match range.filter(|(key, v)| floor(Some(v), read.began).is_some() && !got.iter().any(|g| g.0 == **key)).map(|(k, _)| *k).next() {
        Some(key) => Err(format!(
            "a scan racing the writers, from {} limit {limit}, left out {}, whose insert completed before it began (clock {}..{})",
            show_key(start),
            show_key(key),
            read.began,
            read.ended
        )),
        None => Ok(()),
    }
}

/// Once the writers stopped: the cursor gives each key's newest version,
/// and every ref it gives loads the row that was stored for it.
fn after(mut shard: Shard, versions: &BTreeMap<&[u8], Vec<Written>>, rows: &BTreeMap<u64, &[u8]>) -> Result<(), String> {
    shard.open_cursor().map_err(|e| e.to_string())?;
    let mut held = Vec::new();
    loop {
        let batch = shard.next_entries(1 << 16).map_err(|e| e.to_string())?;
        if batch.is_empty() {
            break;
        }
        held.extend(entries(&batch)?);
    }
    let want = versions.iter().map(|(k, v)| v.iter().max_by_key(|w| w.timestamp).map(|w| (k.to_vec(), w.timestamp, w.reference)));
    let want: Vec<_> = want.flatten().collect();
    if let Some(at) = (0..want.len().max(held.len())).find(|&i| want.get(i) != held.get(i)) {
        let shown = |e: Option<&(Vec<u8>, u64, u64)>| e.map_or("nothing".into(), |(k, t, _)| format!("{} ts {t}", show_key(k)));
        return Err(format!(
            "after the race the cursor gave {} entries, the model holds {}; the first difference, at {at}: the memtable {}, the model {}",
            held.len(),
            want.len(),
            shown(held.get(at)),
            shown(want.get(at))
        ));
    }
    let refs: Vec<u64> = held.iter().map(|e| e.2).collect();
    let loaded = shard.load(refs.clone()).map_err(|e| e.to_string())?;
    match refs.iter().zip(loaded.iter()).find(|(r, got)| rows.get(r).is_none_or(|want| want != got)) {
        Some((r, got)) => Err(format!("after the race ref {r} loaded {} bytes that are not the row stored for it", got.len())),
        None if loaded.len() != refs.len() => Err(format!("a load of {} refs gave {} rows", refs.len(), loaded.len())),
        None => Ok(()),
    }
}
