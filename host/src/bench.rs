//! Runs the variants of a bench config on one stream, one after another,
//! and collects the figures the report prints.

use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use memlab_sdk::Packed;

use crate::config::{BenchConfig, Runtime, Variant, params};
use crate::flush::{self, FlushReport, SerializerFactory};
use crate::native;
use crate::plugin::{Kind, Plugin, PluginError, PluginHost, WasmReader, WasmSerializer};
use crate::router::{RoutedBatch, Router};
use crate::segment::LoadedSegment;
use crate::strategy::{Boundary, SegmentReading, ShardStrategies};
use crate::verify::{self, ReaderFactory, State, Verified};
use crate::workload::{Fingerprint, Generator, Profile};
use crate::pool::MemoryPool;
use crate::read_probe::{self, ReadProbe};
use crate::write_path::{FlushJob, ShardFactory, WriteCounters, WritePath};

/// Where and how to run.
#[derive(Debug, Clone)]
pub struct BenchOptions {
    /// Segments go to `<run_dir>/<variant>/`.
    pub run_dir: PathBuf,
    /// Keep segment files after verification.
    pub keep_segments: bool,
    /// Print each flush's "Completed flushing" line to stderr.
    pub log_flushes: bool,
}

/// Latency figures, in nanoseconds.
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct Latency {
    /// Mean.
    pub mean: f64,
    /// Median.
    pub p50: u64,
    /// 95th percentile.
    pub p95: u64,
    /// 99th percentile.
    pub p99: u64,
    /// 99.9th percentile.
    pub p999: u64,
    /// Maximum.
    pub max: u64,
}

impl Latency {
    fn from(h: &Histogram<u64>) -> Self {
        Latency {
            mean: h.mean(),
            p50: h.value_at_quantile(0.5),
            p95: h.value_at_quantile(0.95),
            p99: h.value_at_quantile(0.99),
            p999: h.value_at_quantile(0.999),
            max: h.max(),
        }
    }
}

/// A loaded plugin, as reports show it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct PluginInfo {
    /// What it implements.
    pub kind: Kind,
    /// Its name or path.
    pub name: String,
    /// sha256 of the component ("native" for twins).
    pub sha256: String,
    /// Compile or cache-load time.
    pub load: Duration,
    /// Served by the precompiled cache.
    pub cache_hit: bool,
}

/// A plugin's `describe()`: name, version, and the parameters it applied.
pub type Described = (String, String, Vec<(String, String)>);

/// Everything measured for one variant.
#[derive(Debug, Clone, serde::Serialize)]
pub struct VariantResult {
    /// The variant as configured.
    pub variant: Variant,
    /// Plugins used.
    pub plugins: Vec<PluginInfo>,
    /// What ran, as the plugins describe themselves.
    pub descriptions: Vec<Described>,
    /// Client batches written.
    pub ops: u64,
    /// Rows written.
    pub rows: u64,
    /// Partitions written (one per op).
    pub partitions: u64,
    /// Ops that failed.
    pub errors: u64,
    /// Time from the first write to the last.
    pub elapsed: Duration,
    /// Loading plugins and creating generation 0.
    pub setup: Duration,
    /// Op latency.
    pub latency: Latency,
    /// Switches, contention, backpressure.
    pub counters: WriteCounters,
    /// Every flush, in completion order.
    pub flushes: Vec<FlushReport>,
    /// Memtable counters, summed over all generations.
    pub memtable_stats: BTreeMap<String, u64>,
    /// Allocator counters, summed over all generations.
    pub allocator_stats: BTreeMap<String, u64>,
    /// Boundary traffic of shards and serializers.
    pub boundary: Boundary,
    /// The stream's fingerprint as this variant's writers saw it.
    pub fingerprint: String,
    /// Point reads from the live memtables after the writes.
    pub reads: ReadProbe,
    /// What verification proved.
    pub verified: Option<Verified>,
    /// Why the variant failed; its figures are then not valid.
    pub failure: Option<String>,
}

/// The result of a whole bench.
#[derive(Debug, Clone, serde::Serialize)]
pub struct BenchResult {
    /// The config as resolved.
    pub config: BenchConfig,
    /// One per variant, in config order.
    pub variants: Vec<VariantResult>,
}

