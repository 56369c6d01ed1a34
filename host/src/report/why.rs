//! Why the winner won, told by the strategy that differs: the phases that
//! strategy owns (an allocator's calls, a memtable's calls and lock wait,
//! a serializer's flush, a log's appends and syncs), and a secondary
//! effect when it outweighs them (an allocator's waste that made more
//! memtable switches). Every other phase moves with noise, so only a
//! variant differing in one strategy is credited; otherwise the line says
//! what differs.

use super::breakdown::of;
use super::differences::{self, Difference};
use crate::record::{Kind, KindSpecs};
use crate::record::{Stat, TimeBreakdown, VariantResult};

/// What one difference between two variants belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Owner {
    /// A strategy of this kind (its plugin, parameters or bytes).
    Kind(Kind),
    /// A setting of the write path (`shards`, `pool`, ...).
    Setting(String),
}

impl Owner {
    fn of(d: &Difference) -> Option<Owner> {
        match d {
            Difference::Plugin { kind, .. } => Some(Owner::Kind(*kind)),
            Difference::Setting { key, .. } => {
                let head = key.split('.').next().unwrap_or(key);
                let kind = Kind::ALL.into_iter().find(|k| head == k.name() || head.strip_suffix("_params") == Some(k.name()));
                Some(kind.map_or_else(|| Owner::Setting(head.to_string()), Owner::Kind))
            }
            // One bench's rounds interleave: the machine line covers it.
            Difference::Stream { .. } | Difference::Machine { .. } => None,
        }
    }

    fn describe(&self) -> String {
        match self {
            Owner::Kind(k) => format!("its {k} alone"),
            Owner::Setting(s) => format!("`{s}` alone"),
        }
    }

    /// The client phases it can move directly.
    fn phases(&self) -> &'static [&'static str] {
        match self {
            Owner::Kind(kind) => kind.spec().phases,
            Owner::Setting(s) => match s.as_str() {
                "shards" => &["lock wait", "routing", "memtable calls", "switching"],
                "coalescing" => &["coalescing wait", "lock wait", "durability wait", "crossing"],
                // The commit log's sync mode and access: the host's appends
                // and syncs, not its format plugin.
                "log" => &["durability wait", "commit log", "lock wait"],
                "pool" => &["backpressure", "other write path"],
                // The checks run as rows are written and at each flush.
                "verify" | "verify_sample" => &["other write path", "backpressure"],
                "runtime" => &["memtable calls", "allocator calls", "crossing"],
                _ => &["backpressure", "switching"],
            },
        }
    }
}

/// The phases through which memory and the flush reach the clients.
const SECONDARY: [&str; 2] = ["switching", "backpressure"];

/// A variant's breakdown and rows, over its completed rounds.
struct Side<'a> {
    name: &'a str,
    runs: Vec<&'a VariantResult>,
    time: TimeBreakdown,
    rows: f64,
}

