//! The watchdog's action when a plugin call stalls: the stuck thread
//! cannot be stopped, so the finished runs plus the stuck one, failed,
//! are saved, and the progress sink is told (the CLI then exits).

use std::path::Path;
use std::sync::{Arc, Mutex};

use super::{Event, Progress};
use crate::bench;
use crate::config::BenchConfig;
use crate::plugin::PluginHost;
use crate::record::{BenchResult, VariantResult};

pub(super) fn on_stall(
    host: &Arc<PluginHost>,
    config: &BenchConfig,
    json: &Path,
    saved: &Arc<Mutex<Vec<VariantResult>>>,
    limit: std::time::Duration,
    progress: &Arc<dyn Progress>,
    interrupt: &Arc<std::sync::atomic::AtomicBool>,
) -> bench::Watchdog {
    let (host, config, json, saved, progress) = (Arc::clone(host), config.clone(), json.to_path_buf(), Arc::clone(saved), Arc::clone(progress));
    let on_stall = move |variant: &crate::config::Variant, failure: &crate::record::Failure| {
        let mut variants = saved.lock().unwrap_or_else(|p| p.into_inner()).clone();
        variants.push(VariantResult::failed(variant.into(), failure.clone()));
        let record = BenchResult {
            schema: crate::record::SCHEMA_VERSION,
            provenance: crate::record::Provenance::collect(bench::engine_info(&host), &variants),
            config: (&config).into(),
            variants,
            stop: None,
            profiles: Vec::new(),
        };
        let kept = match record.save(&json) {
            Ok(()) => format!("the {} finished runs and this failure are in {}", record.variants.len() - 1, json.display()),
            Err(e) => format!("and saving the record failed: {e}"),
        };
        progress.event(Event::Stalled { variant: &variant.name, message: &failure.message, kept: &kept });
    };
    bench::Watchdog { limit, interrupt: Some(Arc::clone(interrupt)), on_stall: Arc::new(on_stall) }
}

/// The watchdog of a sweep's checks, before any point runs: a stall is
/// told to the progress sink, with nothing to keep.
pub(super) fn before_any_run(limit: std::time::Duration, progress: &Arc<dyn Progress>, interrupt: &Arc<std::sync::atomic::AtomicBool>) -> bench::Watchdog {
    let progress = Arc::clone(progress);
    let on_stall = move |variant: &crate::config::Variant, failure: &crate::record::Failure| {
        let kept = "nothing ran: the sweep's points were being checked";
        progress.event(Event::Stalled { variant: &variant.name, message: &failure.message, kept });
    };
    bench::Watchdog { limit, interrupt: Some(Arc::clone(interrupt)), on_stall: Arc::new(on_stall) }
}
