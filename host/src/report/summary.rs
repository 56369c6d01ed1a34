//! One variant's cassandra-stress-style summary: rates, the write path,
//! flushes and memory, the run's own figures.

use super::{Rates, breakdown, hms, mib, ms, rows_per_cpu_second, thousands, total, verified};
use crate::record::{Kind, KindSpecs, Stat, VariantResult};
use std::fmt::Write as _;

fn stat(map: &std::collections::BTreeMap<String, u64>, stat: Stat) -> u64 {
    map.get(stat.name()).copied().unwrap_or(0)
}

/// Every strategy a variant ran, with its parameters, and how its log
/// was synced: what a header must name for two variants to be told apart.
fn strategies(c: &crate::record::VariantSpec) -> String {
    let mut named: Vec<String> = c
        .strategies
        .iter()
        .map(|(kind, s)| {
            // A crate's folder as one path, however the config spelled it.
            let plugin = path_clean::clean(&s.plugin).display().to_string();
            match s.params.is_empty() {
                true => format!("{kind} {plugin}"),
                false => format!("{kind} {plugin} ({})", s.params.iter().map(|(k, v)| format!("{k} = {v}")).collect::<Vec<_>>().join(", ")),
            }
        })
        .collect();
    if let Some(log) = &c.log {
        let every = log.sync_ms.map_or(String::new(), |ms| format!(" {ms} ms"));
        named.push(format!("log sync {}{every}, {} writes", log.sync, log.access));
    }
    named.join(", ")
}

/// One variant's summary.
pub fn summary(v: &VariantResult) -> String {
    let mut s = String::new();
    let c = &v.variant;
    let repeat = if v.repeat > 1 { format!(" (round {})", v.repeat) } else { String::new() };
    let _ = writeln!(s, "Results: {}{repeat}", c.name);
    let _ = writeln!(
        s,
        "  {}; {:?} runtime; {} shard(s); pool {}; coalescing {}; memtable_space {:.0} MiB, switch at {:.0}%; {} flush writer(s)",
        strategies(c),
        c.runtime,
        c.shards,
        c.pool,
        c.coalescing,
        mib(c.memtable_space),
        c.threshold() * 100.0,
        c.flush_writers
    );
    if let Some(failure) = v.failure() {
        let _ = writeln!(s, "FAILED: {failure}");
        let _ = writeln!(s, "(figures of a failed variant are not valid and are not shown)");
        return s;
    }
    let r = Rates::of(v);
    let mut rows = rate_lines(v, &r);
    rows.extend(write_path_lines(v));
    rows.extend(super::log::lines(v));
    rows.extend(flush_and_memory_lines(v, &r));
    rows.extend(run_lines(v));
    for (name, value) in rows {
        let _ = writeln!(s, "{name:<26}: {value}");
    }
    s
}

/// Rates, latency, totals and the op mix.
fn rate_lines(v: &VariantResult, r: &Rates) -> Vec<(&'static str, String)> {
    let l = &v.latency;
    let mut rows = vec![
        ("Op rate", format!("{} op/s", thousands(r.ops))),
        ("Partition rate", format!("{} pk/s", thousands(r.partitions))),
        ("Row rate", format!("{} row/s", thousands(r.rows))),
        ("Latency mean", ms(l.mean)),
        ("Latency median", ms(l.p50 as f64)),
        ("Latency 95th percentile", ms(l.p95 as f64)),
        ("Latency 99th percentile", ms(l.p99 as f64)),
        ("Latency 99.9th percentile", ms(l.p999 as f64)),
        ("Latency max", ms(l.max as f64)),
        ("Total partitions", thousands(v.partitions as f64)),
        (
            "Total errors",
            match &v.first_error {
                Some(first) if v.errors > 0 => format!("{} (the first: {first})", thousands(v.errors as f64)),
                _ => thousands(v.errors as f64),
            },
        ),
        ("Total operation time", hms(v.elapsed)),
        ("Steady state", steady_line(v)),
        ("CPU time", cpu_line(v)),
        ("Op mix", op_mix(v)),
        (
            "Latency measured",
            if v.paced { "from each op's intended start (target rate; no coordinated omission)".into() } else { "from each op's start".into() },
        ),
    ];
    if v.latencies.len() > 1 {
        for (kind, l) in v.latencies.iter().rev() {
            let line = format!("mean {}, p50 {}, p99 {}, max {}", ms(l.mean), ms(l.p50 as f64), ms(l.p99 as f64), ms(l.max as f64));
            rows.insert(9, (latency_label(kind), line));
        }
    }
    rows
}

