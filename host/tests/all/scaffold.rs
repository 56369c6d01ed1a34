//! `memlab new`: each kind's crate, outside memlab's tree, passes `memlab
//! check .` and benches beside the bundled ones: two commands after `new`.

use std::path::Path;
use std::process::Command;

use crate::support::scratch;

#[test]
fn a_new_plugin_of_each_kind_passes_check_and_benches_in_two_commands() {
    let dir = scratch("scaffold");
    let cache = Path::new(env!("CARGO_TARGET_TMPDIR")).join("memlab-cache");
    for kind in memlab::seam::KINDS.iter().map(|k| k.name) {
        let name = format!("my-{kind}");
        let out = Command::new(env!("CARGO_BIN_EXE_memlab")).args(["new", kind, &name, dir.to_str().expect("path")]).output().expect("memlab new");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let root = dir.join(&name);
        // memlab builds the crate itself, when asked: `memlab check . --build`.
        let memlab_in = |at: &Path, args: &[&str]| {
            let mut cmd = Command::new(env!("CARGO_BIN_EXE_memlab"));
            // No target folder of the author's: memlab's shared one.
            cmd.args(args).current_dir(at).env_remove("CARGO_TARGET_DIR").env("MEMLAB_CACHE_DIR", &cache);
            // The outer cargo's settings are for memlab's own build.
            for var in ["RUSTFLAGS", "CARGO_ENCODED_RUSTFLAGS", "CARGO_BUILD_TARGET", "CARGO_MAKEFLAGS", "MAKEFLAGS"] {
                cmd.env_remove(var);
            }
            cmd.output().expect("memlab runs")
        };
        let memlab = |args: &[&str]| memlab_in(&root, args);
        if kind == "memtable" {
            // A build script that leaves a mark and warns: it runs only
            // once `--build` asks for it, and its warning is shown.
            let script = "fn main() { std::fs::write(concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/built-here\"), b\"\").unwrap(); println!(\"cargo:warning=memlab-test: this build script ran\"); }\n";
            std::fs::write(root.join("build.rs"), script).expect("build.rs");
            let unasked = memlab(&["check", ".", "--ops", "100", "--size", "100"]);
            let said = String::from_utf8_lossy(&unasked.stderr);
            assert!(!unasked.status.success() && said.contains("outside the sandbox") && said.contains("--build"), "{said}");
            assert!(!root.join("built-here").exists(), "the build script ran unasked");
        }
        let check = memlab(&["check", ".", "--ops", "20000", "--size", "20000", "--build"]);
        if kind == "memtable" {
            // The README's form, a relative folder from the parent.
            let mut from_parent = Command::new(env!("CARGO_BIN_EXE_memlab"));
            from_parent
                .args(["check", &format!("./{name}"), "--ops", "100", "--size", "100", "--build"])
                .current_dir(&dir)
                .env_remove("CARGO_TARGET_DIR")
                .env("MEMLAB_CACHE_DIR", &cache);
            for var in ["RUSTFLAGS", "CARGO_ENCODED_RUSTFLAGS", "CARGO_BUILD_TARGET", "CARGO_MAKEFLAGS", "MAKEFLAGS"] {
                from_parent.env_remove(var);
            }
            let relative = from_parent.output().expect("memlab runs");
            assert!(relative.status.success(), "{}", String::from_utf8_lossy(&relative.stderr));
            assert!(root.join("built-here").exists(), "the build script did not run with --build");
            assert!(String::from_utf8_lossy(&check.stderr).contains("memlab-test: this build script ran"), "{}", String::from_utf8_lossy(&check.stderr));
        }
        let text = String::from_utf8_lossy(&check.stdout);
        assert!(check.status.success() && text.contains("7 of 7 properties passed"), "{kind}: {text}{}", String::from_utf8_lossy(&check.stderr));
        // The second command, from the parent folder as the README has it:
        // the config names the crate as "." (its own folder) and holds its
        // workload inline, so it needs no absolute path.
        let bench = std::fs::read_to_string(root.join("bench.toml")).expect("bench.toml");
        assert!(bench.contains(&format!("{kind} = \".\"")) && !bench.contains(&root.display().to_string()), "{bench}");
        assert!(bench.contains("[bench.decide]") && bench.contains("ops = 120000"), "{bench}");
        std::fs::write(root.join("bench.toml"), bench.replace("ops = 120000", "ops = 1000")).expect("smaller bench");
        let config = format!("{name}/bench.toml");
        let run = memlab_in(&dir, &["bench", &config, "--quiet", "--no-intervals", "--out", "runs", "--repeats", "1", "--build"]);
        let report = format!("{}{}", String::from_utf8_lossy(&run.stdout), String::from_utf8_lossy(&run.stderr));
        assert!(run.status.success() && report.matches("Verified").count() == 3, "{kind}: {report}");
        assert_eq!(report.matches("memlab: building").count(), 1, "{kind}: each step is said once: {report}");
        assert!(
            std::fs::read_to_string(root.join("rust-toolchain.toml")).is_ok_and(|t| t.contains("channel = \"1.95.0\"")),
            "the crate pins memlab's toolchain"
        );
    }
    // The crates shared one target folder: wit-bindgen was built once for
    // all of them, which is what makes a second crate's first build quick.
    let deps = cache.join("plugin-target/wasm32-unknown-unknown/release/deps");
    let bindgen = std::fs::read_dir(&deps).expect("the shared target folder").filter_map(Result::ok).filter(|e| {
        let name = e.file_name().to_string_lossy().into_owned();
        name.starts_with("libwit_bindgen-") && name.ends_with(".rlib")
    });
    assert_eq!(bindgen.count(), 1, "every crate memlab built shares {}", deps.display());
    same_name_in_two_folders(&dir, &cache);
    a_slow_build_spends_none_of_the_budget(&dir, &cache);
    native_beside_wasm(&dir, &cache);
    let again = Command::new(env!("CARGO_BIN_EXE_memlab")).args(["new", "memtable", "my-memtable", dir.to_str().expect("path")]).output().expect("memlab new");
    assert!(!again.status.success() && String::from_utf8_lossy(&again.stderr).contains("already exists"));
}

