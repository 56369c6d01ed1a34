//! `memlab bench` of a config with a `[sweep]`: every point a bench of
//! its own in a folder of the sweep's directory, then the sweep's table
//! and report; `memlab show` of a sweep's directory or of several points.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::{BenchFlags, CliError, bench_in, create_run_dir, ended, io, read_run, run_json};
use crate::config::{BenchConfig, ParamValue, Sweep};
use crate::record::sweep::merge;
use crate::report;

/// The values `--points` picks (all of them without it).
fn selected<'s>(sweep: &'s Sweep, points: &[String]) -> Result<Vec<&'s ParamValue>, CliError> {
    if points.is_empty() {
        return Ok(sweep.values.iter().collect());
    }
    points
        .iter()
        .map(|p| {
            sweep.values.iter().find(|v| v.to_string() == p.trim()).ok_or_else(|| {
                let all: Vec<String> = sweep.values.iter().map(ToString::to_string).collect();
                CliError::Points(format!("--points {p}: the sweep over `{}` has no such value (it has {})", sweep.over, all.join(", ")))
            })
        })
        .collect()
}

/// Every selected point's config, checked before any runs: each value
/// applies, each folder name is its own, a stream file is not swept over
/// what it fixes, and each point passes the bench's preflight. A refused
/// sweep has run nothing and leaves nothing.
fn checked_points<'v>(base: &BenchConfig, sweep: &Sweep, values: &[&'v ParamValue], build: bool) -> Result<Vec<(&'v ParamValue, BenchConfig)>, CliError> {
    use crate::config::Knob;
    if base.workload.stream.is_some() && matches!(sweep.knob, Knob::Threads | Knob::RowsPerBatch) {
        return Err(CliError::Points(format!(
            "a sweep over `{}` of a stream file would replay the identical stream at every point (the file fixes its threads and batches); sweep a generated workload, or a variant's knob",
            sweep.over
        )));
    }
    let mut folders: std::collections::HashMap<String, &ParamValue> = std::collections::HashMap::new();
    for value in values {
        if let Some(other) = folders.insert(sweep.dir_name(value), value) {
            return Err(CliError::Points(format!(
                "{} = {other} and {} = {value} would share the folder `{}`: give values that differ in letters or digits",
                sweep.over,
                sweep.over,
                sweep.dir_name(value)
            )));
        }
    }
    let host = crate::plugin::PluginHost::new(crate::plugin::EngineSettings { build_crates: build, ..crate::plugin::EngineSettings::default() })?;
    values
        .iter()
        .map(|value| {
            let config = sweep.point(base, value).map_err(|e| CliError::Points(format!("{} = {value}: {e}", sweep.over)))?;
            crate::bench::preflight(&host, &config, None).map_err(|e| CliError::Points(format!("{} = {value}: {e}", sweep.over)))?;
            Ok((*value, config))
        })
        .collect()
}

/// Runs each selected point into its own folder of one sweep directory.
pub(super) fn bench_sweep(base: &BenchConfig, sweep: &Sweep, flags: &BenchFlags, interrupt: &Arc<AtomicBool>) -> Result<(), CliError> {
    let values = selected(sweep, &flags.points)?;
    let name = if base.bench.name.is_empty() { "bench".to_string() } else { base.bench.name.clone() };
    let shown: Vec<String> = values.iter().map(ToString::to_string).collect();
    sayln!("memlab sweep: {name} over `{}` = {} ({} point(s)), every variant at each", sweep.over, shown.join(", "), values.len());
    let configs = checked_points(base, sweep, &values, flags.build)?;
    let dir = create_run_dir(&flags.out, &name)?;
    let mut points = Vec::new();
    let mut failed: Option<CliError> = None;
    for (i, (value, config)) in configs.iter().enumerate() {
        let point_dir = dir.join(sweep.dir_name(value));
        std::fs::create_dir(&point_dir).map_err(io(&point_dir))?;
        sayln!("\n=== sweep point {} of {}: {} = {value} ===", i + 1, values.len(), sweep.over);
        let (result, json) = match bench_in(config, flags, point_dir.clone(), interrupt) {
            Ok(ran) => ran,
            Err(e) => {
                // A point refused after all: nothing of an empty sweep is left.
                if points.is_empty() {
                    let _ = std::fs::remove_dir_all(&dir);
                }
                return Err(e);
            }
        };
        if let Err(e) = ended(config, flags, &result, &json, interrupt) {
            failed.get_or_insert(e);
        }
        points.push((point_dir.display().to_string(), result));
        if interrupt.load(Ordering::Relaxed) {
            break;
        }
    }
    let merged = merge(points)?;
    say!("\n{}", report::sweep::table(&merged));
    let html = dir.join("report.html");
    std::fs::write(&html, report::sweep::html(&merged)).map_err(io(&html))?;
    sayln!("\nSaved: each point's run.json under {}, and the sweep's {}", dir.display(), html.display());
    failed.map_or(Ok(()), Err)
}

/// The records behind `path`: its own, or its folders' (a sweep's directory).
fn records_in(path: &Path) -> Result<Vec<(String, crate::record::BenchResult)>, CliError> {
    if run_json(path).is_file() {
        return Ok(vec![(path.display().to_string(), read_run(path)?)]);
    }
    let listing = std::fs::read_dir(path).map_err(io(path))?;
    let mut dirs: Vec<PathBuf> = listing.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| crate::record::is_run_dir(p)).collect();
    if dirs.is_empty() {
        return Err(CliError::Points(format!("{}: no run.json (or run.json.gz) there, nor in its folders", path.display())));
    }
    dirs.sort();
    dirs.iter().map(|d| Ok((d.display().to_string(), read_run(d)?))).collect()
}

/// Prints the merged points of one sweep; `--html` writes its report.
pub(super) fn show(paths: &[PathBuf], html: Option<&Path>) -> Result<(), CliError> {
    let mut records = Vec::new();
    for path in paths {
        records.extend(records_in(path)?);
    }
    let sweep = merge(records)?;
    say!("{}", report::sweep::table(&sweep));
    if let Some(path) = html {
        std::fs::write(path, report::sweep::html(&sweep)).map_err(io(path))?;
    }
    Ok(())
}
