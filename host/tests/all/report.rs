//! The report as a person sees it: its HTML parsed (it is well-formed),
//! the verdict on the first screen, the best cells marked, one chart per
//! chart section, a time breakdown per variant and the flame graphs; and
//! the profiled round that makes them, on both runtimes.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use memlab::bench::{self, BenchResult};
use memlab::config::BenchConfig;
use memlab::plugin::{EngineSettings, PluginHost};
use memlab::record::{FailureClass, ProfileSource};
use memlab::report;
use quick_xml::Reader;
use quick_xml::events::Event;

use crate::support::{hostile_plugin, options, scratch};

/// An element of the parsed page.
#[derive(Debug, Default)]
struct Node {
    name: String,
    attrs: Vec<(String, String)>,
    children: Vec<Node>,
    text: String,
}

impl Node {
    fn attr(&self, key: &str) -> Option<&str> {
        self.attrs.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    fn has_class(&self, class: &str) -> bool {
        self.attr("class").is_some_and(|c| c.split(' ').any(|x| x == class))
    }

    /// Every element below, depth first.
    fn all(&self) -> Vec<&Node> {
        let mut out = Vec::new();
        for c in &self.children {
            out.push(c);
            out.extend(c.all());
        }
        out
    }

    fn find(&self, pick: impl Fn(&Node) -> bool) -> Vec<&Node> {
        self.all().into_iter().filter(|n| pick(n)).collect()
    }

    /// The text of this element and everything below it.
    fn full_text(&self) -> String {
        let mut s = self.text.clone();
        for c in &self.children {
            s.push_str(&c.full_text());
        }
        s
    }
}

/// Parses the page as XML: a tag left open or an unquoted attribute is
/// an error here, so the report must be well-formed.
fn parse(html: &str) -> Node {
    let mut reader = Reader::from_str(html);
    let mut stack = vec![Node::default()];
    loop {
        match reader.read_event().unwrap_or_else(|e| panic!("the report is not well-formed at {}: {e}", reader.buffer_position())) {
            Event::Start(e) => stack.push(element(&e)),
            Event::Empty(e) => {
                let node = element(&e);
                stack.last_mut().expect("open").children.push(node);
            }
            Event::End(_) => {
                let node = stack.pop().expect("an open element");
                stack.last_mut().expect("a parent").children.push(node);
            }
            Event::Text(t) => stack.last_mut().expect("open").text.push_str(&t.decode().expect("utf-8")),
            Event::GeneralRef(r) => {
                let name = r.decode().expect("utf-8");
                let c = match name.as_ref() {
                    "amp" => "&",
                    "lt" => "<",
                    "gt" => ">",
                    "quot" => "\"",
                    _ => "·",
                };
                stack.last_mut().expect("open").text.push_str(c);
            }
            Event::Eof => break,
            _ => {}
        }
    }
    assert_eq!(stack.len(), 1, "elements left open");
    stack.pop().expect("the document")
}

fn element(e: &quick_xml::events::BytesStart<'_>) -> Node {
    let attrs = e
        .attributes()
        .map(|a| {
            let a = a.expect("a quoted attribute");
            (String::from_utf8_lossy(a.key.as_ref()).into_owned(), String::from_utf8_lossy(&a.value).into_owned())
        })
        .collect();
    Node { name: String::from_utf8_lossy(e.name().as_ref()).into_owned(), attrs, ..Node::default() }
}

fn recorded(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../benches/runs/2026-12-01-rust-2c24g").join(name)
}

/// What every report must show, whatever its run.
fn check_page(result: &BenchResult, page: &Node) {
    let body = page.find(|n| n.name == "body").into_iter().next().expect("a body");
    // The first screen: the title, the description, then the verdict.
    let first = body.children.iter().position(|n| n.attr("id") == Some("verdict")).expect("a verdict section");
    assert!(first <= 2, "the verdict comes first, after the title and the description");
    let headline = body.children[first].find(|n| n.has_class("headline")).into_iter().next().expect("a headline").full_text();
    let winner = report::headline(result).expect("two or more variants").winner;
    match &winner {
        Some(name) => {
            assert!(headline.starts_with(&format!("Winner: `{name}`")), "{headline}");
            assert!(headline.contains("x [") && headline.contains("interval"), "the ratio and its interval: {headline}");
        }
        None => assert!(page.full_text().contains("What to run") || headline.starts_with("No winner"), "{headline}"),
    }
    // The comparison: a `better` column, and in each row with a direction
    // and a contest, one or more marked cells.
    let table = page.find(|n| n.attr("id") == Some("comparison")).into_iter().next().expect("the comparison");
    let rows: Vec<&Node> = table.children.iter().filter(|n| n.name == "tr").collect();
    assert_eq!(rows[0].children[1].full_text(), "better");
    let mut marked = 0;
    for row in &rows[1..] {
        let better = row.children.get(1).map(Node::full_text).unwrap_or_default();
        let best: Vec<usize> = row.children.iter().enumerate().filter(|(_, c)| c.has_class("best")).map(|(i, _)| i).collect();
        if better == "-" {
            assert!(best.is_empty(), "a figure with no better direction marks nothing");
        }
        marked += usize::from(!best.is_empty());
        // Counts print as integers.
        if row.children[0].full_text() == "memtable switches" {
            assert!(row.children[2..].iter().all(|c| !c.full_text().contains('.')), "counts are integers");
        }
    }
    assert!(marked >= 5, "the best of each contested row is marked ({marked} rows)");
    // The winner holds the best steady rate.
    if let Some(name) = &winner {
        let header: Vec<String> = rows[0].children.iter().map(Node::full_text).collect();
        let column = header.iter().position(|h| h == name).expect("the winner's column");
        assert!(rows[1].children[column].has_class("best"), "the winner's steady rate is marked");
    }
    // One chart per chart section.
    let sections = page.find(|n| n.name == "section" && n.has_class("chart"));
    assert!(sections.len() >= 5, "four charts and the time breakdown: {}", sections.len());
    for s in &sections {
        assert_eq!(s.find(|n| n.name == "svg").len(), 1, "one chart in each section");
    }
    // A bar per variant in the time breakdown, with its flush threads beside.
    let time = page.find(|n| n.attr("id") == Some("time")).into_iter().next().expect("the time breakdown").full_text();
    for (name, _) in report::by_variant(result) {
        assert!(time.contains(name), "`{name}` has a time breakdown bar");
    }
    assert!(time.contains("flush threads beside"));
}

#[test]
fn a_recorded_report_opens_on_its_verdict_with_a_breakdown_and_flame_graphs() {
    for run in ["default-5", "memtables-2"] {
        let dir = recorded(run);
        let result = BenchResult::load(&memlab::record::file_in(&dir)).unwrap_or_else(|e| panic!("{run}: {e}"));
        let page = parse(&report::html::render_in(&result, Some(&dir)));
        check_page(&result, &page);
        // A flame graph per variant, embedded, with what sampling cost.
        let figures = page.find(|n| n.name == "figure");
        assert_eq!(figures.len(), report::by_variant(&result).len(), "{run}: one flame graph per variant");
        for f in &figures {
            assert_eq!(f.find(|n| n.name == "img").len(), 1, "{run}: the SVG is embedded");
            assert!(f.full_text().contains("the profiled round ran at"), "{run}: the cost is stated");
        }
    }
    // memtables.toml: each wasm variant beside its native twin.
    let dir = recorded("memtables-2");
    let result = BenchResult::load(&memlab::record::file_in(&dir)).expect("record");
    let page = parse(&report::html::render_in(&result, Some(&dir)));
    let pairs = page.find(|n| n.name == "div" && n.has_class("flames"));
    assert_eq!(pairs.len(), 4, "four memtables, each a pair");
    for pair in pairs {
        let captions: Vec<String> = pair.find(|n| n.name == "figcaption").iter().map(|c| c.full_text()).collect();
        assert_eq!(captions.len(), 2, "{captions:?}");
        assert!(captions[0].contains("wasm guest stacks") && captions[1].contains("native stacks"), "{captions:?}");
    }
}

const CONFIG: &str = r#"
[bench]
name = "report-test"
repeats = 2

[workload]
seed = 24
ops = 6000
threads = 2
rows_per_batch = 10
partitions = { count = 5000, key = 10 }
clustering = { rows = 10, key = 8 }
column = [{ name = "v", size = 40 }]

[[variant]]
name = "skiplist wasm"
memtable = "skiplist"
allocator = "per-row"
serializer = "lean"
memtable_space = "2MiB"

[[variant]]
name = "skiplist native"
memtable = "skiplist"
allocator = "per-row"
serializer = "lean"
memtable_space = "2MiB"
runtime = "native"
"#;

fn profiling_host(deadline: Option<std::time::Duration>) -> Arc<PluginHost> {
    let cache = Path::new(env!("CARGO_TARGET_TMPDIR")).join("memlab-cache-profile");
    PluginHost::new(EngineSettings { profile: true, call_deadline: deadline, cache_dir: Some(cache), ..EngineSettings::default() }).expect("engine")
}

#[test]
fn the_profiled_round_samples_both_runtimes_and_stays_out_of_the_verdicts() {
    let config = BenchConfig::parse("report-test.toml", CONFIG).expect("config");
    let dir = scratch("report-profiled");
    let opts = bench::BenchOptions { profile: Some(profiling_host(None)), ..options(dir.clone()) };
    let result = bench::run(&crate::support::host(), &config, &opts, |_| {}).expect("bench");
    assert_eq!(result.variants.len(), 4, "two rounds of two; the profiled round is not among them");
    assert!(result.variants.iter().all(|v| v.failure().is_none() && !v.time.is_empty()));
    // The phases tile each run's client time; both write calls are timed,
    // and only wasm pays a crossing.
    for v in &result.variants {
        let t = &v.time;
        let parts: u64 = t.parts().iter().map(|(_, ns)| ns).sum();
        let off = parts.abs_diff(t.client_wall_ns) as f64 / t.client_wall_ns as f64;
        assert!(off < 0.05, "{}: the phases sum to {parts} ns of {} ns", v.variant.name, t.client_wall_ns);
        assert!(t.allocator_ns > 0 && t.memtable_ns > 0 && t.generate_ns > 0, "{}: {t:?}", v.variant.name);
        let wasm = v.variant.name.contains("wasm");
        assert_eq!(t.crossing_ns > 0, wasm, "{}: {t:?}", v.variant.name);
    }
    assert_eq!(result.profiles.len(), 2, "{:?}", result.profiles);
    for (p, (source, root)) in result.profiles.iter().zip([(ProfileSource::Guest, "skiplist;"), (ProfileSource::Native, "native")]) {
        assert_eq!(p.source, source);
        assert!(p.samples > 0 && p.rate_ratio > 0.0, "{p:?}");
        let folded = std::fs::read_to_string(dir.join(p.folded.as_str())).expect("folded stacks");
        let lines: Vec<&str> = folded.lines().collect();
        assert!(!lines.is_empty() && lines.iter().all(|l| l.rsplit_once(' ').is_some_and(|(_, n)| n.parse::<u64>().is_ok())), "{folded}");
        let sum: u64 = lines.iter().map(|l| l.rsplit_once(' ').map_or(0, |(_, n)| n.parse::<u64>().unwrap_or(0))).sum();
        assert_eq!(sum, p.samples, "the folded counts are the samples");
        if source == ProfileSource::Guest {
            // Rooted at the plugin that ran: the memtable, the allocator and
            // the serializer all run in guests.
            assert!(lines.iter().any(|l| l.starts_with(root)), "{folded}");
            assert!(p.sampling_ns > 0 && p.sampling_ns < p.client_ns, "{p:?}");
        } else {
            assert!(lines.iter().all(|l| l.starts_with(root)), "{folded}");
            assert!(folded.contains("memtable_skiplist"), "the twin's frames are named");
            assert!(!folded.contains("start_thread"), "cut at std's start-up marker");
        }
        let svg = std::fs::read_to_string(dir.join(p.svg.as_str())).expect("the flame graph");
        assert!(svg.contains("<svg") && svg.contains("samples"), "an inferno flame graph");
    }
    // The text report names both runtimes' breakdowns.
    let text = report::comparison(&result);
    assert!(text.contains("Where the client threads' time went") && text.contains("memtable calls"), "{text}");
    let page = parse(&report::html::render_in(&result, Some(&dir)));
    check_page(&result, &page);
}

#[test]
fn a_profiling_engine_still_ends_a_call_at_its_deadline() {
    let config = format!(
        "[workload]\nseed = 9\nops = 400\npartitions = {{ count = 100000 }}\n\n[[variant]]\nname = \"loops\"\nmemtable = \"{}\"\nmemtable_params = {{ mode = \"loop\", after = 50 }}\nallocator = \"per-row\"\nserializer = \"lean\"\n",
        hostile_plugin()
    );
    let config = BenchConfig::parse("loops.toml", &config).expect("config");
    let host = profiling_host(Some(std::time::Duration::from_millis(300)));
    let result = bench::run(&host, &config, &options(scratch("report-deadline")), |_| {}).expect("bench");
    let failure = result.variants[0].failure().expect("the loop is ended");
    assert_eq!(failure.class, FailureClass::Trap, "{failure}");
    assert!(failure.message.contains("deadline exceeded"), "{failure}");
}

#[test]
fn show_b_pairs_variants_by_name_by_position_or_as_told() {
    let load = |name: &str| BenchResult::load(&memlab::record::file_in(&recorded(name))).expect("record");
    let (run, base) = (load("default-5"), load("memtables-2"));
    // By name the two share nothing; by position the first goes with the first.
    assert!(report::pairs(&base, &run, &report::Pairing::ByName).expect("by name").is_empty());
    let by_position = report::pairs(&base, &run, &report::Pairing::ByPosition).expect("by position");
    assert_eq!(by_position[0], ("skiplist, per-cell".to_string(), "btree wasm".to_string()));
    assert_eq!(by_position.len(), 4, "as many as the shorter record has");
    let text = report::against_baseline_paired(&base, &run, &by_position, true).expect("across the differences");
    assert!(text.contains("skiplist, per-cell (against the baseline's `btree wasm`)"), "{text}");
    assert!(text.contains("vector native: only in the baseline"), "{text}");
    let told = report::Pairing::Explicit(vec![("trie x32, per-row".into(), "trie native".into())]);
    let pairs = report::pairs(&base, &run, &told).expect("explicit");
    let text = report::against_baseline_paired(&base, &run, &pairs, true).expect("across the differences");
    assert!(text.contains("trie x32, per-row (against the baseline's `trie native`)") && text.contains("skiplist, per-cell: not paired"), "{text}");
    let wrong = report::Pairing::Explicit(vec![("trie x32, per-row".into(), "nope".into())]);
    let e = report::pairs(&base, &run, &wrong).expect_err("no such variant");
    assert!(e.to_string().contains("the baseline has no variant `nope`") && e.to_string().contains("`btree wasm`"), "{e}");
}

/// A recorded sweep's points, merged.
fn recorded_sweep(name: &str) -> memlab::record::sweep::Sweep {
    let dir = recorded(name);
    let mut records = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("a recorded sweep") {
        let point = entry.expect("entry").path();
        let json = memlab::record::file_in(&point);
        if point.is_dir() && json.is_file() {
            records.push((json.display().to_string(), BenchResult::load(&json).expect("a point's record")));
        }
    }
    memlab::record::sweep::merge(records).expect("one sweep")
}

#[test]
fn a_recorded_sweeps_report_charts_every_figure_against_the_swept_value() {
    for (name, variants) in [("8457-coalescing", 3), ("../2026-12-06-rust-2c24g/20226-concurrent", 4)] {
        let sweep = recorded_sweep(name);
        assert_eq!(sweep.over, "threads");
        let values: Vec<&str> = sweep.points.iter().map(|p| p.value.as_str()).collect();
        assert_eq!(values, ["1", "2", "8", "32", "100"], "{name}: every point recorded, in order");
        let page = parse(&report::sweep::html(&sweep));
        let body = page.find(|n| n.name == "body").into_iter().next().expect("a body");
        let first = body.children.iter().position(|n| n.attr("id") == Some("verdict")).expect("a verdict section");
        assert!(first <= 2, "{name}: how the gap moves comes first");
        let trends = body.children[first].find(|n| n.name == "li");
        let trend = |li: &&&Node| {
            ["the gap widens", "the gap narrows", "the gap holds", "the order flips", "no trend", "no point decided"].iter().any(|t| li.full_text().contains(t))
        };
        assert_eq!(trends.iter().filter(trend).count(), variants - 1, "{name}: a trend per variant past the first");
        // A point that did not decide is named apart, never a trend's end,
        // and drawn hollow, joined to nothing.
        let (mut undecided, names) = (0, sweep.variants());
        for (li, v) in trends.iter().filter(trend).zip(1..) {
            let left_out: Vec<&str> = sweep
                .points
                .iter()
                .filter(|p| {
                    let all = memlab::record::verdict::verdicts(&p.result);
                    let named = all.iter().find(|(n, _)| *n == names[v]).and_then(|(_, verdict)| *verdict);
                    !named.is_some_and(|verdict| verdict.decision.decided())
                })
                .map(|p| p.value.as_str())
                .collect();
            undecided += left_out.len();
            let said = li.full_text();
            match left_out.is_empty() {
                true => assert!(!said.contains("undecided"), "{name}: {said}"),
                false => assert!(said.contains(&format!("undecided, left out: threads = {}", left_out.join(", "))), "{name}: {said}"),
            }
        }
        let gaps_chart = page.find(|n| n.name == "svg").into_iter().next().expect("the gaps' chart");
        assert_eq!(gaps_chart.find(|n| n.name == "circle" && n.attr("fill") == Some("white")).len(), undecided, "{name}: hollow where undecided");
        let charts = page.find(|n| n.name == "svg");
        assert_eq!(charts.len(), 5, "{name}: the gaps, and one chart per figure");
        for (i, chart) in charts.iter().enumerate() {
            let lines = chart.find(|n| n.name == "polyline").len();
            assert_eq!(lines, if i == 0 { variants - 1 } else { variants }, "{name}: chart {i} draws one line per variant");
            if i == 0 {
                // Every ratio's interval, and the dashed line at 1.
                assert_eq!(chart.find(|n| n.name == "path").len(), (variants - 1) * values.len(), "{name}: a whisker per ratio");
                assert!(chart.find(|n| n.name == "line" && n.attr("stroke-dasharray").is_some()).len() == 1, "{name}: the line at 1");
            }
            let ticks: Vec<String> = chart.find(|n| n.name == "text").iter().map(|t| t.full_text()).collect();
            for v in &values {
                assert!(ticks.iter().any(|t| t == v), "{name}: chart {i} labels the point {v}");
            }
        }
        let text = report::sweep::table(&sweep);
        assert!(text.contains("5 of 5 point(s)") && text.contains("At each point:"), "{text}");
    }
}

/// The Fidelity section says its ratios assume both builds do the same
/// work, and flags a twin whose native build is a different program by
/// what the host sees of it: boundary traffic per row apart from its wasm
/// build's, or a wasm build that outruns its native one (issue 49, class
/// 8). The recorded honest run flags nothing.
#[test]
fn fidelity_flags_a_native_build_that_does_other_work() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../benches/runs/2026-12-04-rust-2c24g/fidelity/run.json.gz");
    let honest = BenchResult::load(&path).expect("the recorded fidelity run");
    let section = report::fidelity(&honest);
    assert!(section.contains("assume both builds do the same work") && !section.contains("(!)"), "{section}");
    // A native btree that does busy work: half the rate, the same traffic.
    let mut busy = honest.clone();
    for v in busy.variants.iter_mut().filter(|v| v.variant.name == "btree native") {
        v.elapsed *= 2;
        v.steady.as_mut().expect("a steady window").secs *= 2.0;
    }
    let section = report::fidelity(&busy);
    assert!(section.lines().any(|l| l.starts_with("(!) `btree x8") && l.contains("outruns its native one")), "{section}");
    // A native build that crosses the boundary more a row than its wasm build.
    let mut chatty = honest;
    for v in chatty.variants.iter_mut().filter(|v| v.variant.name == "trie native") {
        v.boundary.calls = v.boundary.calls * 11 / 10;
    }
    let section = report::fidelity(&chatty);
    assert!(section.lines().any(|l| l.starts_with("(!) `trie x8") && l.contains("boundary traffic per row differs")), "{section}");
    assert_eq!(section.matches("(!) `").count(), 1, "only the pair that differs: {section}");
}

