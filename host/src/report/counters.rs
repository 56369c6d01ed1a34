//! The plugins' own counters in the comparison, each labeled with what
//! the host makes of it: verified against its own count, held to a bound,
//! or the plugin's word alone (never in a ratio or a verdict).

use std::collections::BTreeSet;

use crate::record::{Kind, VariantResult};

/// What the host makes of a counter (the README's "What a figure rests on").
fn standing(kind: Kind, name: &str) -> &'static str {
    match (kind, name) {
        (Kind::Memtable, "entries") => "verified: the cursor's keys",
        (Kind::Allocator, "bytes-reserved") => "verified: the pool's count",
        (Kind::Allocator, "reservations") => "verified: the host's count",
        // `waste` is held to `bytes-reserved` less `bytes-used`, itself a bound.
        (Kind::Memtable, "index-bytes") | (Kind::Allocator, "bytes-used") | (Kind::Allocator, "waste") => "held to a bound",
        _ => "reported by the plugin",
    }
}

/// One row per counter any variant's plugins report, kind by kind in
/// pipeline order: its label, and per variant the median over completed
/// runs (`None` where its plugin has no such counter).
pub fn rows(groups: &[(&str, Vec<&VariantResult>)]) -> Vec<(String, Vec<Option<u64>>)> {
    let mut out = Vec::new();
    let kinds: BTreeSet<Kind> = groups.iter().flat_map(|(_, runs)| runs.iter().flat_map(|v| v.stats.keys().copied())).collect();
    for kind in kinds {
        let mut names: Vec<String> = groups.iter().flat_map(|(_, runs)| runs.iter().flat_map(|v| v.stats_of(kind).keys().cloned())).collect();
        names.sort_unstable();
        names.dedup();
        for name in names {
            let cells = groups
                .iter()
                .map(|(_, runs)| {
                    let values: Vec<f64> = super::ok(runs).into_iter().filter_map(|v| v.stats_of(kind).get(&name)).map(|&x| x as f64).collect();
                    super::median(values).map(|x| x.round() as u64)
                })
                .collect();
            // A plugin's counter name is its own text: escaped where
            // shown, and cut so one name cannot widen the table.
            let shown: String = name.chars().take(40).collect();
            out.push((format!("{kind} {shown} ({})", standing(kind, &name)), cells));
            if kind == Kind::Serializer && name == super::HEAP_STAT {
                let per_flush = groups
                    .iter()
                    .map(|(_, runs)| super::median(super::ok(runs).into_iter().filter_map(super::reported_heap_per_flush).collect()).map(|x| x.round() as u64))
                    .collect();
                out.push((format!("serializer {name} per flush ({})", standing(kind, &name)), per_flush));
            }
        }
    }
    out
}
