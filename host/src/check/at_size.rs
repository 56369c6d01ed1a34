//! One instance of each kind grown big: bugs that show only past 65,536
//! entries, a MiB of data or 100,000 inserts slip through rounds of small
//! fresh instances. Keys and rows are pure functions of (seed, index), so
//! nothing but the expected answers is held on the host side.

use memlab_sdk::{Cell, Entry, FlushRecord, Packed, RowView, encode_flush_record, encode_row};

use super::ShardSubject;
use crate::flush::audit::MetaTally;
use crate::plugin::{Plugin, PluginHost};
use crate::seam::{SeamError, show_key};
use crate::workload::{SplitMix, mix};

/// Rows, entries or records per call.
const BATCH: u64 = 100;

/// Pool bytes a memtable holds per key at size, at the most a bundled one
/// does, with room: the at-size shard's pool is drawn among those whose
/// hard limit holds this much.
const MEMTABLE_BYTES_A_KEY: u64 = 64;

/// The same per row for an allocator (rows of about 350 bytes).
const ALLOCATOR_BYTES_A_ROW: u64 = 400;

/// A record read back wrong: its key, or else its row bytes.
fn wrong_record(got: &FlushRecord<'_>, key: &[u8], row: &[u8]) -> String {
    if got.key != key {
        return differ(got.key, key);
    }
    let got = got.row.as_bytes();
    let at = got.iter().zip(row).position(|(a, b)| a != b).unwrap_or(got.len().min(row.len()));
    format!("key {} has a row of {} bytes that differs from the {} written at byte {at}", show_key(key), got.len(), row.len())
}

/// Where two keys first differ, for a message.
fn differ(got: &[u8], want: &[u8]) -> String {
    let at = got.iter().zip(want).position(|(a, b)| a != b).unwrap_or(got.len().min(want.len()));
    format!("got key {}, expected {} (they first differ at byte {at})", show_key(got), show_key(want))
}

/// Distinct keys of 8 to 16 bytes: `mix` is a bijection, so the first
/// eight bytes already differ.
fn key(seed: u64, j: u64) -> Vec<u8> {
    let mut k = mix(seed ^ j.wrapping_mul(0x9e37_79b9_7f4a_7c15)).to_be_bytes().to_vec();
    k.extend(std::iter::repeat_n(b'~', (j % 9) as usize));
    k
}

fn entry_batch(batch: &[(Vec<u8>, u64, u64)]) -> Packed {
    let mut p = Packed::with_capacity(batch.len(), batch.iter().map(|(k, ..)| k.len() + Entry::HEADER).sum());
    batch.iter().for_each(|(k, t, r)| p.push_with(|buf| Entry { key: k, timestamp: *t, reference: *r }.encode(buf)));
    p
}

fn entry_of(record: &[u8]) -> Result<(Vec<u8>, u64, u64), String> {
    Entry::decode(record).map(|e| (e.key.to_vec(), e.timestamp, e.reference)).map_err(|e| format!("an answer is not an entry: {e}"))
}

