//! Turns a variant's strategy names into factories: wasm components
//! loaded through the plugin host, or the native twins. Either way the
//! factories hand out the seam's checked types.

use std::sync::Arc;
use std::time::Duration;

use crate::config::{Runtime, Variant, params};
use crate::flush::SerializerFactory;
use crate::native;
use crate::plugin::{Plugin, PluginHost};
use crate::pool::MemoryPool;
use crate::record::PluginInfo;
use crate::seam::{Kind, LogFormat, SeamError, Shard};
use crate::segment::LoadedSegment;
use crate::verify::ReaderFactory;
use crate::write_path::ShardFactory;

/// A variant's strategies, ready to build shards, flush writers and readers.
pub(super) struct Strategies {
    pub(super) plugins: Vec<PluginInfo>,
    pub(super) shard: Box<ShardFactory>,
    pub(super) serializer: Box<SerializerFactory>,
    pub(super) reader: Box<ReaderFactory<'static>>,
    /// Each shard's commit-log format, when the variant keeps a log.
    pub(super) log: Option<Box<LogFactory>>,
}

/// Creates shard `i`'s commit-log format.
pub(super) type LogFactory = dyn Fn(usize) -> Result<LogFormat, SeamError> + Send + Sync;

fn info(plugin: &Plugin) -> PluginInfo {
    PluginInfo { kind: plugin.kind, name: plugin.name.clone(), sha256: plugin.sha256.clone(), load: plugin.load_time, cache_hit: plugin.cache_hit }
}

pub(super) fn strategies(host: &Arc<PluginHost>, v: &Variant, pool: &Arc<MemoryPool>) -> Result<Strategies, SeamError> {
    let (mp, ap, sp) = (params(&v.memtable_params), params(&v.allocator_params), params(&v.serializer_params));
    match v.runtime {
        Runtime::Wasm => {
            let memtable = host.load_as(&v.memtable, Kind::Memtable)?;
            let allocator = host.load_as(&v.allocator, Kind::Allocator)?;
            let serializer = host.load_as(&v.serializer, Kind::Serializer)?;
            let plugins = vec![info(&memtable), info(&allocator), info(&serializer)];
            let (h, p) = (Arc::clone(host), Arc::clone(pool));
            let checks = Checks::of(v);
            let shard = Box::new(move |i| h.shard(&memtable, &mp, &allocator, &ap, Arc::clone(&p), i).map(|s| checks.apply(s)));
            let (h, s, sp2) = (Arc::clone(host), Arc::clone(&serializer), sp.clone());
            let serializer_factory = Box::new(move |part| h.serializer(&s, &sp2, part));
            let reader = wasm_reader(host, serializer, sp);
            let mut plugins = plugins;
            let log = match v.commitlog.as_str() {
                "" => None,
                name => {
                    let plugin = host.load_as(name, Kind::CommitLog)?;
                    plugins.push(info(&plugin));
                    let (h, lp) = (Arc::clone(host), params(&v.commitlog_params));
                    Some(Box::new(move |i| h.log_format(&plugin, &lp, i)) as Box<LogFactory>)
                }
            };
            Ok(Strategies { plugins, shard, serializer: serializer_factory, reader, log })
        }
        Runtime::Native => {
            let plugins = v
                .strategies()
                .map(|(kind, s)| PluginInfo { kind, name: s.plugin.to_string(), sha256: "native".into(), load: Duration::ZERO, cache_hit: false })
                .collect();
            let (m, a, p) = (v.memtable.clone(), v.allocator.clone(), Arc::clone(pool));
            let checks = Checks::of(v);
            let shard = Box::new(move |i| native::shard(&m, &mp, &a, &ap, Arc::clone(&p), i).map(|s| checks.apply(s)));
            let (s, sp2) = (v.serializer.clone(), sp.clone());
            let serializer = Box::new(move |part| native::serializer(&s, &sp2, part));
            let reader = native_reader(v.serializer.clone(), sp);
            let log = (!v.commitlog.is_empty()).then(|| {
                let (name, lp) = (v.commitlog.clone(), params(&v.commitlog_params));
                Box::new(move |i| native::log_format(&name, &lp, i)) as Box<LogFactory>
            });
            Ok(Strategies { plugins, shard, serializer, reader, log })
        }
    }
}

fn wasm_reader(host: &Arc<PluginHost>, serializer: Arc<Plugin>, params: Vec<(String, String)>) -> Box<ReaderFactory<'static>> {
    let host = Arc::clone(host);
    Box::new(move |seg: &LoadedSegment| host.reader(&serializer, &params, &seg.data, &seg.index))
}

fn native_reader(serializer: String, params: Vec<(String, String)>) -> Box<ReaderFactory<'static>> {
    Box::new(move |seg: &LoadedSegment| native::segment_reader(&serializer, &params, &seg.data, &seg.index))
}

/// Opens segments with a serializer and its parameters, as a run wrote
/// them (`memlab verify` reads kept segments back with it).
pub fn reader(host: &Arc<PluginHost>, runtime: Runtime, serializer: &str, params: Vec<(String, String)>) -> Result<Box<ReaderFactory<'static>>, SeamError> {
    Ok(match runtime {
        Runtime::Wasm => wasm_reader(host, host.load_as(serializer, Kind::Serializer)?, params),
        Runtime::Native => native_reader(serializer.to_string(), params),
    })
}

/// A commit-log format, as a run created it (`memlab verify` replays
/// kept logs with it).
pub fn log_format(host: &Arc<PluginHost>, runtime: Runtime, format: &str, params: &[(String, String)]) -> Result<LogFormat, SeamError> {
    match runtime {
        Runtime::Wasm => host.log_format(&host.load_as(format, Kind::CommitLog)?, params, 0),
        Runtime::Native => native::log_format(format, params, 0),
    }
}

/// The checks a variant's shards make beyond the contract's own.
#[derive(Clone, Copy)]
struct Checks {
    verify: bool,
    sample: u64,
}

impl Checks {
    fn of(v: &Variant) -> Self {
        Checks { verify: v.verify, sample: v.verify_sample }
    }

    /// A variant that does not verify may use strategies that keep
    /// nothing (`null`): its `bytes-used` is not held to the rows stored,
    /// nor its reads to the sample.
    fn apply(self, shard: Shard) -> Shard {
        match (self.verify, self.sample) {
            (false, _) => shard.without_row_accounting(),
            (true, 0) => shard.with_ledger(0),
            (true, every) => shard.with_sample(every).with_ledger(every),
        }
    }
}
