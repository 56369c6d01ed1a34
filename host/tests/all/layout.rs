//! The shape of the tree, held by tests rather than by hand: the
//! dependency rule between the host's modules (the table in
//! ARCHITECTURE.md), read from the source itself.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use memlab::seam::{KINDS, KindSpec};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("host/ sits in the workspace").to_path_buf()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every `.rs` file under `dir`, sorted.
pub(crate) fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The module a file of `host/src` belongs to (`bench` for
/// `bench/variant.rs`), or `None` for the crate root and the binary.
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).ok()?;
    let first = rel.components().next()?.as_os_str().to_str()?;
    let name = first.strip_suffix(".rs").unwrap_or(first);
    (!matches!(name, "lib" | "main")).then(|| name.to_string())
}

/// The modules each module's code names through `crate::` (comments
/// aside; the build scripts' included files are not modules).
fn imports() -> BTreeMap<String, BTreeSet<String>> {
    let src = workspace().join("host/src");
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in rust_files(&src) {
        let Some(module) = module_of(&src, &file) else { continue };
        let into = edges.entry(module.clone()).or_default();
        if file.ends_with("plugin/build_plugins.rs") || file.ends_with("plugin/wasm_target.rs") {
            continue;
        }
        for line in read(&file).lines().map(str::trim_start).filter(|l| !l.starts_with("//")) {
            for (at, _) in line.match_indices("crate::") {
                if line[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_') {
                    continue;
                }
                let name: String = line[at + 7..].chars().take_while(|c| c.is_ascii_lowercase() || *c == '_').collect();
                if !name.is_empty() && name != module {
                    into.insert(name);
                }
            }
        }
    }
    edges
}

/// ARCHITECTURE.md's table of what each module may import: the rows
/// between its `dependencies` markers, "| `module` | `a`, `b` |".
fn allowed() -> BTreeMap<String, BTreeSet<String>> {
    let text = read(&workspace().join("ARCHITECTURE.md"));
    let start = text.find("<!-- dependencies -->").expect("ARCHITECTURE.md marks its dependency table");
    let end = text.find("<!-- /dependencies -->").expect("and its end");
    let names =
        |cell: &str| -> BTreeSet<String> { cell.split(',').map(|n| n.trim().trim_matches('`').to_string()).filter(|n| !n.is_empty() && n != "-").collect() };
    text[start..end]
        .lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l.trim().strip_prefix('|')?.strip_suffix('|')?.split('|').collect();
            let [module, may] = cells[..] else { return None };
            let module = module.trim().trim_matches('`');
            (!module.is_empty() && !module.starts_with('-') && module != "module").then(|| (module.to_string(), names(may)))
        })
        .collect()
}

#[test]
fn every_module_imports_only_what_architecture_allows() {
    let (actual, allowed) = (imports(), allowed());
    let mut wrong = Vec::new();
    for (module, uses) in &actual {
        let Some(may) = allowed.get(module) else {
            wrong.push(format!("`{module}` has no row in ARCHITECTURE.md's dependency table"));
            continue;
        };
        for used in uses.difference(may) {
            wrong.push(format!("`{module}` imports `{used}`, which its row does not allow"));
        }
    }
    for module in allowed.keys().filter(|m| !actual.contains_key(*m)) {
        wrong.push(format!("ARCHITECTURE.md lists `{module}`, which is no module of host/src"));
    }
    assert!(wrong.is_empty(), "the dependency rule is broken:\n{}", wrong.join("\n"));
}

#[test]
fn the_allowed_dependencies_have_no_cycle() {
    let allowed = allowed();
    // Kahn's algorithm: a module is placed once all it imports is.
    let mut placed: BTreeSet<&str> = BTreeSet::new();
    while placed.len() < allowed.len() {
        let next: Vec<&str> = allowed
            .iter()
            .filter(|(m, may)| !placed.contains(m.as_str()) && may.iter().all(|d| placed.contains(d.as_str()) || !allowed.contains_key(d)))
            .map(|(m, _)| m.as_str())
            .collect();
        assert!(!next.is_empty(), "the allowed imports form a cycle among {:?}", allowed.keys().filter(|m| !placed.contains(m.as_str())).collect::<Vec<_>>());
        placed.extend(next);
    }
}

/// Markers of a kind in a file, all from its descriptor: a file that
/// names every kind by one of its markers is a table of kinds, which a
/// new kind must extend. A fifth kind's row in `KINDS` gives its own.
fn kind_markers(spec: &KindSpec) -> Vec<String> {
    // The noun of its operations: `MemtableCreate` -> `Memtable`, `WriterCreate` -> `Writer`.
    let ops = format!("{:?}", spec.create).trim_end_matches("Create").to_string();
    let t = spec.sdk_trait;
    vec![
        format!("Kind::{:?}", spec.kind),
        format!("Op::{ops}"),
        format!("{t}Runtime"),
        format!("{t}Of"),
        format!("{t}Instance"),
        format!("{ops}Instance"),
        spec.world.to_string(),
        format!("feature = \"{}\"", spec.name),
        format!("\n{} = ", spec.name),
    ]
}

