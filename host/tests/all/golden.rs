//! Golden files pin the run record's format and the report's text, in
//! pebble's datadriven habit: `testdata/run.json` (a small real run, one
//! outcome edited into a failure) must read and write back byte for byte,
//! and its summaries and comparison must match `testdata/summary.txt` and
//! `testdata/comparison.txt`; the same record as the points of a sweep
//! must print `testdata/sweep.txt`. After an intended change, run
//! `MEMLAB_BLESS=1 cargo test golden` and review the diff it leaves.

use std::path::{Path, PathBuf};

use memlab::record::{BenchResult, FailureClass, SCHEMA_VERSION};
use memlab::report;

use crate::support::scratch;

fn testdata(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/testdata").join(name)
}

/// Compares `actual` with the golden file `name`, or rewrites it when
/// blessing.
fn golden(name: &str, actual: &str) {
    let path = testdata(name);
    if std::env::var_os("MEMLAB_BLESS").is_some() {
        std::fs::write(&path, actual).expect("bless");
        return;
    }
    let expected = std::fs::read_to_string(&path).expect("golden file");
    if expected != actual {
        let line = expected.lines().zip(actual.lines()).position(|(a, b)| a != b).unwrap_or(expected.lines().count().min(actual.lines().count()));
        panic!(
            "{name} differs from its golden file at line {}:\n  golden: {:?}\n  now:    {:?}\n(MEMLAB_BLESS=1 rewrites it, if the change is intended)",
            line + 1,
            expected.lines().nth(line),
            actual.lines().nth(line)
        );
    }
}

fn record() -> BenchResult {
    BenchResult::load(&testdata("run.json")).expect("the golden record reads")
}

#[test]
fn the_record_writes_back_byte_for_byte() {
    let result = record();
    assert_eq!(result.schema, SCHEMA_VERSION);
    let path = scratch("golden").join("run.json");
    result.save(&path).expect("save");
    golden("run.json", &std::fs::read_to_string(&path).expect("saved"));
}

#[test]
fn the_failed_outcome_is_typed() {
    let result = record();
    let failure = result.variants[5].failure().expect("the edited outcome");
    assert_eq!(failure.class, FailureClass::Contract);
    assert_eq!((failure.plugin.as_deref(), failure.operation.as_deref(), failure.shard), (Some("btree"), Some("cursor.next"), Some(0)));
    assert!(result.variants[..5].iter().all(|v| v.failure().is_none()));
}

#[test]
fn the_summaries_and_the_comparison_match_their_golden_text() {
    let result = record();
    let summaries: String = result.variants.iter().map(|v| report::summary(v) + "\n").collect();
    golden("summary.txt", &summaries);
    golden("comparison.txt", &(report::comparison(&result) + &report::fidelity(&result)));
}

#[test]
fn a_schema_2_failure_reads_as_unclassified() {
    // Schema 2 wrote `{"status": "failed", "reason": "..."}`.
    let text = std::fs::read_to_string(testdata("run.json")).expect("golden");
    let text = text.replacen(&format!("\"schema\": {SCHEMA_VERSION}"), "\"schema\": 2", 1);
    let start = text.find("\"class\": \"contract\"").expect("the failed outcome");
    let end = text[start..].find("\"message\"").expect("its message") + start;
    let text = format!("{}{}", &text[..start], text[end..].replacen("\"message\"", "\"reason\"", 1));
    let path = scratch("golden-schema-2").join("run.json");
    std::fs::write(&path, text).expect("write");
    let result = BenchResult::load(&path).expect("a schema-2 record reads");
    let failure = result.variants[5].failure().expect("still failed");
    assert_eq!(failure.class, FailureClass::Unclassified);
    assert!(failure.message.contains("out of order") && failure.plugin.is_none());
}

#[test]
fn a_sweeps_table_matches_its_golden_text() {
    // The golden record as two points of one sweep: the same figures at
    // each, so the table's shape (and its "the gap holds") is pinned.
    let points = ["2", "16"].iter().enumerate().map(|(index, value)| {
        let mut r = record();
        r.config.sweep = Some(memlab::record::SweepSpec {
            over: "threads".into(),
            value: (*value).into(),
            index,
            values: vec!["2".into(), "16".into(), "64".into()],
            id: "0123456789abcdef".into(),
            not_applied: Vec::new(),
        });
        (format!("point-{value}"), r)
    });
    let sweep = memlab::record::sweep::merge(points.collect()).expect("one sweep");
    golden("sweep.txt", &report::sweep::table(&sweep));
}