/// Coalescing, switches, contention, backpressure and the pool.
fn write_path_lines(v: &VariantResult) -> Vec<(&'static str, String)> {
    let c = &v.variant;
    vec![
        (
            "Coalescing",
            if v.counters.groups == 0 {
                format!("{} (one store and one insert call per client batch)", c.coalescing)
            } else {
                format!(
                    "{}, {} groups, {:.2} client batches per group, {:.1} us queue wait per batch",
                    c.coalescing,
                    thousands(v.counters.groups as f64),
                    if v.counters.groups > 0 { v.partitions as f64 / v.counters.groups as f64 } else { 1.0 },
                    v.counters.coalesce_wait_ns as f64 / 1e3 / v.partitions.max(1) as f64
                )
            },
        ),
        ("Memtable switches", switches_line(&v.counters)),
        ("Contended puts", contended_line(&v.counters)),
        ("Backpressure", format!("{:.1} ms blocked on a full pool", v.counters.backpressure_ns as f64 / 1e6)),
        (
            "Pool",
            format!(
                "{}, {} CAS retries, {} cell sums{}{}",
                c.pool,
                thousands(v.counters.pool_cas_retries as f64),
                thousands(v.counters.pool_sum_checks as f64),
                refusals(v.counters.pool_refusals),
                charged(v.counters.pool_charged)
            ),
        ),
    ]
}

/// The shard lock's contention, or that there was no lock.
fn contended_line(c: &crate::record::WriteFigures) -> String {
    if c.most_inside > 0 {
        return format!("no shard lock: concurrent strategies; the most writers seen inside one memtable at once: {}", c.most_inside);
    }
    format!("{} of {} (lock wait {:.1} ms)", thousands(c.contended as f64), thousands((c.contended + c.uncontended) as f64), c.lock_wait_ns as f64 / 1e6)
}

/// The pool's refusals, where there were any: counted by the host, so a
/// refusal a plugin swallowed shows.
fn refusals(n: u64) -> String {
    if n == 0 { String::new() } else { format!(", {} reservations refused (counted by the host)", thousands(n as f64)) }
}

/// Memory the host charged where allocators held more than they reserved.
fn charged(bytes: u64) -> String {
    if bytes == 0 { String::new() } else { format!(", {:.1} MiB charged for allocator memory held unreserved (measured by the host)", mib(bytes)) }
}

/// Heap bytes allocated per flush: the host's count of the flush
/// thread's heap (CASSANDRA-21083's figure), and a wasm serializer's own,
/// as the SDK counted and the plugin reported it.
fn heap_per_flush(v: &VariantResult) -> Option<f64> {
    per_flush(v, |f| f.heap_allocated)
}

/// Of that, the serializer's calls.
fn serializer_heap_per_flush(v: &VariantResult) -> Option<f64> {
    per_flush(v, |f| f.serializer_heap)
}

/// The flush thread's heap bytes per row flushed: the comparison's
/// figure, since a figure per flush favours whichever variant flushes
/// smaller generations.
pub(crate) fn heap_per_row_flushed(v: &VariantResult) -> Option<f64> {
    per_row_flushed(v, |f| f.heap_allocated)
}

/// Of that, the serializer's calls, per row flushed.
pub(crate) fn serializer_heap_per_row_flushed(v: &VariantResult) -> Option<f64> {
    per_row_flushed(v, |f| f.serializer_heap)
}