/// The files of the host, the SDK and the contract that name every kind.
fn tables_of_kinds() -> BTreeSet<String> {
    let root = workspace();
    let mut files: Vec<PathBuf> = [root.join("host/src"), root.join("plugins/sdk/src")].iter().flat_map(|d| rust_files(d)).collect();
    files.extend(["wit/worlds.wit", "host/Cargo.toml", "plugins/sdk/Cargo.toml", "host/build.rs"].map(|f| root.join(f)));
    files
        .into_iter()
        .filter(|f| {
            let text = read(f);
            KINDS.iter().map(kind_markers).all(|markers| markers.iter().any(|m| text.contains(m.as_str())))
        })
        .map(|f| f.strip_prefix(&root).expect("in the workspace").display().to_string())
        .collect()
}

/// ARCHITECTURE.md's list of the existing files a new kind touches.
fn listed_kind_files() -> BTreeSet<String> {
    let text = read(&workspace().join("ARCHITECTURE.md"));
    let start = text.find("<!-- kind-files -->").expect("ARCHITECTURE.md marks the files a new kind touches");
    let end = text.find("<!-- /kind-files -->").expect("and the list's end");
    text[start..end].lines().filter_map(|l| l.trim().strip_prefix("- `")?.split('`').next().map(str::to_string)).collect()
}

/// The dummy fifth kind CI builds: the existing files its patch changes,
/// and the files it creates.
fn fifth_kind_patch() -> (BTreeSet<String>, BTreeSet<String>) {
    let text = read(&workspace().join(FIFTH_KIND));
    let (mut changed, mut created) = (BTreeSet::new(), BTreeSet::new());
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let Some(paths) = line.strip_prefix("diff --git a/") else { continue };
        let (from, to) = paths.split_once(" b/").expect("a diff header names two paths");
        assert_eq!(from, to, "the patch renames {from}");
        let new = lines.peek().is_some_and(|l| l.starts_with("new file mode"));
        if new { &mut created } else { &mut changed }.insert(to.to_string());
    }
    (changed, created)
}

const FIFTH_KIND: &str = ".ci/fifth-kind.patch";

/// Files that name every kind to wire each into the stage it joins (the
/// write path, the flush, the log), not tables of kinds: a kind that
/// joins no stage, as the dummy, leaves them as they are.
const STAGES: [&str; 1] = ["host/src/bench/strategies.rs"];

#[test]
fn a_fifth_kind_changes_at_most_nine_existing_files_which_architecture_lists() {
    let (changed, created) = fifth_kind_patch();
    assert!(created.iter().any(|f| f.ends_with(".wit")), "the patch adds a kind's WIT: {created:?}");
    assert_eq!(changed, listed_kind_files(), "ARCHITECTURE.md's list of the files a new kind touches is not the patch's");
    let mut found = tables_of_kinds();
    for stage in STAGES {
        assert!(found.remove(stage), "`{stage}` no longer names every kind: drop it from STAGES");
    }
    let missed: Vec<&String> = found.difference(&changed).collect();
    assert!(missed.is_empty(), "these files name every kind, so a new kind touches them, but {FIFTH_KIND} leaves them: {missed:?}");
    assert!(changed.len() <= 9, "a new kind touches {} existing files: {changed:?}", changed.len());
    let applies = std::process::Command::new("git").args(["apply", "--check", FIFTH_KIND]).current_dir(workspace()).output().expect("git runs");
    assert!(applies.status.success(), "{FIFTH_KIND} no longer applies: {}", String::from_utf8_lossy(&applies.stderr));
}

/// Paths a doc or a WIT file cites (`benches/runs/...`, `host/src/...`),
/// with the line each is on.
fn citations(text: &str) -> Vec<(usize, String)> {
    // `../shared/` sits beside the checkout, not in it: not cited here.
    const ROOTS: [&str; 8] = ["benches/", "host/", "plugins/", "wit/", "docs/", "examples/", "fuzz/", ".ci/"];
    let mut out = Vec::new();
    let mut in_code = false;
    for (n, line) in text.lines().enumerate() {
        // A fenced block shows commands and their outputs, not citations.
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
        }
        if in_code {
            continue;
        }
        for (i, part) in line.split(['`', '(', ')', ' ', '"', '\'', ',', ';']).enumerate() {
            let path = part.trim_end_matches(['.', ':']);
            // Inside backticks or a link; placeholders and globs aside.
            let placeholder =
                path.contains(['*', '<', '{', '$']) || path.contains("NAME") || path.contains("KIND") || path.contains("NN") || path.contains("...");
            if i > 0 && ROOTS.iter().any(|r| path.starts_with(r)) && !placeholder {
                out.push((n + 1, path.to_string()));
            }
        }
    }
    out
}

