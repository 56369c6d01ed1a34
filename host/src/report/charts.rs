//! The report's SVG charts, drawn by hand (no scripts, no external
//! files): line charts with their legend below the plot, a stacked bar per
//! variant for where the time went, and the flush timeline. Every chart
//! keeps its marks inside its plot (a clip path), so eight variants and
//! their repeats stay readable.

use maud::{Markup, html};

pub(super) const PALETTE: [&str; 8] = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"];
const W: f64 = 920.0;
const PLOT_H: f64 = 300.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 24.0;
const TOP: f64 = 34.0;
const AXIS: f64 = 42.0;
const LEGEND_COLUMN: f64 = 270.0;
const LEGEND_ROW: f64 = 17.0;

/// A record's text as a page shows it: control characters escaped
/// visibly; maud escapes the markup.
pub(super) fn shown(text: &str) -> String {
    crate::record::text::for_terminal(text)
}

/// A data series: its label, colour and points; later repeats dashed.
/// `apart` are points drawn hollow and joined to nothing: values the
/// series holds but did not decide.
pub(super) struct Series {
    pub label: String,
    pub color: &'static str,
    pub points: Vec<(f64, f64)>,
    pub dashed: bool,
    pub apart: Vec<(f64, f64)>,
}

/// How an axis maps values; `Log` plots log10 and labels powers of ten.
#[derive(Clone, Copy)]
pub(super) enum Axis {
    Linear,
    Log,
}

impl Axis {
    /// A value in the axis's terms (its log for a log axis).
    fn of(self, y: f64) -> f64 {
        match self {
            Axis::Linear => y,
            Axis::Log => y.max(1e-9).log10(),
        }
    }
}

fn step_for(span: f64) -> f64 {
    let span = span.max(1e-12);
    let base = 10f64.powf((span / 5.0).log10().floor());
    [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * base).find(|s| span / s <= 6.0).unwrap_or(base * 10.0)
}

/// Ticks from a multiple of the step at or below `lo` to one at or above
/// `hi`: the axis ends on a tick, so the data never reaches past it.
pub(super) fn nice_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let step = step_for(hi - lo);
    let (first, last) = ((lo / step).floor() as i64, (hi / step).ceil() as i64);
    (first..=last.max(first + 1)).map(|i| i as f64 * step).collect()
}

/// A label cut to fit the 220-pixel column left of a bar.
fn short(label: &str) -> String {
    const FITS: usize = 32;
    if label.chars().count() <= FITS { label.to_string() } else { label.chars().take(FITS - 1).chain(['…']).collect() }
}

pub(super) fn label(v: f64) -> String {
    if v.abs() >= 1e6 {
        format!("{:.1}M", v / 1e6)
    } else if v.abs() >= 1e3 {
        format!("{:.0}k", v / 1e3)
    } else if v.fract() == 0.0 {
        format!("{v:.0}")
    } else if v.abs() >= 1.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.3}")
    }
}

/// A chart: its title above whatever `body` draws.
fn svg(h: f64, title: &str, body: Markup) -> Markup {
    html! {
        svg xmlns="http://www.w3.org/2000/svg" class="chart" width=(W) height=(h) viewBox=(format!("0 0 {W} {h}")) font-family="sans-serif" font-size="12" {
            text x=(LEFT) y="20" font-size="15" font-weight="bold" { (shown(title)) }
            (body)
        }
    }
}

/// A coordinate as the charts write it.
fn at(v: f64) -> String {
    format!("{v:.1}")
}

/// The legend under a plot: a sample of each line (dashed where the line
/// is) and its label, in columns.
fn legend(top: f64, entries: &[(&str, &str, bool)]) -> Markup {
    let columns = ((W - LEFT) / LEGEND_COLUMN).floor().max(1.0) as usize;
    html! {
        @for (i, (label, color, dashed)) in entries.iter().enumerate() {
            @let (x, y) = (LEFT + (i % columns) as f64 * LEGEND_COLUMN, top + (i / columns) as f64 * LEGEND_ROW);
            line x1=(x) x2=(x + 24.0) y1=(y) y2=(y) stroke=(color) stroke-width="3" stroke-dasharray=[dashed.then_some("5 3")] {}
            text x=(x + 30.0) y=(y + 4.0) { title { (shown(label)) } (shown(&clipped(label, 38))) }
        }
    }
}

