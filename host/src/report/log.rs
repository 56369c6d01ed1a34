//! A variant's commit log in its summary: how it was configured, what it
//! wrote and synced, what the writers waited, and what the host read back.

use super::{mib, ms, thousands};
use crate::record::{Kind, LogFigures, LogSpec, VariantResult};

/// The summary's commit-log lines, or none when the variant kept no log.
pub(super) fn lines(v: &VariantResult) -> Vec<(&'static str, String)> {
    let (Some(spec), Some(f)) = (&v.variant.log, &v.commitlog) else { return Vec::new() };
    let secs = v.elapsed.as_secs_f64().max(1e-9);
    vec![
        ("Commit log", configured(v.variant.plugin(Kind::CommitLog), spec)),
        (
            "Logged",
            format!(
                "{} records, {} rows, {:.1} MiB ({:.1} bytes a row); {:.1} MiB written ({:.2}x), {} segments, {} released",
                thousands(f.records as f64),
                thousands(f.rows as f64),
                mib(f.bytes),
                f.bytes as f64 / f.rows.max(1) as f64,
                mib(f.written),
                f.write_amplification(),
                thousands(f.segments as f64),
                thousands(f.released as f64)
            ),
        ),
        ("Log syncs", syncs(f, secs)),
        ("Durability wait", wait(v, f, spec)),
        (
            "Log read back",
            format!(
                "{} segments replayed by a fresh instance and held to what the host appended; {} recoveries after a trap",
                f.replayed,
                thousands(f.recoveries as f64)
            ),
        ),
    ]
}

fn configured(format: &str, spec: &LogSpec) -> String {
    let sync = match spec.sync_ms {
        Some(ms) => format!("{} every {ms} ms", spec.sync),
        None => spec.sync.clone(),
    };
    format!("format {}, sync {sync}, {} I/O, segments of {:.0} MiB (measured by the host: bytes, syncs, waits)", format, spec.access, mib(spec.segment_size))
}

fn syncs(f: &LogFigures, secs: f64) -> String {
    let l = &f.sync_latency;
    format!(
        "{} ({:.1}/s), {:.1} rows a sync; latency p50 {}, p99 {}, max {}",
        thousands(f.syncs as f64),
        f.syncs as f64 / secs,
        f.rows as f64 / f.syncs.max(1) as f64,
        ms(l.p50 as f64),
        ms(l.p99 as f64),
        ms(l.max as f64)
    )
}

fn wait(v: &VariantResult, f: &LogFigures, spec: &LogSpec) -> String {
    if spec.sync == "periodic" {
        return "none: writers do not wait in `periodic` mode (a crash loses up to a period of acknowledged writes)".into();
    }
    let l = &f.wait_latency;
    format!(
        "{:.1} µs a row; each write's wait p50 {}, p99 {}, max {} (in the op latency above)",
        v.counters.durability_wait_ns as f64 / 1e3 / v.rows.max(1) as f64,
        ms(l.p50 as f64),
        ms(l.p99 as f64),
        ms(l.max as f64)
    )
}