/// A commit named on the line: 7 to 40 hex digits, letters and digits both.
fn names_a_commit(line: &str) -> bool {
    line.split(|c: char| !c.is_ascii_alphanumeric()).any(|w| {
        (7..=40).contains(&w.len())
            && w.bytes().all(|b| b.is_ascii_hexdigit())
            && w.bytes().any(|b| b.is_ascii_digit())
            && w.bytes().any(|b| b.is_ascii_alphabetic())
    })
}

#[test]
fn every_path_a_doc_or_wit_file_cites_exists_or_names_its_commit() {
    let root = workspace();
    let mut docs: Vec<PathBuf> = ["README.md", "ARCHITECTURE.md", "benches/README.md"].iter().map(|f| root.join(f)).collect();
    for dir in ["docs", "wit"] {
        docs.extend(
            std::fs::read_dir(root.join(dir)).expect("readable").flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "md" || e == "wit")),
        );
    }
    let mut missing = Vec::new();
    for doc in &docs {
        let text = read(doc);
        let lines: Vec<&str> = text.lines().collect();
        for (line, path) in citations(&text) {
            if !root.join(&path).exists() && !names_a_commit(lines[line - 1]) {
                missing.push(format!("{}:{line}: `{path}`", doc.strip_prefix(&root).unwrap_or(doc).display()));
            }
        }
    }
    assert!(missing.is_empty(), "cited paths that do not exist (name the commit that holds one, or cite what is here):\n{}", missing.join("\n"));
}

#[test]
fn a_citation_of_a_missing_path_is_caught_and_one_with_its_commit_is_not() {
    let text =
        "see `benches/runs/2026-01-01-x/gone/` here\nkept in git at `bc852fe`: `benches/runs/old/`\n`host/src/*.rs`\n```\nmemlab bench benches/x.toml\n```";
    assert_eq!(citations(text), [(1, "benches/runs/2026-01-01-x/gone/".to_string()), (2, "benches/runs/old/".to_string())]);
    assert!(!names_a_commit("see benches/runs/2026-01-01-x/gone/"));
    assert!(names_a_commit("kept in git at `bc852fe`"));
}
/// Functions of `host/src` longer than `most` lines: (file, name, lines).
fn long_functions(most: usize) -> Vec<(String, String, usize)> {
    let src = workspace().join("host/src");
    let mut out = Vec::new();
    for file in rust_files(&src) {
        let text = read(&file);
        let lines: Vec<&str> = text.lines().collect();
        let mut i = 0;
        while i < lines.len() {
            let line = lines[i];
            let indent = line.len() - line.trim_start().len();
            let name = line.trim_start().split("fn ").nth(1).filter(|_| is_fn(line)).and_then(|rest| rest.split(['(', '<']).next());
            if let Some(name) = name {
                // The body ends at the first line that closes at the same indent.
                let close = format!("{}}}", " ".repeat(indent));
                let end = (i..lines.len()).find(|&j| lines[j] == close || (j == i && line.trim_end().ends_with(';'))).unwrap_or(i);
                if end + 1 - i > most {
                    out.push((file.strip_prefix(&src).unwrap_or(&file).display().to_string(), name.to_string(), end + 1 - i));
                }
            }
            i += 1;
        }
    }
    out
}

fn is_fn(line: &str) -> bool {
    let t = line.trim_start();
    let t = t.strip_prefix("pub(crate) ").or_else(|| t.strip_prefix("pub(super) ")).or_else(|| t.strip_prefix("pub ")).unwrap_or(t);
    let t = t.strip_prefix("const ").unwrap_or(t);
    let t = t.strip_prefix("unsafe ").unwrap_or(t);
    let t = t.strip_prefix("extern \"C\" ").unwrap_or(t);
    t.starts_with("fn ")
}

#[test]
fn no_function_in_host_src_is_over_eighty_lines() {
    let long = long_functions(80);
    assert!(long.is_empty(), "functions over 80 lines, to split by concept: {long:?}");
}

/// The private modules of `lib.rs`, and the ones ARCHITECTURE.md names
/// as private, are one list: a module made public (or private) without
/// the doc saying so fails here.
/// Files one reads in one sitting: a file that grows past this is split
/// by concept.
#[test]
fn no_file_in_host_src_is_over_five_hundred_lines() {
    let long: Vec<(PathBuf, usize)> =
        rust_files(&workspace().join("host/src")).into_iter().map(|f| (f.clone(), read(&f).lines().count())).filter(|(_, n)| *n > 500).collect();
    assert!(long.is_empty(), "split these by concept: {long:?}");
}