fn per_row_flushed(v: &VariantResult, get: fn(&crate::record::FlushFigures) -> Option<u64>) -> Option<f64> {
    let rows = total(v.flushes.iter().map(|f| f.rows));
    per_flush(v, get).filter(|_| rows > 0).map(|per| per * v.flushes.len() as f64 / rows as f64)
}

fn per_flush(v: &VariantResult, get: fn(&crate::record::FlushFigures) -> Option<u64>) -> Option<f64> {
    let measured: Vec<u64> = v.flushes.iter().filter_map(get).collect();
    (!measured.is_empty() && measured.len() == v.flushes.len()).then(|| total(measured.iter().copied()) as f64 / measured.len() as f64)
}

/// The SDK's count per flush, as the plugin reported it.
pub(crate) fn reported_heap_per_flush(v: &VariantResult) -> Option<f64> {
    let total = v.stats_of(Kind::Serializer).get(HEAP_STAT)?;
    (!v.flushes.is_empty()).then(|| *total as f64 / v.flushes.len() as f64)
}

/// The serializer counter the SDK adds in wasm.
pub(super) const HEAP_STAT: &str = "heap-allocated-bytes";

fn allocated_line(v: &VariantResult) -> String {
    let measured = match heap_per_flush(v) {
        Some(bytes) => format!(
            "{:.1} MiB per flush on the host heap (measured: the flush thread's allocations), {:.1} MiB of it in the serializer's calls",
            mib(bytes as u64),
            mib(serializer_heap_per_flush(v).unwrap_or(0.0) as u64)
        ),
        None if v.flushes.is_empty() => "no flush".to_string(),
        None => "not measured (an older record)".to_string(),
    };
    match reported_heap_per_flush(v) {
        Some(bytes) => format!("{measured}; reported by the plugin (the SDK's count): {:.1} MiB per flush in its own memory", mib(bytes as u64)),
        None => measured,
    }
}

/// Flushes, the allocator, reads, the memtable index and the boundary.
fn flush_and_memory_lines(v: &VariantResult, r: &Rates) -> Vec<(&'static str, String)> {
    let mut rows = flush_lines(v, r);
    rows.extend(memory_lines(v));
    // The memtable's and the allocator's counters have lines of their own.
    for (kind, stats) in v.stats.iter().filter(|(k, s)| !matches!(k, Kind::Memtable | Kind::Allocator) && !s.is_empty()) {
        let shown: Vec<String> = stats.iter().map(|(k, n)| format!("{} {}", k.chars().take(40).collect::<String>(), thousands(*n as f64))).collect();
        rows.push((kind.spec().title, format!("reported by the plugin: {}", shown.join(", "))));
    }
    if !v.time.is_empty() {
        rows.push(("Where the time went", breakdown::line(&v.time)));
    }
    rows
}

/// The flushes: their time, rows and bytes.
fn flush_lines(v: &VariantResult, r: &Rates) -> Vec<(&'static str, String)> {
    let raw = total(v.flushes.iter().map(|f| f.raw_bytes));
    vec![
        (
            "Flushes",
            format!(
                "{}, time spent {} ms, {} rows ({} rows/s), {}, cpu {} ms, serializer grew up to {:.1} MiB",
                v.flushes.len(),
                r.flush_wall.as_millis(),
                thousands(r.flush_rows as f64),
                thousands(r.flushed_rows),
                match raw {
                    0 if r.flush_rows > 0 => "row bytes not recorded (an older record)".to_string(),
                    _ => format!("{:.1} MiB of rows in ({:.1} MiB/s)", mib(raw), mib(raw) / r.flush_wall.as_secs_f64().max(1e-9)),
                },
                r.flush_cpu.as_millis(),
                mib(v.flushes.iter().map(|f| f.serializer_grew).max().unwrap_or(0))
            ),
        ),
        ("Allocated", allocated_line(v)),
        (
            "On disk",
            format!(
                "{:.1} MiB (data, index and metadata; measured by the host), {:.1} B a row, {}",
                mib(r.flush_bytes),
                r.flush_bytes as f64 / r.flush_rows.max(1) as f64,
                match raw {
                    0 if r.flush_rows > 0 => "no compression figure (an older record kept no row bytes)".to_string(),
                    0 => "no rows".to_string(),
                    _ => format!("{:.2}x compression of the rows' {:.1} MiB", raw as f64 / r.flush_bytes.max(1) as f64, mib(raw)),
                }
            ),
        ),
    ]
}

