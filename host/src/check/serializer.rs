//! Serializer properties: a segment reads back exactly what was written
//! (whole, and key by key with misses), its metadata counts right, a
//! flipped bit in data or index is reported as corrupt, `describe`,
//! unknown params.

use std::collections::BTreeMap;
use std::sync::Arc;

use memlab_sdk::{Cell, FlushRecord, Packed, encode_flush_record, encode_row};

use super::{CheckOptions, DESCRIBE, Properties, Property, UNKNOWN_PARAMS, defaults, describe_result, key, rounds, unknown_param_result, unknown_params};
use crate::plugin::{Plugin, PluginHost};
use crate::seam::{self, Fault, Op, SeamError, show_key};
use crate::workload::SplitMix;

const PER_ROUND: u64 = 5_000;

/// Sorted distinct keys with rows whose partition is the key's first byte.
fn records(seed: u64, n: u64) -> Records {
    let mut rng = SplitMix::new(&[seed]);
    let mut map = BTreeMap::new();
    if super::bench_like::round_is_bench_like(seed) {
        // A flush of one shard of a bench: its rows under their sort keys,
        // the newest version of each.
        let mut source = super::bench_like::BenchLike::new(seed);
        for _ in 0..n {
            let row = source.next_row();
            map.insert(row.key, row.bytes);
        }
        // Some keys, router-shaped as all here, hold another key's row:
        // a format that rebuilds the keys it recognises from their rows
        // (types contract 3) reads these back wrong.
        let mut all: Records = map.into_iter().collect();
        for pair in all.chunks_exact_mut(2).step_by(4) {
            let (a, b) = pair.split_at_mut(1);
            std::mem::swap(&mut a[0].1, &mut b[0].1);
        }
        return all;
    }
    for i in 0..n {
        let k = key(&mut rng);
        let tombstone = rng.below(10) == 0;
        let value = vec![b'v'; if rng.below(2000) == 0 { 1 << 20 } else { rng.below(100) as usize }];
        let cells = [Cell { column: 0, value: &value }].into_iter().filter(|_| !tombstone);
        let mut row = Vec::new();
        encode_row(&mut row, &k[..k.len().min(1)], &k[k.len().min(1)..k.len().min(300)], i + 1, tombstone, cells);
        map.insert(k, row);
    }
    map.into_iter().collect()
}

/// A written segment: data, index, and the rows its metadata counts.
type Written = (Vec<u8>, Vec<u8>, u64);

fn write(host: &Arc<PluginHost>, plugin: &Arc<Plugin>, params: &[(String, String)], records: &[(Vec<u8>, Vec<u8>)], seed: u64) -> Result<Written, String> {
    let mut w = host.strategy(plugin).serializer(params, 0).map_err(|e| e.to_string())?;
    let mut rng = SplitMix::new(&[seed, 3]);
    let mut data = Vec::new();
    let mut rest = records;
    while !rest.is_empty() {
        let (batch, tail) = rest.split_at((1 + rng.below(100) as usize).min(rest.len()));
        let mut p = Packed::new();
        batch.iter().for_each(|(k, r)| p.push_with(|buf| encode_flush_record(buf, k, r)));
        data.extend(w.write(p).map_err(|e| e.to_string())?);
        rest = tail;
    }
    let (tail, finished) = w.finish().map_err(|e| e.to_string())?;
    data.extend(tail);
    Ok((data, finished.index, finished.meta.rows))
}

/// (key, row) pairs.
type Records = Vec<(Vec<u8>, Vec<u8>)>;

fn read_all(r: &mut seam::Reader) -> Result<Records, SeamError> {
    let mut all = Vec::new();
    loop {
        let batch = r.next(64 << 10)?;
        if batch.is_empty() {
            return Ok(all);
        }
        for record in batch.iter() {
            let f = FlushRecord::decode(record).map_err(|e| SeamError::contract("reader", Op::ReaderNext, 0, format!("a record that does not decode: {e}")))?;
            all.push((f.key.to_vec(), f.row.as_bytes().to_vec()));
        }
    }
}