/// The Fidelity section's rates are the verdicts' (the steady window),
/// not the whole run's, which leans on the warm-up; and it says when a
/// twin never reached a steady state.
#[test]
fn fidelity_ratios_are_the_steady_rates_the_verdicts_use() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../benches/runs/2026-12-04-rust-2c24g/fidelity/run.json.gz");
    let honest = BenchResult::load(&path).expect("the recorded fidelity run");
    let ratio = |r: &BenchResult| {
        let f = report::Fidelity::of(r).expect("twins");
        let t = f.twins.iter().find(|t| t.label.starts_with("vector x8")).expect("the vector twins");
        t.wasm / t.native
    };
    // A warm-up twice as slow moves the whole run's rate, not the steady one.
    let mut slow_start = honest.clone();
    for v in slow_start.variants.iter_mut().filter(|v| v.variant.name == "vector native") {
        let warm = v.steady.expect("a steady window").warmup_secs;
        v.elapsed += std::time::Duration::from_secs_f64(warm);
    }
    assert!((ratio(&slow_start) - ratio(&honest)).abs() < 1e-12, "the warm-up moved the ratio");
    // A steady window half as fast halves the native rate: the ratio doubles.
    let mut slow_steady = honest.clone();
    for v in slow_steady.variants.iter_mut().filter(|v| v.variant.name == "vector native") {
        v.steady.as_mut().expect("a steady window").secs *= 2.0;
    }
    assert!((ratio(&slow_steady) / ratio(&honest) - 2.0).abs() < 1e-9, "{} against {}", ratio(&slow_steady), ratio(&honest));
    let section = report::fidelity(&honest);
    assert!(section.contains("Not a steady state") == report::verdict_block(&honest).contains("Not a steady state"), "{section}");
    let mut short = honest;
    short.variants.iter_mut().for_each(|v| v.steady = None);
    assert!(report::fidelity(&short).contains("Not a steady state: `btree wasm`"), "the warning names the twins");
}

