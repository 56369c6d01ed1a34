//! A self-contained HTML report, verdict first: who won and why, the
//! comparison with the best of each row marked, the plugins' counters,
//! where each variant's time went, its flame graphs, and the charts. No
//! scripts, no external files (flame graphs are embedded as images, their
//! interactive SVGs linked beside): it opens anywhere.

use std::fmt::Write as _;
use std::path::Path;

use base64::Engine as _;

use super::charts::{Axis, PALETTE, Series, Stack, Timeline, esc, flush_timeline, line_chart, stacked_bars};
use super::{breakdown, by_variant, counters, ok, summary};
use crate::record::verdict::round_rate;
use crate::record::{BenchResult, ProfileFigures, VariantResult, VariantSpec};

pub(super) const STYLE: &str = "body{font-family:sans-serif;margin:24px;max-width:1600px;color:#222}\
table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}\
td:first-child,th:first-child{text-align:left}.r{color:#666}td.best{background:#d9f2d9;font-weight:bold}\
td.better{color:#666;text-align:center}.charts{display:flex;flex-wrap:wrap;gap:16px}\
section.verdict{border:2px solid #2a7;background:#f3fbf5;padding:10px 16px;margin:12px 0}\
section.verdict.undecided{border-color:#c90;background:#fff9ec}.headline{font-size:20px;font-weight:bold}\
.advice{font-size:15px}pre{background:#f6f6f6;padding:8px;font-size:12px;overflow:auto}\
.flames{display:flex;gap:12px;margin-bottom:12px}.flames figure{margin:0;width:760px}.flames img{width:100%;border:1px solid #ccc}";

/// The whole report, without the run's folder: flame graphs are linked,
/// not embedded.
pub fn render(result: &BenchResult) -> String {
    render_in(result, None)
}

/// The whole report; `dir` is the run's folder, where the flame graphs are.
pub fn render_in(result: &BenchResult, dir: Option<&Path>) -> String {
    let b = &result.config.bench;
    let mut html = format!("<!doctype html><html><head><meta charset=\"utf-8\"/><title>memlab: {}</title><style>{STYLE}</style></head><body>", esc(&b.name));
    let _ = write!(html, "<h1>memlab bench: {}</h1><p>{}</p>", esc(&b.name), esc(&b.description));
    html.push_str(&verdict_section(result));
    html.push_str("<h2>Comparison</h2>");
    html.push_str(&comparison_table(result));
    html.push_str(&counters_table(result));
    html.push_str(&provenance(result));
    html.push_str(&time_section(result));
    html.push_str(&flames_section(result, dir));
    let fidelity = super::fidelity(result);
    if !fidelity.is_empty() {
        html.push_str("<h2>Fidelity</h2><pre>");
        html.push_str(&esc(fidelity.trim_start()));
        html.push_str("</pre>");
    }
    html.push_str(&charts_section(result));
    html.push_str("<h2>Runs</h2>");
    for v in &result.variants {
        let _ = write!(html, "<details><summary>{} (round {})</summary><pre>{}</pre></details>", esc(&v.variant.name), v.repeat, esc(&summary(v)));
    }
    let config = serde_json::to_string_pretty(&result.config).unwrap_or_default();
    let _ = write!(html, "<details><summary>Resolved config</summary><pre>{}</pre></details>", esc(&config));
    html.push_str("</body></html>");
    html
}

/// The first screen: the winner and its interval, or why none and what
/// to run instead, then every verdict.
fn verdict_section(result: &BenchResult) -> String {
    let Some(headline) = super::headline(result) else {
        return "<section class=\"verdict undecided\" id=\"verdict\"><p class=\"headline\">One variant: nothing to compare.</p></section>".into();
    };
    let class = if headline.winner.is_some() { "verdict" } else { "verdict undecided" };
    let mut s = format!("<section class=\"{class}\" id=\"verdict\"><p class=\"headline\">{}</p>", esc(&headline.text));
    if let Some(why) = &headline.why {
        let _ = write!(s, "<p class=\"advice\">{}</p>", esc(why));
    }
    if let Some(advice) = &headline.advice {
        let _ = write!(s, "<p class=\"advice\">What to run: {}</p>", esc(advice));
    }
    let block = super::verdict_block(result);
    let details: Vec<&str> = block.lines().skip_while(|l| !l.starts_with("Verdict (")).collect();
    let _ = write!(s, "<pre>{}</pre></section>", esc(&details.join("\n")));
    s
}

