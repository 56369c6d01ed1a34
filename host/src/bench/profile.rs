//! The profiled round (`--profile`): after the measured rounds, each
//! variant runs once more with its stacks sampled, so no figure a verdict
//! uses pays for the sampling. A wasm variant runs on a profiling engine
//! (epochs every millisecond, each store sampling its guest's stack); a
//! native variant runs on the bench's own engine under pprof's SIGPROF
//! sampler. Each profile is saved as folded stacks (the format inferno,
//! FlameGraph and speedscope read) and drawn as an SVG flame graph.

use std::path::Path;
use std::sync::Arc;

use super::variant::{self, Bench};
use crate::config::{Runtime, Variant};
use crate::plugin::PluginHost;
use crate::record::verdict::round_rate;
use crate::record::{BenchResult, ProfileFigures, ProfileSource, VariantResult, flame_graph};

/// Native samples a second (a prime, so the timer does not beat with a
/// periodic task).
const NATIVE_HZ: i32 = 997;

/// Profiles every variant once, after `record`'s measured rounds; a
/// variant whose profiled round fails gets a warning, not a profile.
pub(super) fn profile_all(bench: &Bench<'_>, profiling: &Arc<PluginHost>, record: &BenchResult, mut warn: impl FnMut(&str)) -> Vec<ProfileFigures> {
    let mut out = Vec::new();
    let dir = bench.options.run_dir.join("profiles");
    if let Err(e) = std::fs::create_dir_all(&dir) {
        warn(&format!("no flame graphs: cannot create {}: {e}", dir.display()));
        return out;
    }
    for (i, v) in bench.config.variants.iter().enumerate() {
        if bench.options.interrupted() {
            break;
        }
        warn(&format!("profiling variant {}/{}: {}", i + 1, bench.config.variants.len(), v.name));
        let stem = format!("{:02}-{}", i + 1, super::sanitize(&v.name));
        match profile_one(bench, profiling, v, &stem, record) {
            Ok(p) => out.push(p),
            Err(e) => warn(&format!("no flame graph for `{}`: {e}", v.name)),
        }
    }
    out
}

fn profile_one(bench: &Bench<'_>, profiling: &Arc<PluginHost>, v: &Variant, stem: &str, record: &BenchResult) -> Result<ProfileFigures, String> {
    let scratch = bench.options.run_dir.join(format!("{stem}-profiled"));
    let (run, folded, samples, sampling_ns, source) = if v.runtime == Runtime::Wasm {
        let sampler = profiling.guest_sampler().ok_or("the profiling engine has no sampler")?;
        sampler.take();
        let on = Bench { host: profiling, ..*bench };
        let run = variant::run_variant(&on, v, &scratch, variant::PROFILED_ROUND);
        let p = sampler.take();
        (run, p.folded, p.samples, p.sampling_ns, ProfileSource::Guest)
    } else {
        let guard = pprof::ProfilerGuardBuilder::default()
            .frequency(NATIVE_HZ)
            .blocklist(&["libc", "libgcc", "pthread", "vdso"])
            .build()
            .map_err(|e| format!("starting the native sampler: {e}"))?;
        let run = variant::run_variant(bench, v, &scratch, variant::PROFILED_ROUND);
        let report = guard.report().build().map_err(|e| format!("reading the native samples: {e}"))?;
        let folded = native_folded(&report);
        let samples = folded.iter().map(|(_, n)| n).sum();
        (run, folded, samples, 0, ProfileSource::Native)
    };
    let _ = std::fs::remove_dir_all(&scratch);
    if let Some(failure) = run.failure() {
        return Err(format!("the profiled round failed: {failure}"));
    }
    if folded.is_empty() {
        return Err("no samples were taken (the round was too short?)".into());
    }
    let kind = match source {
        ProfileSource::Guest => "guest",
        ProfileSource::Native => "native",
    };
    let (folded_name, svg_name) = (format!("profiles/{stem}.{kind}.folded"), format!("profiles/{stem}.{kind}.svg"));
    let text: String = folded.iter().map(|(stack, n)| format!("{stack} {n}\n")).collect();
    save(&bench.options.run_dir.join(&folded_name), text.as_bytes())?;
    save(&bench.options.run_dir.join(&svg_name), &flame_graph(&v.name, source, &text)?)?;
    Ok(ProfileFigures {
        variant: v.name.clone(),
        source,
        folded: crate::record::RunPath::new(folded_name),
        svg: crate::record::RunPath::new(svg_name),
        samples,
        interval_us: match source {
            ProfileSource::Guest => crate::plugin::sampler::SAMPLE_EVERY.as_micros() as u64,
            ProfileSource::Native => 1_000_000 / NATIVE_HZ as u64,
        },
        sampling_ns,
        client_ns: run.time.client_wall_ns,
        rate_ratio: round_rate(&run) / measured_rate(record, &v.name).max(1e-9),
    })
}

/// Writes a profile's file whole or not at all.
fn save(path: &Path, bytes: &[u8]) -> Result<(), String> {
    crate::util::files::write_whole(path, bytes).map_err(|e| format!("saving {}: {e}", path.display()))
}

/// The median steady rate of a variant's measured rounds.
fn measured_rate(record: &BenchResult, name: &str) -> f64 {
    let runs: Vec<&VariantResult> = record.variants.iter().filter(|r| r.variant.name == name && r.failure().is_none()).collect();
    crate::util::median(runs.into_iter().map(round_rate).collect()).unwrap_or(0.0)
}

/// Frames that start an OS thread, before Rust's own start-up runs.
fn is_thread_entry(name: &str) -> bool {
    let last = name.rsplit("::").next().unwrap_or(name);
    ["start_thread", "thread_start", "clone3", "__clone", "clone"].contains(&last)
}

/// pprof's samples as folded stacks, outermost frame first.
fn native_folded(report: &pprof::Report) -> Vec<(String, u64)> {
    let mut stacks: std::collections::HashMap<String, u64> = std::collections::HashMap::new();
    for (frames, count) in &report.data {
        let mut line = String::from("native");
        // From past std's start-up marker, as Rust's own backtraces cut:
        // a thread's spawn and catch_unwind frames say nothing. A sample
        // taken while a thread starts or ends has no marker yet; it is cut
        // past the OS's thread entry instead.
        let names: Vec<String> = frames.frames.iter().rev().flat_map(|f| f.iter().rev()).map(pprof::Symbol::name).collect();
        let marker = names.iter().rposition(|n| n.contains("__rust_begin_short_backtrace"));
        let from = marker.or_else(|| names.iter().rposition(|n| is_thread_entry(n))).map_or(0, |i| i + 1);
        for name in &names[from..] {
            line.push(';');
            line.push_str(&crate::plugin::sampler::folded_frame(name));
        }
        *stacks.entry(line).or_default() += u64::try_from(*count).unwrap_or(0);
    }
    let mut out: Vec<(String, u64)> = stacks.into_iter().collect();
    out.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    out
}
