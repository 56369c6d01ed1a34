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
            let memtable = native_strategy(host, &v.memtable, Kind::Memtable)?;
            let allocator = native_strategy(host, &v.allocator, Kind::Allocator)?;
            let serializer = native_strategy(host, &v.serializer, Kind::Serializer)?;
            let log = match v.commitlog.as_str() {
                "" => None,
                name => Some(native_strategy(host, name, Kind::CommitLog)?),
            };
            let plugins = [&memtable, &allocator, &serializer].into_iter().chain(&log).map(|(_, info)| info.clone()).collect();
            let (m, a, p) = (memtable.0, allocator.0, Arc::clone(pool));
            let checks = Checks::of(v);
            let shard = Box::new(move |i| m.shard(&mp, &a, &ap, Arc::clone(&p), i).map(|s| checks.apply(s)));
            let (s, sp2) = (serializer.0.clone(), sp.clone());
            let serializer_factory = Box::new(move |part| s.serializer(&sp2, part));
            let reader = native_reader(serializer.0, sp);
            let log = log.map(|(format, _)| {
                let lp = params(&v.commitlog_params);
                Box::new(move |i| format.log_format(&lp, i)) as Box<LogFactory>
            });
            Ok(Strategies { plugins, shard, serializer: serializer_factory, reader, log })
        }
    }
}

/// A native strategy: the bundled twin of that name, or the crate folder
/// built for this machine and loaded (`--build --native`), with what the
/// record says of it (a loaded library's sha256 is its file's).
fn native_strategy(host: &PluginHost, spec: &str, kind: Kind) -> Result<(native::Strategy, PluginInfo), SeamError> {
    let info = |sha256: String, load: Duration| PluginInfo { kind, name: spec.to_string(), sha256, load, cache_hit: false };
    if let Ok(bundled) = native::Strategy::bundled(spec, kind) {
        return Ok((bundled, info("native".into(), Duration::ZERO)));
    }
    let started = std::time::Instant::now();
    let Some((path, sha256)) = host.native_build(spec)? else {
        return Err(SeamError::NoTwin { plugin: spec.to_string() });
    };
    let strategy = native::Strategy::built(spec, kind, native::Library::open(spec, &path)?)?;
    Ok((strategy, info(sha256, started.elapsed())))
}

fn wasm_reader(host: &Arc<PluginHost>, serializer: Arc<Plugin>, params: Vec<(String, String)>) -> Box<ReaderFactory<'static>> {
    let host = Arc::clone(host);
    Box::new(move |seg: &LoadedSegment| host.reader(&serializer, &params, &seg.data, &seg.index))
}

fn native_reader(serializer: native::Strategy, params: Vec<(String, String)>) -> Box<ReaderFactory<'static>> {
    Box::new(move |seg: &LoadedSegment| serializer.reader(&params, &seg.data, &seg.index))
}

/// Opens segments with a serializer and its parameters, as a run wrote
/// them (`memlab verify` reads kept segments back with it).
pub fn reader(host: &Arc<PluginHost>, runtime: Runtime, serializer: &str, params: Vec<(String, String)>) -> Result<Box<ReaderFactory<'static>>, SeamError> {
    Ok(match runtime {
        Runtime::Wasm => wasm_reader(host, host.load_as(serializer, Kind::Serializer)?, params),
        Runtime::Native => native_reader(native_strategy(host, serializer, Kind::Serializer)?.0, params),
    })
}

/// A commit-log format, as a run created it (`memlab verify` replays
/// kept logs with it).
pub fn log_format(host: &Arc<PluginHost>, runtime: Runtime, format: &str, params: &[(String, String)]) -> Result<LogFormat, SeamError> {
    match runtime {
        Runtime::Wasm => host.log_format(&host.load_as(format, Kind::CommitLog)?, params, 0),
        Runtime::Native => native_strategy(host, format, Kind::CommitLog)?.0.log_format(params, 0),
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
