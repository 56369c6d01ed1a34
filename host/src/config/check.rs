//! From the file as written to the config that runs: each table checked
//! in turn (the bench, the named configurations, each variant, the
//! sweep), every error placed at its line, in time linear in the text.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use super::named::Resolved;
use super::named::{locate, resolve};
use super::raw::{Named, RawConfig, RawSettings, RawVariant};
use super::shape::CoalescingSetting;
use super::text::{key_at, line_of};
use super::workload::resolve_workload;
use super::{BenchConfig, BenchInfo, Chosen, ConfigError, Runtime, Sweep, Variant};
use crate::seam::Kind;
use crate::seam::KindSpecs;

/// The text a config came from, for errors and paths.
pub(super) struct Source<'a> {
    pub(super) file: &'a str,
    pub(super) text: &'a str,
    pub(super) base: &'a Path,
}

impl Source<'_> {
    fn invalid(&self, message: String) -> ConfigError {
        ConfigError::Invalid { file: self.file.to_string(), message }
    }

    /// An error placed at the line that sets `key`.
    fn at(&self, key: &str, message: String) -> ConfigError {
        self.invalid(format!("{}{message}", key_at(self.text, key)))
    }
}

/// The most characters of a name memlab turns into a file or folder
/// name (with a round number and a repeat around it, well inside the
/// 255 bytes a file name may be).
const MAX_NAME_CHARS: usize = 100;

/// Why a name is refused as too long, quoting its start only.
fn too_long(what: &str, name: &str, becomes: &str) -> String {
    format!("{what} (`{}`) is {} characters: it names {becomes}, so it may be at most {MAX_NAME_CHARS}", super::text::quote(name), name.chars().count())
}

pub(super) fn resolved(raw: RawConfig, src: &Source<'_>) -> Result<BenchConfig, ConfigError> {
    let RawConfig { tables: raw, named } = raw;
    bench(&raw.bench, src)?;
    // From the table already parsed: parsing the text again cost a
    // third of a large config's check.
    let w = &raw.workload.rest;
    if w.contains_key("stream") && (w.contains_key("ops") || w.contains_key("duration")) {
        return Err(
            src.at("stream", "`workload.stream` replays a stream file whole: `ops` and `duration` beside it would be ignored, so they are refused".into())
        );
    }
    let workload = resolve_workload(src.file, src.text, src.base, raw.workload)?;
    if raw.variants.is_empty() {
        return Err(src.invalid("no `[[variant]]` to run".into()));
    }
    for (&kind, named) in &named {
        configurations(kind, named, src)?;
    }
    let mut variants = Vec::with_capacity(raw.variants.len());
    let mut names = HashSet::new();
    for (i, v) in raw.variants.into_iter().enumerate() {
        let name = &v.settings.name;
        if name.chars().count() > MAX_NAME_CHARS {
            return Err(src.invalid(too_long(&format!("the name of variant {}", i + 1), name, "a folder of the run")));
        }
        if !names.insert(name.clone()) {
            let second = src.text.match_indices(&format!("name = {name:?}")).nth(1).map(|(at, _)| format!("{}: ", line_of(src.text, at))).unwrap_or_default();
            return Err(src.invalid(format!("{second}two variants are named `{name}`")));
        }
        variants.push(variant(v, &named, src)?);
    }
    let mut config = BenchConfig { bench: raw.bench, workload, variants, sweep: None, point: None };
    if let Some(sweep) = raw.sweep {
        config.sweep = Some(Sweep::parse(sweep, &config, src.text).map_err(|e| src.at("over", e))?);
    }
    Ok(config)
}

/// `[bench]`'s values, each in its range.
fn bench(b: &BenchInfo, src: &Source<'_>) -> Result<(), ConfigError> {
    if !(b.interval > 0.0 && b.interval <= 3600.0) {
        return Err(src.at("interval", format!("`bench.interval` {} must lie in (0, 3600] seconds", b.interval)));
    }
    if b.call_deadline_ms.is_some_and(|ms| !(1.0..=3_600_000.0).contains(&ms)) {
        return Err(src.at("call_deadline_ms", "`bench.call_deadline_ms` must lie in 1..=3600000".into()));
    }
    if !(b.threshold > 0.0 && b.threshold <= 0.5) {
        return Err(src.at("threshold", format!("`bench.threshold` = {} must lie in (0, 0.5] (0.02 is 2%)", b.threshold)));
    }
    if let Some(decide) = &b.decide {
        decide.check().map_err(|(key, e)| src.at(key, e))?;
    }
    let name = &b.name;
    if name.chars().count() > MAX_NAME_CHARS {
        return Err(src.at("name", too_long("`bench.name`", name, "the run's directory")));
    }
    if name.starts_with('.') || !name.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)) {
        return Err(
            src.at("name", format!("`bench.name` = {name:?} names the run's directory: use letters, digits, `-`, `_` and `.` only, not starting with `.`"))
        );
    }
    Ok(())
}

/// Each `[KIND.NAME]` table: a plugin or `inherits`, and shards only on
/// memtables.
fn configurations(kind: Kind, named: &BTreeMap<String, Named>, src: &Source<'_>) -> Result<(), ConfigError> {
    for (name, n) in named {
        // Where the header is, looked up only for an error: a scan per
        // configuration made checking quadratic.
        let header = || format!("[{kind}.{name}]");
        let at = || src.text.lines().position(|l| l.trim() == header()).map(|n| format!("line {}: ", n + 1)).unwrap_or_default();
        if n.plugin.is_some() == n.inherits.is_some() {
            return Err(src.invalid(format!("{}`{}` needs exactly one of `plugin` and `inherits`", at(), header())));
        }
        if kind != Kind::Memtable && n.shards.is_some() {
            return Err(src.invalid(format!("{}`{}`: `shards` belongs to memtable configurations", at(), header())));
        }
    }
    Ok(())
}