impl<'a> Side<'a> {
    fn of(groups: &[(&'a str, Vec<&'a VariantResult>)], name: &'a str) -> Option<Side<'a>> {
        let (_, runs) = groups.iter().find(|(n, _)| *n == name)?;
        let runs = super::ok(runs);
        let time = of(&runs)?;
        let rows = super::total(runs.iter().filter(|v| !v.time.is_empty()).map(|v| v.rows)) as f64;
        (rows > 0.0).then_some(Side { name, runs, time, rows })
    }

    /// Microseconds a row in `phase`.
    fn us(&self, phase: &str) -> f64 {
        self.time.parts().iter().find(|(p, _)| *p == phase).map_or(0.0, |(_, ns)| *ns as f64 / self.rows / 1e3)
    }

    fn total_us(&self) -> f64 {
        self.time.client_wall_ns as f64 / self.rows / 1e3
    }

    /// Microseconds a row on the client threads' own CPU clocks, which a
    /// busy neighbour inflates far less than their wall time.
    fn cpu_us(&self) -> f64 {
        let cpu: f64 = self.runs.iter().filter(|v| !v.time.is_empty()).map(|v| v.client_cpu.as_secs_f64()).sum();
        cpu * 1e6 / self.rows
    }

    fn switches(&self) -> f64 {
        self.runs.iter().map(|v| v.counters.switches as f64).sum::<f64>() / self.runs.len().max(1) as f64
    }

    /// Waste as a share of the bytes reserved, if the allocator counts them.
    fn waste(&self) -> Option<f64> {
        let sum = |s: Stat| self.runs.iter().filter_map(|v| v.stats_of(Kind::Allocator).get(s.name()).copied()).sum::<u64>() as f64;
        let reserved = sum(Stat::BytesReserved);
        (reserved > 0.0).then(|| sum(Stat::Waste) / reserved)
    }

    /// Flush CPU a row flushed, in µs.
    fn flush_us(&self) -> Option<f64> {
        let rows = super::total(self.runs.iter().flat_map(|v| v.flushes.iter().map(|f| f.rows)));
        let cpu: f64 = self.runs.iter().flat_map(|v| v.flushes.iter().map(|f| f.cpu.as_secs_f64())).sum();
        (rows > 0).then(|| cpu * 1e6 / rows as f64)
    }
}

/// `before → after` for each phase, other's then the winner's, largest
/// fall first.
fn moves(w: &Side<'_>, o: &Side<'_>, phases: &[&str]) -> (f64, Vec<String>) {
    // A phase under 0.005 µs a row on both sides prints as 0.00: nothing to say.
    let mut shown: Vec<(&str, f64, f64)> = phases.iter().map(|p| (*p, o.us(p), w.us(p))).filter(|(_, a, b)| a.max(*b) >= 0.005).collect();
    shown.sort_by(|a, b| (b.1 - b.2).total_cmp(&(a.1 - a.2)));
    let delta = shown.iter().map(|(_, a, b)| a - b).sum();
    (delta, shown.iter().map(|(p, a, b)| format!("{p} {a:.2} → {b:.2} µs")).collect())
}

/// Why `winner` beat the first of `against` (the variant it beat by the
/// least, then the baseline) that differs from it in one strategy; with
/// none such, what differs from the first.
pub fn why(groups: &[(&str, Vec<&VariantResult>)], winner: &str, against: &[&str]) -> Option<String> {
    let w = Side::of(groups, winner)?;
    let owners = |o: &Side<'_>| {
        let mut owners: Vec<Owner> = Vec::new();
        for owner in differences::of_variants(&w.runs, &o.runs).iter().filter_map(Owner::of) {
            if !owners.contains(&owner) {
                owners.push(owner);
            }
        }
        owners
    };
    let sides: Vec<Side<'_>> = against.iter().filter(|n| **n != winner).filter_map(|n| Side::of(groups, n)).collect();
    let head = |o: &Side<'_>, how: &str| {
        format!(
            "Why: `{winner}` differs from `{}` in {how}; per row its client threads used {:.2} µs of CPU against {:.2} ({:.2} µs of wall against {:.2})",
            o.name,
            w.cpu_us(),
            o.cpu_us(),
            w.total_us(),
            o.total_us()
        )
    };
    if let Some((o, owner)) = sides.iter().find_map(|o| match owners(o).as_slice() {
        [one] => Some((o, one.clone())),
        _ => None,
    }) {
        return Some(format!("{}.{}", head(o, &owner.describe()), credited(&w, o, &owner)));
    }
    let o = sides.first()?;
    let differ: Vec<String> = differences::of_variants(&w.runs, &o.runs).iter().filter(|d| Owner::of(d).is_some()).map(ToString::to_string).collect();
    if differ.is_empty() {
        return None;
    }
    let (_, fell) = moves(&w, o, &w.time.parts().map(|(p, _)| p));
    Some(format!(
        "{}. No one strategy is credited: they differ in {}; the phases that fell most: {} (compare variants that differ in one strategy to see which).",
        head(o, &format!("{} ways", differ.len())),
        differ.join(", "),
        fell.into_iter().take(3).collect::<Vec<_>>().join(", ")
    ))
}

