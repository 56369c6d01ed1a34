//! The figures the comparison puts side by side: each says which way is
//! better, how it prints, and whether a ratio between two variants means
//! anything. One table of them serves the text and the HTML report.

use super::{Rates, beyond_budget_mib, mib, rows_per_cpu_second};
use crate::record::VariantResult;
use crate::record::verdict::round_rate;

/// Which way a figure improves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    /// More is better (rates).
    Higher,
    /// Less is better (latency, CPU, bytes).
    Lower,
    /// Neither: a count that describes, not ranks (switches).
    Neither,
}

impl Better {
    /// The word a table prints.
    pub fn word(self) -> &'static str {
        match self {
            Higher => "higher",
            Lower => "lower",
            Neither => "-",
        }
    }
}

/// How a figure prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// A positive quantity: a ratio to the first variant means something.
    Quantity,
    /// A count: printed as an integer, no ratio.
    Count,
    /// A signed quantity: no ratio.
    Plain,
    /// Itself a ratio, printed `1.25x`: no ratio of ratios.
    Times,
}

/// One row of the comparison.
pub struct Figure {
    /// Its name and unit.
    pub name: &'static str,
    /// Which way is better.
    pub better: Better,
    /// How it prints.
    pub shape: Shape,
    /// Its value in one run; `None` where the run has nothing to say
    /// (no flush, no reads).
    pub get: fn(&VariantResult) -> Option<f64>,
}

const fn figure(name: &'static str, better: Better, shape: Shape, get: fn(&VariantResult) -> Option<f64>) -> Figure {
    Figure { name, better, shape, get }
}

fn positive(x: f64) -> Option<f64> {
    (x.is_finite() && x > 0.0).then_some(x)
}

fn raw_bytes(v: &VariantResult) -> u64 {
    super::total(v.flushes.iter().map(|f| f.raw_bytes))
}

use Better::{Higher, Lower, Neither};
use Shape::{Count, Plain, Quantity, Times};

/// The comparison's rows, the verdict's own figure first.
pub const FIGURES: [Figure; 23] = [
    figure("steady row rate (row/s)", Higher, Quantity, |v| Some(round_rate(v))),
    figure("rows per CPU-second", Higher, Quantity, |v| Some(rows_per_cpu_second(v))),
    figure("op rate (op/s)", Higher, Quantity, |v| Some(Rates::of(v).ops)),
    figure("row rate (row/s)", Higher, Quantity, |v| Some(Rates::of(v).rows)),
    figure("latency mean (ms)", Lower, Quantity, |v| Some(v.latency.mean / 1e6)),
    figure("latency p99 (ms)", Lower, Quantity, |v| Some(v.latency.p99 as f64 / 1e6)),
    figure("latency p99.9 (ms)", Lower, Quantity, |v| Some(v.latency.p999 as f64 / 1e6)),
    figure("flushed rows/s", Higher, Quantity, |v| positive(Rates::of(v).flush_rows as f64).map(|_| Rates::of(v).flushed_rows)),
    figure("flush input (MiB/s of rows)", Higher, Quantity, |v| positive(mib(raw_bytes(v)) / Rates::of(v).flush_wall.as_secs_f64().max(1e-9))),
    figure("flush cpu (ms)", Lower, Quantity, |v| positive(Rates::of(v).flush_cpu.as_secs_f64() * 1e3)),
    // Per row flushed, not per flush: flushes of different sizes would
    // rank by their size.
    figure("host heap per row flushed (B)", Lower, Quantity, super::heap_per_row_flushed),
    figure("of it in serializer calls (B)", Lower, Quantity, super::serializer_heap_per_row_flushed),
    figure("on disk (MiB)", Lower, Quantity, |v| positive(mib(Rates::of(v).flush_bytes))),
    figure("on disk per row (bytes)", Lower, Quantity, |v| positive(Rates::of(v).flush_bytes as f64 / Rates::of(v).flush_rows.max(1) as f64)),
    figure("compression (raw rows / on disk)", Higher, Times, |v| positive(raw_bytes(v) as f64 / Rates::of(v).flush_bytes.max(1) as f64)),
    figure("point gets/s", Higher, Quantity, |v| positive(v.reads.rate()).filter(|_| v.reads.keys > 0)),
    figure("lock wait (ms)", Lower, Plain, |v| Some(v.counters.lock_wait_ns as f64 / 1e6)),
    figure("contended puts", Lower, Count, |v| Some(v.counters.contended as f64)),
    figure("backpressure (ms)", Lower, Plain, |v| Some(v.counters.backpressure_ns as f64 / 1e6)),
    figure("memtable switches", Neither, Count, |v| Some(v.counters.switches as f64)),
    // Neither: the count moves with coalescing's groups, not the strategy.
    figure("boundary calls", Neither, Count, |v| Some(v.boundary.calls as f64)),
    figure("peak RSS (MiB)", Lower, Quantity, |v| positive(mib(v.resources.peak_rss))),
    // Within the budget is none beyond it, never a negative "best".
    figure("RSS beyond budget (MiB)", Lower, Plain, |v| Some(beyond_budget_mib(v).max(0.0))),
];

