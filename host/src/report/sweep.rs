//! A sweep's report: each figure against the swept parameter, one line
//! per variant, beside its table; the ratio to the first variant at each
//! point with its interval, so the chart shows how the gap moves; and
//! each point's own verdict.

use std::fmt::Write as _;

use maud::{Markup, html};

use super::charts::{Axis, PALETTE, Series, Whisker, line_chart, line_chart_with, shown};
use super::figures::{Better, FIGURES, Figure, LOG_FIGURES};
use super::{by_variant, headline, median, ok};
use crate::record::Verdict;
use crate::record::sweep::Sweep;
use crate::record::verdict::{paired_ratios, round_rate, verdicts};

/// The figures a sweep plots, by their names in the comparison.
const SWEPT: [&str; 4] = ["steady row rate (row/s)", "latency p99 (ms)", "flushed rows/s", "rows per CPU-second"];
/// And where a variant keeps a commit log: what a sync shares.
const SWEPT_LOG: [&str; 2] = ["rows per sync", "durability wait per row (µs)"];

fn figures() -> impl Iterator<Item = &'static Figure> {
    SWEPT.iter().filter_map(|name| FIGURES.iter().find(|f| f.name == *name))
}

fn log_figures() -> impl Iterator<Item = &'static Figure> {
    SWEPT_LOG.iter().filter_map(|name| LOG_FIGURES.iter().find(|f| f.name == *name))
}

/// A variant's ratio to the first at one point: the paired verdict, or
/// the ratio of one round where there is only one.
#[derive(Clone, Copy)]
enum Gap {
    Verdict(Verdict),
    OneRound(f64),
}

impl Gap {
    fn ratio(self) -> f64 {
        match self {
            Gap::Verdict(v) => v.ratio,
            Gap::OneRound(r) => r,
        }
    }

    /// Which side of 1 the interval puts the ratio on, if it does.
    fn side(self) -> Option<bool> {
        match self {
            Gap::Verdict(v) if v.low > 1.0 => Some(true),
            Gap::Verdict(v) if v.high < 1.0 => Some(false),
            Gap::Verdict(_) => None,
            Gap::OneRound(r) => Some(r > 1.0),
        }
    }

    fn text(self) -> String {
        match self {
            Gap::Verdict(v) if !v.decision.decided() => format!("{:.2}x [{:.2}, {:.2}] undecided", v.ratio, v.low, v.high),
            Gap::Verdict(v) => format!("{:.2}x [{:.2}, {:.2}]", v.ratio, v.low, v.high),
            Gap::OneRound(r) => format!("{r:.2}x (1 round)"),
        }
    }

    /// Whether the point decided it: a paired verdict, decided.
    fn decided(self) -> bool {
        matches!(self, Gap::Verdict(v) if v.decision.decided())
    }
}

/// The sweep as numbers: per figure, per point, per variant.
struct Grid<'a> {
    sweep: &'a Sweep,
    variants: Vec<String>,
    /// `values[f][p][v]`: figure `f` at point `p` for variant `v`.
    values: Vec<(&'static Figure, Vec<Vec<Option<f64>>>)>,
    /// `gaps[p][v]`, against the first variant (`None` for it).
    gaps: Vec<Vec<Option<Gap>>>,
}

