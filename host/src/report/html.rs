//! A self-contained HTML report: the comparison as a table, and SVG
//! charts of throughput over time, the latency percentile spectrum (log
//! axes), memory over time and the flush timeline. No scripts, no
//! external files: it opens anywhere.

use std::fmt::Write as _;

use super::{FIGURES, by_variant, median, ok, shown, summary};
use crate::record::{BenchResult, VariantResult};

const PALETTE: [&str; 8] = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"];
const W: f64 = 680.0;
const H: f64 = 300.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 30.0;
const BOTTOM: f64 = 45.0;

fn esc(text: &str) -> String {
    // Control characters from a record's strings are shown, never raw.
    crate::record::text::for_terminal(text).replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// A data series: its label, colour and points.
struct Series {
    label: String,
    color: &'static str,
    points: Vec<(f64, f64)>,
    dashed: bool,
}

/// How an axis maps values; `Log` plots log10 and labels powers of ten.
#[derive(Clone, Copy)]
enum Axis {
    Linear,
    Log,
}

fn nice_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let span = (hi - lo).max(1e-12);
    let step = 10f64.powf((span / 5.0).log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * step).find(|s| span / s <= 6.0).unwrap_or(step * 10.0);
    let mut t = (lo / step).ceil() * step;
    let mut ticks = Vec::new();
    while t <= hi + step * 1e-9 {
        ticks.push(t);
        t += step;
    }
    ticks
}