/// One `[[variant]]`, its named configurations resolved and its own
/// parameters over theirs.
fn variant(raw: RawVariant, named: &BTreeMap<Kind, BTreeMap<String, Named>>, src: &Source<'_>) -> Result<Variant, ConfigError> {
    let RawVariant { strategies: choices, settings: v } = raw;
    settings(&v, src)?;
    let log = super::log::settings(&v, choices.get(&Kind::CommitLog).is_some_and(|c| c.plugin.is_some()))
        .map_err(|(key, e)| src.at(key, format!("variant `{}`: {e}", v.name)))?;
    let mut used = Vec::new();
    let mut strategies = BTreeMap::new();
    let mut shards = None;
    for kind in Kind::ALL {
        let choice = choices.get(&kind);
        let resolved = match choice.and_then(|c| c.plugin.as_ref()) {
            Some(name) if name.get_ref().trim().is_empty() => {
                let what = format!(
                    "variant `{}`: `{kind} = {:?}` names no {}: name a bundled one (`memlab list`) or a plugin's path",
                    v.name,
                    name.get_ref(),
                    kind.spec().noun
                );
                let without = if kind.optional() { format!(", or leave `{kind}` out to run without one") } else { String::new() };
                return Err(src.at(kind.spec().name, what + &without));
            }
            Some(name) => {
                let mut r = resolve(src.text, kind, named.get(&kind).unwrap_or(&NO_NAMED), name, &mut used).map_err(|e| src.invalid(e))?;
                r.plugin = locate(src.base, kind, &r.plugin).map_err(|e| src.invalid(format!("{}: {e}", line_of(src.text, name.span().start))))?;
                Some(r)
            }
            None if !kind.optional() => return Err(src.at("name", format!("variant `{}` names no {}: write `{kind} = \"...\"`", v.name, kind.spec().noun))),
            // A sync mode alone logs in the plainest format.
            None if kind == Kind::CommitLog && log.sync != crate::commitlog::SyncMode::None => Some(Resolved::bundled(super::log::DEFAULT_FORMAT)),
            None => None,
        };
        let own = choice.map(|c| c.params.clone()).unwrap_or_default();
        let Some(Resolved { plugin, mut params, shards: named_shards }) = resolved else {
            if !own.is_empty() {
                let key = format!("{kind}_params");
                return Err(src.at(&key, format!("variant `{}`: `{key}` without a {} (`{kind} = \"...\"`{})", v.name, kind.spec().noun, optional_hint(kind))));
            }
            continue;
        };
        shards = shards.or(named_shards);
        params.extend(own);
        strategies.insert(kind, Chosen { plugin, params });
    }
    Ok(Variant {
        name: v.name,
        strategies,
        log,
        shards: v.shards.or(shards).unwrap_or(1),
        memtable_space: v.memtable_space,
        cleanup_threshold: v.cleanup_threshold,
        flush_writers: v.flush_writers,
        pool: v.pool.into(),
        coalescing: v.coalescing.into(),
        runtime: v.runtime,
        shard_lock: v.shard_lock,
        verify: v.verify,
        verify_sample: v.verify_sample,
        configurations: used,
    })
}

/// What `shard_lock = false` needs that the file can tell: native, and
/// no coalescing.
fn unlocked(v: &RawSettings, src: &Source<'_>) -> Result<(), ConfigError> {
    let why = if v.runtime != Runtime::Native {
        "needs `runtime = \"native\"`: a wasm component instance takes one thread at a time (wasmtime 48 gives components no shared memory), so a concurrent strategy runs natively (`--native` for a crate)"
    } else if !matches!(v.coalescing, CoalescingSetting::None) {
        "runs each writer's batch on its own: coalescing, which groups them under the lock, does not apply"
    } else {
        return Ok(());
    };
    Err(src.at("shard_lock", format!("variant `{}`: `shard_lock = false` {why}", v.name)))
}

static NO_NAMED: BTreeMap<String, Named> = BTreeMap::new();

/// How a variant turns on a kind it may go without (`commitlog_sync`).
fn optional_hint(kind: Kind) -> String {
    kind.spec().optional.map(|line| format!(", or `{line}`")).unwrap_or_default()
}

/// A variant's own settings, each in its range.
fn settings(v: &RawSettings, src: &Source<'_>) -> Result<(), ConfigError> {
    if v.verify_sample > 1 << 20 {
        return Err(src.at("verify_sample", format!("variant `{}`: `verify_sample` must lie in 0..=1048576 (one partition in that many; 0 = off)", v.name)));
    }
    if let CoalescingSetting::Window(us) = v.coalescing
        && !(1..=crate::write_path::MAX_FIXED_WINDOW_US).contains(&us)
    {
        let most = crate::write_path::MAX_FIXED_WINDOW_US;
        return Err(src.at("coalescing", format!("variant `{}`: `coalescing = {{ window = {us} }}` must lie in 1..={most} µs", v.name)));
    }
    if v.shard_lock == Some(false) {
        unlocked(v, src)?;
    }
    if v.cleanup_threshold.is_some_and(|t| !(0.01..=1.0).contains(&t)) {
        return Err(src.at("cleanup_threshold", format!("variant `{}`: `cleanup_threshold` must lie in 0.01..=1 (a share of `memtable_space`)", v.name)));
    }
    Ok(())
}