impl<'a> Grid<'a> {
    fn of(sweep: &'a Sweep) -> Self {
        let variants = sweep.variants();
        let logged = sweep.points.iter().any(|p| p.result.variants.iter().any(|v| v.commitlog.is_some()));
        let values = figures()
            .chain(log_figures().filter(|_| logged))
            .map(|f| {
                let at = sweep
                    .points
                    .iter()
                    .map(|p| {
                        let groups = by_variant(&p.result);
                        variants
                            .iter()
                            .map(|name| {
                                let runs = groups.iter().find(|(n, _)| n == name).map(|(_, r)| ok(r)).unwrap_or_default();
                                median(runs.into_iter().filter_map(f.get).collect())
                            })
                            .collect()
                    })
                    .collect();
                (f, at)
            })
            .collect();
        let gaps = sweep
            .points
            .iter()
            .map(|p| {
                let all = verdicts(&p.result);
                let groups = by_variant(&p.result);
                variants
                    .iter()
                    .enumerate()
                    .map(|(i, name)| {
                        if i == 0 {
                            return None;
                        }
                        if let Some((_, Some(v))) = all.iter().find(|(n, _)| n == name) {
                            return Some(Gap::Verdict(*v));
                        }
                        let (first, runs) = (groups.first()?, groups.iter().find(|(n, _)| n == name)?);
                        let ratios = paired_ratios(&first.1, &runs.1);
                        median(ratios)
                            .or_else(|| {
                                let (b, r) = (ok(&first.1).first().map(|v| round_rate(v))?, ok(&runs.1).first().map(|v| round_rate(v))?);
                                Some(r / b)
                            })
                            .map(Gap::OneRound)
                    })
                    .collect()
            })
            .collect();
        Grid { sweep, variants, values, gaps }
    }

    fn labels(&self) -> Vec<&str> {
        self.sweep.points.iter().map(|p| p.value.as_str()).collect()
    }

    /// How each variant's gap to the first moved from its first decided
    /// point to its last; undecided points are named, never a trend's end.
    fn trend(&self) -> Vec<String> {
        let labels = self.labels();
        if labels.len() < 2 {
            return Vec::new();
        }
        (1..self.variants.len()).map(|v| self.trend_of(v, &labels)).collect()
    }

    fn trend_of(&self, v: usize, labels: &[&str]) -> String {
        let over = &self.sweep.over;
        let decided: Vec<(usize, Gap)> = self.gaps.iter().enumerate().filter_map(|(p, row)| row[v].filter(|g| g.decided()).map(|g| (p, g))).collect();
        let undecided: Vec<&str> = (0..labels.len()).filter(|p| !decided.iter().any(|(d, _)| d == p)).map(|p| labels[p]).collect();
        let apart = match undecided.as_slice() {
            [] => String::new(),
            some => format!("; undecided, left out: {over} = {}", some.join(", ")),
        };
        let who = format!("`{}` over `{}`", self.variants[v], self.variants[0]);
        let (Some(&(a, from)), Some(&(b, to))) = (decided.first(), decided.last()) else {
            return format!("{who}: no point decided{apart}");
        };
        if a == b {
            return format!("{who}: {:.2}x at {over} = {}, the only point decided; no trend{apart}", from.ratio(), labels[a]);
        }
        // The gap is the distance from 1, whichever side it is on.
        let (was, is) = (from.ratio().ln(), to.ratio().ln());
        let moved = match (from.side(), to.side(), is.abs() - was.abs()) {
            (Some(x), Some(y), _) if x != y => "the order flips",
            (_, _, d) if d > 0.05 => "the gap widens",
            (_, _, d) if d < -0.05 => "the gap narrows",
            _ => "the gap holds",
        };
        format!("{who}: {:.2}x at {over} = {}, {:.2}x at {over} = {}; {moved}{apart}", from.ratio(), labels[a], to.ratio(), labels[b])
    }
}

fn cell(f: &Figure, x: Option<f64>) -> String {
    x.map_or_else(|| "-".to_string(), |x| f.show(x))
}