/// The commit log's rows, shown where some variant kept a log.
pub const LOG_FIGURES: [Figure; 7] = [
    figure("log bytes per row", Lower, Quantity, |v| v.commitlog.as_ref().and_then(|l| positive(l.bytes as f64 / l.rows.max(1) as f64))),
    figure("log syncs/s", Neither, Quantity, |v| v.commitlog.as_ref().and_then(|l| positive(l.syncs as f64 / v.elapsed.as_secs_f64().max(1e-9)))),
    figure("rows per sync", Higher, Quantity, |v| v.commitlog.as_ref().and_then(|l| positive(l.rows as f64 / l.syncs.max(1) as f64))),
    figure("sync p99 (ms)", Lower, Quantity, |v| v.commitlog.as_ref().and_then(|l| positive(l.sync_latency.p99 as f64 / 1e6))),
    figure("durability wait per row (µs)", Lower, Plain, |v| v.commitlog.as_ref().map(|_| v.counters.durability_wait_ns as f64 / 1e3 / v.rows.max(1) as f64)),
    figure("log write amplification", Lower, Times, |v| v.commitlog.as_ref().and_then(|l| positive(l.write_amplification()))),
    figure("log recoveries", Lower, Count, |v| v.commitlog.as_ref().map(|l| l.recoveries as f64)),
];

/// The rows a comparison of these runs shows: the log's only where a
/// variant kept one.
pub fn shown<'f>(runs: impl IntoIterator<Item = &'f VariantResult>) -> impl Iterator<Item = &'static Figure> {
    let logged = runs.into_iter().any(|v| v.commitlog.is_some());
    FIGURES.iter().chain(LOG_FIGURES.iter().filter(move |_| logged))
}

/// Values this close to the best (relatively) tie with it.
const TIE: f64 = 0.005;

/// One cell of a row: the median of a variant's runs, or why none.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Cell {
    /// Every run failed.
    Failed,
    /// The runs have nothing to say for this figure.
    None,
    /// The median.
    Value(f64),
}

/// A figure's row: one cell per variant, and which are the best.
pub struct Row {
    /// Per variant, in config order.
    pub cells: Vec<Cell>,
    /// Per variant: whether its cell is the best of the row.
    pub best: Vec<bool>,
}

impl Figure {
    /// The row for `groups` (each variant's runs).
    pub fn row(&self, groups: &[(&str, Vec<&VariantResult>)]) -> Row {
        let cells: Vec<Cell> = groups
            .iter()
            .map(|(_, runs)| {
                let ok = super::ok(runs);
                if ok.is_empty() {
                    return Cell::Failed;
                }
                super::median(ok.into_iter().filter_map(self.get).collect()).map_or(Cell::None, Cell::Value)
            })
            .collect();
        let values: Vec<f64> = cells.iter().filter_map(|c| if let Cell::Value(x) = c { Some(*x) } else { None }).collect();
        let best_value = match self.better {
            Higher => values.iter().copied().reduce(f64::max),
            Lower => values.iter().copied().reduce(f64::min),
            Neither => None,
        };
        // A best is marked only where there is a contest: two values that
        // differ by more than `TIE`; values within it of the best tie.
        let near = |x: f64, b: f64| (x - b).abs() <= TIE * b.abs().max(x.abs());
        let contest = values.len() > 1 && values.iter().any(|x| values.iter().any(|y| !near(*x, *y)));
        let best = cells.iter().map(|c| contest && matches!((c, best_value), (Cell::Value(x), Some(b)) if near(*x, b))).collect();
        Row { cells, best }
    }

    /// A value as this figure prints it.
    pub fn show(&self, x: f64) -> String {
        match self.shape {
            Count => super::thousands(x),
            Times => format!("{x:.2}x"),
            _ => super::shown(x),
        }
    }

    /// Cell `i` of `row` as text, and its ratio to the first variant's
    /// (the first itself has none) where a ratio means something.
    pub fn cell(&self, row: &Row, i: usize) -> (String, Option<f64>) {
        match row.cells[i] {
            Cell::Failed => ("FAILED".to_string(), None),
            Cell::None => ("-".to_string(), None),
            Cell::Value(x) => (self.show(x), self.ratio(x, row.cells[0]).filter(|_| i > 0)),
        }
    }

    /// The ratio to the baseline's value, where one means something.
    pub fn ratio(&self, x: f64, baseline: Cell) -> Option<f64> {
        match (self.shape, baseline) {
            (Quantity, Cell::Value(b)) if b > 0.0 && x > 0.0 => Some(x / b),
            _ => None,
        }
    }
}