/// A memtable grown to `size` distinct keys (and a tenth as many
/// overwrites), read back whole by cursor, sampled by get and scan.
pub(super) fn memtable(subject: &ShardSubject<'_>, size: u64, seed: u64) -> Result<String, String> {
    let e = |e: SeamError| e.to_string();
    subject.draw_from(seed ^ 0xa75e, size.saturating_mul(MEMTABLE_BYTES_A_KEY));
    let mut shard = subject.shard(subject.params).map_err(e)?;
    let mut twin = subject.described_twin()?;
    let mut insert = |shard: &mut crate::seam::Shard, batch: &[(Vec<u8>, u64, u64)]| -> Result<(), String> {
        shard.insert(&mut entry_batch(batch)).map_err(e)?;
        twin.as_mut().map_or(Ok(()), |t| t.shard().insert(&mut entry_batch(batch)).map_err(e))
    };
    let mut expected: Vec<(u64, u64)> = Vec::with_capacity(size as usize);
    let mut batch = Vec::with_capacity(BATCH as usize);
    for j in 0..size {
        expected.push((1, j + 1));
        batch.push((key(seed, j), 1, j + 1));
        if batch.len() as u64 == BATCH || j + 1 == size {
            insert(&mut shard, &batch)?;
            batch.clear();
        }
    }
    let mut rng = SplitMix::new(&[seed, 0x0b]);
    for i in 0..size / 10 {
        let j = rng.below(size);
        let (timestamp, reference) = (1 + rng.below(2), size + i + 1);
        // Higher timestamp wins; on a tie, the later write.
        if timestamp >= expected[j as usize].0 {
            expected[j as usize] = (timestamp, reference);
        }
        batch.push((key(seed, j), timestamp, reference));
        if batch.len() as u64 == BATCH || i + 1 == size / 10 {
            insert(&mut shard, &batch)?;
            batch.clear();
        }
    }
    if let Some(twin) = twin {
        twin.holds(&mut shard)?;
    }
    let mut sorted: Vec<(Vec<u8>, u64)> = (0..size).map(|j| (key(seed, j), j)).collect();
    sorted.sort_unstable();
    let want = |i: usize| {
        let (k, j) = &sorted[i];
        (k.clone(), expected[*j as usize].0, expected[*j as usize].1)
    };
    // A few reads live (a memtable may answer those by a full pass), the
    // bulk once frozen and sorted.
    sample(&mut shard, &sorted, &want, &mut rng, (10, 20), "before the freeze")?;
    shard.open_cursor().map_err(e)?;
    let mut at = 0usize;
    loop {
        let chunk = shard.next_entries(256 << 10).map_err(e)?;
        if chunk.is_empty() {
            break;
        }
        for record in chunk.iter() {
            let got = entry_of(record)?;
            let Some(want) = (at < sorted.len()).then(|| want(at)) else {
                return Err(format!("the cursor returned more than the {size} keys inserted: {}", show_key(&got.0)));
            };
            if got != want {
                let what = match got.0.cmp(&want.0) {
                    std::cmp::Ordering::Equal => {
                        format!("key {} has (ts {}, ref {}), expected (ts {}, ref {})", show_key(&got.0), got.1, got.2, want.1, want.2)
                    }
                    std::cmp::Ordering::Greater => format!("key {} is missing (the cursor went on to {})", show_key(&want.0), show_key(&got.0)),
                    std::cmp::Ordering::Less => format!("{} comes out of order or was never inserted", differ(&got.0, &want.0)),
                };
                return Err(format!("cursor entry {at} of {size}: {what}"));
            }
            at += 1;
        }
    }
    if at != sorted.len() {
        return Err(format!("the cursor returned {at} entries, {size} distinct keys were inserted; the first missing: {}", show_key(&sorted[at].0)));
    }
    sample(&mut shard, &sorted, &want, &mut rng, (100, 200), "after the freeze")?;
    let (m, a) = shard.stats().map_err(e)?;
    shard.check_stats(&m, &a, at as u64).map_err(e)?;
    Ok(format!("{size} distinct keys, {} overwrites, read back whole; 11,000 gets, 220 scans", size / 10))
}

/// Gets (100 keys a call, nine in ten present) and scans against the
/// expected state, `when` the memtable is in it.
fn sample(
    shard: &mut crate::seam::Shard,
    sorted: &[(Vec<u8>, u64)],
    want: &dyn Fn(usize) -> (Vec<u8>, u64, u64),
    rng: &mut SplitMix,
    (get_batches, scans): (u32, u32),
    when: &str,
) -> Result<(), String> {
    let size = sorted.len();
    for round in 0..get_batches {
        let picks: Vec<(Vec<u8>, Option<usize>)> = (0..100)
            .map(|_| {
                let i = rng.below(size as u64) as usize;
                if rng.below(10) == 0 { ([sorted[i].0.as_slice(), &[0, 0]].concat(), None) } else { (sorted[i].0.clone(), Some(i)) }
            })
            .collect();
        let mut keys = Packed::new();
        picks.iter().for_each(|(k, _)| keys.push(k));
        let answers = shard.get(keys).map_err(|e| e.to_string())?;
        for ((asked, i), answer) in picks.iter().zip(answers.iter()) {
            let got = if answer.is_empty() { None } else { Some(entry_of(answer)?) };
            if got != i.map(want) {
                return Err(format!("get {} (batch {round}, {when}) at {size} keys: answered {got:?}, expected {:?}", show_key(asked), i.map(want)));
            }
        }
    }
    for _ in 0..scans {
        let from = rng.below(size as u64) as usize;
        let limit = 1 + rng.below(500) as u32;
        let end = (rng.below(2) == 0).then(|| (from + rng.below(1000) as usize).min(sorted.len() - 1));
        let found = shard.scan(&sorted[from].0, end.map(|x| sorted[x].0.as_slice()), limit).map_err(|e| e.to_string())?;
        let stop = end.unwrap_or(sorted.len()).min(from + limit as usize);
        if found.len() != stop - from {
            return Err(format!(
                "scan from {} limit {limit} ({when}) at {size} keys returned {} entries, expected {}",
                show_key(&sorted[from].0),
                found.len(),
                stop - from
            ));
        }
        for (n, record) in found.iter().enumerate() {
            let (got, want) = (entry_of(record)?, want(from + n));
            if got != want {
                return Err(format!("scan from {} ({when}): entry {n}: {}", show_key(&sorted[from].0), differ(&got.0, &want.0)));
            }
        }
    }
    Ok(())
}