/// The sweep as text: each point's verdict, a table per figure, the
/// ratios with their intervals, and how the gaps moved.
pub fn table(sweep: &Sweep) -> String {
    let grid = Grid::of(sweep);
    let mut s = format!(
        "Sweep over `{}`: {} of {} point(s), {} variant(s); sweep id {:.12}\n",
        sweep.over,
        sweep.points.len(),
        sweep.values.len(),
        grid.variants.len(),
        sweep.id
    );
    let not_applied = sweep.points.iter().find_map(|p| p.result.config.sweep.as_ref().map(|s| s.not_applied.clone())).unwrap_or_default();
    if !not_applied.is_empty() {
        let names: Vec<String> = not_applied.iter().map(|n| format!("`{}`", crate::record::text::for_terminal(n))).collect();
        let _ = writeln!(
            s,
            "Not applied to {}: its plugin has no such parameter, so it runs as configured at every point (a reference line, not a point of the sweep)",
            names.join(", ")
        );
    }
    let missing = sweep.missing();
    if !missing.is_empty() {
        let _ = writeln!(s, "Not recorded: {} = {} (run them with `--points`, then show every point's directory together)", sweep.over, missing.join(", "));
    }
    for trend in grid.trend() {
        let _ = writeln!(s, "  {trend}");
    }
    s.push_str("\nAt each point:\n");
    for p in &sweep.points {
        let text = headline(&p.result).map_or_else(|| "one variant: nothing to compare".to_string(), |h| h.text);
        let _ = writeln!(s, "  {} = {}: {}", sweep.over, p.value, crate::record::text::for_terminal(&text));
    }
    let width = grid.variants.iter().map(|n| n.chars().count()).max().unwrap_or(8).clamp(10, 28) + 2;
    let head = |s: &mut String, names: &[String]| {
        let _ = write!(s, "  {:<16}", sweep.over);
        for n in names {
            let shown: String = crate::record::text::for_terminal(n).chars().take(width - 2).collect();
            let _ = write!(s, "{shown:>width$}");
        }
        s.push('\n');
    };
    for (f, at) in &grid.values {
        let better = if f.better == Better::Neither { String::new() } else { format!(", {} is better", f.better.word()) };
        let _ = writeln!(s, "\n{}{better}, median of rounds:", f.name);
        head(&mut s, &grid.variants);
        for (p, row) in sweep.points.iter().zip(at) {
            let _ = write!(s, "  {:<16}", p.value);
            for x in row {
                let _ = write!(s, "{:>width$}", cell(f, *x));
            }
            s.push('\n');
        }
    }
    if grid.variants.len() > 1 {
        let _ = writeln!(s, "\nsteady row rate against `{}` (95% interval over paired rounds):", grid.variants[0]);
        let wide = width.max(22);
        let _ = write!(s, "  {:<16}", sweep.over);
        for n in &grid.variants[1..] {
            let shown: String = crate::record::text::for_terminal(n).chars().take(wide - 2).collect();
            let _ = write!(s, "{shown:>wide$}");
        }
        s.push('\n');
        for (p, row) in sweep.points.iter().zip(&grid.gaps) {
            let _ = write!(s, "  {:<16}", p.value);
            for g in &row[1..] {
                let _ = write!(s, "{:>wide$}", g.map_or_else(|| "-".to_string(), Gap::text));
            }
            s.push('\n');
        }
    }
    s
}

/// The sweep's HTML page: charts of each figure and of the gaps against
/// the parameter, the tables beside them, and each point's verdict.
pub fn html(sweep: &Sweep) -> String {
    let grid = Grid::of(sweep);
    let name = sweep.points.first().map(|p| p.result.config.bench.name.clone()).unwrap_or_default();
    let description = sweep.points.first().map(|p| p.result.config.bench.description.clone()).unwrap_or_default();
    let over = shown(&sweep.over);
    let body = html! {
        h1 { "memlab sweep: " (shown(&name)) " over " (over) }
        p { (shown(&description)) }
        section class="verdict" id="verdict" {
            p class="headline" { "How the gap moves" }
            ul { @for t in grid.trend() { li { (shown(&t)) } } }
            p { "At each point:" }
            ul {
                @for p in &sweep.points {
                    @let text = headline(&p.result).map_or_else(|| "one variant: nothing to compare".to_string(), |h| h.text);
                    li { (over) " = " (shown(&p.value)) ": " (shown(&text)) }
                }
            }
        }
        h2 { "Against the parameter" }
        div class="charts" { (charts(sweep, &grid)) }
        h2 { "Tables" }
        (tables(sweep, &grid))
        h2 { "Points" }
        ul { @for p in &sweep.points { li { (over) " = " (shown(&p.value)) ": " (shown(&p.source)) } } }
    };
    super::html::page(&format!("memlab sweep: {name}"), body)
}

