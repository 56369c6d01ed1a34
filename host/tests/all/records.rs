//! Run records: a record of every schema memlab has written still reads
//! (old schemas upgraded, `testdata/records/`) and renders as `memlab
//! show` prints it; a record round-trips through `save` and `load`.

use std::path::{Path, PathBuf};

use memlab::record::{BenchResult, Failure, FailureClass, Outcome, SCHEMA_VERSION};
use memlab::report;

use crate::support::scratch;

/// One small record per schema memlab has written, upgraded on load.
fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/testdata/records").join(name)
}

#[test]
fn a_record_of_every_schema_still_reads_and_renders() {
    let mut schemas = Vec::new();
    for name in ["schema-1.json", "schema-1-twins.json.gz", "schema-2.json", "schema-3.json", "schema-4.json", "schema-5.json"] {
        let result = BenchResult::load(&fixture(name)).unwrap_or_else(|e| panic!("{e}"));
        schemas.push(result.schema);
        assert!(!result.variants.is_empty(), "{name}");
        for v in &result.variants {
            assert!(!report::summary(v).is_empty());
        }
        assert!(!report::comparison(&result).is_empty());
    }
    assert_eq!(schemas, [1, 1, 2, 3, 4, 5]);
    assert_eq!(SCHEMA_VERSION, 5, "a new schema gets a fixture of its own here");
}

/// Schema 5 keeps descriptions by kind: a schema-4 record's list reads
/// with each description under the kind of its place in the pipeline.
#[test]
fn a_schema_4_record_keeps_its_descriptions_by_kind() {
    use memlab::seam::Kind;
    let old = BenchResult::load(&fixture("schema-4.json")).expect("schema 4");
    let v = &old.variants[0];
    assert_eq!(v.descriptions.len(), v.variant.strategies.len());
    for (kind, strategy) in &v.variant.strategies {
        assert_eq!(v.descriptions.get(kind).map(|d| d.0.as_str()), Some(strategy.plugin.as_str()), "{kind}");
    }
    assert!(!v.descriptions.contains_key(&Kind::CommitLog), "a variant with no log has no log's description");
    let new = BenchResult::load(&fixture("schema-5.json")).expect("schema 5");
    let logged = new.variants.iter().find(|v| v.variant.strategies.contains_key(&Kind::CommitLog)).expect("a variant with a log");
    assert_eq!(logged.descriptions.get(&Kind::CommitLog).map(|d| d.0.as_str()), Some(logged.variant.plugin(Kind::CommitLog)));
}

/// Schema 4 keeps strategies and counters by kind: a schema-3 record
/// reads with every kind's plugin, parameters and counters where they were.
#[test]
fn a_schema_3_record_keeps_its_strategies_and_counters_by_kind() {
    use memlab::seam::Kind;
    let old = BenchResult::load(&fixture("schema-3.json")).expect("schema 3");
    let text = std::fs::read_to_string(fixture("schema-3.json")).expect("text");
    let raw: serde_json::Value = serde_json::from_str(&text).expect("json");
    let first = &raw["variants"][0];
    let v = &old.variants[0];
    for kind in [Kind::Memtable, Kind::Allocator, Kind::Serializer] {
        assert_eq!(v.variant.plugin(kind), first["variant"][kind.to_string()].as_str().expect("a plugin"), "{kind}");
        let stats = &first[format!("{kind}_stats")];
        if let Some(stats) = stats.as_object().filter(|s| !s.is_empty()) {
            assert_eq!(v.stats_of(kind).len(), stats.len(), "{kind}");
            assert!(stats.iter().all(|(k, n)| v.stats_of(kind).get(k).copied() == n.as_u64()), "{kind}");
        }
        assert!(v.flushes.iter().all(|f| !f.stats.get(&kind).is_some_and(|s| s.is_empty())));
    }
    assert_eq!(old.config.variants[0], v.variant, "the config's spec and the run's upgrade alike");
}

/// The repository is code: the runs it keeps are the ones the README
/// and `docs/` cite, compressed, within 5 MB in all.
#[test]
fn the_recorded_runs_stay_within_five_megabytes() {
    fn total(dir: &Path) -> u64 {
        std::fs::read_dir(dir)
            .expect("readable")
            .flatten()
            .map(|e| if e.path().is_dir() { total(&e.path()) } else { e.metadata().map_or(0, |m| m.len()) })
            .sum()
    }
    let runs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../benches/runs");
    let bytes = total(&runs);
    assert!(bytes <= 5_000_000, "benches/runs holds {bytes} bytes: keep only the cited runs (older ones stay in git history)");
}

