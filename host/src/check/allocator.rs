//! Allocator properties: every stored row loads back byte for byte (tiny
//! rows, tombstones, 1 MiB values, refs loaded in any order and more than
//! once), stats agree with what the host's pool saw, `describe`, unknown
//! params.

use std::sync::Arc;

use memlab_sdk::{Cell, Packed, Stat, encode_row};

use super::{CheckOptions, Properties, Property, ShardSubject, key, rounds};
use crate::plugin::{Plugin, PluginHost};
use crate::workload::SplitMix;

const PER_ROUND: u64 = 5_000;

fn row(rng: &mut SplitMix, timestamp: u64) -> Vec<u8> {
    let tombstone = rng.below(10) == 0;
    let values: Vec<Vec<u8>> = (0..rng.below(7))
        .map(|c| {
            let len = if rng.below(1000) == 0 { 1 << 20 } else { rng.below(200) as usize };
            vec![b'a' + c as u8; len]
        })
        .collect();
    let cells = values.iter().enumerate().filter(|_| !tombstone).map(|(c, v)| Cell { column: c as u16, value: v });
    let mut out = Vec::new();
    let (partition, clustering) = (key(rng), key(rng));
    encode_row(&mut out, &partition[..partition.len().min(300)], &clustering[..clustering.len().min(300)], timestamp, tombstone, cells);
    out
}

fn describe_row(row: &[u8]) -> String {
    match memlab_sdk::RowView::decode(row) {
        Ok(r) => format!("{} bytes, {} cells, tombstone {}", row.len(), r.cell_count(), r.tombstone),
        Err(_) => format!("{} bytes", row.len()),
    }
}

impl ShardSubject<'_> {
    /// Stores `batches`, loading back as it goes; the first failing batch.
    fn replay_rows(&self, batches: &[Vec<Vec<u8>>], seed: u64) -> Result<(), (usize, String)> {
        let mut shard = self.shard(self.params).map_err(|e| (0, e.to_string()))?;
        let mut stored: Vec<(u64, usize, usize)> = Vec::new();
        let mut rng = SplitMix::new(&[seed, 7]);
        for (b, batch) in batches.iter().enumerate() {
            let mut p = Packed::new();
            batch.iter().for_each(|r| p.push(r));
            let refs = shard.store_rows(&mut p).map_err(|e| (b, e.to_string()))?;
            if refs.len() != batch.len() {
                return Err((b, format!("{} refs for {} rows", refs.len(), batch.len())));
            }
            stored.extend(refs.iter().enumerate().map(|(i, &r)| (r, b, i)));
            // Load a random sample, repeats included, in random order.
            let sample: Vec<(u64, usize, usize)> = (0..1 + rng.below(20)).map(|_| stored[rng.below(stored.len() as u64) as usize]).collect();
            let rows = shard.load(sample.iter().map(|s| s.0).collect()).map_err(|e| (b, e.to_string()))?;
            if rows.len() != sample.len() {
                return Err((b, format!("load of {} refs returned {} rows", sample.len(), rows.len())));
            }
            for (&(reference, sb, si), got) in sample.iter().zip(rows.iter()) {
                let want = &batches[sb][si];
                if got != want.as_slice() {
                    return Err((sb, format!("ref {reference} (row {si} of batch {sb}: {}) loaded {} different bytes", describe_row(want), got.len())));
                }
            }
        }
        Ok(())
    }
}

fn batches(seed: u64, rows: u64) -> Vec<Vec<Vec<u8>>> {
    let mut rng = SplitMix::new(&[seed]);
    if super::bench_like::round_is_bench_like(seed) {
        // Rows as a bench's generator writes them, for one shard.
        let mut source = super::bench_like::BenchLike::new(seed);
        let (mut out, mut done) = (Vec::new(), 0);
        while done < rows {
            let n = (1 + rng.below(50)).min(rows - done);
            out.push((0..n).map(|_| source.next_row().bytes).collect::<Vec<_>>());
            done += n;
        }
        return out;
    }
    let (mut out, mut done) = (Vec::new(), 0);
    while done < rows {
        let n = (1 + rng.below(50)).min(rows - done);
        out.push((0..n).map(|i| row(&mut rng, done + i + 1)).collect::<Vec<_>>());
        done += n;
    }
    out
}

