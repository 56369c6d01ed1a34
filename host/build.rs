//! Builds the bundled plugins for wasm32-unknown-unknown and wraps each core
//! module into a component with wit-component, so the `memlab` binary can
//! embed them. On a machine where rustup will not install the target by
//! itself (`RUSTUP_AUTO_INSTALL=0`), this adds it and says so.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, exit};

include!("src/plugin/wasm_target.rs");
include!("src/plugin/build_plugins.rs");
const TARGET: &str = WASM_TARGET;

/// A bundled strategy: a plugin crate the host depends on.
struct Bundled {
    krate: String,
    /// Its kind, as config and the WIT world name it.
    kind: String,
}

/// The kinds of strategy, in pipeline order: the worlds `wit/worlds.wit`
/// declares as `world KIND-plugin`. The WIT is where a kind is declared;
/// a lib test holds `seam::KINDS` to the same list.
fn kinds(workspace: &Path) -> Vec<String> {
    let path = workspace.join("wit/worlds.wit");
    let text = fs::read_to_string(&path).unwrap_or_else(|e| fail(&format!("reading {}: {e}", path.display())));
    text.lines().filter_map(|l| l.trim().strip_prefix("world ")?.strip_suffix(" {")?.strip_suffix("-plugin").map(str::to_string)).collect()
}

/// The registry's table: every `[dependencies]` entry of host/Cargo.toml
/// whose crate declares `[package.metadata.memlab] kind`. The dependency
/// line is the one place a bundled strategy is listed.
fn bundled(manifest_dir: &Path, kinds: &[String]) -> Vec<Bundled> {
    let manifest = read_toml(&manifest_dir.join("Cargo.toml"));
    let mut bundled = Vec::new();
    let deps = manifest.get("dependencies").and_then(toml::Value::as_table).cloned().unwrap_or_default();
    for (krate, spec) in &deps {
        let Some(path) = spec.get("path").and_then(toml::Value::as_str) else { continue };
        let plugin_manifest = manifest_dir.join(path).join("Cargo.toml");
        let plugin = read_toml(&plugin_manifest);
        let kind = plugin.get("package").and_then(|p| p.get("metadata")).and_then(|m| m.get("memlab")).and_then(|m| m.get("kind"));
        let Some(kind) = kind else { continue };
        let Some(kind) = kinds.iter().find(|name| Some(name.as_str()) == kind.as_str()) else {
            let names: Vec<String> = kinds.iter().map(|name| format!("{name:?}")).collect();
            fail(&format!("{}: [package.metadata.memlab] kind must be one of {}", plugin_manifest.display(), names.join(", ")))
        };
        bundled.push(Bundled { krate: krate.clone(), kind: kind.clone() });
    }
    let order = |kind: &str| kinds.iter().position(|k| k == kind);
    bundled.sort_by(|a, b| (order(&a.kind), &a.krate).cmp(&(order(&b.kind), &b.krate)));
    bundled
}

fn read_toml(path: &Path) -> toml::Table {
    let text = fs::read_to_string(path).unwrap_or_else(|e| fail(&format!("reading {}: {e}", path.display())));
    text.parse().unwrap_or_else(|e| fail(&format!("{}: {e}", path.display())))
}

/// The strategy type a bundled crate exports.
fn strategy(b: &Bundled) -> String {
    format!("{}::MemlabStrategy", b.krate.replace('-', "_"))
}

/// One row of the generated registry table (the components); the SDK
/// names each kind's trait by the kind's name in `__kinds`.
fn registry_row(b: &Bundled, component_path: &Path) -> String {
    format!(
        "    Bundled {{ name: <{} as memlab_sdk::__kinds::{kind}>::NAME, kind: Kind::named({kind:?}), crate_name: {:?}, component: include_bytes!({:?}) }},\n",
        strategy(b),
        b.krate,
        component_path.display().to_string(),
        kind = b.kind,
    )
}

/// One row of the generated table of native twins: the crate's native
/// table, which `export!` emits (`native` checks its kind and name).
fn twin_row(b: &Bundled) -> String {
    format!("    &{}::MEMLAB_NATIVE,\n", b.krate.replace('-', "_"))
}