struct Strategies {
    plugins: Vec<PluginInfo>,
    shard: Box<ShardFactory>,
    serializer: Box<SerializerFactory>,
    reader: Box<ReaderFactory<'static>>,
}

fn info(plugin: &Plugin) -> PluginInfo {
    PluginInfo { kind: plugin.kind, name: plugin.name.clone(), sha256: plugin.sha256.clone(), load: plugin.load_time, cache_hit: plugin.cache_hit }
}

fn strategies(host: &Arc<PluginHost>, v: &Variant, pool: &Arc<MemoryPool>) -> Result<Strategies, PluginError> {
    let (mp, ap, sp) = (params(&v.memtable_params), params(&v.allocator_params), params(&v.serializer_params));
    match v.runtime {
        Runtime::Wasm => {
            let memtable = host.load_as(&v.memtable, Kind::Memtable)?;
            let allocator = host.load_as(&v.allocator, Kind::Allocator)?;
            let serializer = host.load_as(&v.serializer, Kind::Serializer)?;
            let plugins = vec![info(&memtable), info(&allocator), info(&serializer)];
            let (h, p) = (Arc::clone(host), Arc::clone(pool));
            let shard = Box::new(move |i| {
                h.shard(&memtable, &mp, &allocator, &ap, Arc::clone(&p), i).map(|s| Box::new(s) as Box<dyn ShardStrategies>)
            });
            let (h, s, sp2) = (Arc::clone(host), Arc::clone(&serializer), sp.clone());
            let serializer_factory = Box::new(move |part| {
                WasmSerializer::new(&h, &s, &sp2, part).map(|w| Box::new(w) as Box<dyn crate::strategy::FlushStrategy>)
            });
            let h = Arc::clone(host);
            let reader = Box::new(move |seg: &LoadedSegment| {
                WasmReader::open(&h, &serializer, &sp, &seg.data, &seg.index).map(|r| Box::new(r) as Box<dyn SegmentReading>)
            });
            Ok(Strategies { plugins, shard, serializer: serializer_factory, reader })
        }
        Runtime::Native => {
            let plugins = [(Kind::Memtable, &v.memtable), (Kind::Allocator, &v.allocator), (Kind::Serializer, &v.serializer)]
                .into_iter()
                .map(|(kind, name)| PluginInfo { kind, name: name.clone(), sha256: "native".into(), load: Duration::ZERO, cache_hit: false })
                .collect();
            let (m, a, p) = (v.memtable.clone(), v.allocator.clone(), Arc::clone(pool));
            let shard = Box::new(move |i| {
                native::NativeShard::new(&m, &mp, &a, &ap, Arc::clone(&p), i).map(|s| Box::new(s) as Box<dyn ShardStrategies>)
            });
            let (s, sp2) = (v.serializer.clone(), sp.clone());
            let serializer = Box::new(move |_| native::serializer(&s, &sp2));
            let s = v.serializer.clone();
            let reader = Box::new(move |seg: &LoadedSegment| native::reader(&s, &sp, &seg.data, &seg.index));
            Ok(Strategies { plugins, shard, serializer, reader })
        }
    }
}

/// What each writer thread brings back.
struct WriterOutcome {
    histogram: Histogram<u64>,
    ops: u64,
    rows: u64,
    errors: u64,
    failed_ops: Vec<(usize, u64)>,
    fingerprint: Fingerprint,
}

fn histogram() -> Histogram<u64> {
    // 1 ns to 1 hour at 3 significant digits; the bounds are constants.
    Histogram::new_with_bounds(1, 3_600_000_000_000, 3).unwrap_or_else(|_| Histogram::new(3).unwrap_or_else(|_| unreachable!()))
}

/// Fatal errors stop the variant: a trap, a broken contract, a poisoned
/// instance. A plugin's own `error` (say, pool-full) only fails the op.
fn is_fatal(e: &PluginError) -> bool {
    !matches!(e, PluginError::Guest { .. })
}