/// A plugin caught in a lie at one point of a sweep publishes nothing at
/// any point (a lie may be gated on the swept value: issue 49, class 7),
/// and the failure says where it was caught; other plugins are untouched.
#[test]
fn a_plugin_caught_at_one_sweep_point_is_tainted_at_every_point() {
    let dir = recorded("8457-coalescing");
    let mut records: Vec<(String, BenchResult)> = std::fs::read_dir(&dir)
        .expect("a recorded sweep")
        .filter_map(|e| Some(e.ok()?.path()).filter(|p| p.is_dir()))
        .map(|point| memlab::record::file_in(&point))
        .filter(|json| json.is_file())
        .map(|json| (json.display().to_string(), BenchResult::load(&json).expect("a point's record")))
        .collect();
    records.sort_by(|a, b| a.0.cmp(&b.0));
    let source = records[0].0.clone();
    let first = &mut records[0].1.variants[0];
    let liar = first.plugins[0].clone();
    let caught_at = first.variant.name.clone();
    first.outcome = memlab::record::Outcome::Failed(memlab::record::Failure {
        plugin: Some(liar.name.clone()),
        sha256: Some(liar.sha256.clone()),
        ..memlab::record::Failure::new(FailureClass::Contract, "a lie gated on the swept value")
    });
    let sweep = memlab::record::sweep::merge(records).expect("one sweep");
    let (mut tainted, caught_point) = (0, sweep.points.iter().find(|p| p.source == source).expect("the caught point").value.clone());
    for point in &sweep.points {
        // The caught variant's other rounds at its point publish nothing
        // already: a variant that failed a round publishes none.
        for run in point.result.variants.iter().filter(|r| r.variant.name != caught_at || point.value != caught_point) {
            let loads = run.plugins.iter().any(|p| p.sha256 == liar.sha256);
            match run.failure() {
                Some(f) if f.class == FailureClass::Tainted => {
                    assert!(loads, "{}: tainted without loading the plugin", run.variant.name);
                    assert!(f.message.contains(&format!("in variant `{caught_at}` at the sweep's point threads = ")), "{}", f.message);
                    tainted += 1;
                }
                Some(f) => assert_eq!(f.class, FailureClass::Contract),
                None => assert!(!loads, "{} at {} loads the caught plugin and still publishes", run.variant.name, point.value),
            }
        }
    }
    assert!(tainted >= sweep.points.len() - 1, "{tainted} runs tainted over {} points", sweep.points.len());
}