fn provenance(result: &BenchResult) -> String {
    let p = &result.provenance;
    format!(
        "<p class=\"r\">memlab {} ({}), wasmtime {} &#183; {} &#183; {} ({} CPUs, {:.1} GiB) &#183; stream fingerprint {} &#183; epoch deadline {}</p>",
        esc(&p.memlab_version),
        esc(&p.git_commit),
        esc(&p.wasmtime_version),
        esc(&p.os),
        esc(&p.cpu),
        p.cpus,
        p.memory_bytes as f64 / (1u64 << 30) as f64,
        esc(&p.stream_fingerprint),
        p.engine.call_deadline_ms.map_or("off".to_string(), |d| format!("{d} ms"))
    )
}

fn comparison_table(result: &BenchResult) -> String {
    let groups = by_variant(result);
    let mut t = String::from("<table id=\"comparison\"><tr><th>figure</th><th>better</th>");
    for (name, _) in &groups {
        let _ = write!(t, "<th>{}</th>", esc(name));
    }
    t.push_str("</tr>");
    for figure in super::figures::shown(result.variants.iter()) {
        let row = figure.row(&groups);
        let _ = write!(t, "<tr><td>{}</td><td class=\"better\">{}</td>", figure.name, figure.better.word());
        for (i, best) in row.best.iter().enumerate() {
            let text = match figure.cell(&row, i) {
                (value, Some(r)) => format!("{value} <span class=\"r\">({r:.2}x)</span>"),
                (value, None) => value,
            };
            let class = if *best { " class=\"best\"" } else { "" };
            let _ = write!(t, "<td{class}>{text}</td>");
        }
        t.push_str("</tr>");
    }
    t.push_str("<tr><td>vs first (paired rounds, 95%)</td><td class=\"better\">higher</td><td>baseline</td>");
    for (_, v) in crate::record::verdict::verdicts(result) {
        let cell = v.map_or_else(|| "n/a (under 2 paired rounds)".to_string(), |v| super::short_verdict(&v));
        let _ = write!(t, "<td>{}</td>", esc(&cell));
    }
    t.push_str("</tr></table><p class=\"r\">Every figure in this table is measured by the host. Medians over each variant's rounds; the best value of a row is marked; a ratio to the first variant is shown where one means something (not for counts, signed values or ratios).</p>");
    t
}

fn counters_table(result: &BenchResult) -> String {
    let groups = by_variant(result);
    let rows = counters::rows(&groups);
    if rows.is_empty() {
        return String::new();
    }
    let mut t = String::from("<h3>The plugins' own counters</h3><table id=\"counters\"><tr><th>counter (what the host makes of it)</th>");
    for (name, _) in &groups {
        let _ = write!(t, "<th>{}</th>", esc(name));
    }
    t.push_str("</tr>");
    for (label, cells) in rows {
        let _ = write!(t, "<tr><td>{}</td>", esc(&label));
        for cell in cells {
            let _ = write!(t, "<td>{}</td>", cell.map_or("-".to_string(), |x| super::thousands(x as f64)));
        }
        t.push_str("</tr>");
    }
    t.push_str("</table>");
    t
}

