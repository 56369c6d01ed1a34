//! Commit-log properties: what `encode` returns replays as exactly the
//! rows given, in order, from one segment of many records (zero-padded,
//! as direct I/O leaves it, or not; replayed by another instance, a few
//! rows a call); a changed byte anywhere is `damaged`, a cut is `torn`,
//! and every row of the records before either is kept; at size;
//! `describe`, unknown params.

use std::sync::Arc;

use memlab_sdk::Packed;

use super::{CheckOptions, DESCRIBE, Properties, Property, UNKNOWN_PARAMS, defaults, describe_result, rounds, unknown_param_result, unknown_params};
use crate::commitlog::Appended;
use crate::plugin::{Plugin, PluginHost};
use crate::seam::ledger::hash;
use crate::seam::{CommitLogFormat, SeamError};
use crate::verify::log::{Copy, hold};
use crate::workload::SplitMix;

const PER_ROUND: u64 = 5_000;

pub(super) fn check(host: &Arc<PluginHost>, plugin: &Arc<Plugin>, options: &CheckOptions) -> Properties {
    let (mut properties, params) = (Properties::new(options.only.as_deref()), &options.params);
    if let Err(e) = host.strategy(plugin).commitlog_format(params, 0) {
        return properties.stopped(Property::fail("create", format!("{e} (with the parameters given; nothing else was checked)")));
    }
    let fresh = || host.strategy(plugin).commitlog_format(params, 0).map_err(|e| e.to_string());
    properties.run(DESCRIBE, || describe_result(plugin, params, host.strategy(plugin).commitlog_format(params, 0).and_then(|mut l| l.describe())));
    properties.run(defaults::DEFAULTS, || defaults::property(host, plugin, params));
    properties.run(defaults::EFFECT, || defaults::effect_property(host, plugin, params));
    properties.run(UNKNOWN_PARAMS, || unknown_param_result(host.strategy(plugin).commitlog_format(&unknown_params(params), 0).map(|_| ())));
    properties.holds("round-trip", || rounds(options, PER_ROUND, |seed, rows| round_trip(&fresh, seed, rows)));
    properties.holds("damaged-tail", || rounds(options, PER_ROUND, |seed, rows| damaged(&fresh, seed, rows, 8)));
    properties.holds(super::AT_SIZE, || at_size(&fresh, options.size.min(2_000_000), options.seed));
    properties
}

/// A row: the generator's (odd rounds, as a bench sends them) or any bytes,
/// empty and 256 KiB ones among them.
fn row(rng: &mut SplitMix, bench: &mut Option<super::bench_like::BenchLike>) -> Vec<u8> {
    if let Some(source) = bench {
        return source.next_row().bytes;
    }
    let len = match rng.below(1000) {
        0 => 256 << 10,
        1..=20 => 0,
        _ => rng.below(200) as usize,
    };
    (0..len).map(|_| rng.below(256) as u8).collect()
}

/// A segment of records of `rows` rows in all, batches of 1 to 100, and
/// what was appended to it.
fn segment(log: &mut CommitLogFormat, seed: u64, rows: u64) -> Result<(Vec<u8>, Appended), String> {
    let mut rng = SplitMix::new(&[seed, 7]);
    let mut bench = super::bench_like::round_is_bench_like(seed).then(|| super::bench_like::BenchLike::new(seed));
    let (mut bytes, mut appended) = (Vec::new(), Appended::default());
    let mut left = rows;
    while left > 0 {
        let n = (1 + rng.below(100)).min(left);
        let mut batch = Packed::new();
        (0..n).for_each(|_| batch.push(&row(&mut rng, &mut bench)));
        bytes.extend(log.encode(&mut batch).map_err(|e| e.to_string())?);
        appended.note(batch.iter().map(hash), bytes.len() as u64);
        left -= n;
    }
    Ok((bytes, appended))
}