/// The credited strategy's own phases, and a secondary effect larger
/// than them.
fn credited(w: &Side<'_>, o: &Side<'_>, owner: &Owner) -> String {
    let (direct, own) = moves(w, o, owner.phases());
    let mut s = String::new();
    if !own.is_empty() {
        s.push_str(&format!(" Its own phases: {}.", own.join(", ")));
    }
    if *owner == Owner::Kind(Kind::Serializer)
        && let (Some(a), Some(b)) = (o.flush_us(), w.flush_us())
    {
        s.push_str(&format!(" Its flush: {a:.2} → {b:.2} µs of flush CPU a row flushed."));
    }
    let (secondary, through) = moves(w, o, &SECONDARY);
    let (sw, so) = (w.switches(), o.switches());
    // Named only when it outweighs the direct effect and is a tenth of
    // the whole difference or more.
    let whole = (o.total_us() - w.total_us()).abs();
    if secondary.abs() > direct.abs() && secondary.abs() >= 0.1 * whole && !through.is_empty() {
        let cause = match (owner, w.waste(), o.waste()) {
            (Owner::Kind(Kind::Allocator), Some(ww), Some(ow)) if (ww - ow).abs() >= 0.01 => {
                let (more, less) = if ow > ww { (o, w) } else { (w, o) };
                format!(
                    "`{}`'s {:.0}% waste of its reservations (against {:.0}%; held to its reservations less its rows) ",
                    more.name,
                    more.waste().unwrap_or(0.0) * 100.0,
                    less.waste().unwrap_or(0.0) * 100.0
                )
            }
            _ => String::new(),
        };
        let switches = if (sw - so).abs() >= 0.5 { format!("made {so:.0} memtable switches against {sw:.0}, and ") } else { String::new() };
        s.push_str(&format!(" Larger than that: {cause}{switches}{} a row.", through.join(", ")));
    }
    if s.is_empty() {
        s.push_str(" Its own phases did not move; the difference is elsewhere (where the time went, below).");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{Param, PluginInfo, StrategySpec};

    fn run(name: &str, allocator: &str, waste: u64, switches: u64, alloc_ns: u64, switch_ns: u64, memtable_ns: u64) -> VariantResult {
        let mut v = VariantResult::default();
        v.variant.name = name.into();
        v.variant.strategies.insert(Kind::Memtable, StrategySpec { plugin: "vector".into(), ..Default::default() });
        v.variant.strategies.insert(Kind::Allocator, StrategySpec { plugin: allocator.into(), ..Default::default() });
        v.rows = 1000;
        v.plugins.push(PluginInfo { kind: Kind::Allocator, name: allocator.into(), sha256: allocator.into(), load: Default::default(), cache_hit: false });
        v.stats.insert(Kind::Allocator, [(Stat::BytesReserved.name().into(), 100), (Stat::Waste.name().into(), waste)].into());
        v.counters.switches = switches;
        v.time = TimeBreakdown { client_wall_ns: 10_000_000, allocator_ns: alloc_ns, switch_ns, memtable_ns, ..Default::default() };
        v
    }

    #[test]
    fn an_allocator_is_credited_with_its_phases_and_its_waste_not_with_memtable_noise() {
        // `slab` calls faster but wastes 26%, so switches 7 times to 5.
        let (per_row, slab) = (run("per-row", "per-row", 0, 5, 900_000, 100_000, 3_000_000), run("slab", "slab", 26, 7, 700_000, 1_500_000, 3_400_000));
        let groups = vec![("per-row", vec![&per_row]), ("slab", vec![&slab])];
        let text = why(&groups, "per-row", &["slab"]).expect("a why");
        assert!(text.contains("differs from `slab` in its allocator alone"), "{text}");
        assert!(text.contains("allocator calls 0.70 → 0.90 µs"), "{text}");
        assert!(!text.contains("memtable calls"), "an allocator does not own the memtable's calls: {text}");
        assert!(
            text.contains("`slab`'s 26% waste of its reservations (against 0%; held to its reservations less its rows) made 7 memtable switches against 5"),
            "{text}"
        );
        assert!(text.contains("switching 1.50 → 0.10 µs"), "{text}");
        // Two strategies differ: no credit, and what differs is said.
        let mut other = slab.clone();
        other.variant.strategies.insert(Kind::Memtable, StrategySpec { plugin: "btree".into(), params: [("order".into(), Param::Integer(8))].into() });
        let groups = vec![("per-row", vec![&per_row]), ("slab", vec![&other])];
        let text = why(&groups, "per-row", &["slab"]).expect("a why");
        assert!(text.contains("No one strategy is credited") && text.contains("the memtable plugin: vector vs btree"), "{text}");
        // The runner-up differs in two, the baseline in one: the baseline is used.
        let base = run("base", "slab", 26, 7, 700_000, 1_500_000, 3_400_000);
        let groups = vec![("base", vec![&base]), ("per-row", vec![&per_row]), ("slab", vec![&other])];
        assert!(why(&groups, "per-row", &["slab", "base"]).expect("a why").contains("differs from `base` in its allocator alone"));
        // Native against wasm: other bytes by design, one difference.
        let mut native = per_row.clone();
        native.variant.runtime = crate::record::Runtime::Native;
        native.plugins[0].sha256 = "native".into();
        let groups = vec![("wasm", vec![&per_row]), ("native", vec![&native])];
        assert!(why(&groups, "native", &["wasm"]).expect("a why").contains("in `runtime` alone"), "{:?}", why(&groups, "native", &["wasm"]));
    }
}
