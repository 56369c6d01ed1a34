//! Turns a variant's strategies into factories: each kind's plugin loaded
//! once, as a wasm component through the plugin host or as native code,
//! then every factory hands out the seam's checked types.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use crate::config::{Runtime, Variant, params};
use crate::flush::SerializerFactory;
use crate::native;
use crate::plugin::PluginHost;
use crate::pool::MemoryPool;
use crate::record::PluginInfo;
use crate::seam::{CommitLogFormat, Kind, SeamError, Shard, Strategy, Tape};
use crate::segment::LoadedSegment;
use crate::verify::ReaderFactory;
use crate::write_path::ShardFactory;

type Params = Vec<(String, String)>;

/// A variant's strategies, ready to build shards, flush writers and readers.
pub(super) struct Strategies {
    pub(super) plugins: Vec<PluginInfo>,
    pub(super) shard: Box<ShardFactory>,
    pub(super) serializer: Box<SerializerFactory>,
    pub(super) reader: Box<ReaderFactory<'static>>,
    /// Each shard's commit-log format, when the variant keeps a log.
    pub(super) log: Option<Box<CommitLogFactory>>,
    /// The tape of a secret shard's first instance, once opened.
    pub(super) tape: Tape,
    /// Fresh shards of that index, with any parameters, in a pool of
    /// their own: the twins the tape is replayed into.
    pub(super) twin: Box<TwinFactory>,
}

/// Creates a shard with the memtable's and the allocator's parameters
/// given, in `pool`.
pub(super) type TwinFactory = dyn Fn(&[(String, String)], &[(String, String)], Arc<MemoryPool>) -> Result<Shard, SeamError> + Send + Sync;

impl Strategies {
    /// What each kind's strategy says of itself, by kind: a fresh shard's
    /// memtable and allocator, a serializer, and a log format where the
    /// variant keeps a log.
    pub(super) fn describe(&self) -> Result<BTreeMap<Kind, memlab_sdk::Description>, SeamError> {
        let (m, a) = (self.shard)(0)?.describe()?;
        let mut described = BTreeMap::from([(Kind::Memtable, m), (Kind::Allocator, a), (Kind::Serializer, (self.serializer)(0)?.describe()?)]);
        if let Some(log) = &self.log {
            described.insert(Kind::CommitLog, log(0)?.describe()?);
        }
        Ok(described)
    }
}

/// Creates shard `i`'s commit-log format.
pub(super) type CommitLogFactory = dyn Fn(usize) -> Result<CommitLogFormat, SeamError> + Send + Sync;

/// Loads `plugin` of `kind` for `runtime`, with what the record says of
/// it (a loaded library's sha256 is its file's).
fn load(host: &Arc<PluginHost>, runtime: Runtime, kind: Kind, plugin: &str) -> Result<(Strategy, PluginInfo), SeamError> {
    let info = |sha256: String, load: Duration, cache_hit: bool| PluginInfo { kind, name: plugin.to_string(), sha256, load, cache_hit };
    match runtime {
        Runtime::Wasm => {
            let p = host.load_as(plugin, kind)?;
            let info = info(p.sha256.clone(), p.load_time, p.cache_hit);
            Ok((host.strategy(&p), info))
        }
        Runtime::Native => {
            if let Ok(bundled) = native::bundled(plugin, kind) {
                return Ok((bundled, info("native".into(), Duration::ZERO, false)));
            }
            let started = std::time::Instant::now();
            let Some((path, sha256)) = host.native_build(plugin)? else {
                return Err(SeamError::NoTwin { plugin: plugin.to_string() });
            };
            let strategy = native::built(plugin, kind, native::Library::open(plugin, &path, &sha256)?)?;
            Ok((strategy, info(sha256, started.elapsed(), false)))
        }
    }
}

pub(super) fn strategies(host: &Arc<PluginHost>, v: &Variant, pool: &Arc<MemoryPool>) -> Result<Strategies, SeamError> {
    let mut loaded: BTreeMap<Kind, (Strategy, Params)> = BTreeMap::new();
    let mut plugins = Vec::new();
    for (kind, s) in v.strategies() {
        let (strategy, info) = load(host, v.runtime, kind, s.plugin)?;
        plugins.push(info);
        loaded.insert(kind, (strategy, params(s.params)));
    }
    let take = |kind: Kind| loaded.get(&kind).cloned().ok_or_else(|| SeamError::NoTwin { plugin: format!("(no {kind})") });
    let ((m, mp), (a, ap), (s, sp)) = (take(Kind::Memtable)?, take(Kind::Allocator)?, take(Kind::Serializer)?);
    let (p, checks) = (Arc::clone(pool), Checks::of(v));
    let (tape, pick) = (Tape::default(), crate::seam::secret_pick(v.shards.max(1), 0x7a9e));
    let (taped, tm, ta, wasm) = (tape.clone(), m.clone(), a.clone(), v.runtime == Runtime::Wasm);
    let twin = Box::new(move |mp: &[(String, String)], ap: &[(String, String)], pool| tm.shard(mp, &ta, ap, pool, pick).map(|s| checks.rows(s)));
    let shard = Box::new(move |i| {
        let s = checks.apply(m.shard(&mp, &a, &ap, Arc::clone(&p), i)?);
        // Only a wasm instance is taped: it is deterministic, so two twins
        // given the same calls must agree; a native build may draw from
        // the OS (a random skiplist height) and differ honestly.
        Ok(if wasm && i == pick && taped.take() { s.taped(taped.clone()) } else { s })
    });
    let (writer, wp) = (s.clone(), sp.clone());
    let serializer = Box::new(move |part| writer.serializer(&wp, part));
    let reader = Box::new(move |seg: &LoadedSegment| s.reader(&sp, &seg.data, &seg.index));
    let log = take(Kind::CommitLog).ok().map(|(l, lp)| Box::new(move |i| l.commitlog_format(&lp, i)) as Box<CommitLogFactory>);
    Ok(Strategies { plugins, shard, serializer, reader, log, tape, twin })
}

/// Opens segments with a serializer and its parameters, as a run wrote
/// them (`memlab verify` reads kept segments back with it).
pub fn reader(host: &Arc<PluginHost>, runtime: Runtime, serializer: &str, params: Params) -> Result<Box<ReaderFactory<'static>>, SeamError> {
    let (s, _) = load(host, runtime, Kind::Serializer, serializer)?;
    Ok(Box::new(move |seg: &LoadedSegment| s.reader(&params, &seg.data, &seg.index)))
}

/// A commit-log format, as a run created it (`memlab verify` replays
/// kept logs with it).
pub fn commitlog_format(host: &Arc<PluginHost>, runtime: Runtime, format: &str, params: &[(String, String)]) -> Result<CommitLogFormat, SeamError> {
    load(host, runtime, Kind::CommitLog, format)?.0.commitlog_format(params, 0)
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
    /// Only the row accounting: a twin keeps no ledger or sample.
    fn rows(self, shard: Shard) -> Shard {
        if self.verify { shard } else { shard.without_row_accounting() }
    }

    fn apply(self, shard: Shard) -> Shard {
        match (self.verify, self.sample) {
            (false, _) => shard.without_row_accounting(),
            (true, 0) => shard.with_ledger(0),
            (true, every) => shard.with_sample(every).with_ledger(every),
        }
    }
}
