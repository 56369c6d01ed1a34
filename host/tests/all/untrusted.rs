//! A record or a run directory handed to you is untrusted input (issue
//! 33): crafted records and run directories through the binary, each
//! refused with a clear error or handled without loss, never a panic, a
//! hang or a file read from outside the run.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{command, liar_plugin, memlab, scratch};

/// The golden digest, a u128 that `Value` cannot hold as a number: kept as
/// a string while a test edits the record, a number again when written.
const DIGEST: &str = "3688707562352453122090555679473947891";

/// The golden record, as JSON.
fn golden() -> Value {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/testdata/run.json")).expect("golden record");
    serde_json::from_str(&text.replace(DIGEST, &format!("\"{DIGEST}\""))).expect("json")
}

/// `record` as a record's text.
fn text_of(record: &Value) -> String {
    serde_json::to_string(record).expect("json").replace(&format!("\"{DIGEST}\""), DIGEST)
}

/// `record` written as `dir/run.json`.
fn write_run(dir: &Path, record: &Value) -> PathBuf {
    std::fs::create_dir_all(dir).expect("dir");
    let path = dir.join("run.json");
    std::fs::write(&path, text_of(record)).expect("write");
    path
}

/// Every number of `v` set to `int` (floats to 1e300), nanos kept valid.
fn extreme(v: &mut Value, key: &str, int: u64) {
    match v {
        Value::Number(n) if n.is_u64() || n.is_i64() => *v = if key == "nanos" { 999_999_999u64.into() } else { int.into() },
        Value::Number(_) => *v = serde_json::json!(1e300),
        Value::Array(items) => items.iter_mut().for_each(|i| extreme(i, key, int)),
        Value::Object(map) => map.iter_mut().for_each(|(k, i)| extreme(i, k, int)),
        _ => {}
    }
}