/// The allocator, the memtable, the reads and the boundary.
fn memory_lines(v: &VariantResult) -> Vec<(&'static str, String)> {
    vec![
        (
            "Allocator",
            format!(
                "reserved {:.1} MiB (= the pool's count), used {:.1} MiB (held to the row bytes), waste {:.1} MiB, {} reservations (= the host's count); reported by the plugin: {} regions",
                mib(stat(v.stats_of(Kind::Allocator), Stat::BytesReserved)),
                mib(stat(v.stats_of(Kind::Allocator), Stat::BytesUsed)),
                mib(stat(v.stats_of(Kind::Allocator), Stat::Waste)),
                thousands(stat(v.stats_of(Kind::Allocator), Stat::Reservations) as f64),
                thousands(stat(v.stats_of(Kind::Allocator), Stat::Regions) as f64)
            ),
        ),
        (
            "Point reads",
            format!(
                "{} keys from the live memtables, {} found, {} gets/s",
                thousands(v.reads.keys as f64),
                thousands(v.reads.hits as f64),
                thousands(v.reads.rate())
            ),
        ),
        (
            "Memtable index",
            format!(
                "{} entries (= the cursor's keys); reported by the plugin: {:.1} MiB of index (held to 16 B an entry and its memory){}",
                thousands(stat(v.stats_of(Kind::Memtable), Stat::Entries) as f64),
                mib(stat(v.stats_of(Kind::Memtable), Stat::IndexBytes)),
                match v.flushes.iter().map(|f| f.shard_memory).max().unwrap_or(0) {
                    0 => String::new(),
                    memory => format!("; measured: {:.1} MiB of shard memory at the largest flush", mib(memory)),
                }
            ),
        ),
        (
            "Boundary",
            format!(
                "{} calls, {} write calls (store + insert), {:.1} rows per write call, {:.1} MiB in, {:.1} MiB out",
                thousands(v.boundary.calls as f64),
                thousands(write_calls(v) as f64),
                v.rows as f64 / write_calls(v).max(1) as f64,
                mib(v.boundary.bytes_in),
                mib(v.boundary.bytes_out)
            ),
        ),
    ]
}

