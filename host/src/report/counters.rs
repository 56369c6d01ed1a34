//! The plugins' own counters in the comparison, each labeled with what
//! the host makes of it: verified against its own count, held to a bound,
//! or the plugin's word alone (never in a ratio or a verdict).

use std::collections::BTreeMap;

use crate::record::VariantResult;

/// What the host makes of a counter (the README's "What a figure rests on").
fn standing(kind: &str, name: &str) -> &'static str {
    match (kind, name) {
        ("memtable", "entries") => "verified: the cursor's keys",
        ("allocator", "bytes-reserved") => "verified: the pool's count",
        ("allocator", "reservations") => "verified: the host's count",
        // `waste` is held to `bytes-reserved` less `bytes-used`, itself a bound.
        ("memtable", "index-bytes") | ("allocator", "bytes-used") | ("allocator", "waste") => "held to a bound",
        _ => "reported by the plugin",
    }
}

type Stats = fn(&VariantResult) -> &BTreeMap<String, u64>;

const KINDS: [(&str, Stats); 3] = [("memtable", |v| &v.memtable_stats), ("allocator", |v| &v.allocator_stats), ("serializer", |v| &v.serializer_stats)];

/// One row per counter any variant's plugins report: its label, and per
/// variant the median over completed runs (`None` where its plugin has
/// no such counter).
pub fn rows(groups: &[(&str, Vec<&VariantResult>)]) -> Vec<(String, Vec<Option<u64>>)> {
    let mut out = Vec::new();
    for (kind, stats) in KINDS {
        let mut names: Vec<&str> = groups.iter().flat_map(|(_, runs)| runs.iter().flat_map(|v| stats(v).keys().map(String::as_str))).collect();
        names.sort_unstable();
        names.dedup();
        for name in names {
            let cells = groups
                .iter()
                .map(|(_, runs)| {
                    let values: Vec<f64> = super::ok(runs).into_iter().filter_map(|v| stats(v).get(name)).map(|&x| x as f64).collect();
                    super::median(values).map(|x| x.round() as u64)
                })
                .collect();
            // A plugin's counter name is its own text: escaped where
            // shown, and cut so one name cannot widen the table.
            let shown: String = name.chars().take(40).collect();
            out.push((format!("{kind} {shown} ({})", standing(kind, name)), cells));
            if kind == "serializer" && name == super::HEAP_STAT {
                let per_flush = groups
                    .iter()
                    .map(|(_, runs)| super::median(super::ok(runs).into_iter().filter_map(super::reported_heap_per_flush).collect()).map(|x| x.round() as u64))
                    .collect();
                out.push((format!("serializer {name} per flush ({})", standing(kind, name)), per_flush));
            }
        }
    }
    out
}
