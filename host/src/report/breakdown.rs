//! Where the time went, per variant: each client phase as a share of the
//! client threads' wall time, the flush threads beside them, and what the
//! breakdown itself cost.

use std::fmt::Write as _;

use crate::record::{TimeBreakdown, VariantResult};

/// A variant's breakdown summed over its completed runs, if they have one.
pub fn of(runs: &[&VariantResult]) -> Option<TimeBreakdown> {
    let with: Vec<&TimeBreakdown> = super::ok(runs).into_iter().map(|v| &v.time).filter(|t| !t.is_empty()).collect();
    let first = **with.first()?;
    Some(with.iter().skip(1).fold(first, |mut sum, t| {
        sum.add(t);
        sum
    }))
}

/// A share of the client time, in percent.
pub fn share(ns: u64, t: &TimeBreakdown) -> f64 {
    ns as f64 * 100.0 / (t.client_wall_ns as f64).max(1.0)
}

/// The text table: one row per phase, one column per variant.
pub fn table(groups: &[(&str, Vec<&VariantResult>)], lw: usize, width: usize) -> String {
    let all: Vec<Option<TimeBreakdown>> = groups.iter().map(|(_, runs)| of(runs)).collect();
    let Some(any) = all.iter().flatten().next() else { return String::new() };
    let mut s = String::new();
    let _ = writeln!(s, "\nWhere the client threads' time went (% of their wall time, summed over threads; measured per batch)");
    for (i, (phase, _)) in any.parts().iter().enumerate() {
        if all.iter().flatten().all(|t| t.parts()[i].1 == 0) {
            continue;
        }
        let _ = write!(s, "{phase:<lw$} | {:<6}", "");
        for t in &all {
            let cell = t.map_or("-".to_string(), |t| format!("{:.1}%", share(t.parts()[i].1, &t)));
            let _ = write!(s, " | {cell:>width$}");
        }
        s.push('\n');
    }
    let _ = write!(s, "{:<lw$} | {:<6}", "flush threads beside (wall / cpu)", "");
    for t in &all {
        let cell = t.map_or("-".to_string(), |t| format!("{:.0} / {:.0} ms", t.flush_wall_ns as f64 / 1e6, t.flush_cpu_ns as f64 / 1e6));
        let _ = write!(s, " | {cell:>width$}");
    }
    s.push('\n');
    let _ = write!(s, "{:<lw$} | {:<6}", "the breakdown's own clock reads", "");
    for t in &all {
        let cell = t.map_or("-".to_string(), |t| format!("{:.2}% of the time", t.own_cost() * 100.0));
        let _ = write!(s, " | {cell:>width$}");
    }
    s.push('\n');
    let _ = writeln!(s, "{}", footnote(any));
    s
}

/// How the crossing and the clock were calibrated.
pub fn footnote(t: &TimeBreakdown) -> String {
    format!(
        "(calls to plugins are timed around each batch's `store-rows` and `insert`, the host's checks included; the crossing is calibrated on a bare component once per bench: {:.0} ns a call and {:.2} ns a KiB on wasm, none on native twins; a clock read costs {:.0} ns)",
        t.crossing_call_ns,
        t.crossing_byte_ns * 1024.0,
        t.clock_read_ns
    )
}

/// The one-line summary for a run's own report.
pub fn line(t: &TimeBreakdown) -> String {
    let mut parts: Vec<(&str, u64)> = t.parts().into_iter().filter(|(_, ns)| *ns > 0).collect();
    parts.sort_by_key(|(_, ns)| std::cmp::Reverse(*ns));
    let shown: Vec<String> = parts.iter().take(6).map(|(name, ns)| format!("{name} {:.0}%", share(*ns, t))).collect();
    format!("{}; its clock reads cost {:.2}% (measured by the host)", shown.join(", "), t.own_cost() * 100.0)
}