/// `label` in at most `chars` characters, an ellipsis marking a cut.
fn clipped(label: &str, chars: usize) -> String {
    match label.char_indices().nth(chars) {
        Some(_) => label.chars().take(chars - 1).chain(std::iter::once('…')).collect(),
        None => label.to_string(),
    }
}

fn legend_height(n: usize) -> f64 {
    let columns = ((W - LEFT) / LEGEND_COLUMN).floor().max(1.0) as usize;
    n.div_ceil(columns) as f64 * LEGEND_ROW + 8.0
}

/// The y range a linear axis shows: from 0, or from just under the data
/// when it sits far from 0 (a rate that moves by 5% would be a flat line).
fn linear_range(lo: f64, hi: f64) -> (f64, f64) {
    if lo >= 0.0 && lo > 0.6 * hi {
        let pad = ((hi - lo) * 0.1).max(hi.abs() * 0.01);
        (lo - pad, hi + pad)
    } else {
        (lo.min(0.0), hi)
    }
}

/// An interval drawn at one point of a series: its 95% bounds.
pub(super) struct Whisker {
    /// The series it belongs to (its colour).
    pub series: usize,
    /// Where on the x axis.
    pub x: f64,
    /// The interval's ends.
    pub low: f64,
    /// The interval's upper end.
    pub high: f64,
}

/// A line chart. `x_ticks` overrides the x axis labels (value, text).
pub(super) fn line_chart(title: &str, x_name: &str, y_name: &str, series: &[Series], y_axis: Axis, x_ticks: Option<Vec<(f64, String)>>) -> Markup {
    line_chart_with(title, x_name, y_name, series, y_axis, x_ticks, &[], None)
}

/// A line chart with intervals at its points and a dashed reference line
/// (a ratio's 1: "the same").
#[expect(clippy::too_many_arguments, reason = "a chart's parts, each named at the call")]
pub(super) fn line_chart_with(
    title: &str,
    x_name: &str,
    y_name: &str,
    series: &[Series],
    y_axis: Axis,
    x_ticks: Option<Vec<(f64, String)>>,
    whiskers: &[Whisker],
    reference: Option<f64>,
) -> Markup {
    let h = TOP + PLOT_H + AXIS + legend_height(series.len());
    let Some(scale) = Scale::of(series, y_axis, whiskers, reference) else {
        return svg(h, title, html! { text x="300" y="150" { "no data" } });
    };
    let clip = format!("clip{}", title.bytes().fold(0u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b))));
    let pw = W - LEFT - RIGHT;
    let entries: Vec<(&str, &str, bool)> = series.iter().map(|s| (s.label.as_str(), s.color, s.dashed)).collect();
    svg(
        h,
        title,
        html! {
            (scale.axes(x_ticks, (x_name, y_name)))
            defs { clipPath id=(clip) { rect x=(LEFT) y=(TOP) width=(pw) height=(PLOT_H) {} } }
            rect x=(LEFT) y=(TOP) width=(pw) height=(PLOT_H) fill="none" stroke="#888" {}
            g clip-path=(format!("url(#{clip})")) {
                (scale.lines(series))
                (scale.whiskers(series, whiskers))
                @if let Some(r) = reference {
                    line x1=(LEFT) x2=(W - RIGHT) y1=(at(scale.y(r))) y2=(at(scale.y(r))) stroke="#555" stroke-dasharray="6 4" {}
                }
            }
            (legend(TOP + PLOT_H + AXIS + 6.0, &entries))
        },
    )
}

/// A line chart's axes: the data's range (widened by the intervals and
/// the reference, at most by the data's own span again) and its ticks.
struct Scale {
    axis: Axis,
    x0: f64,
    x1: f64,
    y_ticks: Vec<(f64, String)>,
}