/// Where the time went: one stacked bar per variant, the flush threads'
/// CPU beside it on the same scale.
fn time_section(result: &BenchResult) -> String {
    let groups = by_variant(result);
    let stacks: Vec<Stack> = groups
        .iter()
        .filter_map(|(name, runs)| {
            let t = breakdown::of(runs)?;
            let segments = t.parts().iter().map(|(n, ns)| (*n, *ns as f64)).collect();
            let beside = format!(
                "flush threads beside: {:.0} ms wall, {:.0} ms CPU ({:.0}% of the client time); the breakdown's clock reads cost {:.2}%",
                t.flush_wall_ns as f64 / 1e6,
                t.flush_cpu_ns as f64 / 1e6,
                breakdown::share(t.flush_cpu_ns, &t),
                t.own_cost() * 100.0
            );
            Some(Stack { label: name.to_string(), segments, beside: Some((beside, t.flush_cpu_ns as f64)) })
        })
        .collect();
    let Some(first) = groups.iter().find_map(|(_, runs)| breakdown::of(runs)) else { return String::new() };
    format!(
        "<h2>Where the time went</h2><section class=\"chart\" id=\"time\">{}<p class=\"r\">Client threads' wall time, summed over threads, split at each batch's steps. {}</p></section>",
        stacked_bars("Client-thread time by phase (each bar is 100% of that variant's client time)", &stacks),
        esc(&breakdown::footnote(&first))
    )
}

/// The flame graphs, a wasm variant beside its native twin where both ran.
fn flames_section(result: &BenchResult, dir: Option<&Path>) -> String {
    let spec = |name: &str| result.variants.iter().find(|v| v.variant.name == name).map(|v| &v.variant);
    // Twins: the same variant but for its runtime (and its name).
    let twins = |a: &ProfileFigures, b: &ProfileFigures| match (spec(&a.variant), spec(&b.variant)) {
        (Some(x), Some(y)) if x.runtime != y.runtime => VariantSpec { name: y.name.clone(), runtime: y.runtime, ..x.clone() } == *y,
        _ => false,
    };
    let mut shown = vec![false; result.profiles.len()];
    let mut rows = String::new();
    for (i, p) in result.profiles.iter().enumerate() {
        if shown[i] {
            continue;
        }
        shown[i] = true;
        let mut row = figure(p, dir);
        if let Some(j) = (i + 1..result.profiles.len()).find(|&j| !shown[j] && twins(p, &result.profiles[j])) {
            shown[j] = true;
            row.push_str(&figure(&result.profiles[j], dir));
        }
        let _ = write!(rows, "<div class=\"flames\">{row}</div>");
    }
    if rows.is_empty() {
        return String::new();
    }
    format!(
        "<h2>Flame graphs</h2><section id=\"flames\"><p class=\"r\">From one profiled round of each variant after the measured rounds (not verified, and in no verdict); a wasm variant sits beside its native twin.</p>{rows}</section>"
    )
}

/// The largest flame graph a report embeds.
const MAX_SVG_BYTES: u64 = 64 << 20;

fn figure(p: &ProfileFigures, dir: Option<&Path>) -> String {
    // A record's paths are untrusted: only a file inside the run's own
    // directory is embedded, and only a plain relative name is linked.
    let svg = dir.and_then(|d| crate::input::inside(d, &p.svg).ok()).and_then(|path| crate::input::read(&path, MAX_SVG_BYTES, "flame graph").ok());
    // A record may keep only its folded stacks: the SVG is drawn again.
    // (`benches/record` keeps a large one gzipped, as `NAME.gz`).
    let drawn = || {
        let folded = dir
            .and_then(|d| crate::input::inside(d, &p.folded).or_else(|_| crate::input::inside(d, &format!("{}.gz", p.folded))).ok())
            .and_then(|path| crate::input::read_inflated(&path, MAX_SVG_BYTES, "folded stacks").ok())?;
        crate::record::flame_graph(&p.variant, p.source, &String::from_utf8_lossy(&folded)).ok()
    };
    let image = svg.or_else(drawn).map(|svg| {
        format!(
            "<img alt=\"flame graph of {}\" src=\"data:image/svg+xml;base64,{}\"/>",
            esc(&p.variant),
            base64::engine::general_purpose::STANDARD.encode(&svg)
        )
    });
    let linked = |name: &str, what: &str| match crate::input::link(name) {
        Some(name) => format!("<a href=\"{}\">{what}</a>", esc(name)),
        None => format!("{what} (not linked: its name is not a relative file name)"),
    };
    format!(
        "<figure><figcaption><b>{}</b>: {} ({} samples every {} µs; {}) &#183; {} &#183; {}</figcaption>{}</figure>",
        esc(&p.variant),
        esc(p.source.describe()),
        p.samples,
        p.interval_us,
        esc(&p.cost()),
        linked(&p.svg, "interactive SVG"),
        linked(&p.folded, "folded stacks"),
        image.unwrap_or_else(|| "<p class=\"r\">(neither the SVG nor its folded stacks are beside this report)</p>".into())
    )
}