/// Runs memlab, ending it if it takes longer than `limit`: (finished, success, output).
fn bounded(args: &[&str], limit: Duration) -> (bool, bool, String) {
    let mut child = command(args).stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn().expect("memlab starts");
    let started = Instant::now();
    while started.elapsed() < limit {
        if child.try_wait().expect("wait").is_some() {
            let out = child.wait_with_output().expect("output");
            let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
            assert!(!text.contains("panicked"), "memlab {args:?} panicked:\n{text}");
            return (true, out.status.success(), text);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    (false, false, String::new())
}

fn mkfifo(path: &Path) {
    let _ = std::fs::remove_file(path);
    let made = std::process::Command::new("mkfifo").arg(path).status().expect("mkfifo runs");
    assert!(made.success(), "mkfifo {}", path.display());
}

/// Every number at the largest a record may hold (2^53) is shown without
/// a panic; one above it is refused, named by its field.
#[test]
fn a_record_whose_every_number_is_extreme_is_shown_or_refused_without_a_panic() {
    let dir = scratch("untrusted-extreme");
    for (int, name) in [(1u64 << 53, "largest"), (u64::MAX, "beyond")] {
        let mut record = golden();
        extreme(&mut record, "", int);
        // Each round apart: a round listed twice is refused for that alone.
        for (i, v) in record["variants"].as_array_mut().expect("variants").iter_mut().enumerate() {
            v["repeat"] = (int - i as u64).into();
        }
        // Kept readable: the schema number, so the record is parsed at all.
        record["schema"] = 3.into();
        let run = write_run(&dir.join(name), &record);
        let run = run.to_str().expect("path");
        let html = dir.join(format!("{name}.html"));
        for args in [vec!["show", run], vec!["show", run, "--html", html.to_str().expect("path")], vec!["show", run, "-b", run]] {
            let (finished, ok, text) = bounded(&args, Duration::from_secs(60));
            assert!(finished, "memlab {args:?} did not finish");
            if int > 1 << 53 {
                assert!(!ok && text.contains("above the 2^53"), "{args:?}: {text}");
            } else {
                assert!(ok, "{args:?}: {text}");
            }
        }
    }
}

#[test]
fn a_record_cannot_embed_or_link_a_file_outside_its_run() {
    let dir = scratch("untrusted-paths");
    let mut record = golden();
    let name = record["variants"][0]["variant"]["name"].clone();
    let profile = |svg: &str, folded: &str| serde_json::json!({ "variant": name, "source": "guest", "folded": folded, "svg": svg, "samples": 1, "interval_us": 1, "sampling_ns": 0, "client_ns": 1, "rate_ratio": 1.0 });
    let fifo = dir.join("run").join("fifo.svg");
    std::fs::create_dir_all(dir.join("run")).expect("dir");
    mkfifo(&fifo);
    let html = dir.join("report.html");
    // Named out of the run: the record is refused before anything is read.
    for bad in ["/etc/passwd", "../../../../etc/passwd"] {
        record["profiles"] = serde_json::json!([profile(bad, "x.folded")]);
        let run = write_run(&dir.join("run"), &record);
        let (ok, text) = memlab(&["show", run.to_str().expect("path"), "--html", html.to_str().expect("path")]);
        assert!(!ok && text.contains("is not a relative name inside the run") && text.contains(bad), "{text}");
    }
    record["profiles"] =
        serde_json::json!([profile("fifo.svg", "javascript:alert(1)"), profile("fifo.svg", "http://example.invalid/x"), profile("fifo.svg", "fifo.folded"),]);
    let run = write_run(&dir.join("run"), &record);
    let (finished, ok, text) = bounded(&["show", run.to_str().expect("path"), "--html", html.to_str().expect("path")], Duration::from_secs(60));
    assert!(finished, "show --html hung on a FIFO the record names");
    assert!(ok, "{text}");
    let page = std::fs::read_to_string(&html).expect("report");
    assert!(!page.contains("root:"), "a file outside the run was embedded");
    let passwd = std::fs::read("/etc/passwd").unwrap_or_default();
    assert!(passwd.is_empty() || !page.contains(&base64_prefix(&passwd)), "/etc/passwd embedded as base64");
    assert!(!page.contains("javascript:") && !page.contains("href=\"http") && !page.contains("href=\"/etc"), "a scheme or absolute link");
}

/// The first 24 base64 characters of `bytes`, as a report would embed them.
fn base64_prefix(bytes: &[u8]) -> String {
    const TABLE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    bytes
        .chunks(3)
        .take(6)
        .flat_map(|c| {
            let n = (u32::from(c[0]) << 16) | (u32::from(*c.get(1).unwrap_or(&0)) << 8) | u32::from(*c.get(2).unwrap_or(&0));
            (0..4).map(move |i| TABLE[((n >> (18 - 6 * i)) & 63) as usize] as char)
        })
        .collect()
}

/// A small run with its segments kept, with the serializer a file (the
/// liar in its honest mode), so the run keeps its component.
fn kept_run(dir: &Path) -> PathBuf {
    let flush = liar_plugin("liar-flush");
    let config = dir.join("kept.toml");
    std::fs::write(
        &config,
        format!(
            "[workload]\nseed = 3\nops = 300\npartitions = {{ count = 500 }}\n\n[[variant]]\nname = \"v\"\nmemtable = \"btree\"\nallocator = \"per-row\"\nserializer = {flush:?}\n"
        ),
    )
    .expect("config");
    let out = dir.join("runs");
    let (ok, text) = memlab(&["bench", config.to_str().expect("path"), "--out", out.to_str().expect("path"), "--keep-segments", "--quiet", "--no-intervals"]);
    assert!(ok, "{text}");
    std::fs::read_dir(&out).expect("runs").flatten().map(|e| e.path()).find(|p| p.join("run.json").exists()).expect("a run")
}

#[test]
fn verify_refuses_a_fifo_or_an_endless_file_for_a_segment_and_a_swapped_component() {
    let dir = scratch("untrusted-verify");
    let run = kept_run(&dir);
    let (ok, text) = memlab(&["verify", run.to_str().expect("path")]);
    assert!(ok, "{text}");
    let segments = run.join("01-v-1");
    let data = std::fs::read_dir(&segments).expect("segments").flatten().map(|e| e.path()).find(|p| p.extension().is_some_and(|e| e == "data")).expect("data");
    let saved = std::fs::read(&data).expect("data");
    mkfifo(&data);
    let (finished, ok, text) = bounded(&["verify", run.to_str().expect("path")], Duration::from_secs(60));
    assert!(finished, "verify hung on a FIFO");
    assert!(!ok && text.contains("not a regular file") && text.contains(data.file_name().and_then(|n| n.to_str()).expect("name")), "{text}");
    std::fs::remove_file(&data).expect("rm fifo");
    std::os::unix::fs::symlink("/dev/zero", &data).expect("symlink");
    let (finished, ok, text) = bounded(&["verify", run.to_str().expect("path")], Duration::from_secs(60));
    assert!(finished && !ok && text.contains("not a regular file"), "{text}");
    std::fs::remove_file(&data).expect("rm link");
    std::fs::write(&data, saved).expect("restore");
    // A kept component swapped for other bytes is refused by its sha256.
    let component = std::fs::read_dir(run.join("components")).expect("components").flatten().map(|e| e.path()).next().expect("a kept component");
    let mut bytes = std::fs::read(&component).expect("component");
    bytes.push(0);
    std::fs::write(&component, bytes).expect("swap");
    let (ok, text) = memlab(&["verify", run.to_str().expect("path")]);
    assert!(!ok && text.contains("sha256") && text.contains("not the component the run kept"), "{text}");
}

#[test]
fn variants_beside_a_record_are_taken_only_for_its_own_run_json_and_never_dropped() {
    let dir = scratch("untrusted-variants");
    let record = golden();
    let count = record["variants"].as_array().map_or(0, Vec::len);
    let mut foreign = record["variants"][0].clone();
    foreign["variant"]["name"] = "planted".into();
    // Beside a record not named run.json: a shared temporary directory.
    std::fs::create_dir_all(dir.join("tmp/variants")).expect("dir");
    std::fs::write(dir.join("tmp/other.json"), text_of(&record)).expect("write");
    std::fs::write(dir.join(format!("tmp/variants/{count:06}.json")), text_of(&record["variants"][0])).expect("write");
    let (ok, text) = memlab(&["show", dir.join("tmp/other.json").to_str().expect("path")]);
    assert!(ok, "{text}");
    assert_eq!(text.matches("Results: ").count(), count, "variants/ taken into a record not named run.json:\n{text}");
    // Beside run.json: a variant its config never ran is refused by name.
    let run = write_run(&dir.join("run"), &record);
    std::fs::create_dir_all(dir.join("run/variants")).expect("dir");
    let planted = dir.join(format!("run/variants/{count:06}.json"));
    std::fs::write(&planted, text_of(&foreign)).expect("write");
    let (ok, text) = memlab(&["show", run.to_str().expect("path")]);
    assert!(!ok && text.contains(&format!("{count:06}.json")) && text.contains("planted"), "{text}");
    // A damaged one is an error naming it, not a silent end.
    std::fs::write(&planted, "{ not json").expect("write");
    let (ok, text) = memlab(&["show", run.to_str().expect("path")]);
    assert!(!ok && text.contains(&format!("{count:06}.json")), "{text}");
}

/// A tiny sweep config with `sweep` as its `[sweep]` table.
fn sweep_config(dir: &Path, name: &str, sweep: &str) -> PathBuf {
    let text = format!(
        "[bench]\nname = \"s\"\n\n[workload]\nseed = 5\nops = 300\npartitions = {{ count = 200 }}\n\n[[variant]]\nname = \"v\"\nmemtable = \"btree\"\nallocator = \"per-row\"\nserializer = \"lean\"\nmemtable_space = \"1MiB\"\n\n[sweep]\n{sweep}\n"
    );
    let path = dir.join(name);
    std::fs::write(&path, text).expect("config");
    path
}

/// A sweep is refused whole before its first point runs: a value only
/// the second point's plugin refuses, two values that would share a
/// folder; and a refused sweep leaves no directory behind.
#[test]
fn a_sweep_fails_before_its_first_point_and_leaves_nothing() {
    let dir = scratch("untrusted-sweeps");
    let cases = [
        ("param.toml", "over = \"allocator.chunk_size\"\nvalues = [65536, 1]", "allocator.chunk_size = 1"),
        ("folders.toml", "over = \"memtable_space\"\nvalues = [\"1 MiB\", \"1\\tMiB\"]", "would share the folder"),
    ];
    for (name, sweep, expected) in cases {
        let config = sweep_config(&dir, name, sweep);
        let out = dir.join(format!("out-{name}"));
        let (ok, text) = memlab(&["bench", config.to_str().expect("path"), "--out", out.to_str().expect("path"), "--quiet", "--no-intervals"]);
        assert!(!ok && text.contains(expected), "{name}: {text}");
        assert!(!text.contains("=== sweep point 1"), "{name}: a point ran before the sweep was refused:\n{text}");
        let left: Vec<_> = std::fs::read_dir(&out).map(|d| d.flatten().map(|e| e.path()).collect()).unwrap_or_default();
        assert!(left.is_empty(), "{name}: a refused sweep left {left:?}");
    }
}

/// Flags that would do nothing are errors, and a pair names variants
/// whatever their names hold.
#[test]
fn pairing_flags_need_a_baseline_and_take_any_variant_name() {
    let dir = scratch("untrusted-pairing");
    let mut record = golden();
    for v in record["variants"].as_array_mut().expect("variants") {
        if v["variant"]["name"] == "btree" {
            v["variant"]["name"] = "a=b".into();
        }
    }
    for v in record["config"]["variant"].as_array_mut().expect("variants") {
        if v["name"] == "btree" {
            v["name"] = "a=b".into();
        }
    }
    let run = write_run(&dir.join("run"), &record);
    let run = run.to_str().expect("path");
    for flag in [vec!["--pair", "x=y"], vec!["--by", "position"]] {
        let mut args = vec!["show", run];
        args.extend(flag.iter().copied());
        let (ok, text) = memlab(&args);
        assert!(!ok && text.contains("--baseline"), "{args:?}: {text}");
    }
    let (ok, text) = memlab(&["show", run, "-b", run, "--pair", "a=b=a=b"]);
    assert!(ok && text.contains("a=b"), "{text}");
    let (ok, text) = memlab(&["show", run, "-b", run, "--pair", "nope=a=b"]);
    assert!(!ok && text.contains("--pair `nope=a=b`"), "{text}");
}

/// `show -b` judges by the bench's interval rules, never a p-value, and
/// gives no verdict on a pair whose variants differ in what ran or where
/// (issue 36): the identical record is "the same", a changed parameter
/// or plugin, or another machine, is named and not judged, and another
/// stream refuses the comparison, each unless `--across-differences`.
#[test]
fn show_b_judges_by_intervals_and_refuses_pairs_whose_specs_differ() {
    let dir = scratch("untrusted-show-b");
    let mut base = golden();
    let machine = |cores: f64| serde_json::json!({ "cpus": 2, "cores": cores, "busy": cores + 0.1, "steal": 0.0, "load": 1.5 });
    for v in base["variants"].as_array_mut().expect("variants") {
        v["resources"]["machine"] = machine(1.8);
    }
    let base_dir = write_run(&dir.join("base"), &base);
    let show = |record: &Value, name: &str, extra: &[&str]| {
        let run = write_run(&dir.join(name), record);
        let mut args = vec!["show", run.to_str().expect("path"), "-b", base_dir.to_str().expect("path")];
        args.extend_from_slice(extra);
        memlab(&args)
    };
    let verdicts = |text: &str| text.lines().filter(|l| l.starts_with("row rate verdict")).map(str::to_string).collect::<Vec<_>>();
    // The identical record: the same, by the interval, with its machine.
    let (ok, text) = show(&base, "same", &[]);
    assert!(ok && !text.contains("p="), "{text}");
    let same = verdicts(&text);
    // Three noisy rounds a side may not settle "the same"; never a winner.
    // The golden's `btree` failed a round: it publishes nothing here either.
    assert!(same.len() == 1 && same[0].contains("1.00x [") && (same[0].contains("same (within ±") || same[0].contains("no decision")), "{text}");
    assert!(text.contains("btree: the baseline's variant failed round 3") && text.contains("it publishes no figure"), "{text}");
    assert!(text.contains("baseline 1.8 of 2 cores, 0.1 busy elsewhere"), "{text}");
    // A parameter and a plugin's bytes changed: named, not judged.
    let mut changed = base.clone();
    for v in changed["variants"].as_array_mut().expect("variants") {
        if v["variant"]["name"] == "skiplist" {
            v["variant"]["strategies"]["memtable"]["params"]["capacity"] = 32768.into();
            v["plugins"][0]["sha256"] = "0123456789abcdef".into();
        }
    }
    let (ok, text) = show(&changed, "changed", &[]);
    assert!(ok, "{text}");
    assert!(
        text.contains("`memtable_params.capacity` (none) vs 32768") && text.contains("the memtable plugin: skiplist 71a1368f7d02… vs skiplist 0123456789ab…"),
        "{text}"
    );
    let refused = verdicts(&text);
    assert!(refused.len() == 1 && refused[0].contains("not judged: the variants differ in what ran"), "{text}");
    let (ok, text) = show(&changed, "changed", &["--across-differences"]);
    assert!(ok && verdicts(&text)[0].contains("across the differences above"), "{text}");
    // Another machine: named, not judged.
    let mut busy = base.clone();
    for v in busy["variants"].as_array_mut().expect("variants") {
        v["resources"]["machine"] = machine(0.9);
    }
    let (ok, text) = show(&busy, "busy", &[]);
    assert!(ok && verdicts(&text)[0].contains("not judged: the runs saw different machines"), "{text}");
    // Another stream: no comparison at all.
    let mut other = base.clone();
    other["provenance"]["stream_fingerprint"] = "ffffffffffffffff".into();
    let (ok, text) = show(&other, "other", &[]);
    assert!(!ok && text.contains("different workloads: the stream: fingerprint 2c2150d44338ec5f vs fingerprint ffffffffffffffff"), "{text}");
    // Salted runs of one config: other bytes, one shape. Compared by the
    // shape; a different shape is another stream.
    let mut salted = [base.clone(), base.clone()];
    for (record, salt) in salted.iter_mut().zip(["0f", "f0"]) {
        record["provenance"]["stream_fingerprint"] = format!("{salt}{salt}{salt}{salt}{salt}{salt}{salt}{salt}").into();
        record["provenance"]["stream_shape"] = "5a5a5a5a5a5a5a5a".into();
    }
    let [a, b] = salted;
    let a_dir = write_run(&dir.join("salted-a"), &a);
    let judged =
        |record: &Value, name: &str| memlab(&["show", write_run(&dir.join(name), record).to_str().expect("path"), "-b", a_dir.to_str().expect("path")]);
    let (ok, text) = judged(&b, "salted-b");
    assert!(ok && !text.contains("different workloads") && verdicts(&text).len() == 1, "{text}");
    let mut reshaped = b;
    reshaped["provenance"]["stream_shape"] = "a5a5a5a5a5a5a5a5".into();
    let (ok, text) = judged(&reshaped, "reshaped");
    assert!(!ok && text.contains("different workloads: the stream: shape 5a5a5a5a5a5a5a5a vs shape a5a5a5a5a5a5a5a5"), "{text}");
}

/// Checking a config is linear in its size: 16,000 named configurations
/// and a 10,000-link `inherits` chain (21 s each when it was quadratic)
/// are checked well inside the bound, which only a quadratic check misses.
#[test]
fn a_config_of_many_configurations_and_a_long_chain_is_checked_in_linear_time() {
    let dir = scratch("untrusted-big-config");
    let mut text = String::from("[workload]\nops = 100\n\n");
    for i in 0..16_000 {
        text.push_str(&format!("[memtable.m{i}]\nplugin = \"btree\"\n\n"));
    }
    text.push_str("[allocator.a0]\nplugin = \"per-row\"\n\n");
    for i in 1..10_000 {
        text.push_str(&format!("[allocator.a{i}]\ninherits = \"a{}\"\n\n", i - 1));
    }
    // Two variants of one name: refused once the whole config is checked.
    for _ in 0..2 {
        text.push_str("[[variant]]\nname = \"v\"\nmemtable = \"m15999\"\nallocator = \"a9999\"\nserializer = \"lean\"\n\n");
    }
    let config = dir.join("big.toml");
    std::fs::write(&config, text).expect("config");
    let started = Instant::now();
    let (finished, ok, text) = bounded(&["bench", config.to_str().expect("path"), "--out", dir.join("out").to_str().expect("path")], Duration::from_secs(120));
    assert!(finished, "checking took over 120 s");
    assert!(!ok && text.contains("two variants are named `v`"), "{text}");
    eprintln!("checked in {:.1} s", started.elapsed().as_secs_f64());
}

/// An integer past TOML's range is refused with its line, in the user's
/// own digits, never run as the float it would round to.
#[test]
fn an_integer_past_i64_is_refused_with_its_line_and_digits() {
    let dir = scratch("untrusted-big-int");
    let config = sweep_config(&dir, "int.toml", "over = \"allocator.chunk_size\"\nvalues = [9223372036854775809]");
    let (ok, text) = memlab(&["bench", config.to_str().expect("path"), "--out", dir.join("out").to_str().expect("path")]);
    assert!(!ok && text.contains("9223372036854775809 is too large") && text.contains("line "), "{text}");
    assert!(!text.contains("9223372036854776000"), "{text}");
}

/// A malformed `coalescing` names what it may be, not serde's internals.
#[test]
fn a_malformed_coalescing_says_what_it_may_be() {
    let dir = scratch("untrusted-coalescing");
    for (value, expected) in [("{ window = 10, x = 1 }", "not `x`"), ("{ }", "names no window"), ("\"batch\"", "coalescing `batch` is none of")] {
        let text = format!(
            "[workload]\nops = 100\n\n[[variant]]\nname = \"v\"\nmemtable = \"btree\"\nallocator = \"per-row\"\nserializer = \"lean\"\ncoalescing = {value}\n"
        );
        let config = dir.join("c.toml");
        std::fs::write(&config, text).expect("config");
        let (ok, text) = memlab(&["bench", config.to_str().expect("path"), "--out", dir.join("out").to_str().expect("path")]);
        assert!(!ok && text.contains(expected) && text.contains("line 9") && !text.contains("wanted exactly"), "{value}: {text}");
    }
}

/// A record kept compressed (`run.json.gz`, as `benches/runs` keeps
/// them) is shown and verified as it is; one that inflates past the
/// record's limit is refused by name, not inflated until memory runs out.
#[test]
fn a_compressed_record_is_read_as_it_is_and_a_bomb_is_refused() {
    use std::io::Write;
    let dir = scratch("untrusted-gzip");
    let run = kept_run(&dir);
    let gzip = |bytes: &[u8]| {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        encoder.write_all(bytes).expect("compress");
        encoder.finish().expect("compress")
    };
    let json = run.join("run.json");
    std::fs::write(run.join("run.json.gz"), gzip(&std::fs::read(&json).expect("record"))).expect("write");
    std::fs::remove_file(&json).expect("rm");
    let (ok, text) = memlab(&["show", run.to_str().expect("path")]);
    assert!(ok && text.contains("Results: "), "{text}");
    let (ok, text) = memlab(&["verify", run.to_str().expect("path")]);
    assert!(ok && text.contains("OK"), "{text}");
    // 1 GiB and a byte of zeros: about 1 MiB on disk.
    let bomb = dir.join("bomb");
    std::fs::create_dir_all(&bomb).expect("dir");
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..1024 {
        encoder.write_all(&zeros).expect("compress");
    }
    encoder.write_all(b"0").expect("compress");
    std::fs::write(bomb.join("run.json.gz"), encoder.finish().expect("compress")).expect("write");
    let (finished, ok, text) = bounded(&["show", bomb.to_str().expect("path")], Duration::from_secs(120));
    assert!(finished && !ok && text.contains("run.json.gz") && text.contains("larger than"), "{text}");
}

/// Text that would run, draw or move the cursor if shown raw.
const HOSTILE: &str = "<script>alert(1)</script><img src=x onerror=alert(2)>\u{1b}[31m\u{7}\u{202e}\"'&";

/// Every string of `v` under a key in `keys` with `HOSTILE` appended.
fn poisoned(v: &mut Value, key: &str, keys: &[String]) {
    match v {
        Value::String(s) if keys.iter().any(|k| k == key) => s.push_str(HOSTILE),
        Value::Array(items) => items.iter_mut().for_each(|i| poisoned(i, key, keys)),
        Value::Object(map) => map.iter_mut().for_each(|(k, i)| poisoned(i, k, keys)),
        _ => {}
    }
}

/// The keys that hold a string somewhere in `v`.
fn string_keys(v: &Value, key: &str, into: &mut std::collections::BTreeSet<String>) {
    match v {
        Value::String(_) => {
            into.insert(key.to_string());
        }
        Value::Array(items) => items.iter().for_each(|i| string_keys(i, key, into)),
        Value::Object(map) => map.iter().for_each(|(k, i)| string_keys(i, k, into)),
        _ => {}
    }
}

/// Whatever string a record lets be any text (a variant's or a plugin's
/// name, a description, a path, a host's name) reaches the page escaped
/// and the terminal without a raw control character: the class, not a
/// list of fields, since each key the record takes as free text is found
/// by trying it.
#[test]
fn every_free_text_of_a_record_is_shown_escaped_on_the_page_and_the_terminal() {
    let dir = scratch("untrusted-text");
    let mut golden = golden();
    // Fields newer than the golden record, so that they are tried too.
    golden["provenance"]["stream_shape"] = "5a5a5a5a5a5a5a5a".into();
    golden["provenance"]["stream_salt"] = "0123456789abcdef0123456789abcdef".into();
    for v in golden["variants"].as_array_mut().expect("variants") {
        v["shape"] = "5a5a5a5a5a5a5a5a".into();
        v["not_probed"] = serde_json::json!([{ "kind": "memtable", "param": "mode", "why": "text" }]);
    }
    let mut keys = std::collections::BTreeSet::new();
    string_keys(&golden, "", &mut keys);
    let free: Vec<String> = keys
        .into_iter()
        .filter(|k| {
            let mut record = golden.clone();
            poisoned(&mut record, "", std::slice::from_ref(k));
            memlab::record::BenchResult::load(&write_run(&dir.join(format!("key-{k}")), &record)).is_ok()
        })
        .collect();
    // A description's text sits under its kind (`descriptions.memtable`).
    for must in ["name", "plugin", "memtable", "stream_shape", "stream_salt", "shape"] {
        assert!(free.iter().any(|k| k == must), "`{must}` is free text in a record: {free:?}");
    }
    let mut record = golden;
    poisoned(&mut record, "", &free);
    let run = write_run(&dir.join("all"), &record);
    let result = memlab::record::BenchResult::load(&run).expect("a record of hostile text loads");
    let page = memlab::report::html::render(&result);
    assert!(page.contains("&lt;script&gt;alert(1)"), "the hostile text is shown, escaped");
    for raw in ["<script>alert", "<img src=x", "\u{1b}", "\u{7}", "\u{202e}"] {
        assert!(!page.contains(raw), "the page holds {raw:?} raw (keys {free:?})");
    }
    let html = dir.join("all.html");
    let run = run.to_str().expect("path");
    for args in [vec!["show", run], vec!["show", run, "-b", run], vec!["verify", run], vec!["show", run, "--html", html.to_str().expect("path")]] {
        let out = command(&args).output().expect("memlab runs");
        for (stream, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
            let text = String::from_utf8_lossy(bytes);
            assert!(!text.contains("panicked"), "{args:?} panicked: {text}");
            assert!(!bytes.iter().any(|&b| b == 0x1b || b == 0x07) && !text.contains('\u{202e}'), "{args:?}: a raw control character on {stream}");
        }
    }
    let written = std::fs::read_to_string(&html).expect("the page is written");
    assert!(!written.contains("<script>alert") && written.contains("&lt;script&gt;"), "the written page escapes it too");
}

/// Every name a record gives under its run (the segments folder, a kept
/// log, a flame graph) is refused when it is absolute or climbs out with
/// `..`, before anything is read, and a link out of the run is refused
/// where it is followed: `verify` never checks another run's files and
/// calls them OK (issue 50). A list that names one thing twice is refused.
#[test]
fn a_name_in_a_record_never_leads_out_of_its_run() {
    let dir = scratch("untrusted-names");
    let config = dir.join("log.toml");
    let log = "commitlog = \"batched\"\ncommitlog_sync = \"batch\"\n";
    std::fs::write(&config, format!("[workload]\nseed = 3\nops = 300\npartitions = {{ count = 500 }}\n\n[[variant]]\nname = \"v\"\nmemtable = \"btree\"\nallocator = \"per-row\"\nserializer = \"lean\"\n{log}")).expect("config");
    let (ok, text) =
        memlab(&["bench", config.to_str().expect("path"), "--out", dir.join("runs").to_str().expect("path"), "--keep-segments", "--quiet", "--no-intervals"]);
    assert!(ok, "{text}");
    let run = std::fs::read_dir(dir.join("runs")).expect("runs").flatten().map(|e| e.path()).find(|p| p.join("run.json").exists()).expect("a run");
    // Another run, whole and healthy: what a crafted record would borrow.
    let other = dir.join("other");
    let (ok, text) = memlab(&["bench", config.to_str().expect("path"), "--out", other.to_str().expect("path"), "--keep-segments", "--quiet", "--no-intervals"]);
    assert!(ok, "{text}");
    let other = std::fs::read_dir(&other).expect("runs").flatten().map(|e| e.path()).find(|p| p.join("run.json").exists()).expect("a run");
    let honest = std::fs::read_to_string(run.join("run.json")).expect("record");
    let (seg, kept) = ("\"segments\": \"01-v-1\"", "\"file\": \"commitlog/log-000001.seg\"");
    assert!(honest.contains(seg) && honest.contains(kept), "{honest}");
    let abs = other.join("01-v-1").display().to_string();
    let schema = format!("\"schema\": {},", memlab::record::SCHEMA_VERSION);
    let profile = |name: &str| {
        format!(
            "{schema}\n  \"profiles\": [{{\"variant\": \"v\", \"source\": \"guest\", \"folded\": \"{name}\", \"svg\": \"ok.svg\", \"samples\": 1, \"interval_us\": 1, \"sampling_ns\": 0, \"client_ns\": 1, \"rate_ratio\": 1.0}}],"
        )
    };
    let try_record = |from: &str, to: &str| {
        std::fs::write(run.join("run.json"), honest.replacen(from, to, 1)).expect("write");
        let verified = memlab(&["verify", run.to_str().expect("path")]);
        let shown = memlab(&["show", run.to_str().expect("path"), "--html", dir.join("r.html").to_str().expect("path")]);
        (verified, shown)
    };
    // Named out of the run: refused when the record is read, by name.
    for (from, to) in [
        (seg, format!("\"segments\": \"{abs}\"")),
        (seg, "\"segments\": \"../other/01-v-1\"".to_string()),
        (kept, "\"file\": \"../../other/01-v-1/commitlog/log-000001.seg\"".to_string()),
        (kept, format!("\"file\": \"{abs}/commitlog/log-000001.seg\"")),
        (schema.as_str(), profile("/etc/passwd")),
        (schema.as_str(), profile("../x.folded")),
    ] {
        let ((ok, said), (shown_ok, shown)) = try_record(from, &to);
        assert!(!ok && said.contains("is not a relative name inside the run") && !said.contains("OK "), "{to}: {said}");
        assert!(!shown_ok && shown.contains("is not a relative name inside the run"), "{to}: {shown}");
    }
    // Linked out of the run: refused where the link is followed.
    std::os::unix::fs::symlink(other.join("01-v-1"), run.join("linked")).expect("link");
    std::os::unix::fs::symlink(other.join("01-v-1/commitlog/log-000001.seg"), run.join("01-v-1/linked.seg")).expect("link");
    for (from, to) in [(seg, "\"segments\": \"linked\""), (kept, "\"file\": \"linked.seg\"")] {
        let ((ok, said), _) = try_record(from, to);
        assert!(
            !ok && said.contains("leads out of the run's directory") && !said.contains(&format!("OK    v (repeat 1): commit log {}", &to[9..])),
            "{to}: {said}"
        );
    }
    // A kept log or a variant round listed twice.
    let twice = honest.find("\"kept\": [").map(|at| {
        let start = at + "\"kept\": [".len();
        let end = start + honest[start..].find('}').expect("an entry") + 1;
        format!("{},{}{}", &honest[..end], &honest[start..end], &honest[end..])
    });
    std::fs::write(run.join("run.json"), twice.expect("a kept log")).expect("write");
    let (ok, said) = memlab(&["verify", run.to_str().expect("path")]);
    assert!(!ok && said.contains("listed twice") && said.contains("log-000001.seg"), "{said}");
    std::fs::write(run.join("run.json"), &honest).expect("write");
    let (ok, said) = memlab(&["verify", run.to_str().expect("path")]);
    assert!(ok, "the honest record still verifies: {said}");
}
