//! The shape of the tree, held by tests rather than by hand: the
//! dependency rule between the host's modules (the table in
//! ARCHITECTURE.md), read from the source itself.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

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