/// The gaps' chart with their intervals, then each figure's, against
/// the swept value.
fn charts(sweep: &Sweep, grid: &Grid<'_>) -> Markup {
    let labels = grid.labels();
    let ticks: Vec<(f64, String)> = labels.iter().enumerate().map(|(i, l)| (i as f64, (*l).to_string())).collect();
    let series = |at: &dyn Fn(usize, usize) -> Option<f64>, apart: &dyn Fn(usize, usize) -> bool, from: usize| -> Vec<Series> {
        (from..grid.variants.len())
            .map(|v| {
                let all = (0..labels.len()).filter_map(|p| at(p, v).map(|y| (p, (p as f64, y))));
                let (off, on): (Vec<_>, Vec<_>) = all.partition(|(p, _)| apart(*p, v));
                Series {
                    label: grid.variants[v].clone(),
                    color: PALETTE[v % PALETTE.len()],
                    points: on.into_iter().map(|(_, xy)| xy).collect(),
                    dashed: false,
                    apart: off.into_iter().map(|(_, xy)| xy).collect(),
                }
            })
            .collect()
    };
    let gaps = (grid.variants.len() > 1).then(|| {
        // Only decided points make the line; the rest stand apart, hollow.
        let gaps = series(&|p, v| grid.gaps[p][v].map(Gap::ratio), &|p, v| grid.gaps[p][v].is_some_and(|g| !g.decided()), 1);
        // Each ratio's 95% interval as a whisker; the dashed line is 1.
        let gaps_at = &grid.gaps;
        let whiskers: Vec<Whisker> = (0..labels.len())
            .flat_map(|p| {
                (1..grid.variants.len()).filter_map(move |v| match gaps_at[p][v]? {
                    Gap::Verdict(verdict) => Some(Whisker { series: v - 1, x: p as f64, low: verdict.low, high: verdict.high }),
                    Gap::OneRound(_) => None,
                })
            })
            .collect();
        let title = format!("steady row rate over `{}`'s (95% intervals; hollow: undecided; dashed: the same), against {}", grid.variants[0], sweep.over);
        line_chart_with(&title, &sweep.over, "ratio", &gaps, Axis::Linear, Some(ticks.clone()), &whiskers, Some(1.0))
    });
    html! {
        @if let Some(chart) = gaps { section class="chart" { (chart) } }
        @for (f, at) in &grid.values {
            @let lines = series(&|p, v| at[p][v], &|_, _| false, 0);
            section class="chart" { (line_chart(&format!("{} against {}", f.name, sweep.over), &sweep.over, f.name, &lines, Axis::Linear, Some(ticks.clone()))) }
        }
    }
}

/// Each figure's table, then the gaps' with their intervals.
fn tables(sweep: &Sweep, grid: &Grid<'_>) -> Markup {
    let over = shown(&sweep.over);
    html! {
        @for (f, at) in &grid.values {
            h3 { (f.name) " (" (f.better.word()) " is better)" }
            table {
                tr { th { (over) } @for n in &grid.variants { th { (shown(n)) } } }
                @for (p, row) in sweep.points.iter().zip(at) {
                    tr { td { (shown(&p.value)) } @for x in row { td { (cell(f, *x)) } } }
                }
            }
        }
        @if grid.variants.len() > 1 {
            h3 { "steady row rate against `" (shown(&grid.variants[0])) "`, 95% interval" }
            table {
                tr { th { (over) } @for n in &grid.variants[1..] { th { (shown(n)) } } }
                @for (p, row) in sweep.points.iter().zip(&grid.gaps) {
                    tr { td { (shown(&p.value)) } @for g in &row[1..] { td { (g.map_or_else(|| "-".to_string(), Gap::text)) } } }
                }
            }
        }
    }
}