impl Scale {
    fn of(series: &[Series], axis: Axis, whiskers: &[Whisker], reference: Option<f64>) -> Option<Scale> {
        let ty = |y: f64| axis.of(y);
        let pts: Vec<(f64, f64)> =
            series.iter().flat_map(|s| s.points.iter().chain(&s.apart).map(|&(x, y)| (x, ty(y)))).filter(|p| p.0.is_finite() && p.1.is_finite()).collect();
        if pts.is_empty() {
            return None;
        }
        let bounds: Vec<f64> = whiskers.iter().flat_map(|w| [ty(w.low), ty(w.high)]).chain(reference.map(ty)).filter(|y| y.is_finite()).collect();
        let (x0, mut x1) = pts.iter().fold((0.0f64, f64::NEG_INFINITY), |(a, b), p| (a.min(p.0), b.max(p.0)));
        let (lo, hi) = pts.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| (a.min(p.1), b.max(p.1)));
        // One wide interval must not flatten the lines (the plot clips
        // what it cuts).
        let span = (hi - lo).max(hi.abs() * 0.25);
        let (lo, hi) = bounds.iter().fold((lo, hi), |(a, b), y| (a.min(y.max(lo - span)), b.max(y.min(hi + span))));
        if x1 <= x0 {
            x1 = x0 + 1.0;
        }
        let y_ticks: Vec<(f64, String)> = match axis {
            Axis::Linear => {
                let (lo, hi) = linear_range(lo, hi);
                nice_ticks(lo, if hi > lo { hi } else { lo + 1.0 }).into_iter().map(|t| (t, label(t))).collect()
            }
            Axis::Log => (lo.floor() as i32..=(hi.ceil() as i32).max(lo.floor() as i32 + 1)).map(|e| (f64::from(e), label(10f64.powi(e)))).collect(),
        };
        Some(Scale { axis, x0, x1, y_ticks })
    }

    /// A value's place on the x axis, inset from the frame so the points
    /// at either end, and the intervals offset beside them, are drawn
    /// whole inside the clip.
    fn x(&self, x: f64) -> f64 {
        const INSET: f64 = 16.0;
        LEFT + INSET + (x - self.x0) / (self.x1 - self.x0) * (W - LEFT - RIGHT - 2.0 * INSET)
    }

    /// A value's place on the y axis.
    fn y(&self, y: f64) -> f64 {
        self.y_at(self.axis.of(y))
    }

    /// The place of `t`, already in the axis's terms (a tick).
    fn y_at(&self, t: f64) -> f64 {
        let (y0, y1) = (self.y_ticks.first().map_or(0.0, |t| t.0), self.y_ticks.last().map_or(1.0, |t| t.0));
        TOP + PLOT_H - (t - y0) / (y1 - y0).max(1e-12) * PLOT_H
    }

    /// The grid, the ticks and the axes' names.
    fn axes(&self, x_ticks: Option<Vec<(f64, String)>>, (x_name, y_name): (&str, &str)) -> Markup {
        let x_ticks = x_ticks.unwrap_or_else(|| nice_ticks(self.x0, self.x1).into_iter().filter(|t| *t <= self.x1 + 1e-9).map(|t| (t, label(t))).collect());
        let pw = W - LEFT - RIGHT;
        html! {
            @for (t, text) in &self.y_ticks {
                @let y = self.y_at(*t);
                line x1=(LEFT) x2=(W - RIGHT) y1=(at(y)) y2=(at(y)) stroke="#ddd" {}
                text x=(LEFT - 6.0) y=(at(y + 4.0)) text-anchor="end" { (shown(text)) }
            }
            @for (t, text) in &x_ticks {
                @let x = self.x(*t);
                line x1=(at(x)) x2=(at(x)) y1=(TOP) y2=(TOP + PLOT_H) stroke="#eee" {}
                text x=(at(x)) y=(TOP + PLOT_H + 15.0) text-anchor="middle" { (shown(text)) }
            }
            text x=(LEFT + pw / 2.0) y=(TOP + PLOT_H + 32.0) text-anchor="middle" { (shown(x_name)) }
            text transform=(format!("translate(16 {}) rotate(-90)", TOP + PLOT_H / 2.0)) text-anchor="middle" { (shown(y_name)) }
        }
    }

    /// Each series' line; a point each where there are few, so a short
    /// run is not mistaken for a trend.
    fn lines(&self, series: &[Series]) -> Markup {
        html! {
            @for s in series {
                @let points: Vec<(f64, f64)> = s.points.iter().map(|&(x, y)| (self.x(x), self.y(y))).filter(|p| p.0.is_finite() && p.1.is_finite()).collect();
                @let path: Vec<String> = points.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect();
                polyline fill="none" stroke=(s.color) stroke-width="2" stroke-dasharray=[s.dashed.then_some("5 3")] points=(path.join(" ")) {}
                @if points.len() <= 60 {
                    @for (x, y) in &points {
                        circle cx=(at(*x)) cy=(at(*y)) r="2.5" fill=(s.color) {}
                    }
                }
                @for (x, y) in s.apart.iter().map(|&(x, y)| (self.x(x), self.y(y))).filter(|p| p.0.is_finite() && p.1.is_finite()) {
                    circle cx=(at(x)) cy=(at(y)) r="3.5" fill="white" stroke=(s.color) stroke-width="1.5" {}
                }
            }
        }
    }

    /// Each interval as a whisker, side by side at a point so they do not
    /// overlap.
    fn whiskers(&self, series: &[Series], whiskers: &[Whisker]) -> Markup {
        let n = series.len().max(1) as f64;
        html! {
            @for w in whiskers {
                @let dx = (w.series as f64 - (n - 1.0) / 2.0) * 7.0;
                @let (x, y0, y1) = (self.x(w.x) + dx, self.y(w.low), self.y(w.high));
                @let color = series.get(w.series).map_or("#888", |s| s.color);
                path d=(format!("M{x:.1},{y0:.1}V{y1:.1}M{:.1},{y0:.1}h8M{:.1},{y1:.1}h8", x - 4.0, x - 4.0)) stroke=(color) stroke-width="1.2" fill="none" opacity="0.7" {}
            }
        }
    }
}

