//! The host's commit log alone: writers append records of a client
//! batch's size (10 rows of about 150 bytes) and wait for durability as
//! each mode says, for a few seconds per point, on this machine's disk.
//! Prints, per mode, access and writer count: appends/s, syncs/s, records
//! per sync, the writers' wait (p50, p99) and the syncs' latency (p50, p99).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use memlab::commitlog::{Access, CommitLog, LogFiles, SyncMode};

const RECORD: usize = 1500;

fn point(dir: &std::path::Path, mode: SyncMode, access: Access, writers: usize, secs: f64) {
    let path = dir.join(format!("bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&path);
    let files = match LogFiles::create(&path, access, 32 << 20) {
        Ok(files) => files,
        Err(e) => return println!("{mode:?} {access:?}: {e}"),
    };
    let log = Arc::new(CommitLog::new(files, mode, false, None));
    let (stop, appends) = (AtomicBool::new(false), AtomicU64::new(0));
    let started = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..writers {
            s.spawn(|| {
                let record = [0x5au8; RECORD];
                while !stop.load(Ordering::Relaxed) {
                    let Ok(at) = log.append(&record, []) else { return };
                    if log.wait_durable(at).is_err() {
                        return;
                    }
                    appends.fetch_add(1, Ordering::Relaxed);
                    // Released as a flush would: the log stays bounded.
                    if at.offset < RECORD as u64 {
                        log.frozen(at.segment, 1, at);
                        let _ = log.flushed(at.segment);
                    }
                }
            });
        }
        std::thread::sleep(Duration::from_secs_f64(secs));
        stop.store(true, Ordering::Relaxed);
    });
    let elapsed = started.elapsed().as_secs_f64();
    let Some(log) = Arc::into_inner(log) else { return };
    let Ok((counts, times)) = log.close() else { return };
    let n = appends.load(Ordering::Relaxed);
    let us = |ns: u64| ns as f64 / 1e3;
    println!(
        "{:<14} {:<8} {:>3} writers: {:>9.0} appends/s {:>7.0} syncs/s {:>7.1} records/sync  wait p50 {:>8.1} us p99 {:>8.1} us  sync p50 {:>7.1} us p99 {:>7.1} us  written/appended {:.2}",
        format!("{mode:?}"),
        format!("{access:?}"),
        writers,
        n as f64 / elapsed,
        counts.syncs as f64 / elapsed,
        counts.appended as f64 / RECORD as f64 / counts.syncs.max(1) as f64,
        us(times.waits.value_at_quantile(0.5)),
        us(times.waits.value_at_quantile(0.99)),
        us(times.syncs.value_at_quantile(0.5)),
        us(times.syncs.value_at_quantile(0.99)),
        counts.written as f64 / counts.appended.max(1) as f64,
    );
    let _ = std::fs::remove_dir_all(&path);
}

fn main() {
    // `cargo bench` passes `--bench`; the rest is ours.
    let args: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    let dir = std::path::PathBuf::from(args.first().map_or("target", String::as_str));
    let secs: f64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(2.0);
    let modes =
        [SyncMode::Batch, SyncMode::Group(Duration::from_millis(1)), SyncMode::Group(Duration::from_millis(2)), SyncMode::Periodic(Duration::from_millis(10))];
    for writers in [1, 8, 32] {
        for access in [Access::Buffered, Access::Direct] {
            for mode in modes {
                point(&dir, mode, access, writers, secs);
            }
        }
    }
}
