//! A self-contained HTML report, verdict first: who won and why, the
//! comparison with the best of each row marked, the plugins' counters,
//! where each variant's time went, its flame graphs, and the charts. No
//! scripts, no external files (flame graphs are embedded as images, their
//! interactive SVGs linked beside): it opens anywhere. The page is written
//! with maud, which escapes every interpolated text: a plugin's names and
//! messages cannot become markup.

use std::path::Path;

use base64::Engine as _;
use maud::{DOCTYPE, Markup, PreEscaped, html};

use super::charts::{Axis, PALETTE, Series, Stack, Timeline, flush_timeline, line_chart, shown, stacked_bars};
use super::{breakdown, by_variant, counters, ok, summary};
use crate::record::verdict::round_rate;
use crate::record::{BenchResult, ProfileFigures, VariantResult, VariantSpec};

pub(super) const STYLE: &str = "body{font-family:sans-serif;margin:24px;max-width:1600px;color:#222}\
table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}\
td:first-child,th:first-child{text-align:left}.r{color:#666}td.best{background:#d9f2d9;font-weight:bold}\
td.better{color:#666;text-align:center}.charts{display:flex;flex-wrap:wrap;gap:16px}\
section.verdict{border:2px solid #2a7;background:#f3fbf5;padding:10px 16px;margin:12px 0}\
section.verdict.undecided{border-color:#c90;background:#fff9ec}.headline{font-size:20px;font-weight:bold}\
.advice{font-size:15px}.cut{border:2px solid #c33;background:#fdf0f0;padding:8px 12px;font-weight:bold}\
section.verdict pre{white-space:pre-wrap}pre{background:#f6f6f6;padding:8px;font-size:12px;overflow:auto}\
.flames{display:flex;gap:12px;margin-bottom:12px}.flames figure{margin:0;width:760px}.flames img{width:100%;border:1px solid #ccc}";

/// A page: its title, the style, and `body`.
pub(super) fn page(title: &str, body: Markup) -> String {
    html! {
        (DOCTYPE)
        html {
            head { (void("meta", &[("charset", "utf-8")])) title { (shown(title)) } style { (PreEscaped(STYLE)) } }
            body { (body) }
        }
    }
    .into_string()
}

/// A void element written as XML writes it (`<img .../>`): maud writes
/// HTML's `<img ...>`, and the page stays well-formed XML, which its test
/// parses it as. Its attributes are escaped as maud escapes them.
fn void(name: &str, attributes: &[(&str, &str)]) -> Markup {
    use std::fmt::Write as _;
    let mut out = format!("<{name}");
    for (key, value) in attributes {
        let _ = write!(out, " {key}=\"");
        let _ = write!(maud::Escaper::new(&mut out), "{value}");
        out.push('"');
    }
    out.push_str("/>");
    PreEscaped(out)
}

/// The whole report, without the run's folder: flame graphs are linked,
/// not embedded.
pub fn render(result: &BenchResult) -> String {
    render_in(result, None)
}

/// The whole report; `dir` is the run's folder, where the flame graphs are.
pub fn render_in(result: &BenchResult, dir: Option<&Path>) -> String {
    let b = &result.config.bench;
    let config = serde_json::to_string_pretty(&result.config).unwrap_or_default();
    let body = html! {
        h1 { "memlab bench: " (shown(&b.name)) }
        p { (shown(&b.description)) }
        @if let Some(cut) = super::cut_short(result) { p class="cut" { (shown(&cut)) } }
        (verdict_section(result))
        h2 { "Comparison" }
        (comparison_table(result))
        (counters_table(result))
        (provenance(result))
        (time_section(result))
        (flames_section(result, dir))
        (fidelity_section(result))
        (charts_section(result))
        h2 { "Runs" }
        @for v in &result.variants {
            details { summary { (shown(&v.variant.name)) " (round " (v.repeat) ")" } pre { (shown(&summary(v))) } }
        }
        details { summary { "Resolved config" } pre { (shown(&config)) } }
    };
    page(&format!("memlab: {}", b.name), body)
}