/// One stacked bar: its label, its segments (name, value), and a thinner
/// bar beside it on the same scale (label, value).
pub(super) struct Stack {
    pub label: String,
    pub segments: Vec<(&'static str, f64)>,
    pub beside: Option<(String, f64)>,
}

const SEGMENT_COLORS: [&str; 14] =
    ["#9ecae1", "#6baed6", "#fd8d3c", "#31a354", "#756bb1", "#de2d26", "#636363", "#fdae6b", "#e7ba52", "#3182bd", "#bdbdbd", "#cedb9c", "#8c6d31", "#e377c2"];

/// Stacked horizontal bars, each to 100% of its own total: where each
/// variant's client time went, with the flush threads beside it.
pub(super) fn stacked_bars(title: &str, stacks: &[Stack]) -> Markup {
    let (left, bar, row) = (220.0, 24.0, 24.0 + 10.0 + 22.0);
    let names: Vec<&str> = stacks.first().map(|s| s.segments.iter().map(|(n, _)| *n).collect()).unwrap_or_default();
    let h = TOP + row * stacks.len() as f64 + 30.0 + legend_height(names.len());
    let pw = W - left - RIGHT;
    let top = TOP + row * stacks.len() as f64 + 20.0;
    let columns = ((W - LEFT) / LEGEND_COLUMN).floor().max(1.0) as usize;
    let body = html! {
        @for (i, stack) in stacks.iter().enumerate() {
            @let y = TOP + 8.0 + row * i as f64;
            @let total = stack.segments.iter().map(|s| s.1).sum::<f64>().max(1e-12);
            text x=(left - 8.0) y=(y + 16.0) text-anchor="end" font-weight="bold" { (shown(&short(&stack.label))) }
            @for (j, (x, w, name, pct)) in bar_segments(left, pw, total, &stack.segments).into_iter().enumerate() {
                @if w > 0.0 {
                    rect x=(at(x)) y=(at(y)) width=(at(w)) height=(bar) fill=(SEGMENT_COLORS[j % SEGMENT_COLORS.len()]) { title { (name) ": " (format!("{pct:.1}%")) } }
                }
                @if w > 34.0 {
                    text x=(at(x + w / 2.0)) y=(at(y + 16.0)) text-anchor="middle" font-size="11" { (format!("{pct:.0}%")) }
                }
            }
            @if let Some((text, value)) = &stack.beside {
                rect x=(left) y=(at(y + bar + 2.0)) width=(at((value / total).min(1.0) * pw)) height="8" fill="#555" {}
                text x=(left) y=(at(y + bar + 22.0)) font-size="11" { (shown(text)) }
            }
        }
        @for (j, name) in names.iter().enumerate() {
            @let (x, y) = (LEFT + (j % columns) as f64 * LEGEND_COLUMN, top + (j / columns) as f64 * LEGEND_ROW);
            rect x=(x) y=(y - 5.0) width="14" height="10" fill=(SEGMENT_COLORS[j % SEGMENT_COLORS.len()]) {}
            text x=(x + 20.0) y=(y + 4.0) { (name) }
        }
    };
    svg(h, title, body)
}

/// A bar's segments laid end to end from `left`: (x, width, name, share
/// in %), every one, so that a colour goes by the segment's place.
fn bar_segments<'a>(left: f64, pw: f64, total: f64, segments: &[(&'a str, f64)]) -> Vec<(f64, f64, &'a str, f64)> {
    let mut x = left;
    segments
        .iter()
        .map(|(name, value)| {
            let w = value / total * pw;
            let at = x;
            x += w.max(0.0);
            (at, w, *name, value / total * 100.0)
        })
        .collect()
}

