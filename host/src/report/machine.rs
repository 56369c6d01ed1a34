//! The machine under a verdict: the cores the rounds got, what the
//! neighbours took, and when that bounds what the verdict says (fewer
//! cores than the threads a variant runs, or variants whose rounds saw
//! different machines).

use crate::record::{BenchResult, Machine, VariantResult};

/// Cores of neighbours between two variants' rounds, on average, past
/// which their ratio is said to carry the machine too.
pub(super) const DIFFERENT_BY: f64 = 0.5;

fn mean(xs: impl Iterator<Item = f64>) -> Option<f64> {
    let (sum, n) = xs.fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    (n > 0).then(|| sum / n as f64)
}

fn range(xs: &[f64]) -> (f64, f64) {
    xs.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| (lo.min(x), hi.max(x)))
}

fn shown((lo, hi): (f64, f64)) -> String {
    let (lo, hi) = (format!("{lo:.1}"), format!("{hi:.1}"));
    if lo == hi { lo } else { format!("{lo}-{hi}") }
}

/// The threads a variant keeps busy at once: its clients and its flush
/// writers.
fn threads(result: &BenchResult, v: &VariantResult) -> usize {
    let clients = result.config.workload.get("threads").and_then(serde_json::Value::as_u64).unwrap_or(1) as usize;
    clients + v.variant.flush_writers.max(1)
}

/// The verdict block's machine line, or none when no round recorded its
/// machine (older records, or not Linux).
pub(super) fn line(result: &BenchResult) -> Option<String> {
    let runs: Vec<(&VariantResult, Machine)> =
        result.variants.iter().filter(|v| v.failure().is_none()).filter_map(|v| v.resources.machine.map(|m| (v, m))).collect();
    let (_, first) = runs.first()?;
    let cores: Vec<f64> = runs.iter().map(|(_, m)| m.cores).collect();
    let others: Vec<f64> = runs.iter().map(|(_, m)| m.others()).collect();
    let loads: Vec<f64> = runs.iter().map(|(_, m)| m.load).collect();
    let steal = runs.iter().map(|(_, m)| m.steal).fold(0.0, f64::max);
    let pinned = result.config.bench.cpus.as_ref().map_or(String::new(), |c| format!(", pinned to CPUs {}", crate::util::text::clean(c)));
    let mut text = format!(
        "Machine: the rounds got {} of {} cores{pinned}, beside {} cores busy elsewhere (load {}{})",
        shown(range(&cores)),
        first.cpus,
        shown(range(&others)),
        shown(range(&loads)),
        if steal >= 0.005 { format!(", up to {:.0}% stolen", steal * 100.0) } else { String::new() }
    );
    let got = mean(cores.iter().copied()).unwrap_or(0.0);
    let wanted = runs.iter().map(|(v, _)| threads(result, v)).max().unwrap_or(1);
    if got + 0.5 < wanted as f64 {
        text.push_str(&format!(
            "; fewer than the {wanted} threads a variant runs (clients and flush writers), so this ordering holds for about {} core(s), not for a machine that gives every thread one",
            got.round().max(1.0)
        ));
    }
    if let Some(apart) = apart(&runs) {
        text.push_str("; ");
        text.push_str(&apart);
    }
    text.push('.');
    Some(text)
}

/// The two variants whose rounds saw the most different neighbours, when
/// they differ by more than `DIFFERENT_BY` cores on average.
fn apart(runs: &[(&VariantResult, Machine)]) -> Option<String> {
    let mut names: Vec<&str> = runs.iter().map(|(v, _)| v.variant.name.as_str()).collect();
    names.dedup();
    names.sort_unstable();
    names.dedup();
    let by: Vec<(&str, f64)> =
        names.iter().filter_map(|&n| mean(runs.iter().filter(|(v, _)| v.variant.name == n).map(|(_, m)| m.others())).map(|o| (n, o))).collect();
    let quiet = by.iter().min_by(|a, b| a.1.total_cmp(&b.1))?;
    let busy = by.iter().max_by(|a, b| a.1.total_cmp(&b.1))?;
    (busy.1 - quiet.1 > DIFFERENT_BY).then(|| {
        format!(
            "the variants' rounds saw different machines (`{}` beside {:.1} busy cores of neighbours on average, `{}` beside {:.1}): their ratio carries that difference too",
            busy.0, busy.1, quiet.0, quiet.1
        )
    })
}

#[cfg(test)]
mod tests {
    use super::line;
    use crate::record::{BenchResult, Machine, VariantResult};

    fn run(name: &str, cores: f64, busy: f64) -> VariantResult {
        let mut v = VariantResult::default();
        v.variant.name = name.into();
        v.variant.flush_writers = 1;
        v.resources.machine = Some(Machine { cpus: 2, cores, busy, steal: 0.0, load: 3.0 });
        v
    }

    #[test]
    fn the_machine_line_bounds_the_ordering_and_names_different_neighbours() {
        let mut r = BenchResult::default();
        r.config.workload = serde_json::json!({ "threads": 2 });
        r.variants = vec![run("a", 0.9, 1.0), run("b", 0.8, 1.9)];
        let text = line(&r).expect("a line");
        assert!(text.contains("got 0.8-0.9 of 2 cores"), "{text}");
        assert!(text.contains("fewer than the 3 threads") && text.contains("about 1 core(s)"), "{text}");
        assert!(text.contains("`b` beside 1.1") && text.contains("`a` beside 0.1"), "{text}");
        r.variants = vec![run("a", 1.9, 2.0), run("b", 1.9, 2.0)];
        r.config.workload = serde_json::json!({ "threads": 1 });
        let calm = line(&r).expect("a line");
        assert!(!calm.contains("fewer than") && !calm.contains("different machines"), "{calm}");
        r.variants.iter_mut().for_each(|v| v.resources.machine = None);
        assert_eq!(line(&r), None, "an older record says nothing of its machine");
    }
}