pub(super) fn check(host: &Arc<PluginHost>, plugin: &Arc<Plugin>, options: &CheckOptions) -> Properties {
    let properties = Properties::new(options.only.as_deref());
    let subject = match ShardSubject::new(host, plugin, options) {
        Ok(s) => s,
        Err(failed) => return properties.stopped(failed),
    };
    if let Err(e) = subject.shard(subject.params) {
        return properties.stopped(Property::fail("create", format!("{e} (with the parameters given; nothing else was checked)")));
    }
    let mut properties = properties;
    subject.common_properties(&mut properties);
    properties.holds("round-trip", || round_trip(&subject, options));
    properties.holds("stats", || stats(&subject, options.seed));
    properties.holds(super::AT_SIZE, || super::at_size::allocator(&subject, options.size, options.seed));
    properties
}

/// Seeded rounds of stored rows loaded back, each as it was given; a
/// failure shrunk to its batch, then its row.
fn round_trip(subject: &ShardSubject<'_>, options: &CheckOptions) -> Result<String, String> {
    rounds(options, PER_ROUND, |seed, ops| {
        subject.draw_from(seed, super::ROUND_NEED);
        let all = batches(seed, ops);
        let Err((at, what)) = subject.replay_rows(&all, seed) else { return Ok(()) };
        // Shrink: the failing batch alone, then its rows one by one.
        let mut case = all[..=at.min(all.len() - 1)].to_vec();
        if subject.replay_rows(&case[at.min(case.len() - 1)..], seed).is_err() {
            case = case[at.min(case.len() - 1)..].to_vec();
            if let Some(single) = case[0].iter().find(|r| subject.replay_rows(&[vec![(*r).clone()]], seed).is_err()) {
                case = vec![vec![single.clone()]];
            }
        }
        let rows: Vec<String> = case.iter().flatten().take(10).map(|r| format!("  store a row of {}", describe_row(r))).collect();
        Err(format!("{what}\nshrunk to {} batches on a fresh instance, first rows:\n{}", case.len(), rows.join("\n")))
    })
}

/// `bytes-reserved` is what the host's pool saw reserved, `reservations`
/// what it granted; `bytes-used` fits in it; reservations were made.
fn stats(subject: &ShardSubject<'_>, seed: u64) -> Result<String, String> {
    subject.draw_from(seed ^ 0x57a7, super::ROUND_NEED);
    let mut shard = subject.shard(subject.params).map_err(|e| e.to_string())?;
    for batch in batches(seed ^ 0x57a7, 2_000) {
        let mut p = Packed::new();
        batch.iter().for_each(|r| p.push(r));
        shard.store_rows(&mut p).map_err(|e| e.to_string())?;
    }
    let (_, a) = shard.stats().map_err(|e| e.to_string())?;
    let get = |stat: Stat| stat.of(&a).ok_or(format!("no `{}` counter", stat.name()));
    let (reserved, used, reservations) = (get(Stat::BytesReserved)?, get(Stat::BytesUsed)?, get(Stat::Reservations)?);
    if reserved != shard.reserved_bytes() {
        return Err(format!("`bytes-reserved` = {reserved}, but the pool saw {} reserved", shard.reserved_bytes()));
    }
    if reservations != shard.reservations() {
        return Err(format!("`reservations` = {reservations}, but the pool granted {}", shard.reservations()));
    }
    if used > reserved || reservations == 0 {
        return Err(format!("`bytes-used` {used}, `bytes-reserved` {reserved}, `reservations` {reservations}"));
    }
    Ok(format!("reserved {reserved} = the pool's view, used {used}, {reservations} reservations"))
}
