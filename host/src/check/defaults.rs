//! Types contract 7: `describe()` lists every parameter as applied,
//! defaults included. A plugin created again with exactly what it
//! described must describe the same and behave the same on one fixed
//! workload (the same answers, counters, memory and bytes written); one
//! that describes a default it does not use shows a difference.

use std::sync::Arc;

use memlab_sdk::{Cell, Description, Entry, Packed, encode_row};

use super::{Property, ShardSubject, key};
use crate::plugin::{Plugin, PluginHost};
use crate::seam::Kind;
use crate::workload::SplitMix;

const NAME: &str = "defaults";

/// The parameters a description lists, sorted, as a plugin receives them.
fn described(d: &Description) -> Vec<(String, String)> {
    let mut params = d.params.clone();
    params.sort();
    params
}

/// Rows of a fixed workload, with their entries' keys.
fn workload() -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut rng = SplitMix::new(&[0xdefa_u64]);
    let mut rows: Vec<(Vec<u8>, Vec<u8>)> = (0..2_000u64)
        .map(|i| {
            let k = key(&mut rng);
            let value = vec![b'd'; rng.below(300) as usize];
            let mut row = Vec::new();
            encode_row(&mut row, &k[..k.len().min(8)], &k[k.len().min(8)..k.len().min(200)], i + 1, false, [Cell { column: 0, value: &value }]);
            (k, row)
        })
        .collect();
    rows.sort();
    rows.dedup_by(|a, b| a.0 == b.0);
    rows
}

/// What a shard shows after the fixed workload: what it described, its
/// counters and the memory it holds.
fn shard_trace(subject: &ShardSubject<'_>, params: &[(String, String)]) -> Result<String, String> {
    let mut shard = subject.shard(params).map_err(|e| e.to_string())?;
    let (m, a) = shard.describe().map_err(|e| e.to_string())?;
    let own = if subject.kind() == Kind::Allocator { a } else { m };
    for batch in workload().chunks(50) {
        let mut rows = Packed::new();
        batch.iter().for_each(|(_, r)| rows.push(r));
        let refs = shard.store_rows(&mut rows).map_err(|e| e.to_string())?;
        let mut entries = Packed::new();
        for ((k, _), r) in batch.iter().zip(refs) {
            entries.push_with(|buf| Entry { key: k, timestamp: 1, reference: r }.encode(buf));
        }
        shard.insert(&mut entries).map_err(|e| e.to_string())?;
    }
    let (ms, al) = shard.stats().map_err(|e| e.to_string())?;
    let stats = if subject.kind() == Kind::Allocator { al } else { ms };
    Ok(format!("describes {:?}; counters {stats:?}; memory {} bytes", described(&own), shard.guest_memory_bytes()))
}

/// Creates the shard's plugin as configured, then with what it described.
pub(super) fn shard(subject: &ShardSubject<'_>) -> Property {
    let first = subject.shard(subject.params).and_then(|mut s| s.describe()).map(|(m, a)| if subject.kind() == Kind::Allocator { a } else { m });
    let params = match first {
        Ok(d) => described(&d),
        Err(e) => return Property::fail(NAME, e.to_string()),
    };
    compare(&params, shard_trace(subject, subject.params), shard_trace(subject, &params))
}

/// What a serializer writes for the fixed workload, and what it described.
fn serializer_trace(host: &PluginHost, plugin: &Arc<Plugin>, params: &[(String, String)]) -> Result<String, String> {
    let mut w = host.serializer(plugin, params, 0).map_err(|e| e.to_string())?;
    let own = w.describe().map_err(|e| e.to_string())?;
    let mut data = Vec::new();
    for batch in workload().chunks(100) {
        let mut p = Packed::new();
        batch.iter().for_each(|(k, r)| p.push_with(|buf| memlab_sdk::encode_flush_record(buf, k, r)));
        data.extend(w.write(p).map_err(|e| e.to_string())?);
    }
    let (tail, finished) = w.finish().map_err(|e| e.to_string())?;
    data.extend(tail);
    let digest = crate::verify::key_hash(&[data.as_slice(), &finished.index].concat());
    Ok(format!("describes {:?}; wrote {} data and {} index bytes, digest {digest:032x}", described(&own), data.len(), finished.index.len()))
}

/// Creates the serializer as configured, then with what it described.
pub(super) fn serializer(host: &PluginHost, plugin: &Arc<Plugin>, configured: &[(String, String)]) -> Property {
    let params = match host.serializer(plugin, configured, 0).and_then(|mut w| w.describe()) {
        Ok(d) => described(&d),
        Err(e) => return Property::fail(NAME, e.to_string()),
    };
    compare(&params, serializer_trace(host, plugin, configured), serializer_trace(host, plugin, &params))
}

/// The property for one strategy as a bench configures it: the bench's
/// preflight holds each wasm strategy to it, so a default described but
/// not used is refused before any figure is measured.
pub(crate) fn holds(host: &Arc<PluginHost>, kind: Kind, plugin: &str, params: &[(String, String)]) -> Result<(), crate::seam::SeamError> {
    let loaded = host.load_as(plugin, kind)?;
    let options = super::CheckOptions::new(params.to_vec(), 0);
    let property = match kind {
        Kind::Serializer => serializer(host, &loaded, params),
        _ => match ShardSubject::new(host, &loaded, &options) {
            Ok(subject) => shard(&subject),
            Err(failed) => failed,
        },
    };
    match property.failure {
        None => Ok(()),
        Some(detail) => Err(crate::seam::SeamError::Contract { plugin: plugin.to_string(), operation: crate::seam::Op::describe(kind), shard: 0, detail }),
    }
}

fn compare(params: &[(String, String)], configured: Result<String, String>, explicit: Result<String, String>) -> Property {
    let shown: Vec<String> = params.iter().map(|(k, v)| format!("{k} = {v}")).collect();
    match (configured, explicit) {
        (Ok(a), Ok(b)) if a == b => {
            Property::pass(NAME, format!("created again with what it described ({}), it describes and behaves the same", shown.join(", ")))
        }
        (Ok(a), Ok(b)) => Property::fail(
            NAME,
            format!("created with what it described ({}), it differs: as configured it {a}; with its description it {b}", shown.join(", ")),
        ),
        (Err(e), _) => Property::fail(NAME, e),
        (_, Err(e)) => Property::fail(NAME, format!("refused what it described ({}): {e}", shown.join(", "))),
    }
}