/// Row `j`: two cells of 64 to 255 bytes, a tombstone one in 50.
fn row(seed: u64, j: u64) -> Vec<u8> {
    let h = mix(seed ^ j);
    let (a, b) = (vec![b'a' + (h % 26) as u8; 64 + (h >> 8) as usize % 192], vec![b'z'; 64 + (h >> 16) as usize % 192]);
    let tombstone = j % 50 == 49;
    let cells = [Cell { column: 0, value: &a }, Cell { column: 1, value: &b }].into_iter().filter(|_| !tombstone);
    let mut out = Vec::with_capacity(a.len() + b.len() + 64);
    encode_row(&mut out, format!("p{:09}", j / 8).as_bytes(), format!("c{}", j % 8).as_bytes(), j + 1, tombstone, cells);
    out
}

/// An allocator grown to `size` rows (about 350 bytes each), every one
/// loaded back byte for byte.
pub(super) fn allocator(subject: &ShardSubject<'_>, size: u64, seed: u64) -> Result<String, String> {
    let e = |e: SeamError| e.to_string();
    subject.draw_from(seed ^ 0xa75e, size.saturating_mul(ALLOCATOR_BYTES_A_ROW));
    let mut shard = subject.shard(subject.params).map_err(e)?;
    let mut twin = subject.described_twin()?;
    let (mut refs, mut bytes) = (Vec::with_capacity(size as usize), 0u64);
    let mut batch = Packed::new();
    for j in 0..size {
        let r = row(seed, j);
        bytes += r.len() as u64;
        batch.push(&r);
        if batch.len() as u64 == BATCH || j + 1 == size {
            refs.extend(shard.store_rows(&mut batch).map_err(e)?);
            if let Some(twin) = twin.as_mut() {
                twin.shard().store_rows(&mut batch).map_err(e)?;
            }
            batch.clear();
        }
    }
    if let Some(twin) = twin {
        twin.holds(&mut shard)?;
    }
    for (n, chunk) in refs.chunks(1000).enumerate() {
        let rows = shard.load(chunk.to_vec()).map_err(e)?;
        for (i, got) in rows.iter().enumerate() {
            let j = (n * 1000 + i) as u64;
            let want = row(seed, j);
            if got != want.as_slice() {
                let at = got.iter().zip(&want).position(|(a, b)| a != b).unwrap_or(got.len().min(want.len()));
                return Err(format!(
                    "row {j} of {size} (ref {}): loaded {} bytes that differ from the {} stored at byte {at}",
                    chunk[i],
                    got.len(),
                    want.len()
                ));
            }
        }
    }
    let (m, a) = shard.stats().map_err(e)?;
    shard.check_stats(&m, &a, 0).map_err(e)?;
    Ok(format!("{size} rows, {:.0} MiB, loaded back byte for byte", bytes as f64 / (1 << 20) as f64))
}

/// Record `j`: ascending keys, eight rows a partition, one value of 20 to
/// 79 bytes, a tombstone one in five (so partitions hold several).
fn record(seed: u64, j: u64) -> (Vec<u8>, Vec<u8>) {
    let h = mix(seed ^ j);
    let tombstone = (h >> 32).is_multiple_of(5);
    let value = vec![b'v'; 20 + (h % 60) as usize];
    let cells = [Cell { column: 0, value: &value }].into_iter().filter(|_| !tombstone);
    let mut row = Vec::with_capacity(value.len() + 48);
    encode_row(&mut row, format!("p{:09}", j / 8).as_bytes(), format!("c{}", j % 8).as_bytes(), h % 1_000_000, tombstone, cells);
    (format!("k{j:010}").into_bytes(), row)
}