fn write_stream(profile: &Profile, thread: usize, path: &WritePath, stop: &AtomicBool, failure: &Mutex<Option<String>>) -> WriterOutcome {
    let mut out = WriterOutcome { histogram: histogram(), ops: 0, rows: 0, errors: 0, failed_ops: Vec::new(), fingerprint: Fingerprint::default() };
    let mut generator = Generator::new(profile);
    let mut rows = Packed::new();
    let mut batch = RoutedBatch::default();
    for index in 0..profile.ops_for(thread) {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        generator.batch(thread, index, &mut rows);
        out.fingerprint.add(&rows);
        let n = rows.len() as u64;
        let started = Instant::now();
        let result = batch
            .route(path.router(), &rows)
            .map_err(|e| PluginError::Contract { plugin: "memlab".into(), operation: "route".into(), shard: 0, detail: e.to_string() })
            .and_then(|()| path.write(&mut batch));
        let _ = out.histogram.record(started.elapsed().as_nanos().max(1) as u64);
        out.ops += 1;
        match result {
            Ok(()) => out.rows += n,
            Err(e) => {
                out.errors += 1;
                out.failed_ops.push((thread, index));
                if is_fatal(&e) {
                    let mut f = failure.lock().unwrap_or_else(|p| p.into_inner());
                    f.get_or_insert_with(|| e.to_string());
                    stop.store(true, Ordering::Relaxed);
                }
            }
        }
    }
    out
}

/// Runs every variant of `config`. A failed variant is reported as such
/// and the next one still runs.
pub fn run(host: &Arc<PluginHost>, config: &BenchConfig, options: &BenchOptions, mut progress: impl FnMut(&str)) -> BenchResult {
    let profile = &config.workload;
    progress(&format!("computing the stream's final state ({} ops, {} rows)", profile.ops, profile.total_rows()));
    let expected = verify::expected(profile, &HashSet::new());
    let mut variants = Vec::new();
    for (i, variant) in config.variants.iter().enumerate() {
        progress(&format!("variant {}/{}: {}", i + 1, config.variants.len(), variant.name));
        let dir = options.run_dir.join(sanitize(&variant.name));
        let result = run_variant(host, profile, variant, &dir, options, &expected);
        if !options.keep_segments {
            let _ = std::fs::remove_dir_all(&dir);
        }
        variants.push(result);
    }
    BenchResult { config: config.clone(), variants }
}

fn sanitize(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect()
}

fn failed(variant: &Variant, failure: String) -> VariantResult {
    VariantResult {
        variant: variant.clone(),
        plugins: Vec::new(),
        descriptions: Vec::new(),
        ops: 0,
        rows: 0,
        partitions: 0,
        errors: 0,
        elapsed: Duration::ZERO,
        setup: Duration::ZERO,
        latency: Latency::default(),
        counters: WriteCounters::default(),
        flushes: Vec::new(),
        memtable_stats: BTreeMap::new(),
        allocator_stats: BTreeMap::new(),
        boundary: Boundary::default(),
        fingerprint: String::new(),
        reads: ReadProbe::default(),
        verified: None,
        failure: Some(failure),
    }
}