/// Set-up, the stream, verification and resources.
fn run_lines(v: &VariantResult) -> Vec<(&'static str, String)> {
    let c = &v.variant;
    let mut rows = vec![
        (
            "Setup",
            format!(
                "{} ms ({})",
                v.setup.as_millis(),
                v.plugins
                    .iter()
                    .map(|p| format!("{} {:.1} ms{}", p.name, p.load.as_secs_f64() * 1e3, if p.cache_hit { " cached" } else { "" }))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ),
        (
            "Stream fingerprint",
            if v.shape.is_empty() { v.fingerprint.clone() } else { format!("{} (shape {}, the same whatever the salt)", v.fingerprint, v.shape) },
        ),
        ("Verified", verified::verified_line(v, c.verify)),
    ];
    if let Some(idle) = &v.no_effect {
        rows.push(("Parameters", verified::idle_line(v, idle)));
    }
    let r = &v.resources;
    let mut resources = format!("cpu user {:.2} s, system {:.2} s; peak RSS {:.1} MiB", r.user_cpu.as_secs_f64(), r.system_cpu.as_secs_f64(), mib(r.peak_rss));
    // Runs saved before the start was recorded have none.
    if r.start_rss > 0 {
        let added = mib(r.peak_rss.saturating_sub(r.start_rss));
        let (beyond, budget) = (beyond_budget_mib(v), mib(v.variant.memtable_space));
        let _ = match beyond > 0.0 {
            true => write!(resources, ", {added:.1} MiB above the run's start, {beyond:.1} MiB beyond the {budget:.0} MiB memtable budget"),
            false => write!(resources, ", {added:.1} MiB above the run's start, within the {budget:.0} MiB memtable budget"),
        };
    }
    rows.push(("Resources", resources));
    rows
}

/// The window verdicts compare, and what the warm-up left out.
fn steady_line(v: &VariantResult) -> String {
    let Some(s) = v.steady else {
        return "none: the warm-up lasted the whole run (no memtable switch); verdicts use the whole run's rate".into();
    };
    let few = if s.switches < 2 { "; fewer than 2 generations switched in it: lengthen `ops` for a steady state" } else { "" };
    format!(
        "{} row/s over {:.2} s, after a {:.2} s warm-up ({} rows left out); {} switches in the window{few} (measured by the host)",
        thousands(s.rows as f64 / s.secs.max(1e-9)),
        s.secs,
        s.warmup_secs,
        thousands(s.warmup_rows as f64),
        s.switches
    )
}

/// CPU on the threads' own clocks, and the machine share of the window.
fn cpu_line(v: &VariantResult) -> String {
    let mut line = format!(
        "clients {:.2} s, flushes {:.2} s (their own clocks, measured by the host); {} rows per CPU-second",
        v.client_cpu.as_secs_f64(),
        Rates::of(v).flush_cpu.as_secs_f64(),
        thousands(rows_per_cpu_second(v))
    );
    if let Some(s) = v.steady.filter(|s| s.cpu > 0.0) {
        let _ = write!(line, "; the process kept {:.2} cores busy in the steady window", s.cpu / s.secs.max(1e-9));
    }
    line
}

fn latency_label(kind: &str) -> &'static str {
    match kind {
        "insert" => "Latency insert",
        "read" => "Latency read",
        _ => "Latency scan",
    }
}

/// Store and insert calls: two per client batch, or per coalesced group.
fn write_calls(v: &VariantResult) -> u64 {
    2 * if v.counters.groups > 0 { v.counters.groups } else { v.partitions }
}

fn op_mix(v: &VariantResult) -> String {
    let count = |k: &str| v.op_counts.get(k).copied().unwrap_or(0);
    let mut parts = vec![format!("insert {}", thousands(count("insert") as f64))];
    if count("read") > 0 {
        parts.push(format!("read {} ({} found in live memtables)", thousands(count("read") as f64), thousands(v.read_hits as f64)));
    }
    if count("scan") > 0 {
        parts.push(format!("scan {} ({} rows)", thousands(count("scan") as f64), thousands(v.scan_rows as f64)));
    }
    parts.join(", ")
}

fn switches_line(c: &crate::record::WriteFigures) -> String {
    let per_shard = |ns: u64, shards: u64| ns as f64 / 1e3 / shards.max(1) as f64;
    let mut line = format!(
        "{} (the last is the drain at the end); a new generation took {:.1} us per shard on the switching writer",
        c.switches,
        per_shard(c.generation_start_ns, c.generation_shards)
    );
    // Runs saved before generations were started ahead have no CPU figure.
    if c.generation_started_shards > 0 {
        let _ = write!(
            line,
            " ({} of {} shards started ahead by a flush writer); starting a shard cost {:.0} us of CPU",
            c.generation_ahead_shards,
            c.generation_shards,
            per_shard(c.generation_start_cpu_ns, c.generation_started_shards)
        );
    }
    line
}

/// What the run added to RSS beyond its memtable budget (issue 6's P7).
pub(super) fn beyond_budget_mib(v: &VariantResult) -> f64 {
    v.resources.beyond_budget(v.variant.memtable_space) as f64 / (1024.0 * 1024.0)
}
