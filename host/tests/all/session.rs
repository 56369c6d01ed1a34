//! The bench session as a library (`memlab::session`): its events, in
//! order, collected by a progress sink of the test's own; its records;
//! a sweep; a refused sweep leaving nothing; an interrupt, typed.

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

use memlab::config::BenchConfig;
use memlab::session::{self, Event, Progress, Ran, SessionError, SessionOptions};

use crate::support::scratch;

/// Every event's name, in order, and the variants told.
#[derive(Default)]
struct Collect(Mutex<Vec<String>>);

impl Progress for Collect {
    fn event(&self, event: Event<'_>) {
        let name = match event {
            Event::Started { .. } => "started".to_string(),
            Event::Note(_) => return,
            Event::Variant(v) => format!("variant {}", v.variant.name),
            Event::Finished(_) => "finished".into(),
            Event::Saved { record, .. } => format!("saved {}", record.file_name().and_then(|n| n.to_str()).unwrap_or("?")),
            Event::SweepStarted { values, .. } => format!("sweep {}", values.join(",")),
            Event::SweepPoint { value, .. } => format!("point {value}"),
            Event::SweepFinished { sweep, .. } => format!("merged {}", sweep.points.len()),
            other => format!("{other:?}"),
        };
        self.0.lock().expect("events").push(name);
    }
}

const CONFIG: &str = r#"
[bench]
name = "session-test"
repeats = 2

[workload]
seed = 5
ops = 2000
threads = 2
partitions = { count = 500 }

[[variant]]
name = "a"
memtable = "btree"
allocator = "per-row"
serializer = "lean"
memtable_space = "1MiB"

[[variant]]
name = "b"
memtable = "skiplist"
allocator = "per-row"
serializer = "lean"
memtable_space = "1MiB"
"#;

fn quiet(out: std::path::PathBuf) -> SessionOptions {
    SessionOptions { out, log_flushes: false, intervals: false, ..SessionOptions::default() }
}

fn run(config: &str, options: &SessionOptions, interrupted: bool) -> (Result<Ran, SessionError>, Vec<String>) {
    let config = BenchConfig::parse("session.toml", config).expect("config");
    let sink = Arc::new(Collect::default());
    let progress: Arc<dyn Progress> = sink.clone();
    let ran = session::run(config, options, &progress, &Arc::new(AtomicBool::new(interrupted)));
    let events = sink.0.lock().expect("events").clone();
    (ran, events)
}

#[test]
fn a_session_tells_each_variant_then_saves_its_record() {
    let out = scratch("session-bench");
    let (ran, events) = run(CONFIG, &quiet(out), false);
    let Ok(Ran::Bench { result, record }) = ran else { panic!("{ran:?}") };
    assert_eq!(events, ["started", "variant a", "variant b", "variant a", "variant b", "finished", "saved run.json"]);
    assert_eq!(result.variants.len(), 4);
    let saved = memlab::record::BenchResult::load(&record).expect("the saved record");
    assert_eq!(saved.variants.len(), 4);
    assert!(record.with_file_name("report.html").is_file());
}

#[test]
fn a_sweep_runs_each_point_then_merges_them_and_a_refused_one_leaves_nothing() {
    let out = scratch("session-sweep");
    let swept = format!("{CONFIG}\n[sweep]\nover = \"threads\"\nvalues = [1, 2]\n");
    let (ran, events) = run(&swept, &SessionOptions { repeats: Some(1), ..quiet(out.clone()) }, false);
    let Ok(Ran::Sweep { dir, points }) = ran else { panic!("{ran:?}") };
    assert_eq!(points, 2);
    let expected = [
        "sweep 1,2",
        "point 1",
        "started",
        "variant a",
        "variant b",
        "finished",
        "saved run.json",
        "point 2",
        "started",
        "variant a",
        "variant b",
        "finished",
        "saved run.json",
        "merged 2",
    ];
    assert_eq!(events, expected);
    assert!(dir.join("threads-1/run.json").is_file() && dir.join("report.html").is_file());
    // A value no point can take is refused before point 1 runs.
    let out = scratch("session-sweep-refused");
    let refused = format!("{CONFIG}\n[sweep]\nover = \"memtable.nope\"\nvalues = [1, 2]\n");
    let (ran, events) = run(&refused, &quiet(out.clone()), false);
    assert!(matches!(ran, Err(SessionError::Points(_))), "{ran:?}");
    assert!(events.iter().all(|e| !e.starts_with("point")), "{events:?}");
    assert_eq!(std::fs::read_dir(&out).map(Iterator::count).unwrap_or(0), 0, "a refused sweep leaves nothing");
}

#[test]
fn an_interrupted_session_is_a_typed_error_with_what_was_kept() {
    let out = scratch("session-interrupt");
    let (ran, _) = run(CONFIG, &quiet(out), true);
    let Err(SessionError::Interrupted { planned, path, .. }) = ran else { panic!("{ran:?}") };
    assert_eq!(planned, 4);
    // Stopped before its first variant: in preflight, with nothing kept.
    assert!(path.contains("before any variant ran"), "{path}");
}

#[test]
fn points_without_a_sweep_are_refused() {
    let out = scratch("session-points");
    let (ran, events) = run(CONFIG, &SessionOptions { points: vec!["1".into()], ..quiet(out) }, false);
    assert!(matches!(ran, Err(SessionError::Points(ref m)) if m.contains("--points")), "{ran:?}");
    assert!(events.is_empty());
}