fn run_variant(host: &Arc<PluginHost>, profile: &Profile, variant: &Variant, dir: &std::path::Path, options: &BenchOptions, expected: &State) -> VariantResult {
    let setup_started = Instant::now();
    let _ = std::fs::remove_dir_all(dir);
    let pool = Arc::new(MemoryPool::new(variant.memtable_space, variant.pool));
    let strategies = match strategies(host, variant, &pool) {
        Ok(s) => s,
        Err(e) => return failed(variant, e.to_string()),
    };
    let (jobs_tx, jobs_rx) = crossbeam::channel::unbounded::<FlushJob>();
    let path = match WritePath::new(Router::new(variant.shards), strategies.shard, Arc::clone(&pool), variant.threshold(), variant.flush_writers, jobs_tx) {
        Ok(p) => p,
        Err(e) => return failed(variant, e.to_string()),
    };
    let descriptions = path.with_shard(0, |s| s.describe()).ok().map(|(m, a)| vec![m, a]).unwrap_or_default();
    let setup = setup_started.elapsed();

    let stop = AtomicBool::new(false);
    let failure: Mutex<Option<String>> = Mutex::new(None);
    let flushes: Mutex<Vec<FlushReport>> = Mutex::new(Vec::new());
    let serializer_description = Mutex::new(None);
    let start = Barrier::new(profile.threads + 1);
    let (outcomes, elapsed) = std::thread::scope(|scope| {
        let flushers: Vec<_> = (0..variant.flush_writers)
            .map(|_| {
                let rx = jobs_rx.clone();
                let (pool, serializer) = (&pool, &strategies.serializer);
                let (flushes, failure, stop, description) = (&flushes, &failure, &stop, &serializer_description);
                scope.spawn(move || {
                    for job in rx {
                        match flush::flush(job, serializer.as_ref(), dir, pool) {
                            Ok(report) => {
                                if options.log_flushes {
                                    eprintln!("INFO  {}", report.log_line());
                                }
                                flushes.lock().unwrap_or_else(|p| p.into_inner()).push(report);
                            }
                            Err(e) => {
                                failure.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert_with(|| e.to_string());
                                stop.store(true, Ordering::Relaxed);
                            }
                        }
                    }
                    let mut d = description.lock().unwrap_or_else(|p| p.into_inner());
                    if d.is_none() {
                        *d = serializer(0).and_then(|mut s| s.describe()).ok();
                    }
                })
            })
            .collect();
        drop(jobs_rx);
        let writers: Vec<_> = (0..profile.threads)
            .map(|t| {
                let (path, stop, failure, start) = (&path, &stop, &failure, &start);
                scope.spawn(move || {
                    start.wait();
                    write_stream(profile, t, path, stop, failure)
                })
            })
            .collect();
        start.wait();
        let began = Instant::now();
        let outcomes: Vec<WriterOutcome> = writers.into_iter().filter_map(|w| w.join().ok()).collect();
        let elapsed = began.elapsed();
        let reads = read_probe::probe(profile, &path, profile.read_probe);
        if let Err(e) = &reads {
            failure.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert_with(|| e.to_string());
        }
        if let Err(e) = path.drain() {
            failure.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert_with(|| e.to_string());
        }
        let counters = path.counters();
        for f in flushers {
            let _ = f.join();
        }
        ((outcomes, counters, reads.unwrap_or_default()), elapsed)
    });
    let (outcomes, counters, reads) = outcomes;

    let mut histogram = histogram();
    let mut result = failed(variant, String::new());
    result.failure = failure.into_inner().unwrap_or_else(|p| p.into_inner());
    let mut failed_ops = HashSet::new();
    let mut fingerprints = Vec::new();
    for o in &outcomes {
        let _ = histogram.add(&o.histogram);
        result.ops += o.ops;
        result.rows += o.rows;
        result.errors += o.errors;
        failed_ops.extend(o.failed_ops.iter().copied());
        fingerprints.push(o.fingerprint);
    }
    result.partitions = result.ops - result.errors;
    result.plugins = strategies.plugins;
    result.descriptions = descriptions
        .into_iter()
        .chain(serializer_description.into_inner().unwrap_or_else(|p| p.into_inner()))
        .map(|d| (d.name, d.version, d.params))
        .collect();
    result.elapsed = elapsed;
    result.setup = setup;
    result.latency = Latency::from(&histogram);
    result.counters = counters;
    result.reads = reads;
    result.fingerprint = Fingerprint::combine(&fingerprints).to_string();
    let mut flushes = flushes.into_inner().unwrap_or_else(|p| p.into_inner());
    flushes.sort_by_key(|f| (f.generation, f.part));
    for f in &flushes {
        for (k, v) in &f.memtable_stats {
            *result.memtable_stats.entry(k.clone()).or_default() += v;
        }
        for (k, v) in &f.allocator_stats {
            *result.allocator_stats.entry(k.clone()).or_default() += v;
        }
        result.boundary.add(f.shard_boundary);
        result.boundary.add(f.serializer_boundary);
    }
    result.flushes = flushes;
    if result.failure.is_none() {
        // Failed ops were never acknowledged: the state must hold the rest.
        let acknowledged;
        let expected = if failed_ops.is_empty() {
            expected
        } else {
            acknowledged = verify::expected(profile, &failed_ops);
            &acknowledged
        };
        let verified =
            verify::read_back(dir, strategies.reader.as_ref()).and_then(|(found, read)| verify::compare(expected, &found, read));
        match verified {
            Ok(v) => result.verified = Some(v),
            Err(e) => result.failure = Some(e.to_string()),
        }
    }
    result
}
