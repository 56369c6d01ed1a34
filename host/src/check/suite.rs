//! `check`'s table of kinds: what each kind is held to (its
//! properties), how an instance of it describes itself, what it does on
//! `defaults`' fixed workload, and what its native build is held to.
//! Adding a kind adds a row here; the layer itself never matches on one.

use std::sync::Arc;

use memlab_sdk::Description;

use super::{CheckOptions, Properties, Property, ShardSubject, allocator, commitlog, defaults, memtable, race, serializer};
use crate::plugin::{Plugin, PluginHost};
use crate::seam::Strategy;
use crate::seam::{Kind, SeamError};

type Params<'a> = &'a [(String, String)];
type DescribeFn = fn(&Arc<PluginHost>, &Arc<Plugin>, Params<'_>) -> Result<Description, SeamError>;
type TraceFn = fn(&Arc<PluginHost>, &Arc<Plugin>, Params<'_>) -> Result<String, String>;

/// One kind's row of the table.
pub(super) struct Suite {
    pub kind: Kind,
    /// Every property, in the order they run.
    pub properties: fn(&Arc<PluginHost>, &Arc<Plugin>, &CheckOptions) -> Properties,
    /// `describe()` of an instance created with the parameters.
    pub describe: DescribeFn,
    /// What the instance does on `defaults`' fixed workload.
    pub trace: TraceFn,
    /// The crate built for this machine, checked against its wasm build.
    pub natively: fn(&Arc<PluginHost>, &Arc<Plugin>, &Strategy, &CheckOptions) -> Properties,
}

/// Every kind's row, in `Kind::ALL`'s order.
pub(super) const SUITES: [Suite; Kind::COUNT] = [
    Suite { kind: Kind::Memtable, properties: memtable::check, describe: in_shard, trace: shard_trace, natively: whole_suite },
    Suite { kind: Kind::Allocator, properties: allocator::check, describe: in_shard, trace: shard_trace, natively: whole_suite },
    Suite {
        kind: Kind::Serializer,
        properties: serializer::check,
        describe: |host, plugin, params| host.strategy(plugin).serializer(params, 0)?.describe(),
        trace: |host, plugin, params| serializer::trace(host, plugin, params),
        natively: |host, plugin, native, options| {
            agreeing(options, || agree(serializer::trace(host, plugin, &options.params), serializer::trace_of(native.serializer(&options.params, 0))))
        },
    },
    Suite {
        kind: Kind::CommitLog,
        properties: commitlog::check,
        describe: |host, plugin, params| host.strategy(plugin).commitlog_format(params, 0)?.describe(),
        trace: |host, plugin, params| commitlog::trace(host, plugin, params),
        natively: |host, plugin, native, options| {
            agreeing(options, || agree(commitlog::trace(host, plugin, &options.params), commitlog::trace_of(native.commitlog_format(&options.params, 0))))
        },
    },
];

/// `kind`'s row.
pub(super) fn of(kind: Kind) -> &'static Suite {
    let suite = &SUITES[kind as usize];
    debug_assert_eq!(suite.kind, kind, "SUITES is in Kind::ALL's order");
    suite
}

/// A memtable or allocator describes itself from a shard, beside its
/// bundled partner.
fn in_shard(host: &Arc<PluginHost>, plugin: &Arc<Plugin>, params: Params<'_>) -> Result<Description, SeamError> {
    let options = CheckOptions::new(params.to_vec(), crate::seam::secret());
    ShardSubject::with_partner(host, plugin, &options)?.described(params)
}

/// The trace's pool is drawn by the process's secret: the same for the
/// two traces `defaults` compares, unknown to the plugin.
fn shard_trace(host: &Arc<PluginHost>, plugin: &Arc<Plugin>, params: Params<'_>) -> Result<String, String> {
    let options = CheckOptions::new(params.to_vec(), crate::seam::secret());
    let subject = ShardSubject::new(host, plugin, &options).map_err(|p| p.failure.unwrap_or_default())?;
    defaults::shard_trace(&subject, params)
}

/// A memtable's or allocator's native build runs the whole suite again,
/// through native shards (`options.native` is set), and a concurrent one
/// races writers against a reader as well.
fn whole_suite(host: &Arc<PluginHost>, plugin: &Arc<Plugin>, _: &Strategy, options: &CheckOptions) -> Properties {
    let mut properties = (of(plugin.kind).properties)(host, plugin, options);
    if let Ok(subject) = ShardSubject::new(host, plugin, options) {
        properties.maybe(race::RACES, || race::property(&subject, options));
    }
    properties
}

const AGREES: &str = "native-agrees";

/// The one property of a serializer's or log format's native build.
fn agreeing(options: &CheckOptions, agree: impl FnOnce() -> Property) -> Properties {
    let mut properties = Properties::new(options.only.as_deref());
    properties.run(AGREES, agree);
    properties
}

/// A serializer's or log format's native build must write the wasm
/// build's bytes on `defaults`' workload.
fn agree(wasm: Result<String, String>, native: Result<String, String>) -> Property {
    match (wasm, native) {
        (Ok(w), Ok(n)) if w == n => Property::pass(AGREES, "the native build describes itself and writes the same bytes as the wasm build"),
        (Ok(w), Ok(n)) => Property::fail(AGREES, format!("the wasm build {w}; the native build {n}")),
        (Err(e), _) => Property::fail(AGREES, format!("the wasm build: {e}")),
        (_, Err(e)) => Property::fail(AGREES, format!("the native build: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::{Kind, SUITES};

    #[test]
    fn the_table_has_every_kind_in_order() {
        assert_eq!(SUITES.map(|s| s.kind), Kind::ALL);
    }
}