fn round_trip(host: &Arc<PluginHost>, plugin: &Arc<Plugin>, params: &[(String, String)], seed: u64, n: u64) -> Result<(), String> {
    let records = records(seed, n);
    let (data, index, rows) = write(host, plugin, params, &records, seed)?;
    if rows != records.len() as u64 {
        return Err(format!("metadata says {rows} rows, {} were written", records.len()));
    }
    let mut reader = host.strategy(plugin).reader(params, &data, &index).map_err(|e| e.to_string())?;
    let all = read_all(&mut reader).map_err(|e| e.to_string())?;
    if let Some(i) = (0..all.len().max(records.len())).find(|&i| all.get(i) != records.get(i)) {
        return Err(format!("record {i} of {} read back differs (key {})", records.len(), records.get(i).map_or("-".into(), |r| show_key(&r.0))));
    }
    let mut probes = Packed::new();
    let mut rng = SplitMix::new(&[seed, 5]);
    let keys: Vec<Vec<u8>> =
        (0..200).map(|_| if rng.below(2) == 0 { records[rng.below(records.len() as u64) as usize].0.clone() } else { key(&mut rng) }).collect();
    keys.iter().for_each(|k| probes.push(k));
    let got = reader.get(probes).map_err(|e| e.to_string())?;
    for (k, record) in keys.iter().zip(got.iter()) {
        let want = records.binary_search_by(|(r, _)| r.as_slice().cmp(k)).ok().map(|i| records[i].1.as_slice());
        let have = if record.is_empty() { None } else { Some(FlushRecord::decode(record).map_err(|e| e.to_string())?.row.as_bytes()) };
        if have != want {
            return Err(format!("get {}: found {} bytes, expected {}", show_key(k), have.map_or(0, <[u8]>::len), want.map_or(0, <[u8]>::len)));
        }
    }
    Ok(())
}

fn corruption(host: &Arc<PluginHost>, plugin: &Arc<Plugin>, params: &[(String, String)], seed: u64) -> Result<String, String> {
    let records = records(seed ^ 0xc0, 60);
    let (data, index, _) = write(host, plugin, params, &records, seed)?;
    let mut flips = 0;
    for (file, len) in [("data", data.len()), ("index", index.len())] {
        for at in (0..len).step_by((len / 200).max(1)) {
            let (mut d, mut i) = (data.clone(), index.clone());
            let target = if file == "data" { &mut d } else { &mut i };
            target[at] ^= 1 << (at % 8);
            flips += 1;
            let outcome = host.strategy(plugin).reader(params, &d, &i).and_then(|mut r| read_all(&mut r));
            match outcome {
                // The reader said corrupt, or returned a record the host's
                // own decoder refused: either way the damage was seen.
                Err(e) if matches!(e.fault(), Some(Fault::Guest(memlab_sdk::Error::Corrupt(_)) | Fault::Contract(_))) => {}
                Err(e) => return Err(format!("a flipped bit in {file} byte {at} gave an error that is not `corrupt`: {e}")),
                Ok(_) => return Err(format!("a flipped bit in {file} byte {at} went unnoticed (seed {seed:#x})")),
            }
        }
    }
    Ok(format!("{flips} single-bit flips in data and index, each reported as corrupt"))
}

pub(super) fn check(host: &Arc<PluginHost>, plugin: &Arc<Plugin>, options: &CheckOptions) -> Properties {
    let (mut properties, params) = (Properties::new(options.only.as_deref()), &options.params);
    if let Err(e) = host.strategy(plugin).serializer(params, 0) {
        return properties.stopped(Property::fail("create", format!("{e} (with the parameters given; nothing else was checked)")));
    }
    properties.run(DESCRIBE, || describe_result(plugin, params, host.strategy(plugin).serializer(params, 0).and_then(|mut w| w.describe())));
    properties.run(defaults::DEFAULTS, || defaults::property(host, plugin, params));
    properties.run(defaults::EFFECT, || defaults::effect_property(host, plugin, params));
    properties.run(UNKNOWN_PARAMS, || unknown_param_result(host.strategy(plugin).serializer(&unknown_params(params), 0).map(|_| ())));
    properties.holds("round-trip", || rounds(options, PER_ROUND, |seed, ops| round_trip(host, plugin, params, seed, ops)));
    properties.holds("corruption", || corruption(host, plugin, params, options.seed));
    properties.holds(super::AT_SIZE, || super::at_size::serializer(host, plugin, params, options.size, options.seed, options.flips));
    properties
}

/// For `defaults` and `params-effect`: what a serializer writes for the fixed workload, and what it described.
pub(super) fn trace(host: &Arc<PluginHost>, plugin: &Arc<Plugin>, params: &[(String, String)]) -> Result<String, String> {
    trace_of(host.strategy(plugin).serializer(params, 0))
}

/// `trace` of a writer made either way.
pub(super) fn trace_of(writer: Result<seam::Serializer, SeamError>) -> Result<String, String> {
    let mut w = writer.map_err(|e| e.to_string())?;
    let own = w.describe().map_err(|e| e.to_string())?;
    let mut data = Vec::new();
    for batch in defaults::workload().chunks(100) {
        let mut p = Packed::new();
        batch.iter().for_each(|(k, r, _)| p.push_with(|buf| encode_flush_record(buf, k, r)));
        data.extend(w.write(p).map_err(|e| e.to_string())?);
    }
    let (tail, finished) = w.finish().map_err(|e| e.to_string())?;
    data.extend(tail);
    let digest = crate::verify::key_hash(&[data.as_slice(), &finished.index].concat());
    Ok(format!(
        "describes {:?}; {}",
        defaults::described(&own),
        defaults::behaviour(&format!("wrote {} data and {} index bytes, digest {digest:032x}", data.len(), finished.index.len()))
    ))
}
