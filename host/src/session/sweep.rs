//! A config with a `[sweep]`: every point a bench of its own in a folder
//! of the sweep's directory, all checked before the first runs, then the
//! sweep's points merged and its report written.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::error::io;
use super::{Event, Progress, Ran, SessionError, SessionOptions, name_of};
use crate::config::{BenchConfig, Knob, ParamValue, Sweep};
use crate::plugin::{EngineSettings, PluginHost};
use crate::record::sweep::merge;
use crate::report;

/// The values `--points` picks (all of them without it).
fn selected<'s>(sweep: &'s Sweep, points: &[String]) -> Result<Vec<&'s ParamValue>, SessionError> {
    if points.is_empty() {
        return Ok(sweep.values.iter().collect());
    }
    points
        .iter()
        .map(|p| {
            sweep.values.iter().find(|v| v.to_string() == p.trim()).ok_or_else(|| {
                let all: Vec<String> = sweep.values.iter().map(ToString::to_string).collect();
                SessionError::Points(format!("--points {p}: the sweep over `{}` has no such value (it has {})", sweep.over, all.join(", ")))
            })
        })
        .collect()
}

/// Every selected point's config, checked before any runs: each value
/// applies, each folder name is its own, a stream file is not swept over
/// what it fixes, and each point passes the bench's preflight. A refused
/// sweep has run nothing and leaves nothing.
fn checked_points<'v>(
    host: &Arc<PluginHost>,
    base: &BenchConfig,
    sweep: &Sweep,
    values: &[&'v ParamValue],
    dog: &crate::bench::Watchdog,
) -> Result<Vec<(&'v ParamValue, BenchConfig)>, SessionError> {
    if base.workload.stream.is_some() && matches!(sweep.knob, Knob::Threads | Knob::RowsPerBatch) {
        return Err(SessionError::Points(format!(
            "a sweep over `{}` of a stream file would replay the identical stream at every point (the file fixes its threads and batches); sweep a generated workload, or a variant's knob",
            sweep.over
        )));
    }
    let mut folders: HashMap<String, &ParamValue> = HashMap::new();
    for value in values {
        if let Some(other) = folders.insert(sweep.dir_name(value), value) {
            let over = &sweep.over;
            return Err(SessionError::Points(format!(
                "{over} = {other} and {over} = {value} would share the folder `{}`: give values that differ in letters or digits",
                sweep.dir_name(value)
            )));
        }
    }
    values
        .iter()
        .map(|value| {
            let config = sweep.point(base, value).map_err(|e| SessionError::Points(format!("{} = {value}: {e}", sweep.over)))?;
            crate::bench::preflight(host, &config, Some(dog)).map_err(|e| SessionError::Points(format!("{} = {value}: {e}", sweep.over)))?;
            Ok((*value, config))
        })
        .collect()
}

/// A plugin parameter's sweep, applied only to the variants whose plugin
/// has the parameter (each plugin asked with its configured parameters);
/// refused when none has it.
fn narrowed(host: &Arc<PluginHost>, base: &BenchConfig, sweep: &Sweep, current: &std::sync::Mutex<usize>) -> Result<Sweep, SessionError> {
    let Knob::Param(kind, param) = &sweep.knob else { return Ok(sweep.clone()) };
    let mut sweep = sweep.clone();
    for (i, v) in base.variants.iter().enumerate() {
        *current.lock().unwrap_or_else(|p| p.into_inner()) = i;
        let strategy = v.strategy(*kind);
        let has = !strategy.plugin.is_empty() && {
            let refused = |e: String| SessionError::Points(format!("`{}`: variant `{}`'s {kind} `{}`: {e}", sweep.over, v.name, strategy.plugin));
            let plugin = host.load_as(strategy.plugin, *kind).map_err(|e| refused(e.to_string()))?;
            let described = crate::check::describe(host, &plugin, &crate::config::params(strategy.params)).map_err(|e| refused(e.to_string()))?;
            described.params.iter().any(|(name, _)| name == param)
        };
        if !has {
            sweep.not_applied.push(v.name.clone());
        }
    }
    if sweep.not_applied.len() == base.variants.len() {
        return Err(SessionError::Points(format!("`sweep.over = \"{}\"`: no variant's {kind} plugin has a parameter `{param}`", sweep.over)));
    }
    Ok(sweep)
}

/// Runs each selected point into its own folder of one sweep directory.
pub(super) fn run(
    base: &BenchConfig,
    sweep: &Sweep,
    options: &SessionOptions,
    progress: &Arc<dyn Progress>,
    interrupt: &Arc<AtomicBool>,
) -> Result<Ran, SessionError> {
    let values = selected(sweep, &options.points)?;
    let name = name_of(base);
    let shown: Vec<String> = values.iter().map(ToString::to_string).collect();
    let host = PluginHost::new(EngineSettings { build_crates: options.build, native_crates: options.native, ..EngineSettings::default() })?;
    // Its checks call plugins too: watched, so one that never returns
    // is named and one signal ends the wait.
    let dog = super::watchdog::before_any_run(options.stall, progress, interrupt);
    let current = std::sync::Mutex::new(0);
    let sweep = &crate::bench::watched(Some(&dog), &base.variants, &current, || narrowed(&host, base, sweep, &current))?;
    progress.event(Event::SweepStarted { name, over: &sweep.over, values: &shown, not_applied: &sweep.not_applied });
    let configs = checked_points(&host, base, sweep, &values, &dog)?;
    let dir = super::run_dir::create(&options.out, name)?;
    let mut points = Vec::new();
    let mut failed: Option<SessionError> = None;
    for (i, (value, config)) in configs.iter().enumerate() {
        let point_dir = dir.join(sweep.dir_name(value));
        std::fs::create_dir(&point_dir).map_err(io(&point_dir))?;
        progress.event(Event::SweepPoint { index: i + 1, of: values.len(), over: &sweep.over, value: &value.to_string() });
        let (result, json) = match super::one(config, options, point_dir.clone(), progress, interrupt) {
            Ok(ran) => ran,
            Err(e) => {
                // A point refused after all: nothing of an empty sweep is left.
                if points.is_empty() {
                    let _ = std::fs::remove_dir_all(&dir);
                }
                return Err(e);
            }
        };
        if let Err(e) = super::ended(config, options, &result, &json, interrupt) {
            failed.get_or_insert(e);
        }
        points.push((point_dir.display().to_string(), result));
        if interrupt.load(Ordering::Relaxed) {
            break;
        }
    }
    let ran = points.len();
    let merged = merge(points)?;
    let html = dir.join("report.html");
    crate::util::files::write_whole(&html, report::sweep::html(&merged).as_bytes()).map_err(io(&html))?;
    progress.event(Event::SweepFinished { sweep: &merged, dir: &dir, html: &html });
    failed.map_or(Ok(Ran::Sweep { dir, points: ran }), Err)
}
