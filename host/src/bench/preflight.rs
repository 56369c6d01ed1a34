//! Preflight: every variant's strategies loaded and created once, held
//! to what they describe, before the first variant runs; and the watched
//! scope every plugin call outside a run (preflight, a sweep's checks)
//! runs in.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::{Watchdog, strategies, variant};
use crate::config::{BenchConfig, Variant};
use crate::plugin::PluginHost;
use crate::pool::MemoryPool;
use crate::seam::SeamError;

/// A variant refused before the first variant ran.
#[derive(Debug, thiserror::Error)]
#[error("variant `{variant}`: {source}")]
pub struct PreflightError {
    /// The variant's name.
    pub variant: String,
    /// What failed.
    pub source: SeamError,
}

/// Loads every variant's plugins and creates each strategy once with its
/// parameters, before the first variant runs: a missing plugin, a bad
/// parameter or a `describe` that does not echo it is refused up front,
/// naming the variant, instead of after the variants before it ran. Each
/// wasm strategy is also created again with exactly what it described and
/// must describe and behave the same (`memlab check`'s `defaults`).
pub fn preflight(host: &Arc<PluginHost>, config: &BenchConfig, watchdog: Option<&Watchdog>) -> Result<(), PreflightError> {
    preflight_watched(host, config, watchdog, None, &|_| {})
}

/// `preflight`, stopped by `interrupt` (Ctrl-C) between variants, with a
/// line to `note` every few seconds of a long one.
pub fn preflight_watched(
    host: &Arc<PluginHost>,
    config: &BenchConfig,
    watchdog: Option<&Watchdog>,
    interrupt: Option<&AtomicBool>,
    note: &(dyn Fn(&str) + Sync),
) -> Result<(), PreflightError> {
    // Watched like a run: a start function or a `create` that never
    // returns is a stall, named, not a silent hang before the first variant.
    let current = std::sync::Mutex::new(0usize);
    watched(watchdog, &config.variants, &current, || preflight_each(host, config, &current, interrupt, note))
}

/// Runs `f` with this thread's plugin calls on a board of its own,
/// watched by `watchdog` where there is one: a call that makes no
/// progress is a stall of `variants[current]`, handed to `on_stall`.
/// Every plugin call outside a variant's run (preflight, a sweep's
/// checks) runs in here.
pub fn watched<R>(watchdog: Option<&Watchdog>, variants: &[Variant], current: &std::sync::Mutex<usize>, f: impl FnOnce() -> R) -> R {
    let done = AtomicBool::new(false);
    let board = crate::seam::watch::Board::new();
    let _watched = board.enter();
    std::thread::scope(|scope| {
        if let Some(dog) = watchdog {
            scope.spawn(|| {
                let mut watch = board.watch();
                while !done.load(Ordering::Acquire) {
                    std::thread::sleep(Duration::from_millis(100));
                    if let Some(stall) = watch.stalled(dog.limit_now()) {
                        let at = (*current.lock().unwrap_or_else(|p| p.into_inner())).min(variants.len().saturating_sub(1));
                        if let Some(v) = variants.get(at) {
                            (dog.on_stall)(v, &variant::stall_failure(v, stall));
                        }
                        break;
                    }
                }
            });
        }
        let result = f();
        done.store(true, Ordering::Release);
        result
    })
}

fn preflight_each(
    host: &Arc<PluginHost>,
    config: &BenchConfig,
    current: &std::sync::Mutex<usize>,
    interrupt: Option<&AtomicBool>,
    note: &(dyn Fn(&str) + Sync),
) -> Result<(), PreflightError> {
    // Variants that differ only in what preflight does not touch (shards,
    // coalescing, threads) create the same strategies: checked once.
    let mut checked = HashSet::new();
    let mut said = Instant::now();
    for (i, v) in config.variants.iter().enumerate() {
        *current.lock().unwrap_or_else(|p| p.into_inner()) = i;
        let fail = |source: SeamError| PreflightError { variant: v.name.clone(), source };
        if interrupt.is_some_and(|i| i.load(Ordering::Relaxed)) {
            return Err(fail(SeamError::Host { operation: "preflight", detail: "interrupted (Ctrl-C or SIGTERM) before any variant ran".into() }));
        }
        if said.elapsed() >= Duration::from_secs(3) {
            note(&format!("preflight: {i} of {} variants checked ({} distinct)", config.variants.len(), checked.len()));
            said = Instant::now();
        }
        let same: Vec<String> = v.strategies().map(|(kind, s)| format!("{kind} {} {:?}", s.plugin, s.params)).collect();
        if !checked.insert((format!("{:?} {:?}", v.runtime, v.pool), same, v.memtable_space)) {
            continue;
        }
        known_params(host, v).map_err(fail)?;
        let pool = Arc::new(MemoryPool::new(v.memtable_space, v.pool));
        let strategies = strategies::strategies(host, v, &pool).map_err(fail)?;
        variant::checked_descriptions(v, strategies.describe().map_err(fail)?).map_err(fail)?;
        if v.shard_lock == Some(false) {
            concurrent((strategies.shard)(0).map_err(fail)?).map_err(fail)?;
        }
        if v.runtime == crate::config::Runtime::Wasm {
            for (kind, strategy) in v.strategies() {
                crate::check::defaults_hold(host, kind, strategy.plugin, &crate::config::params(strategy.params)).map_err(fail)?;
            }
        }
    }
    if checked.len() < config.variants.len() {
        note(&format!("preflight: {} variants checked as {} distinct sets of strategies", config.variants.len(), checked.len()));
    }
    Ok(())
}

/// Refuses a shard whose strategies do not both take concurrent writers,
/// for a variant configured without the shard lock: named up front, not
/// at its first write.
fn concurrent(shard: crate::seam::Shard) -> Result<(), SeamError> {
    let Err(shard) = shard.share() else { return Ok(()) };
    let detail = format!(
        "`shard_lock = false`: `{}` and `{}` must both take concurrent writers (`export!(concurrent ...)`, run natively); set `shard_lock = true` or leave it out",
        shard.memtable_plugin(),
        shard.allocator_plugin(),
    );
    Err(SeamError::Host { operation: "preflight", detail })
}

/// Holds each configured parameter to what its plugin describes when
/// created with none: a typo is the config's, named, and never reaches
/// the plugin to be reported as its own error. A plugin memlab has no
/// wasm build of (a crate under `--native`) is left to refuse it itself.
fn known_params(host: &Arc<PluginHost>, v: &Variant) -> Result<(), SeamError> {
    let wasm_build = |kind, plugin| v.runtime == crate::config::Runtime::Wasm || crate::registry::find_kind(plugin, kind).is_some();
    for (kind, s) in v.strategies().filter(|(kind, s)| !s.params.is_empty() && wasm_build(*kind, s.plugin)) {
        let Ok(plugin) = host.load_as(s.plugin, kind) else { continue };
        let described = crate::check::describe(host, &plugin, &[])?;
        if let Some(key) = s.params.keys().find(|key| !described.params.iter().any(|(name, _)| name == *key)) {
            let names: Vec<String> = described.params.iter().map(|(name, _)| format!("`{}`", crate::util::text::for_terminal(name))).collect();
            let known = if names.is_empty() { "none".to_string() } else { names.join(", ") };
            return Err(SeamError::UnknownParam { plugin: s.plugin.to_string(), kind, key: crate::util::text::for_terminal(key), known });
        }
    }
    Ok(())
}