/// Every variant, winner or not, carries a `Why:` against the baseline,
/// CPU a row beside wall; a run whose steady windows switched too few
/// generations says so in the verdict block itself.
#[test]
fn the_verdict_block_says_why_for_every_variant_and_when_it_is_not_steady() {
    let runs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../benches/runs");
    let (ok, text) = crate::support::memlab(&["show", runs.join("2026-12-05-rust-2c24g/default").to_str().expect("utf-8")]);
    assert!(ok, "{text}");
    let block: Vec<&str> = text.lines().skip_while(|l| !l.starts_with("Verdict (")).skip(1).take_while(|l| l.starts_with("  ")).collect();
    let verdicts = block.iter().filter(|l| !l.trim_start().starts_with("Why:")).count();
    let whys = block.iter().filter(|l| l.trim_start().starts_with("Why:") && l.contains("µs of CPU against") && l.contains("µs of wall")).count();
    assert!(verdicts == 3 && whys == 3, "{block:#?}");
    assert!(!text.contains("Not a steady state"), "the default comparison is steady");
    // A log's sync mode is credited with the phases it owns.
    let sync = runs.join("2026-12-06-rust-2c24g/8457-coalescing-sync/threads-8");
    let (_, text) = crate::support::memlab(&["show", sync.to_str().expect("utf-8")]);
    let why = text.lines().find(|l| l.contains("Why: `group 1 ms` differs from `batch`")).unwrap_or_else(|| panic!("{text}"));
    assert!(why.contains("in `log` alone") && why.contains("durability wait") && why.contains("Its own phases"), "{why}");
    assert!(!text.contains("Not a steady state"), "at 4 MiB each window switches ten generations");
    let short = runs.join("2026-12-02-rust-2c24g/8457-coalescing-sync/threads-1");
    let (_, text) = crate::support::memlab(&["show", short.to_str().expect("utf-8")]);
    let warning = text.lines().skip_while(|l| !l.starts_with("Verdict (")).nth(1).unwrap_or_default();
    assert!(warning.starts_with("Not a steady state: `batch`"), "{warning}");
}