fn memlab_at(dir: &Path, cache: &Path, args: &[&str]) -> (bool, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_memlab"));
    cmd.args(args).current_dir(dir).env_remove("CARGO_TARGET_DIR").env("MEMLAB_CACHE_DIR", cache);
    for var in ["RUSTFLAGS", "CARGO_ENCODED_RUSTFLAGS", "CARGO_BUILD_TARGET", "CARGO_MAKEFLAGS", "MAKEFLAGS"] {
        cmd.env_remove(var);
    }
    let out = cmd.output().expect("memlab runs");
    // A signal (an abort from a panic across the C ABI) is no exit code.
    assert!(out.status.code().is_some(), "memlab died of a signal: {}", String::from_utf8_lossy(&out.stderr));
    (out.status.success(), format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
}

/// `--budget-s` bounds the plugin's calls, not its build: a crate whose
/// build script sleeps past the budget still passes (CI once failed the
/// scaffold's check because a slow build under load had spent it).
fn a_slow_build_spends_none_of_the_budget(dir: &Path, cache: &Path) {
    let out = Command::new(env!("CARGO_BIN_EXE_memlab")).args(["new", "memtable", "slow-build", dir.to_str().expect("path")]).output().expect("memlab new");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let script = "fn main() { std::thread::sleep(std::time::Duration::from_secs(12)); }\n";
    std::fs::write(dir.join("slow-build/build.rs"), script).expect("build.rs");
    let (ok, said) = memlab_at(dir, cache, &["check", "./slow-build", "--ops", "100", "--size", "100", "--build", "--budget-s", "8"]);
    assert!(ok && said.contains("7 of 7 properties passed"), "{said}");
}

/// Every kind's new crate, built for the host with `--build --native`,
/// runs natively through the same seam as its wasm build, on one stream:
/// both verified, the same rows out, the Fidelity section judging them;
/// without `--native` it is refused, and a native panic fails its
/// variant with its message instead of aborting memlab.
fn native_beside_wasm(dir: &Path, cache: &Path) {
    let variant = |name: &str, runtime: &str| {
        format!(
            "[[variant]]\nname = \"{name}\"\nmemtable = \"./my-memtable\"\nallocator = \"./my-allocator\"\nserializer = \"./my-serializer\"\ncommitlog = \"./my-commitlog\"\nruntime = \"{runtime}\"\n\n"
        )
    };
    let config = format!(
        "[workload]\nseed = 5\nops = 3000\nthreads = 2\npartitions = {{ count = 500 }}\n\n[bench]\nrepeats = 2\n\n{}{}",
        variant("wasm", "wasm"),
        variant("native", "native")
    );
    std::fs::write(dir.join("native.toml"), config).expect("config");
    let (ok, said) = memlab_at(dir, cache, &["bench", "native.toml", "--quiet", "--no-intervals", "--out", "native", "--build"]);
    assert!(!ok && said.contains("--native") && said.contains("outside the sandbox"), "{said}");
    let (ok, said) = memlab_at(dir, cache, &["bench", "native.toml", "--quiet", "--no-intervals", "--out", "native", "--build", "--native"]);
    assert!(ok && said.contains("Fidelity") && said.matches("Verified").count() >= 2, "{said}");
    let saved = std::fs::read_dir(dir.join("native")).expect("runs").filter_map(Result::ok).map(|e| e.path().join("run.json")).find(|p| p.is_file());
    let record = memlab::record::BenchResult::load(&saved.expect("a record")).expect("record");
    let of = |name: &str| record.variants.iter().find(|v| v.variant.name == name).expect("variant");
    let (wasm, native) = (of("wasm"), of("native"));
    let completed = memlab::record::Outcome::Completed;
    assert!(wasm.outcome == completed && native.outcome == completed, "{said}");
    assert_eq!(native.plugins.len(), 4, "every kind loaded natively");
    for p in &native.plugins {
        assert!(p.sha256.len() == 64 && wasm.plugins.iter().all(|w| w.sha256 != p.sha256), "a loaded library's own sha256: {}", p.sha256);
    }
    assert_eq!(wasm.descriptions, native.descriptions, "both builds describe themselves alike");
    let state = |v: &memlab::record::VariantResult| v.verified.as_ref().map(|f| (f.keys, f.digest));
    assert!(state(wasm).is_some() && state(wasm) == state(native), "one stream, the same state read back");
    // `check --native` runs a crate both ways: the memtable's suite again
    // natively, and the serializer's bytes native against wasm.
    for (name, agrees) in [("my-memtable", "differential+cursor"), ("my-serializer", "native-agrees")] {
        let (ok, said) = memlab_at(dir, cache, &["check", &format!("./{name}"), "--ops", "2000", "--size", "2000", "--build", "--native"]);
        let native = said.split_once("natively").map(|(_, rest)| rest).unwrap_or_default();
        assert!(ok && native.lines().any(|l| l.contains("PASS") && l.contains(agrees)) && !said.contains("FAIL"), "{name}: {said}");
    }
    // A panic inside the loaded library comes back as the variant's failure.
    changed_memtable(dir, "panicky", "        assert!(self.map.len() < 50, \"memlab-test: a native panic\");\n");
    let config = "[workload]\nseed = 5\nops = 3000\nthreads = 1\npartitions = { count = 500 }\n\n[bench]\nrepeats = 1\n\n[[variant]]\nname = \"panics\"\nmemtable = \"./panicky/my-memtable\"\nallocator = \"per-row\"\nserializer = \"lean\"\nruntime = \"native\"\n";
    std::fs::write(dir.join("panics.toml"), config).expect("config");
    let (ok, said) = memlab_at(dir, cache, &["bench", "panics.toml", "--quiet", "--no-intervals", "--out", "panics", "--build", "--native"]);
    assert!(!ok && said.contains("memlab-test: a native panic") && said.contains("./panicky/my-memtable"), "{said}");
    // A second program (issue 49, class 8): a native build alone that does
    // busy work an insert. Both builds hold every contract, so it publishes,
    // and the Fidelity section flags the pair instead of judging it.
    let spin = "        #[cfg(not(target_arch = \"wasm32\"))]\n        { let t = std::time::Instant::now(); while t.elapsed() < std::time::Duration::from_micros(20) {} }\n";
    changed_memtable(dir, "busy", spin);
    let busy = |name: &str, runtime: &str| {
        format!(
            "[[variant]]\nname = \"{name}\"\nmemtable = \"./busy/my-memtable\"\nallocator = \"per-row\"\nserializer = \"lean\"\nruntime = \"{runtime}\"\n\n"
        )
    };
    let config = format!(
        "[workload]\nseed = 5\nops = 3000\nthreads = 1\npartitions = {{ count = 500 }}\n\n[bench]\nrepeats = 2\n\n{}{}",
        busy("wasm", "wasm"),
        busy("native", "native")
    );
    std::fs::write(dir.join("busy.toml"), config).expect("config");
    let (ok, said) = memlab_at(dir, cache, &["bench", "busy.toml", "--quiet", "--no-intervals", "--out", "busy", "--build", "--native"]);
    assert!(ok && said.lines().any(|l| l.starts_with("(!) `") && l.contains("outruns its native one")), "{said}");
}

/// A copy of the new memtable crate under `dir/<folder>/`, with `line`
/// where the template's insert finds the key's slot.
fn changed_memtable(dir: &Path, folder: &str, line: &str) {
    let changed = dir.join(folder).join("my-memtable");
    for file in ["Cargo.toml", "rust-toolchain.toml", "src/lib.rs"] {
        std::fs::create_dir_all(changed.join(file).parent().expect("parent")).expect("folder");
        let text = std::fs::read_to_string(dir.join("my-memtable").join(file)).expect("the crate");
        let marked = "        // YOUR IDEA: how your index finds (or makes) the key's slot.\n";
        assert!(file != "src/lib.rs" || text.contains(marked), "the template's insert moved");
        std::fs::write(changed.join(file), text.replace(marked, line)).expect("copy");
    }
}

/// Two crates of one package name, in two folders, build to one path of
/// the shared target: each variant still runs its own crate's bytes,
/// however often a bench loads them.
fn same_name_in_two_folders(dir: &Path, cache: &Path) {
    let other = dir.join("other/my-memtable");
    std::fs::create_dir_all(&other).expect("folder");
    for file in ["Cargo.toml", "rust-toolchain.toml", "src/lib.rs"] {
        std::fs::create_dir_all(other.join(file).parent().expect("parent")).expect("folder");
        let text = std::fs::read_to_string(dir.join("my-memtable").join(file)).expect("the first crate");
        // Another version: other bytes, since `describe` says it.
        std::fs::write(other.join(file), text.replacen("version = \"0.1.0\"", "version = \"0.2.0\"", 1)).expect("copy");
    }
    let variant = |name: &str, path: &str| format!("[[variant]]\nname = \"{name}\"\nmemtable = \"{path}\"\nallocator = \"per-row\"\nserializer = \"lean\"\n\n");
    let config = format!(
        "[workload]\nseed = 3\nops = 600\nthreads = 1\npartitions = {{ count = 100 }}\n\n[bench]\nrepeats = 2\n\n{}{}",
        variant("first", "./my-memtable"),
        variant("second", "./other/my-memtable")
    );
    std::fs::write(dir.join("both.toml"), config).expect("config");
    // Twice, in two processes: in the second, cargo calls the first crate
    // fresh while the shared artifact path holds the second's build.
    for pass in 1..=2 {
        let out = format!("both-{pass}");
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_memlab"));
        cmd.args(["bench", "both.toml", "--quiet", "--no-intervals", "--out", &out, "--build"])
            .current_dir(dir)
            .env_remove("CARGO_TARGET_DIR")
            .env("MEMLAB_CACHE_DIR", cache);
        for var in ["RUSTFLAGS", "CARGO_ENCODED_RUSTFLAGS", "CARGO_BUILD_TARGET", "CARGO_MAKEFLAGS", "MAKEFLAGS"] {
            cmd.env_remove(var);
        }
        let run = cmd.output().expect("memlab runs");
        assert!(run.status.success(), "{}{}", String::from_utf8_lossy(&run.stdout), String::from_utf8_lossy(&run.stderr));
        let saved =
            std::fs::read_dir(dir.join(&out)).expect("runs").filter_map(Result::ok).map(|e| e.path().join("run.json")).find(|p| p.is_file()).expect("a record");
        let record = memlab::record::BenchResult::load(&saved).expect("record");
        for v in &record.variants {
            let version = &v.descriptions[&memlab::seam::Kind::Memtable].1;
            let wanted = if v.variant.name == "first" { "0.1.0" } else { "0.2.0" };
            assert_eq!(version, wanted, "pass {pass}: round {} of `{}` ran the other folder's crate", v.repeat, v.variant.name);
        }
    }
}

/// `memlab new --help` lists every kind, from the table of kinds.
#[test]
fn new_lists_every_kind_in_its_help() {
    let (ok, text) = crate::support::memlab(&["new", "--help"]);
    assert!(ok, "{text}");
    let dir = scratch("new-help");
    for kind in memlab::seam::Kind::ALL {
        assert!(text.contains(kind.name()), "`{kind}` missing from:\n{text}");
        // Each template says how its calls arrive and what it is given.
        let (ok, said) = crate::support::memlab(&["new", kind.name(), kind.name(), dir.to_str().expect("utf-8")]);
        assert!(ok, "{said}");
        let lib = std::fs::read_to_string(dir.join(kind.name()).join("src/lib.rs")).expect("the template");
        assert!(lib.contains("How calls arrive:"), "{kind}: the template does not say how calls arrive");
        assert!(
            ["What a row is:", "What an entry is:", "What a record is:"].iter().any(|w| lib.contains(w)),
            "{kind}: the template does not say what it is given"
        );
    }
}
