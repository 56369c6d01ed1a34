//! Every kind of strategy has every piece the host needs of it, walked
//! over the table of kinds: a new kind that lacks one fails here, by
//! name, instead of going unchecked. Through a real bench, a variant of
//! every kind records and shows each kind's description and counters.

use memlab::bench;
use memlab::config::BenchConfig;
use memlab::seam::{KINDS, Kind};

use crate::support::{host, options, scratch};

#[test]
fn every_kind_has_a_native_twin_a_template_a_check_and_its_phases() {
    let breakdown = memlab::record::TimeBreakdown::default();
    let phases: Vec<&str> = breakdown.parts().iter().map(|(p, _)| *p).collect();
    let dir = scratch("kinds-templates");
    let host = host();
    for spec in &KINDS {
        let kind = spec.kind;
        for plugin in std::iter::once(spec.stand_in).chain(spec.rivals) {
            assert!(memlab::native::bundled(plugin, kind).is_ok(), "{kind}: `{plugin}` has no native twin");
            assert!(memlab::registry::find_kind(plugin, kind).is_some(), "{kind}: `{plugin}` is not bundled");
        }
        let krate = memlab::scaffold(kind, &format!("new-{}", kind.name()), &dir).unwrap_or_else(|e| panic!("{kind}: {e}"));
        let lib = std::fs::read_to_string(krate.join("src/lib.rs")).expect("the template's lib.rs");
        assert!(lib.contains(spec.sdk_trait) && lib.contains(&format!("export!({}", kind.name())), "{kind}: its template does not export its trait");
        let plugin = host.load_as(spec.stand_in, kind).unwrap_or_else(|e| panic!("{kind}: {e}"));
        let described = memlab::check::describe(&host, &plugin, &[]).unwrap_or_else(|e| panic!("{kind}: check cannot describe it: {e}"));
        assert_eq!(described.name, spec.stand_in, "{kind}");
        for phase in spec.phases {
            assert!(phases.contains(phase), "{kind} owns `{phase}`, which the time breakdown has not");
        }
    }
}

/// One variant with a strategy of every kind (each kind's stand-in, from
/// the table), and one with only the kinds a variant cannot go without;
/// native, so it is quick.
fn every_kind() -> String {
    let mut text = String::from("[workload]\nseed = 48\nops = 2000\nthreads = 2\npartitions = { count = 500 }\nrows_per_batch = 10\n");
    for (name, all) in [("every kind", true), ("no log", false)] {
        text.push_str(&format!("\n[[variant]]\nname = \"{name}\"\nshards = 2\nmemtable_space = \"1MiB\"\nruntime = \"native\"\n"));
        for spec in KINDS.iter().filter(|k| all || k.optional.is_none()) {
            text.push_str(&format!("{} = \"{}\"\n", spec.name, spec.stand_in));
            spec.optional.into_iter().for_each(|line| text.push_str(&format!("{line}\n")));
        }
    }
    text
}

#[test]
fn a_variant_of_every_kind_describes_counts_and_shows_each_kind() {
    let config = BenchConfig::parse("every-kind.toml", &every_kind()).expect("config");
    assert_eq!(config.variants[0].strategies().count(), Kind::COUNT, "the config names a strategy of every kind");
    let result = bench::run(&host(), &config, &options(scratch("every-kind")), |_| {}).expect("bench");
    let v = &result.variants[0];
    assert_eq!(v.failure(), None);
    assert_eq!(v.descriptions.len(), Kind::COUNT, "every kind described and checked: {:?}", v.descriptions);
    let counters = memlab::report::comparison(&result);
    for kind in Kind::ALL {
        assert_eq!(v.descriptions.get(&kind).map(|d| d.0.as_str()), Some(v.variant.plugin(kind)), "{kind}: described under its kind");
        assert!(v.stats.get(&kind).is_some_and(|s| !s.is_empty()), "{kind}: no counters recorded");
        assert!(counters.lines().any(|l| l.starts_with(&format!("{kind} "))), "{kind}: no counters shown:\n{counters}");
        assert!(v.plugins.iter().any(|p| p.kind == kind), "{kind}: not among the plugins loaded");
    }
    assert!(memlab::report::summary(v).contains("Commit-log format"), "the log's counters in the summary");
}