/// `show -b` on recorded A/A runs (one config run again and again):
/// the pair the old rule judged 1.14x faster reports no difference, the
/// variant both runs ran alike anchors the other, and a real 1.5x
/// difference relative to it still decides.
#[test]
fn show_b_judges_recorded_a_a_runs_the_same_and_a_real_change_apart() {
    let aa = Path::new(env!("CARGO_MANIFEST_DIR")).join("../benches/runs/2026-12-06-rust-2c24g/aa-runs");
    let path = |i: u32| aa.join(format!("run-{i}.json.gz")).to_str().expect("utf-8").to_string();
    let verdicts = |text: &str| text.lines().filter(|l| l.starts_with("row rate verdict")).map(str::to_string).collect::<Vec<_>>();
    let (ok, text) = crate::support::memlab(&["show", &path(2), "-b", &path(1)]);
    assert!(ok && text.contains("Anchor: `btree`"), "{text}");
    let found = verdicts(&text);
    assert!(found.len() == 2 && found.iter().all(|v| !v.contains("] faster") && !v.contains("] slower") && !v.contains("differs")), "{found:#?}");
    assert!(found[1].contains("relative to `btree` in each run"), "{found:#?}");
    // The skiplist's steady rows half again: the machine cannot explain it.
    let mut record = BenchResult::load(Path::new(&path(2))).expect("an A/A record");
    for v in record.variants.iter_mut().filter(|v| v.variant.name == "skiplist") {
        if let Some(steady) = v.steady.as_mut() {
            steady.rows += steady.rows / 2;
        }
    }
    let changed = scratch("show-b-anchored").join("run.json");
    record.save(&changed).expect("save");
    let (ok, text) = crate::support::memlab(&["show", changed.to_str().expect("utf-8"), "-b", &path(1)]);
    let found = verdicts(&text);
    assert!(ok && found[1].contains("relative to `btree` in each run: ") && found[1].contains("] faster"), "{found:#?}");
}