/// One row of the flush timeline: a run's label, colour and flushes
/// (start, length, generation).
pub(super) struct Timeline {
    pub label: String,
    pub color: &'static str,
    pub flushes: Vec<(f64, f64, u64, String)>,
}

/// One bar per flush, on a shared time axis, each labeled with its
/// generation where it is wide enough.
pub(super) fn flush_timeline(rows: &[Timeline]) -> Markup {
    let (row_h, left) = (24.0, 220.0);
    let h = TOP + AXIS + 20.0 + row_h * rows.len() as f64;
    let end = rows.iter().flat_map(|r| r.flushes.iter().map(|f| f.0 + f.1)).fold(0.0, f64::max).max(1e-3);
    let ticks = nice_ticks(0.0, end);
    let end = ticks.last().copied().unwrap_or(end).max(end);
    let pw = W - left - RIGHT;
    let sx = |x: f64| left + x / end * pw;
    let axis_y = TOP + row_h * rows.len() as f64 + 6.0;
    let body = html! {
        @for (i, r) in rows.iter().enumerate() {
            @let y = TOP + row_h * i as f64;
            text x=(left - 8.0) y=(y + 15.0) text-anchor="end" { (shown(&short(&r.label))) }
            @for (start, wall, generation, tip) in &r.flushes {
                @let (x0, w) = (sx(*start), (wall / end * pw).max(1.5));
                rect x=(at(x0)) y=(at(y + 2.0)) width=(at(w)) height="18" fill=(r.color) opacity="0.85" stroke="white" stroke-width="0.5" { title { (shown(tip)) } }
                @if w >= 22.0 {
                    text x=(at(x0 + w / 2.0)) y=(at(y + 15.0)) text-anchor="middle" font-size="10" fill="white" { "g" (generation) }
                }
            }
        }
        @for t in ticks {
            text x=(at(sx(t))) y=(axis_y + 12.0) text-anchor="middle" { (label(t)) "s" }
        }
        text x=(left + pw / 2.0) y=(axis_y + 30.0) text-anchor="middle" { "seconds since the run started" }
    };
    svg(h, "Flush timeline (one bar per flush, labeled g<generation>)", body)
}
