//! Loading plugins: every bundled one loads as its kind; foreign imports,
//! wrong versions and non-wasm bytes are refused with errors naming them.

use memlab::plugin::Source;
use memlab::registry;
use memlab::seam::{Kind, LoadCause};

use crate::support::host;

#[test]
fn every_bundled_plugin_loads_as_its_kind() {
    let host = host();
    assert!(registry::all().len() >= 3);
    for b in registry::all() {
        let plugin = host.load_as(b.name, b.kind).unwrap_or_else(|e| panic!("{}: {e}", b.name));
        assert_eq!(plugin.kind, b.kind, "{}", b.name);
        assert_eq!(plugin.sha256.len(), 64);
    }
}

#[test]
fn a_plugin_of_the_wrong_kind_is_refused() {
    let err = host().load_as("btree", Kind::Allocator).expect_err("btree is a memtable");
    assert!(matches!(err.cause, LoadCause::WrongKind(..)), "{err}");
    assert!(err.to_string().contains("btree"), "{err}");
}

fn component(wat: &str) -> Vec<u8> {
    wat::parse_str(wat).expect("valid wat")
}

#[test]
fn a_foreign_import_is_refused_by_name() {
    let bytes = component(r#"(component (import "wasi:io/error@0.2.0" (instance)))"#);
    let err = host().load_bytes("wasi-user", Source::Bundled, &bytes).expect_err("wasi is not provided");
    assert!(matches!(err.cause, LoadCause::ForeignImport(..)), "{err}");
    let message = err.to_string();
    assert!(message.contains("wasi:io/error@0.2.0") && message.contains("wasi-user"), "{message}");
}

#[test]
fn a_wrong_package_version_is_refused() {
    // A plugin built against 0.2.0, before `diagnostics.panicked`.
    let bytes = component(r#"(component (instance $i) (export "memlab:strategy/memtable@0.2.0" (instance $i)))"#);
    let err = host().load_bytes("old", Source::Bundled, &bytes).expect_err("0.2.0 is no longer spoken");
    assert!(matches!(err.cause, LoadCause::WrongVersion(..)), "{err}");
    assert!(err.to_string().contains("0.2.0") && err.to_string().contains(memlab::plugin::WIT_PACKAGE), "{err}");
}

#[test]
fn a_component_without_a_strategy_is_refused() {
    let bytes = component("(component)");
    let err = host().load_bytes("empty", Source::Bundled, &bytes).expect_err("nothing exported");
    assert!(matches!(err.cause, LoadCause::NoStrategy(..)), "{err}");
}

#[test]
fn bytes_that_are_not_wasm_are_refused() {
    let err = host().load_bytes("notes.txt", Source::Bundled, b"hello, world").expect_err("not wasm");
    assert!(matches!(err.cause, LoadCause::NotWasm(..)), "{err}");
    assert!(err.to_string().contains("notes.txt"), "{err}");
}

#[test]
fn a_core_module_without_a_component_type_is_refused() {
    let module = wat::parse_str("(module)").expect("valid wat");
    let err = host().load_bytes("bare", Source::Bundled, &module).expect_err("no strategy inside");
    // Wrapped as a component it exports nothing of memlab's.
    assert!(matches!(err.cause, LoadCause::NoStrategy(_)) && err.plugin() == Some("bare"), "{err:?}");
}

#[test]
fn a_missing_file_names_the_path() {
    let err = host().load("no/such/plugin.wasm").expect_err("missing");
    assert!(matches!(&err.cause, LoadCause::Read(path, _) if path.contains("no/such/plugin.wasm")), "{err:?}");
}

#[test]
fn an_unknown_bundled_name_says_so() {
    let err = host().load("skiplits").expect_err("typo");
    assert!(matches!(err.cause, LoadCause::UnknownBundled), "{err}");
}

#[test]
fn the_boundary_probe_takes_both_shapes() {
    let mut probe = host().abi_probe().expect("probe");
    let rows: Vec<Vec<u8>> = (0..5000).map(|i| vec![i as u8; 100]).collect();
    let ends: Vec<u32> = (1..=5000).map(|i| i * 100).collect();
    // 500 KB arguments make the probe grow its memory; calls after that reuse it.
    for _ in 0..3 {
        assert_eq!(probe.take_list(&rows).expect("list"), 5000);
        assert_eq!(probe.take_packed(&rows.concat(), &ends).expect("packed"), 5000);
    }
    assert_eq!(probe.take_list(&[]).expect("empty"), 0);
}