fn main() {
    let manifest_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let workspace = manifest_dir.parent().expect("host/ sits in the workspace").to_path_buf();
    let out_dir = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    println!("cargo:rerun-if-changed={}", workspace.join("plugins").display());
    println!("cargo:rerun-if-changed={}", workspace.join("wit").display());
    // The plugin profile lives in the workspace manifest.
    println!("cargo:rerun-if-changed={}", workspace.join("Cargo.toml").display());
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=src/plugin/build_plugins.rs");
    println!("cargo:rerun-if-changed={}", manifest_dir.join("Cargo.toml").display());
    provenance(&workspace);

    ensure_target(&workspace);
    let target_dir = env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| workspace.join("target")).join("wasm-plugins");
    let bundled = bundled(&manifest_dir, &kinds(&workspace));
    build_plugins(&workspace, &target_dir, bundled.iter().map(|b| b.krate.as_str()), "the bundled plugins");

    let mut table = String::from("&[\n");
    let mut twins = String::from("&[\n");
    for b in &bundled {
        twins.push_str(&twin_row(b));
        let module_path = target_dir.join(TARGET).join("plugin").join(format!("{}.wasm", b.krate.replace('-', "_")));
        let component = componentize(&module_path);
        let component_path = out_dir.join(format!("{}.component.wasm", b.krate));
        fs::write(&component_path, component).unwrap_or_else(|e| fail(&format!("writing {}: {e}", component_path.display())));
        table.push_str(&registry_row(b, &component_path));
    }
    table.push(']');
    twins.push(']');
    fs::write(out_dir.join("registry.rs"), table).unwrap_or_else(|e| fail(&format!("writing registry.rs: {e}")));
    fs::write(out_dir.join("twins.rs"), twins).unwrap_or_else(|e| fail(&format!("writing twins.rs: {e}")));
    fs::write(out_dir.join("templates.rs"), templates(&manifest_dir, &kinds(&workspace))).unwrap_or_else(|e| fail(&format!("writing templates.rs: {e}")));
    fs::write(out_dir.join("wit_files.rs"), wit_files(&workspace)).unwrap_or_else(|e| fail(&format!("writing wit_files.rs: {e}")));
    println!("cargo:rustc-env=MEMLAB_WIT_VERSION={}", wit_version(&workspace));
}

/// The WIT package's version, from its one declaration in `worlds.wit`.
fn wit_version(workspace: &Path) -> String {
    let path = workspace.join("wit/worlds.wit");
    let text = fs::read_to_string(&path).unwrap_or_else(|e| fail(&format!("reading {}: {e}", path.display())));
    text.lines()
        .find_map(|l| l.trim().strip_prefix("package memlab:strategy@")?.strip_suffix(';').map(str::to_string))
        .unwrap_or_else(|| fail(&format!("{}: no `package memlab:strategy@VERSION;` line", path.display())))
}

/// Each kind's plugin template for `memlab new`: `src/scaffold/KIND.rs.in`,
/// which every kind must have.
fn templates(manifest_dir: &Path, kinds: &[String]) -> String {
    let dir = manifest_dir.join("src/scaffold");
    println!("cargo:rerun-if-changed={}", dir.display());
    let rows: Vec<String> = kinds
        .iter()
        .map(|kind| {
            let path = dir.join(format!("{kind}.rs.in"));
            if !path.is_file() {
                fail(&format!("{}: kind `{kind}` has no plugin template", path.display()));
            }
            format!("    ({kind:?}, include_str!({:?})),\n", path.display().to_string())
        })
        .collect();
    format!("&[\n{}]", rows.concat())
}

/// The WIT package's files, embedded for `memlab bindings c`.
fn wit_files(workspace: &Path) -> String {
    let dir = workspace.join("wit");
    let mut names: Vec<String> = fs::read_dir(&dir)
        .unwrap_or_else(|e| fail(&format!("reading {}: {e}", dir.display())))
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".wit"))
        .collect();
    names.sort();
    let rows: Vec<String> = names.iter().map(|n| format!("    ({n:?}, include_str!({:?})),\n", dir.join(n).display().to_string())).collect();
    format!("&[\n{}]", rows.concat())
}

/// `rust-toolchain.toml` lists the target, but rustup installs it only when
/// auto-install is on; add it here so the README's two commands suffice.
fn ensure_target(workspace: &Path) {
    match ensure_wasm_target(workspace) {
        Ok(Some(command)) => println!("cargo:warning=memlab: installed the {TARGET} target (`{command}`) to build the bundled plugins"),
        Ok(None) => {}
        Err(e) => fail(&e),
    }
}

/// Versions the run reports carry: wasmtime's from Cargo.lock, and the
/// git commit the host was built from (when built from a checkout).
fn provenance(workspace: &Path) {
    let lock = workspace.join("Cargo.lock");
    println!("cargo:rerun-if-changed={}", lock.display());
    let text = fs::read_to_string(&lock).unwrap_or_default();
    let wasmtime = text
        .split("[[package]]")
        .find(|p| p.contains("\nname = \"wasmtime\"\n"))
        .and_then(|p| p.lines().find_map(|l| l.strip_prefix("version = ")))
        .map_or("unknown".to_string(), |v| v.trim_matches('"').to_string());
    println!("cargo:rustc-env=MEMLAB_WASMTIME_VERSION={wasmtime}");
    let git = workspace.join(".git");
    for watched in ["HEAD", "refs/heads"] {
        if git.join(watched).exists() {
            println!("cargo:rerun-if-changed={}", git.join(watched).display());
        }
    }
    let commit = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(workspace)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map_or("unknown".to_string(), |o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    println!("cargo:rustc-env=MEMLAB_GIT_COMMIT={commit}");
}