fn label(v: f64) -> String {
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

/// A line chart. `x_ticks` overrides the x axis labels (value, text).
fn line_chart(title: &str, x_name: &str, y_name: &str, series: &[Series], y_axis: Axis, x_ticks: Option<Vec<(f64, String)>>) -> String {
    let ty = |y: f64| match y_axis {
        Axis::Linear => y,
        Axis::Log => y.max(1e-9).log10(),
    };
    let pts: Vec<(f64, f64)> = series.iter().flat_map(|s| s.points.iter().map(|&(x, y)| (x, ty(y)))).collect();
    let mut svg = format!(r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="11">"#);
    let _ = write!(svg, r#"<text x="{}" y="18" font-size="14" font-weight="bold">{}</text>"#, LEFT, esc(title));
    if pts.is_empty() {
        svg.push_str(r#"<text x="300" y="150">no data</text></svg>"#);
        return svg;
    }
    let (mut x0, mut x1) = pts.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| (a.min(p.0), b.max(p.0)));
    let (mut y0, mut y1) = pts.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| (a.min(p.1), b.max(p.1)));
    if let Axis::Linear = y_axis {
        y0 = y0.min(0.0);
    } else {
        (y0, y1) = (y0.floor(), y1.ceil());
    }
    if x1 <= x0 {
        x1 = x0 + 1.0;
    }
    if y1 <= y0 {
        y1 = y0 + 1.0;
    }
    x0 = x0.min(0.0);
    let (pw, ph) = (W - LEFT - RIGHT, H - TOP - BOTTOM);
    let sx = |x: f64| LEFT + (x - x0) / (x1 - x0) * pw;
    let sy = |y: f64| TOP + ph - (y - y0) / (y1 - y0) * ph;
    let y_ticks: Vec<(f64, String)> = match y_axis {
        Axis::Linear => nice_ticks(y0, y1).into_iter().map(|t| (t, label(t))).collect(),
        Axis::Log => (y0 as i32..=y1 as i32).map(|e| (f64::from(e), label(10f64.powi(e)))).collect(),
    };
    for (t, text) in y_ticks {
        let y = sy(t);
        let _ = write!(
            svg,
            r##"<line x1="{LEFT}" x2="{}" y1="{y:.1}" y2="{y:.1}" stroke="#ddd"/><text x="{}" y="{:.1}" text-anchor="end">{}</text>"##,
            W - RIGHT,
            LEFT - 6.0,
            y + 4.0,
            esc(&text)
        );
    }
    let x_ticks = x_ticks.unwrap_or_else(|| nice_ticks(x0, x1).into_iter().map(|t| (t, label(t))).collect());
    for (t, text) in x_ticks {
        let x = sx(t);
        let _ = write!(
            svg,
            r##"<line x1="{x:.1}" x2="{x:.1}" y1="{TOP}" y2="{}" stroke="#eee"/><text x="{x:.1}" y="{}" text-anchor="middle">{}</text>"##,
            TOP + ph,
            TOP + ph + 14.0,
            esc(&text)
        );
    }
    let _ = write!(svg, r##"<rect x="{LEFT}" y="{TOP}" width="{pw}" height="{ph}" fill="none" stroke="#888"/>"##);
    let _ = write!(svg, r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#, LEFT + pw / 2.0, H - 8.0, esc(x_name));
    let _ = write!(svg, r#"<text transform="translate(14 {}) rotate(-90)" text-anchor="middle">{}</text>"#, TOP + ph / 2.0, esc(y_name));
    for (i, s) in series.iter().enumerate() {
        let path: Vec<String> = s.points.iter().map(|&(x, y)| format!("{:.1},{:.1}", sx(x), sy(ty(y)))).collect();
        let dash = if s.dashed { r#" stroke-dasharray="5 3""# } else { "" };
        let _ = write!(svg, r#"<polyline fill="none" stroke="{}" stroke-width="2"{dash} points="{}"/>"#, s.color, path.join(" "));
        let ly = TOP + 12.0 + 14.0 * i as f64;
        let _ = write!(
            svg,
            r#"<line x1="{}" x2="{}" y1="{ly}" y2="{ly}" stroke="{}" stroke-width="3"/><text x="{}" y="{}">{}</text>"#,
            LEFT + 10.0,
            LEFT + 28.0,
            s.color,
            LEFT + 32.0,
            ly + 4.0,
            esc(&s.label)
        );
    }
    svg.push_str("</svg>");
    svg
}

/// Every run as a series: colour per variant, dashed for later repeats.
fn series(result: &BenchResult, points: impl Fn(&VariantResult) -> Vec<(f64, f64)>) -> Vec<Series> {
    let groups = by_variant(result);
    let mut out = Vec::new();
    for (i, (name, runs)) in groups.iter().enumerate() {
        for run in ok(runs) {
            let label = if runs.len() > 1 { format!("{name} #{}", run.repeat) } else { name.to_string() };
            out.push(Series { label, color: PALETTE[i % PALETTE.len()], points: points(run), dashed: run.repeat > 1 });
        }
    }
    out
}

fn flush_timeline(result: &BenchResult) -> String {
    let runs: Vec<&VariantResult> = result.variants.iter().filter(|v| v.failure().is_none()).collect();
    let row_h = 22.0;
    let h = TOP + BOTTOM + row_h * runs.len() as f64;
    let end = runs.iter().flat_map(|r| r.flushes.iter().map(|f| f.started_at + f.wall.as_secs_f64())).fold(0.0, f64::max).max(1e-3);
    let left = 180.0;
    let pw = W - left - RIGHT;
    let sx = |x: f64| left + x / end * pw;
    let mut svg = format!(r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{h}" viewBox="0 0 {W} {h}" font-family="sans-serif" font-size="11">"#);
    let _ = write!(svg, r#"<text x="{left}" y="18" font-size="14" font-weight="bold">Flush timeline (one bar per flush)</text>"#);
    let names = by_variant(result).into_iter().map(|(n, _)| n).collect::<Vec<_>>();
    for (i, r) in runs.iter().enumerate() {
        let y = TOP + row_h * i as f64;
        let color = PALETTE[names.iter().position(|n| *n == r.variant.name).unwrap_or(0) % PALETTE.len()];
        let name = if r.repeat > 1 { format!("{} #{}", r.variant.name, r.repeat) } else { r.variant.name.clone() };
        let _ = write!(svg, r#"<text x="{}" y="{}" text-anchor="end">{}</text>"#, left - 6.0, y + 14.0, esc(&name));
        for f in &r.flushes {
            let (x0, x1) = (sx(f.started_at), sx(f.started_at + f.wall.as_secs_f64()));
            let _ = write!(
                svg,
                r#"<rect x="{x0:.1}" y="{:.1}" width="{:.1}" height="14" fill="{color}" opacity="0.8"><title>generation {} part {}: {} rows, {:.1} ms</title></rect>"#,
                y + 3.0,
                (x1 - x0).max(1.0),
                f.generation,
                f.part,
                f.rows,
                f.wall.as_secs_f64() * 1e3
            );
        }
    }
    let axis_y = TOP + row_h * runs.len() as f64 + 4.0;
    for t in nice_ticks(0.0, end) {
        let _ = write!(svg, r#"<text x="{:.1}" y="{}" text-anchor="middle">{}s</text>"#, sx(t), axis_y + 12.0, label(t));
    }
    let _ = write!(svg, r#"<text x="{}" y="{}" text-anchor="middle">seconds since the run started</text>"#, left + pw / 2.0, axis_y + 30.0);
    svg.push_str("</svg>");
    svg
}

fn comparison_table(result: &BenchResult) -> String {
    let groups = by_variant(result);
    let mut t = String::from("<table><tr><th>figure</th>");
    for (name, _) in &groups {
        let _ = write!(t, "<th>{}</th>", esc(name));
    }
    t.push_str("</tr>");
    for (name, get) in FIGURES {
        let _ = write!(t, "<tr><td>{name}</td>");
        let base = groups.first().and_then(|(_, runs)| median(ok(runs).into_iter().map(get).collect()));
        for (_, runs) in &groups {
            let cell = match (median(ok(runs).into_iter().map(get).collect()), base) {
                (None, _) => "FAILED".to_string(),
                (Some(x), Some(b)) if b != 0.0 => format!("{} <span class=r>({:.2}x)</span>", shown(x), x / b),
                (Some(x), _) => shown(x),
            };
            let _ = write!(t, "<td>{cell}</td>");
        }
        t.push_str("</tr>");
    }
    t.push_str("<tr><td>vs first (paired rounds, 95%)</td><td>baseline</td>");
    for (_, v) in crate::record::verdict::verdicts(result) {
        let cell = v.map_or_else(|| "n/a (under 2 paired rounds)".to_string(), |v| v.to_string());
        let _ = write!(t, "<td>{}</td>", esc(&cell));
    }
    t.push_str("</tr></table>");
    let block = super::verdict_block(result);
    if !block.is_empty() {
        let _ = write!(t, "<pre>{}</pre>", esc(&block));
    }
    t
}

/// The whole report.
pub fn render(result: &BenchResult) -> String {
    let p = &result.provenance;
    let b = &result.config.bench;
    let mut html = String::from("<!doctype html><html><head><meta charset=\"utf-8\"><title>memlab: ");
    html.push_str(&esc(&b.name));
    html.push_str("</title><style>body{font-family:sans-serif;margin:24px;max-width:1500px;color:#222}table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}td:first-child,th:first-child{text-align:left}.r{color:#666}.charts{display:flex;flex-wrap:wrap;gap:16px}pre{background:#f6f6f6;padding:8px;font-size:12px;overflow:auto}</style></head><body>");
    let _ = write!(html, "<h1>memlab bench: {}</h1><p>{}</p>", esc(&b.name), esc(&b.description));
    let _ = write!(
        html,
        "<p>memlab {} ({}), wasmtime {} &middot; {} &middot; {} ({} CPUs, {:.1} GiB) &middot; stream fingerprint {} &middot; epoch deadline {}</p>",
        esc(&p.memlab_version),
        esc(&p.git_commit),
        esc(&p.wasmtime_version),
        esc(&p.os),
        esc(&p.cpu),
        p.cpus,
        p.memory_bytes as f64 / (1u64 << 30) as f64,
        esc(&p.stream_fingerprint),
        p.engine.call_deadline_ms.map_or("off".to_string(), |d| format!("{d} ms"))
    );
    html.push_str("<h2>Comparison</h2>");
    html.push_str(&comparison_table(result));
    let fidelity = super::fidelity(result);
    if !fidelity.is_empty() {
        html.push_str("<h2>Fidelity</h2><pre>");
        html.push_str(&esc(fidelity.trim_start()));
        html.push_str("</pre>");
    }
    html.push_str("<h2>Charts</h2><div class=charts>");
    let throughput = series(result, |r| r.intervals.iter().map(|i| (i.at, if i.rows > 0 { i.row_rate } else { i.op_rate })).collect());
    html.push_str(&line_chart("Throughput over time", "seconds", "rows/s", &throughput, Axis::Linear, None));
    let nines = |p: f64| if p >= 100.0 { 6.0 } else { -(1.0 - p / 100.0).log10() };
    let spectrum = series(result, |r| r.spectrum.iter().map(|&(p, ns)| (nines(p), ns as f64 / 1e6)).collect());
    let ticks = [(0.0, "0%"), (1.0, "90%"), (2.0, "99%"), (3.0, "99.9%"), (4.0, "99.99%"), (5.0, "99.999%"), (6.0, "max")]
        .into_iter()
        .map(|(x, t)| (x, t.to_string()))
        .collect();
    html.push_str(&line_chart("Latency by percentile", "percentile", "latency (ms, log)", &spectrum, Axis::Log, Some(ticks)));
    let memory = series(result, |r| r.intervals.iter().map(|i| (i.at, i.memory as f64 / (1u64 << 20) as f64)).collect());
    html.push_str(&line_chart("Memtable memory over time", "seconds", "pool MiB", &memory, Axis::Linear, None));
    html.push_str(&flush_timeline(result));
    html.push_str("</div><h2>Runs</h2>");
    for v in &result.variants {
        let _ = write!(html, "<details><summary>{} (round {})</summary><pre>{}</pre></details>", esc(&v.variant.name), v.repeat, esc(&summary(v)));
    }
    let config = serde_json::to_string_pretty(&result.config).unwrap_or_default();
    let _ = write!(html, "<details><summary>Resolved config</summary><pre>{}</pre></details>", esc(&config));
    html.push_str("</body></html>");
    html
}