/// A serializer's segment of `size` records: its metadata against the
/// host's count, read back whole and by key, then `flips` single-bit
/// flips anywhere in data or index, each of which must be reported.
pub(super) fn serializer(
    host: &std::sync::Arc<PluginHost>,
    plugin: &std::sync::Arc<Plugin>,
    params: &[(String, String)],
    size: u64,
    seed: u64,
    flips: u32,
) -> Result<String, String> {
    let e = |e: SeamError| e.to_string();
    let mut writer = host.strategy(plugin).serializer(params, 0).map_err(e)?;
    let (mut data, mut tally) = (Vec::new(), MetaTally::default());
    let mut batch = Packed::new();
    for j in 0..size {
        let (k, r) = record(seed, j);
        tally.observe(&RowView::head(&r).map_err(|e| e.to_string())?);
        batch.push_with(|buf| encode_flush_record(buf, &k, &r));
        if batch.len() as u64 == 1000 || j + 1 == size {
            data.extend(writer.write(std::mem::take(&mut batch)).map_err(e)?);
        }
    }
    let (tail, finished) = writer.finish().map_err(e)?;
    data.extend(tail);
    let index = finished.index;
    tally.compare(&finished.meta).map_err(|d| format!("a segment of {size} records: {d}"))?;
    read_back(host, plugin, params, &data, &index, size, seed).map_err(|r| match r {
        ReadBack::Reported(what) | ReadBack::Wrong(what) => format!("a segment of {size} records: {what}"),
    })?;
    let mut rng = SplitMix::new(&[seed, 0xf1]);
    let total = (data.len() + index.len()) as u64;
    for n in 0..flips {
        let at = rng.below(total) as usize;
        let bit = rng.below(8) as u8;
        let (mut d, mut i) = (data.clone(), index.clone());
        let (file, offset) = if at < data.len() { ("data", at) } else { ("index", at - data.len()) };
        let target = if file == "data" { &mut d[offset] } else { &mut i[offset] };
        *target ^= 1 << bit;
        let flipped = format!("flip {n}: bit {bit} of {file} byte {offset} (of {} data, {} index bytes)", data.len(), index.len());
        match read_back(host, plugin, params, &d, &i, size, seed) {
            Err(ReadBack::Reported(_)) => {}
            Err(ReadBack::Wrong(what)) => return Err(format!("{flipped} was not reported, and the segment read back wrong: {what}")),
            Ok(()) => return Err(format!("{flipped} went unnoticed")),
        }
    }
    Ok(format!(
        "{size} records, {:.0} MiB, metadata as counted, read back whole and by key; {flips} single-bit flips all reported",
        data.len() as f64 / (1 << 20) as f64
    ))
}

/// How a read-back failed: the reader reported damage (an error, or a
/// record the host could not decode), or it read back wrong, silently.
enum ReadBack {
    Reported(String),
    Wrong(String),
}

/// Reads a segment back whole and by key; the first difference.
fn read_back(
    host: &std::sync::Arc<PluginHost>,
    plugin: &std::sync::Arc<Plugin>,
    params: &[(String, String)],
    data: &[u8],
    index: &[u8],
    size: u64,
    seed: u64,
) -> Result<(), ReadBack> {
    let e = |e: SeamError| ReadBack::Reported(e.to_string());
    let mut reader = host.strategy(plugin).reader(params, data, index).map_err(e)?;
    let mut j = 0u64;
    loop {
        let chunk = reader.next(1 << 20).map_err(e)?;
        if chunk.is_empty() {
            break;
        }
        for got in chunk.iter() {
            let f = FlushRecord::decode(got).map_err(|e| ReadBack::Reported(format!("record {j} does not decode: {e}")))?;
            let (k, r) = record(seed, j);
            if f.key != k.as_slice() || f.row.as_bytes() != r.as_slice() {
                return Err(ReadBack::Wrong(format!("record {j} of {size} reads back different: {}", wrong_record(&f, &k, &r))));
            }
            j += 1;
        }
    }
    if j != size {
        return Err(ReadBack::Wrong(format!("read back {j} records of {size}")));
    }
    let mut rng = SplitMix::new(&[seed, 0x6e]);
    let picks: Vec<u64> = (0..10_000).map(|_| rng.below(size)).collect();
    for chunk in picks.chunks(100) {
        let mut keys = Packed::new();
        chunk.iter().for_each(|&j| keys.push(&record(seed, j).0));
        keys.push(b"k~absent");
        let answers = reader.get(keys).map_err(e)?;
        for (&j, got) in chunk.iter().zip(answers.iter()) {
            let (k, r) = record(seed, j);
            let f = FlushRecord::decode(got).map_err(|e| ReadBack::Reported(format!("get of record {j}: {e}")))?;
            if f.key != k.as_slice() || f.row.as_bytes() != r.as_slice() {
                return Err(ReadBack::Wrong(format!("get of record {j}: {}", wrong_record(&f, &k, &r))));
            }
        }
        if answers.get(chunk.len()).is_some_and(|a| !a.is_empty()) {
            return Err(ReadBack::Wrong("a get of an absent key found a record".into()));
        }
    }
    Ok(())
}