fn charts_section(result: &BenchResult) -> String {
    let mut html = String::from("<h2>Charts</h2><div class=\"charts\">");
    let throughput = series(result, |r| r.intervals.iter().map(|i| (i.at, if i.rows > 0 { i.row_rate } else { i.op_rate })).collect());
    let chart = |svg: String| format!("<section class=\"chart\">{svg}</section>");
    html.push_str(&chart(line_chart("Throughput over time", "seconds", "rows/s", &throughput, Axis::Linear, None)));
    let nines = |p: f64| if p >= 100.0 { 6.0 } else { -(1.0 - p / 100.0).log10() };
    let spectrum = series(result, |r| r.spectrum.iter().map(|&(p, ns)| (nines(p), ns as f64 / 1e6)).collect());
    let ticks = [(0.0, "0%"), (1.0, "90%"), (2.0, "99%"), (3.0, "99.9%"), (4.0, "99.99%"), (5.0, "99.999%"), (6.0, "max")]
        .into_iter()
        .map(|(x, t)| (x, t.to_string()))
        .collect();
    html.push_str(&chart(line_chart("Latency by percentile", "percentile", "latency (ms, log)", &spectrum, Axis::Log, Some(ticks))));
    let memory = series(result, |r| r.intervals.iter().map(|i| (i.at, i.memory as f64 / (1u64 << 20) as f64)).collect());
    html.push_str(&chart(line_chart("Memtable memory over time", "seconds", "pool MiB", &memory, Axis::Linear, None)));
    html.push_str(&chart(flush_timeline(&timeline(result))));
    html.push_str("</div>");
    html
}

/// Most lines a chart draws one per round; past it, each variant's
/// median round stands for it, so eight variants stay readable.
const ALL_ROUNDS_UP_TO: usize = 16;

/// The runs a chart draws, each with its colour and label: every round
/// (later rounds dashed) when they are few, else each variant's median
/// round by steady rate.
fn drawn(result: &BenchResult) -> Vec<(&VariantResult, &'static str, String, bool)> {
    let groups = by_variant(result);
    let all: usize = groups.iter().map(|(_, runs)| ok(runs).len()).sum();
    let mut out = Vec::new();
    for (i, (name, runs)) in groups.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let mut runs = ok(runs);
        if all <= ALL_ROUNDS_UP_TO {
            let many = runs.len() > 1;
            for run in runs {
                let label = if many { format!("{name} #{}", run.repeat) } else { name.to_string() };
                out.push((run, color, label, run.repeat > 1));
            }
        } else if !runs.is_empty() {
            runs.sort_by(|a, b| round_rate(a).total_cmp(&round_rate(b)));
            let median = runs[runs.len() / 2];
            out.push((median, color, format!("{name} (round {}, its median)", median.repeat), false));
        }
    }
    out
}

/// The drawn runs as series.
fn series(result: &BenchResult, points: impl Fn(&VariantResult) -> Vec<(f64, f64)>) -> Vec<Series> {
    drawn(result).into_iter().map(|(run, color, label, dashed)| Series { label, color, points: points(run), dashed }).collect()
}

fn timeline(result: &BenchResult) -> Vec<Timeline> {
    drawn(result)
        .into_iter()
        .map(|(r, color, label, _)| Timeline {
            label,
            color,
            flushes: r
                .flushes
                .iter()
                .map(|f| {
                    let tip = format!("generation {} part {}: {} rows, {:.1} ms", f.generation, f.part, f.rows, f.wall.as_secs_f64() * 1e3);
                    (f.started_at, f.wall.as_secs_f64(), f.generation, tip)
                })
                .collect(),
        })
        .collect()
}