/// The first screen: the winner and its interval, or why none and what
/// to run instead, then every verdict.
fn verdict_section(result: &BenchResult) -> Markup {
    let Some(headline) = super::headline(result) else {
        return html! { section class="verdict undecided" id="verdict" { p class="headline" { "One variant: nothing to compare." } } };
    };
    let class = if headline.winner.is_some() { "verdict" } else { "verdict undecided" };
    let block = super::verdict_block(result);
    let details: Vec<&str> = block.lines().skip_while(|l| !l.starts_with("Verdict (")).collect();
    html! {
        section class=(class) id="verdict" {
            p class="headline" { (shown(&headline.text)) }
            @if let Some(why) = &headline.why { p class="advice" { (shown(why)) } }
            @if let Some(advice) = &headline.advice { p class="advice" { "What to run: " (shown(advice)) } }
            pre { (shown(&details.join("\n"))) }
        }
    }
}

/// Each twin pair's rates, then each ranking under both runtimes, as
/// tables: the text report's Fidelity section, without its padding.
fn fidelity_section(result: &BenchResult) -> Markup {
    let Some(f) = super::Fidelity::of(result) else { return html! {} };
    let rankings = f.rankings();
    html! {
        h2 { "Fidelity" }
        p { "The same strategies as wasm components and as native twins (median steady row/s). " (super::fidelity::ASSUMES) }
        @if let Some(warning) = super::verdict::not_steady(result) { p { (warning) } }
        table {
            tr { th { "strategies" } th { "wasm" } th { "native" } th { "wasm/native" } th { "note" } }
            @for t in &f.twins {
                tr {
                    td { (shown(&t.label)) } td { (super::thousands(t.wasm)) } td { (super::thousands(t.native)) }
                    td { (format!("{:.2}", t.wasm / t.native)) }
                    td { @if let Some(why) = t.flag { (why) ": its ratios may not carry over" } }
                }
            }
        }
        @if !rankings.is_empty() {
            table {
                tr { th { "ratio of row rates" } th { "wasm" } th { "native" } th { "wasm/native" } th { "within 10%" } th { "ranking" } }
                @for r in &rankings {
                    tr {
                        td { (shown(&r.label)) } td { (format!("{:.2}", r.wasm)) } td { (format!("{:.2}", r.native)) }
                        td { (format!("{:.2}", r.wasm / r.native)) } td { (if r.close() { "yes" } else { "NO" }) } td { (if r.kept() { "kept" } else { "CHANGED" }) }
                    }
                }
            }
            p { (f.tally().unwrap_or_default()) }
        }
    }
}

fn provenance(result: &BenchResult) -> Markup {
    let p = &result.provenance;
    let deadline = p.engine.call_deadline_ms.map_or("off".to_string(), |d| format!("{d} ms"));
    let gib = p.memory_bytes as f64 / (1u64 << 30) as f64;
    let line = format!(
        "memlab {} ({}), wasmtime {} \u{b7} {} \u{b7} {} ({} CPUs, {gib:.1} GiB) \u{b7} stream {} \u{b7} epoch deadline {deadline}",
        p.memlab_version,
        p.git_commit,
        p.wasmtime_version,
        p.os,
        p.cpu,
        p.cpus,
        p.stream_print()
    );
    html! { p class="r" { (shown(&line)) } }
}