#[test]
fn a_failure_survives_the_upgrade_from_schema_1() {
    let dir = scratch("records-upgrade");
    let recorded = fixture("schema-1.json");
    // Edit the text: a `serde_json::Value` would round the u128 digests.
    let text = std::fs::read_to_string(recorded).expect("default-4");
    let (first, rest) = text.split_at(text.find(r#""failure": null"#).expect("a schema-1 failure field") + 1);
    let text = format!("{first}{}", rest.replacen(r#""failure": null"#, r#""failure": "plugin `x` trapped""#, 1));
    let path = dir.join("run.json");
    std::fs::write(&path, text).expect("write");
    let result = BenchResult::load(&path).expect("upgraded");
    assert_eq!(result.variants[0].outcome, Outcome::Completed);
    let unclassified = |message: &str| Some(Failure::new(FailureClass::Unclassified, message));
    assert_eq!(result.variants[1].failure().cloned(), unclassified("plugin `x` trapped"));
    result.save(&path).expect("saved");
    let again = BenchResult::load(&path).expect("reloaded");
    // Its digest is still schema 1's hash: saving keeps the record's schema.
    assert_eq!(again.schema, 1);
    assert_eq!(again.variants[1].failure().cloned(), unclassified("plugin `x` trapped"));
}

#[test]
fn a_newer_schema_is_named_not_misread() {
    let dir = scratch("records-newer");
    let path = dir.join("run.json");
    std::fs::write(&path, br#"{"schema": 99, "variants": []}"#).expect("write");
    let message = BenchResult::load(&path).expect_err("too new").to_string();
    assert!(message.contains("schema 99") && message.contains("run.json"), "{message}");
}

#[test]
fn the_fidelity_section_pairs_twins_and_flags_a_changed_ranking() {
    // performance-5 ran four memtables as wasm and as native twins; its
    // record is kept compressed, and read as it is.
    let result = BenchResult::load(&fixture("schema-1-twins.json.gz")).expect("performance-5");
    let text = report::fidelity(&result);
    assert!(text.contains("skiplist x8, per-row, lean |      764,019 |    1,473,227 |        0.52"), "{text}");
    assert!(text.contains("CHANGED"), "skiplist vs trie flips between wasm and native: {text}");
    let html = report::html::render(&result);
    assert!(
        html.contains("<h2>Fidelity</h2>") && html.contains("<td>skiplist x8, per-row, lean</td>") && html.contains("<td>CHANGED</td>"),
        "the section is tables"
    );
    // A crate's folder is named by its name, however the config spelled
    // the way there.
    let mut spelled = result.clone();
    for v in &mut spelled.variants {
        for s in v.variant.strategies.values_mut().filter(|s| s.plugin == "skiplist") {
            s.plugin = "cfg/../plugins/cb-skipmap".into();
        }
    }
    let (text, html) = (report::fidelity(&spelled), report::html::render(&spelled));
    assert!(text.contains("cb-skipmap x8, per-row, lean |") && !text.contains("cfg/"), "{text}");
    assert!(html.contains("<td>cb-skipmap x8, per-row, lean</td>"), "the page names the plugin too");
    // A run without twins has no section.
    let default = BenchResult::load(&fixture("schema-1.json")).expect("default-4");
    assert!(report::fidelity(&default).is_empty());
}

/// A long run saves each variant alone between whole rewrites of
/// `run.json`; reading the record takes the later variants back, in
/// order, and ignores ones a whole rewrite already holds.
#[test]
fn variants_saved_one_by_one_are_read_back_with_the_record() {
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/testdata/run.json");
    let mut record = BenchResult::load(&golden).expect("golden record");
    let all = record.variants.clone();
    assert!(all.len() >= 3, "the golden record has {} variants", all.len());
    let path = scratch("records-one-by-one").join("run.json");
    record.variants.truncate(1);
    record.save(&path).expect("save");
    // A stale file for index 0 (already in run.json) and the later ones.
    BenchResult::save_variant(&path, 0, &all[2]).expect("stale");
    for (i, v) in all.iter().enumerate().skip(1) {
        BenchResult::save_variant(&path, i, v).expect("variant");
    }
    let read = BenchResult::load(&path).expect("load");
    let json = |v: &[memlab::record::VariantResult]| serde_json::to_string(v).expect("json");
    assert_eq!(json(&read.variants), json(&all));
}

/// A record whose run was killed after its first variant says so first,
/// naming the variants that never ran; a whole run's record does not.
#[test]
fn show_says_first_that_a_killed_runs_record_is_partial() {
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/testdata/run.json");
    let whole = BenchResult::load(&golden).expect("golden record");
    let first = whole.variants[0].variant.name.clone();
    let mut killed = whole.clone();
    killed.stop = None;
    killed.variants.retain(|v| v.variant.name == first);
    let dir = scratch("records-killed");
    killed.save(&dir.join("run.json")).expect("save");
    let (ok, text) = crate::support::memlab(&["show", dir.join("run.json").to_str().expect("utf-8")]);
    assert!(ok, "{text}");
    let opening = text.lines().next().unwrap_or_default();
    let never: Vec<&str> = whole.config.variants.iter().map(|v| v.name.as_str()).filter(|n| *n != first).collect();
    assert!(opening.contains("cut short") && never.iter().all(|n| opening.contains(&format!("`{n}`"))), "{opening}");
    assert!(text.trim_end().ends_with("not the whole run."), "and again last");
    whole.save(&dir.join("whole.json")).expect("save");
    let (ok, text) = crate::support::memlab(&["show", dir.join("whole.json").to_str().expect("utf-8")]);
    assert!(ok && !text.contains("cut short"), "{text}");
}