#[test]
fn the_private_modules_are_the_ones_architecture_names() {
    let lib = read(&workspace().join("host/src/lib.rs"));
    let private: BTreeSet<String> = lib.lines().filter_map(|l| l.strip_prefix("mod ")?.strip_suffix(';')).map(str::to_string).collect();
    let doc = read(&workspace().join("ARCHITECTURE.md"));
    let sentence =
        doc.split("`lib.rs` keeps ").nth(1).and_then(|s| s.split(" private").next()).expect("ARCHITECTURE.md says which modules lib.rs keeps private");
    let named: BTreeSet<String> = sentence.split('`').skip(1).step_by(2).map(str::to_string).collect();
    assert!(!private.is_empty(), "lib.rs keeps no module private");
    assert_eq!(private, named, "lib.rs's private modules against ARCHITECTURE.md's");
}

/// Every file memlab writes goes through `util::files`: created
/// exclusively, never through a link (issue 66). A writer of its own
/// elsewhere (`fs::write`, `File::create`, an `OpenOptions` that creates)
/// fails this test; test code and `/proc` knobs aside.
#[test]
fn every_file_memlab_writes_goes_through_the_one_helper() {
    let src = workspace().join("host/src");
    let mut found = Vec::new();
    for file in rust_files(&src).into_iter().filter(|f| !f.ends_with("util/files.rs")) {
        let text = read(&file);
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        for (n, line) in code.lines().enumerate().filter(|(_, l)| !l.trim_start().starts_with("//") && !l.contains("\"/proc/")) {
            if ["fs::write(", "File::create(", ".create(true)", "create_new(true)"].iter().any(|w| line.contains(w)) {
                found.push(format!("{}:{}: {}", file.strip_prefix(&src).unwrap_or(&file).display(), n + 1, line.trim()));
            }
        }
    }
    assert!(found.is_empty(), "files written past util::files:\n{}", found.join("\n"));
}

/// The SDK's public face is the traits, their types and `export!`: every
/// public module of it is hidden from a plugin author's docs, and the
/// host's side of the native table compiles only with the `host` feature.
#[test]
fn the_sdk_shows_a_plugin_author_nothing_of_the_host() {
    let sdk = workspace().join("plugins/sdk/src");
    let lib = read(&sdk.join("lib.rs"));
    let lines: Vec<&str> = lib.lines().collect();
    for (i, line) in lines.iter().enumerate().filter(|(_, l)| l.starts_with("pub mod ")) {
        let attributes = lines[..i].iter().rev().take_while(|l| l.starts_with("#[") || l.starts_with("///"));
        assert!(attributes.clone().any(|a| a.contains("doc(hidden)")), "plugins/sdk/src/lib.rs:{}: `{line}` is public and not hidden", i + 1);
    }
    let native = read(&sdk.join("native/mod.rs"));
    for host_only in ["mod client;", "pub use client::"] {
        let at = native.find(host_only).unwrap_or_else(|| panic!("native/mod.rs has no `{host_only}`"));
        let before = native[..at].lines().next_back().unwrap_or_default();
        assert!(before.contains("#[cfg(feature = \"host\")]"), "`{host_only}` compiles into every plugin crate");
    }
}

/// The SDK dispatches each operation once (`Op::X =>`): a concurrent
/// build's native table goes through its kind's one dispatch and runs
/// the same loops as the serialized build, so the wasm and native runs of
/// one crate do the same work a call.
#[test]
fn the_sdk_dispatches_each_operation_once() {
    let sdk = workspace().join("plugins/sdk/src");
    let files: Vec<(PathBuf, String)> = rust_files(&sdk).into_iter().map(|f| (f.clone(), read(&f))).collect();
    for &op in memlab_sdk::Op::ALL {
        // An arm on the operation alone, or on (instance, operation).
        let arm = format!("Op::{op:?} =>");
        let paired = format!("Op::{op:?}) =>");
        let dispatching: Vec<String> = files
            .iter()
            .filter(|(_, text)| text.contains(&arm) || text.contains(&paired))
            .map(|(f, _)| f.strip_prefix(&sdk).unwrap_or(f).display().to_string())
            .collect();
        // A kind's `create` is `Made::create`'s, not a dispatch's.
        let makes = KINDS.iter().any(|k| k.create == op);
        assert_eq!(dispatching.len(), usize::from(!makes), "`{arm}` in {dispatching:?}: one dispatch an operation");
    }
}