fn comparison_table(result: &BenchResult) -> Markup {
    let groups = by_variant(result);
    let verdicts = crate::record::verdict::verdicts(result);
    html! {
        table id="comparison" {
            tr { th { "figure" } th { "better" } @for (name, _) in &groups { th { (shown(name)) } } }
            @for figure in super::figures::shown(result.variants.iter()) {
                @let row = figure.row(&groups);
                tr {
                    td { (figure.name) }
                    td class="better" { (figure.better.word()) }
                    @for (i, best) in row.best.iter().enumerate() {
                        @let (value, ratio) = figure.cell(&row, i);
                        td class=[best.then_some("best")] {
                            (value)
                            @if let Some(r) = ratio { " " span class="r" { (format!("({r:.2}x)")) } }
                        }
                    }
                }
            }
            tr {
                td { "vs first (paired rounds, 95%)" } td class="better" { "higher" } td { "baseline" }
                @for (_, v) in verdicts {
                    td { (shown(&v.map_or_else(|| "n/a (under 2 paired rounds)".to_string(), |v| super::short_verdict(&v)))) }
                }
            }
        }
        p class="r" { "Every figure in this table is measured by the host. Medians over each variant's rounds; the best value of a row is marked; a ratio to the first variant is shown where one means something (not for counts, signed values or ratios)." }
    }
}

fn counters_table(result: &BenchResult) -> Markup {
    let groups = by_variant(result);
    let rows = counters::rows(&groups);
    html! {
        @if !rows.is_empty() {
            h3 { "The plugins' own counters" }
            table id="counters" {
                tr { th { "counter (what the host makes of it)" } @for (name, _) in &groups { th { (shown(name)) } } }
                @for (label, cells) in &rows {
                    tr {
                        td { (shown(label)) }
                        @for cell in cells { td { (cell.map_or("-".to_string(), |x| super::thousands(x as f64))) } }
                    }
                }
            }
        }
    }
}

/// Where the time went: one stacked bar per variant, the flush threads'
/// CPU beside it on the same scale.
fn time_section(result: &BenchResult) -> Markup {
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
    let Some(first) = groups.iter().find_map(|(_, runs)| breakdown::of(runs)) else { return html! {} };
    html! {
        h2 { "Where the time went" }
        section class="chart" id="time" {
            (stacked_bars("Client-thread time by phase (each bar is 100% of that variant's client time)", &stacks))
            p class="r" { "Client threads' wall time, summed over threads, split at each batch's steps. " (shown(&breakdown::footnote(&first))) }
        }
    }
}

/// The flame graphs, a wasm variant beside its native twin where both ran.
fn flames_section(result: &BenchResult, dir: Option<&Path>) -> Markup {
    let spec = |name: &str| result.variants.iter().find(|v| v.variant.name == name).map(|v| &v.variant);
    // Twins: the same variant but for its runtime (and its name).
    let twins = |a: &ProfileFigures, b: &ProfileFigures| match (spec(&a.variant), spec(&b.variant)) {
        (Some(x), Some(y)) if x.runtime != y.runtime => VariantSpec { name: y.name.clone(), runtime: y.runtime, ..x.clone() } == *y,
        _ => false,
    };
    let mut shown_already = vec![false; result.profiles.len()];
    let mut rows: Vec<Vec<&ProfileFigures>> = Vec::new();
    for (i, p) in result.profiles.iter().enumerate() {
        if shown_already[i] {
            continue;
        }
        shown_already[i] = true;
        let mut row = vec![p];
        if let Some(j) = (i + 1..result.profiles.len()).find(|&j| !shown_already[j] && twins(p, &result.profiles[j])) {
            shown_already[j] = true;
            row.push(&result.profiles[j]);
        }
        rows.push(row);
    }
    html! {
        @if !rows.is_empty() {
            h2 { "Flame graphs" }
            section id="flames" {
                p class="r" { "From one profiled round of each variant after the measured rounds (not verified, and in no verdict); a wasm variant sits beside its native twin." }
                @for row in &rows { div class="flames" { @for p in row { (figure(p, dir)) } } }
            }
        }
    }
}

/// The largest flame graph a report embeds.
const MAX_SVG_BYTES: u64 = 64 << 20;