fn round_trip(fresh: &dyn Fn() -> Result<CommitLogFormat, String>, seed: u64, rows: u64) -> Result<(), String> {
    let mut rng = SplitMix::new(&[seed, 8]);
    let (mut bytes, appended) = segment(&mut fresh()?, seed, rows)?;
    if rng.below(2) == 0 {
        // Direct I/O pads the last block with zeros.
        bytes.resize(bytes.len().div_ceil(4096) * 4096, 0);
    }
    // Another instance replays it (contract 1), a few rows a call (3).
    let max_rows = [1, 7, 64, 100_000][rng.below(4) as usize];
    let replayed = fresh()?.replay_all(&bytes, max_rows).map_err(|e| e.to_string())?;
    hold(&replayed, Copy::Whole, &appended).map_err(|e| format!("{} bytes of {rows} rows replayed {max_rows} rows a call: {e}", bytes.len()))
}

fn damaged(fresh: &dyn Fn() -> Result<CommitLogFormat, String>, seed: u64, rows: u64, copies: u32) -> Result<(), String> {
    let (bytes, appended) = segment(&mut fresh()?, seed, rows.min(2_000))?;
    damage(&mut fresh()?, seed, &bytes, &appended, copies)
}

/// `copies` of `bytes`, each with a bit flipped, then cut, replayed and
/// held to what was appended.
fn damage(reader: &mut CommitLogFormat, seed: u64, bytes: &[u8], appended: &Appended, copies: u32) -> Result<(), String> {
    let mut rng = SplitMix::new(&[seed, 9]);
    for _ in 0..copies {
        let at = rng.below(bytes.len() as u64) as usize;
        let mut copy = bytes.to_vec();
        copy[at] ^= 1 << rng.below(8);
        let replayed = reader.replay_all(&copy, 100_000).map_err(|e| e.to_string())?;
        hold(&replayed, Copy::Damaged(at as u64), appended).map_err(|e| format!("{} bytes, bit flipped at byte {at}: {e}", bytes.len()))?;
        let cut = 1 + rng.below(bytes.len() as u64 - 1) as usize;
        let replayed = reader.replay_all(&bytes[..cut], 100_000).map_err(|e| e.to_string())?;
        hold(&replayed, Copy::Cut(cut as u64), appended).map_err(|e| format!("{} bytes cut to {cut}: {e}", bytes.len()))?;
    }
    Ok(())
}

fn at_size(fresh: &dyn Fn() -> Result<CommitLogFormat, String>, rows: u64, seed: u64) -> Result<String, String> {
    // Odd: bench-like rows, as a bench logs them.
    let seed = seed | 1;
    let (bytes, appended) = segment(&mut fresh()?, seed, rows)?;
    let replayed = fresh()?.replay_all(&bytes, 4096).map_err(|e| e.to_string())?;
    hold(&replayed, Copy::Whole, &appended).map_err(|e| format!("{rows} rows in {} bytes: {e}", bytes.len()))?;
    // Damaged at the size a bench's segments reach, not a round's.
    damage(&mut fresh()?, seed, &bytes, &appended, 6)?;
    Ok(format!("{rows} rows in {:.1} MiB replayed whole, {:.2} bytes logged a row", bytes.len() as f64 / f64::from(1 << 20), bytes.len() as f64 / rows as f64))
}

/// For `defaults` and `params-effect`: what a log format encodes for the fixed workload, and what it described.
pub(super) fn trace(host: &Arc<PluginHost>, plugin: &Arc<Plugin>, params: &[(String, String)]) -> Result<String, String> {
    trace_of(host.strategy(plugin).commitlog_format(params, 0))
}

/// `trace` of a log format made either way.
pub(super) fn trace_of(format: Result<CommitLogFormat, SeamError>) -> Result<String, String> {
    let mut log = format.map_err(|e| e.to_string())?;
    let own = log.describe().map_err(|e| e.to_string())?;
    let mut bytes = Vec::new();
    for batch in defaults::workload().chunks(20) {
        let mut rows = Packed::new();
        batch.iter().for_each(|(_, r, _)| rows.push(r));
        bytes.extend(log.encode(&mut rows).map_err(|e| e.to_string())?);
    }
    let digest = crate::verify::key_hash(&bytes);
    Ok(format!("describes {:?}; {}", defaults::described(&own), defaults::behaviour(&format!("logged {} bytes, digest {digest:032x}", bytes.len()))))
}