fn figure(p: &ProfileFigures, dir: Option<&Path>) -> Markup {
    // A record's paths are untrusted: only a file inside the run's own
    // directory is embedded, and only a plain relative name is linked.
    let svg = dir.and_then(|d| p.svg.under(d).ok()).and_then(|path| crate::input::read(&path, MAX_SVG_BYTES, "flame graph").ok());
    // A record may keep only its folded stacks: the SVG is drawn again.
    // (`benches/record` keeps a large one gzipped, as `NAME.gz`).
    let drawn = || {
        let folded = dir
            .and_then(|d| p.folded.under(d).or_else(|_| crate::record::RunPath::new(format!("{}.gz", p.folded.as_str())).under(d)).ok())
            .and_then(|path| crate::input::read_inflated(&path, MAX_SVG_BYTES, "folded stacks").ok())?;
        crate::record::flame_graph(&p.variant, p.source, &String::from_utf8_lossy(&folded)).ok()
    };
    let image = svg.or_else(drawn).map(|svg| format!("data:image/svg+xml;base64,{}", base64::engine::general_purpose::STANDARD.encode(&svg)));
    let linked = |name: &str, what: &str| match crate::input::link(name) {
        Some(name) => html! { a href=(name) { (what) } },
        None => html! { (what) " (not linked: its name is not a relative file name)" },
    };
    let caption = format!(": {} ({} samples every {} \u{b5}s; {})", p.source.describe(), p.samples, p.interval_us, p.cost());
    html! {
        figure {
            figcaption { b { (shown(&p.variant)) } (shown(&caption)) " \u{b7} " (linked(p.svg.as_str(), "interactive SVG")) " \u{b7} " (linked(p.folded.as_str(), "folded stacks")) }
            @match image {
                Some(src) => (void("img", &[("alt", &format!("flame graph of {}", shown(&p.variant))), ("src", &src)])),
                None => p class="r" { "(neither the SVG nor its folded stacks are beside this report)" },
            }
        }
    }
}

fn charts_section(result: &BenchResult) -> Markup {
    let throughput = series(result, |r| r.intervals.iter().map(|i| (i.at, if i.rows > 0 { i.row_rate } else { i.op_rate })).collect());
    let nines = |p: f64| if p >= 100.0 { 6.0 } else { -(1.0 - p / 100.0).log10() };
    let spectrum = series(result, |r| r.spectrum.iter().map(|&(p, ns)| (nines(p), ns as f64 / 1e6)).collect());
    let ticks = [(0.0, "0%"), (1.0, "90%"), (2.0, "99%"), (3.0, "99.9%"), (4.0, "99.99%"), (5.0, "99.999%"), (6.0, "max")]
        .into_iter()
        .map(|(x, t)| (x, t.to_string()))
        .collect();
    let memory = series(result, |r| r.intervals.iter().map(|i| (i.at, i.memory as f64 / (1u64 << 20) as f64)).collect());
    html! {
        h2 { "Charts" }
        div class="charts" {
            section class="chart" { (line_chart("Throughput over time", "seconds", "rows/s", &throughput, Axis::Linear, None)) }
            section class="chart" { (line_chart("Latency by percentile", "percentile", "latency (ms, log)", &spectrum, Axis::Log, Some(ticks))) }
            section class="chart" { (line_chart("Memtable memory over time", "seconds", "pool MiB", &memory, Axis::Linear, None)) }
            section class="chart" { (flush_timeline(&timeline(result))) }
        }
    }
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
    drawn(result).into_iter().map(|(run, color, label, dashed)| Series { label, color, points: points(run), dashed, apart: Vec::new() }).collect()
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

#[cfg(test)]
mod tests {
    use super::void;

    #[test]
    fn a_void_elements_attributes_are_escaped_and_it_closes_itself() {
        let img = void("img", &[("alt", "a\"><script>x</script>"), ("src", "data:,&")]).into_string();
        assert_eq!(img, "<img alt=\"a&quot;&gt;&lt;script&gt;x&lt;/script&gt;\" src=\"data:,&amp;\"/>");
    }
}
