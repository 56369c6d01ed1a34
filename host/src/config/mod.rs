//! Bench configs (TOML): a workload plus the variants to compare. Unknown
//! keys and bad values are errors that name the file, the line and the key.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Deserializer, Serialize};

mod param;
mod rounds;
mod sweep;

pub use param::ParamValue;

pub use rounds::{Decide, MAX_TIME, VerifyRounds, Warmup, round_count, rse_target, time_ceiling};
pub use sweep::{Knob, MAX_POINTS, Sweep, SweepPoint};

use crate::pool::PoolMode;
use crate::seam::Kind;
use crate::workload::{Profile, resolve_stream_path};
use crate::write_path::Coalescing;

/// The config `memlab bench` runs with no argument.
pub const DEFAULT_CONFIG: &str = include_str!("../../../benches/default.toml");

/// A config that cannot be used; the message names file, line and key.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{file}: {source}")]
    Read { file: String, source: std::io::Error },
    #[error("{file}: {message}")]
    Invalid { file: String, message: String },
}

/// A whole bench config, resolved: named configurations expanded into
/// the variants, the workload's profile file loaded.
#[derive(Debug, Clone)]
pub struct BenchConfig {
    /// Name, description, repeats.
    pub bench: BenchInfo,
    /// The stream every variant receives.
    pub workload: Profile,
    /// The variants, run one after another on the same stream.
    pub variants: Vec<Variant>,
    /// `[sweep]`: the points to run this config at, if any.
    pub sweep: Option<Sweep>,
    /// Which point of a sweep this config is (set by `Sweep::point`).
    pub point: Option<SweepPoint>,
}

/// What the bench is about, and how often to run it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BenchInfo {
    /// A short name, used for the run directory.
    pub name: String,
    /// What the comparison is meant to show.
    pub description: String,
    /// Runs of every variant, interleaved: A B A B ... (1 to 100).
    #[serde(deserialize_with = "repeats")]
    pub repeats: usize,
    /// Seconds between interval lines.
    pub interval: f64,
    /// An epoch deadline per plugin call, in milliseconds (off if unset):
    /// a call that runs longer traps, classified as a deadline.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call_deadline_ms: Option<f64>,
    /// What each run leaves out of its steady-state rate.
    pub warmup: Warmup,
    /// A ratio within this of 1 is "the same" (0 to 0.5; 0.02 is 2%).
    pub threshold: f64,
    /// Rounds until every verdict is decided; without it, `repeats`
    /// rounds run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decide: Option<Decide>,
    /// Which rounds are verified.
    pub verify_rounds: VerifyRounds,
    /// After the measured rounds, one profiled round of each variant for
    /// its flame graphs (`--profile`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub profile: bool,
}

impl Default for BenchInfo {
    fn default() -> Self {
        BenchInfo {
            name: String::new(),
            description: String::new(),
            repeats: 1,
            interval: 0.25,
            call_deadline_ms: None,
            warmup: Warmup::default(),
            threshold: 0.02,
            decide: None,
            verify_rounds: VerifyRounds::All,
            profile: false,
        }
    }
}

/// The file as written: variants may name configurations.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    #[serde(default)]
    bench: BenchInfo,
    workload: RawWorkload,
    #[serde(default)]
    memtable: BTreeMap<String, Named>,
    #[serde(default)]
    allocator: BTreeMap<String, Named>,
    #[serde(default)]
    serializer: BTreeMap<String, Named>,
    #[serde(rename = "variant", default)]
    variants: Vec<RawVariant>,
    #[serde(default)]
    sweep: Option<sweep::RawSweep>,
}

/// `[workload]`: a profile inline, or `profile = "file"` plus overrides.
#[derive(Debug, Deserialize)]
struct RawWorkload {
    #[serde(default)]
    profile: Option<String>,
    #[serde(flatten)]
    rest: toml::Table,
}

/// A named strategy configuration, as Cassandra's
/// `memtable.configurations`: a plugin and parameters, or `inherits` from
/// another configuration of the same kind and override its parameters.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Named {
    #[serde(default)]
    plugin: Option<String>,
    #[serde(default)]
    inherits: Option<toml::Spanned<String>>,
    #[serde(default)]
    params: BTreeMap<String, ParamValue>,
    /// Memtables only: the shard count variants get unless they set one.
    #[serde(default, deserialize_with = "opt_shards")]
    shards: Option<usize>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawVariant {
    name: String,
    memtable: toml::Spanned<String>,
    #[serde(default)]
    memtable_params: BTreeMap<String, ParamValue>,
    allocator: toml::Spanned<String>,
    #[serde(default)]
    allocator_params: BTreeMap<String, ParamValue>,
    serializer: toml::Spanned<String>,
    #[serde(default)]
    serializer_params: BTreeMap<String, ParamValue>,
    #[serde(default, deserialize_with = "opt_shards")]
    shards: Option<usize>,
    #[serde(default = "default_space", deserialize_with = "byte_size")]
    memtable_space: u64,
    #[serde(default, deserialize_with = "threshold")]
    cleanup_threshold: Option<f64>,
    #[serde(default = "one", deserialize_with = "flush_writers")]
    flush_writers: usize,
    #[serde(default)]
    pool: PoolMode,
    #[serde(default)]
    coalescing: Coalescing,
    #[serde(default)]
    runtime: Runtime,
    #[serde(default = "yes")]
    verify: bool,
    #[serde(default = "default_sample")]
    verify_sample: u64,
}

fn default_sample() -> u64 {
    DEFAULT_SAMPLE
}

/// One partition in this many is sampled for the checks made as a run
/// goes (reads and scans held to the host's own record of the live state).
pub const DEFAULT_SAMPLE: u64 = 64;

fn yes() -> bool {
    true
}

/// Where strategies run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Runtime {
    /// As sandboxed wasm components.
    #[default]
    Wasm,
    /// As the native twins linked into the host.
    Native,
}

/// One configuration under test, resolved.
#[derive(Debug, Clone, Default)]
pub struct Variant {
    /// Shown in every table.
    pub name: String,
    /// Memtable plugin: a bundled name, a `.wasm` path or a crate folder.
    pub memtable: String,
    /// Its parameters.
    pub memtable_params: BTreeMap<String, ParamValue>,
    /// Allocator plugin.
    pub allocator: String,
    /// Its parameters.
    pub allocator_params: BTreeMap<String, ParamValue>,
    /// Flush serializer plugin.
    pub serializer: String,
    /// Its parameters.
    pub serializer_params: BTreeMap<String, ParamValue>,
    /// Shards, each owning an even token range (1 to 1024).
    pub shards: usize,
    /// The global memtable budget in bytes.
    pub memtable_space: u64,
    /// Share of the budget at which the live generation is switched;
    /// default `1 / (flush_writers + 1)`, as in Cassandra.
    pub cleanup_threshold: Option<f64>,
    /// Flush writer threads (1 to 64).
    pub flush_writers: usize,
    /// How the pool counts.
    pub pool: PoolMode,
    /// How client batches share boundary calls.
    pub coalescing: Coalescing,
    /// Wasm components or native twins.
    pub runtime: Runtime,
    /// Read the segments back and compare with the stream's final state
    /// (off only for strategies that keep nothing, like `null`).
    pub verify: bool,
    /// One partition in this many has its reads and scans held to the
    /// host's sample of the live memtables as the run goes; 0 turns it off.
    pub verify_sample: u64,
    /// The named configurations used, e.g. `memtable trie32 (inherits trie)`.
    pub configurations: Vec<String>,
}

impl Variant {
    /// The cleanup threshold in force.
    pub fn threshold(&self) -> f64 {
        self.cleanup_threshold.unwrap_or(1.0 / (self.flush_writers as f64 + 1.0))
    }
}

/// Parameters as plugins receive them.
pub fn params(map: &BTreeMap<String, ParamValue>) -> Vec<(String, String)> {
    map.iter().map(|(k, v)| (k.clone(), v.to_string())).collect()
}

fn one() -> usize {
    1
}

fn default_space() -> u64 {
    64 << 20
}

fn ranged<'de, D: Deserializer<'de>>(d: D, min: usize, max: usize) -> Result<usize, D::Error> {
    let n = usize::deserialize(d)?;
    if !(min..=max).contains(&n) {
        return Err(serde::de::Error::custom(format!("{n} is outside {min}..={max}")));
    }
    Ok(n)
}

fn opt_shards<'de, D: Deserializer<'de>>(d: D) -> Result<Option<usize>, D::Error> {
    ranged(d, 1, 1024).map(Some)
}

fn repeats<'de, D: Deserializer<'de>>(d: D) -> Result<usize, D::Error> {
    ranged(d, 1, 100)
}

fn flush_writers<'de, D: Deserializer<'de>>(d: D) -> Result<usize, D::Error> {
    ranged(d, 1, 64)
}

fn threshold<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    let x = f64::deserialize(d)?;
    if !(x > 0.0 && x < 1.0) {
        return Err(serde::de::Error::custom(format!("{x} must lie strictly between 0 and 1")));
    }
    Ok(Some(x))
}

/// Parses `"64MiB"`, `"1GiB"`, `"512KiB"`, `"1000B"` or a plain integer.
pub fn parse_bytes(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let split = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (digits, unit) = text.split_at(split);
    let n: u64 = digits.parse().map_err(|_| format!("`{text}` is not a size like \"64MiB\""))?;
    let scale = match unit.trim() {
        "" | "B" => 1,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        other => return Err(format!("unknown unit `{other}` in `{text}` (use B, KiB, MiB or GiB)")),
    };
    n.checked_mul(scale).ok_or_else(|| format!("`{text}` is too large"))
}

fn byte_size<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Raw {
        Number(u64),
        Text(String),
    }
    let bytes = match Raw::deserialize(d)? {
        Raw::Number(n) => n,
        Raw::Text(t) => parse_bytes(&t).map_err(serde::de::Error::custom)?,
    };
    if bytes < 1 << 20 {
        return Err(serde::de::Error::custom(format!("{bytes} bytes is below the 1MiB minimum")));
    }
    Ok(bytes)
}

impl BenchConfig {
    /// Reads and checks a config file; a profile file it names is read
    /// relative to it.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let file = path.display().to_string();
        let text = read_text(path)?;
        Self::parse_in(&file, &text, path.parent().unwrap_or(Path::new(".")))
    }

    /// Parses and checks config text; `file` names it in errors, and
    /// relative paths are taken from the current directory.
    pub fn parse(file: &str, text: &str) -> Result<Self, ConfigError> {
        Self::parse_in(file, text, Path::new("."))
    }

    fn parse_in(file: &str, text: &str, base: &Path) -> Result<Self, ConfigError> {
        let invalid = |message: String| ConfigError::Invalid { file: file.to_string(), message };
        let raw: RawConfig = toml::from_str(text).map_err(|e| invalid(one_line(text, &e)))?;
        let at = |key: &str, message: String| invalid(format!("{}{message}", key_at(text, key)));
        if !(raw.bench.interval > 0.0 && raw.bench.interval <= 3600.0) {
            return Err(at("interval", format!("`bench.interval` {} must lie in (0, 3600] seconds", raw.bench.interval)));
        }
        if raw.bench.call_deadline_ms.is_some_and(|ms| !(1.0..=3_600_000.0).contains(&ms)) {
            return Err(at("call_deadline_ms", "`bench.call_deadline_ms` must lie in 1..=3600000".into()));
        }
        if !(raw.bench.threshold > 0.0 && raw.bench.threshold <= 0.5) {
            return Err(at("threshold", format!("`bench.threshold` = {} must lie in (0, 0.5] (0.02 is 2%)", raw.bench.threshold)));
        }
        if let Some(decide) = &raw.bench.decide {
            decide.check().map_err(|(key, e)| at(key, e))?;
        }
        let name = &raw.bench.name;
        if name.starts_with('.') || !name.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)) {
            return Err(at(
                "name",
                format!("`bench.name` = {name:?} names the run's directory: use letters, digits, `-`, `_` and `.` only, not starting with `.`"),
            ));
        }
        // From the table already parsed: parsing the text again cost a
        // third of a large config's check.
        let w = &raw.workload.rest;
        if w.contains_key("stream") && (w.contains_key("ops") || w.contains_key("duration")) {
            return Err(at(
                "stream",
                "`workload.stream` replays a stream file whole: `ops` and `duration` beside it would be ignored, so they are refused".into(),
            ));
        }
        let workload = resolve_workload(file, text, base, raw.workload)?;
        if raw.variants.is_empty() {
            return Err(invalid("no `[[variant]]` to run".into()));
        }
        let kinds = [(Kind::Memtable, &raw.memtable), (Kind::Allocator, &raw.allocator), (Kind::Serializer, &raw.serializer)];
        for (kind, named) in kinds {
            for (name, n) in named.iter() {
                // Where the header is, looked up only for an error: a scan
                // per configuration made checking quadratic.
                let header = || format!("[{kind}.{name}]");
                let at = || text.lines().position(|l| l.trim() == header()).map(|n| format!("line {}: ", n + 1)).unwrap_or_default();
                if n.plugin.is_some() == n.inherits.is_some() {
                    return Err(invalid(format!("{}`{}` needs exactly one of `plugin` and `inherits`", at(), header())));
                }
                if kind != Kind::Memtable && n.shards.is_some() {
                    return Err(invalid(format!("{}`{}`: `shards` belongs to memtable configurations", at(), header())));
                }
            }
        }
        let mut variants = Vec::with_capacity(raw.variants.len());
        let mut names = std::collections::HashSet::new();
        for v in raw.variants {
            if !names.insert(v.name.clone()) {
                let second = text.match_indices(&format!("name = {:?}", v.name)).nth(1).map(|(at, _)| format!("{}: ", line_of(text, at))).unwrap_or_default();
                return Err(invalid(format!("{second}two variants are named `{}`", v.name)));
            }
            if v.verify_sample > 1 << 20 {
                return Err(at(
                    "verify_sample",
                    format!("variant `{}`: `verify_sample` must lie in 0..=1048576 (one partition in that many; 0 = off)", v.name),
                ));
            }
            if let Coalescing::Window(us) = v.coalescing
                && !(1..=crate::write_path::MAX_FIXED_WINDOW_US).contains(&us)
            {
                return Err(at(
                    "coalescing",
                    format!("variant `{}`: `coalescing = {{ window = {us} }}` must lie in 1..={} µs", v.name, crate::write_path::MAX_FIXED_WINDOW_US),
                ));
            }
            if v.cleanup_threshold.is_some_and(|t| !(0.01..=1.0).contains(&t)) {
                return Err(at("cleanup_threshold", format!("variant `{}`: `cleanup_threshold` must lie in 0.01..=1 (a share of `memtable_space`)", v.name)));
            }
            let mut used = Vec::new();
            let mut located = |kind: Kind, named: &BTreeMap<String, Named>, name: &toml::Spanned<String>| {
                let mut r = resolve(text, kind, named, name, &mut used).map_err(&invalid)?;
                r.plugin = locate(base, kind, &r.plugin).map_err(|e| invalid(format!("{}: {e}", line_of(text, name.span().start))))?;
                Ok::<_, ConfigError>(r)
            };
            let memtable = located(Kind::Memtable, &raw.memtable, &v.memtable)?;
            let allocator = located(Kind::Allocator, &raw.allocator, &v.allocator)?;
            let serializer = located(Kind::Serializer, &raw.serializer, &v.serializer)?;
            let merge = |mut base: BTreeMap<String, ParamValue>, over: BTreeMap<String, ParamValue>| {
                base.extend(over);
                base
            };
            variants.push(Variant {
                name: v.name,
                memtable: memtable.plugin,
                memtable_params: merge(memtable.params, v.memtable_params),
                allocator: allocator.plugin,
                allocator_params: merge(allocator.params, v.allocator_params),
                serializer: serializer.plugin,
                serializer_params: merge(serializer.params, v.serializer_params),
                shards: v.shards.or(memtable.shards).unwrap_or(1),
                memtable_space: v.memtable_space,
                cleanup_threshold: v.cleanup_threshold,
                flush_writers: v.flush_writers,
                pool: v.pool,
                coalescing: v.coalescing,
                runtime: v.runtime,
                verify: v.verify,
                verify_sample: v.verify_sample,
                configurations: used,
            });
        }
        let mut config = BenchConfig { bench: raw.bench, workload, variants, sweep: None, point: None };
        if let Some(sweep) = raw.sweep {
            config.sweep = Some(Sweep::parse(sweep, &config, text).map_err(|e| at("over", e))?);
        }
        Ok(config)
    }
}

/// A plugin path in a config is taken from the config's folder, like
/// every other path in it; a bundled name or an absolute path stays as
/// it is. A config written for the old rule (paths from the current
/// folder) is told what changed.
fn locate(base: &Path, kind: Kind, spec: &str) -> Result<String, String> {
    let path = Path::new(spec);
    if crate::registry::find_kind(spec, kind).is_some() || path.is_absolute() || spec.is_empty() || base == Path::new(".") {
        return Ok(spec.to_string());
    }
    let from_config = base.join(path);
    if from_config.exists() || !path.exists() {
        return Ok(from_config.display().to_string());
    }
    Err(format!(
        "`{spec}` is not in the config's folder ({}), but in the current one: plugin paths in a config are taken from the config's folder, as profiles and streams are; write it relative to the config, or absolute",
        base.display()
    ))
}

/// A strategy as a variant ends up using it.
struct Resolved {
    plugin: String,
    params: BTreeMap<String, ParamValue>,
    shards: Option<usize>,
}

/// Follows `inherits` from the configuration `name` (or takes `name` as a
/// plugin when no configuration has it), merging parameters child-last.
fn resolve(text: &str, kind: Kind, named: &BTreeMap<String, Named>, name: &toml::Spanned<String>, used: &mut Vec<String>) -> Result<Resolved, String> {
    let Some(mut current) = named.get(name.get_ref()) else {
        return Ok(Resolved { plugin: name.get_ref().clone(), params: BTreeMap::new(), shards: None });
    };
    let mut chain = vec![name.get_ref().clone()];
    // Beside the chain, for a lookup per link: a long chain stays linear.
    let mut seen: std::collections::HashSet<&str> = std::collections::HashSet::from([name.get_ref().as_str()]);
    let mut layers = vec![current];
    while let Some(parent) = &current.inherits {
        let at = || line_of(text, parent.span().start);
        current = named
            .get(parent.get_ref())
            .ok_or_else(|| format!("{}: `inherits = \"{}\"` names no `[{kind}.{}]` configuration", at(), parent.get_ref(), parent.get_ref()))?;
        if !seen.insert(parent.get_ref().as_str()) {
            return Err(format!("{}: `[{kind}.*]` configurations inherit in a cycle: {} -> {}", at(), chain.join(" -> "), parent.get_ref()));
        }
        chain.push(parent.get_ref().clone());
        layers.push(current);
    }
    let plugin = current.plugin.clone().unwrap_or_default();
    let mut params = BTreeMap::new();
    let mut shards = None;
    for layer in layers.iter().rev() {
        params.extend(layer.params.clone());
        shards = layer.shards.or(shards);
    }
    used.push(format!("{kind} {}", chain.join(" < ")));
    Ok(Resolved { plugin, params, shards })
}

/// serde names a table's span, not the key, for an integer that fits no
/// TOML integer: find the key in the span whose value is too long.
fn too_large(text: &str, span: std::ops::Range<usize>) -> Option<String> {
    // The span may be the table's header alone: look to the next table.
    let start = span.start.min(text.len());
    let end = text[span.end.min(text.len())..].find("\n[").map_or(text.len(), |at| span.end.min(text.len()) + at);
    let within = text.get(start..end)?;
    let first = text.get(..span.start)?.matches('\n').count();
    within.lines().enumerate().find_map(|(n, line)| {
        line.split([',', '{', '}']).find_map(|part| {
            let (key, value) = part.split_once('=')?;
            let value = value.trim().replace('_', "");
            let digits = value.strip_prefix('-').unwrap_or(&value);
            (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) && value.parse::<i64>().is_err())
                .then(|| format!("line {} (`{}`): `{}` = {value} is too large: TOML integers go up to {}", first + n + 1, line.trim(), key.trim(), i64::MAX))
        })
    })
}

/// Where `key` (a dotted path's last part) is set in `text`, for an error
/// that serde's spans cannot place: `line N (`...`): ` or nothing.
fn key_at(text: &str, key: &str) -> String {
    let last = key.rsplit('.').next().unwrap_or(key);
    let found = text.lines().enumerate().find(|(_, l)| {
        let l = l.trim_start();
        l.strip_prefix(last).is_some_and(|rest| rest.trim_start().starts_with('=')) || l.contains(&format!(" {last} =")) || l.contains(&format!("{{{last} ="))
    });
    found.map(|(n, l)| format!("line {} (`{}`): ", n + 1, l.trim())).unwrap_or_default()
}

/// The largest config or profile file memlab reads (`/dev/zero` is not one).
pub const MAX_TEXT_BYTES: u64 = 16 << 20;

/// A file's text, at most `MAX_TEXT_BYTES`; invalid UTF-8 is named by
/// line and byte.
pub(crate) fn read_text(path: &Path) -> Result<String, ConfigError> {
    let file = path.display().to_string();
    let bytes = crate::input::read(path, MAX_TEXT_BYTES, "config or profile").map_err(|e| match e {
        crate::input::ReadError::Io { source, .. } => ConfigError::Read { file: file.clone(), source },
        crate::input::ReadError::TooLarge { .. } => {
            ConfigError::Invalid { file: file.clone(), message: format!("larger than the {} MiB a config or profile may be", MAX_TEXT_BYTES >> 20) }
        }
        other => ConfigError::Invalid { file: file.clone(), message: other.reason() },
    })?;
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let bytes = e.as_bytes();
        let line = bytes[..at].iter().filter(|&&b| b == b'\n').count() + 1;
        ConfigError::Invalid { file, message: format!("line {line}, byte {at}: not UTF-8 text (byte {:#04x})", bytes[at]) }
    })
}

fn line_of(text: &str, offset: usize) -> String {
    let line_no = text.get(..offset).unwrap_or("").matches('\n').count() + 1;
    let line = text.lines().nth(line_no - 1).unwrap_or("").trim();
    format!("line {line_no} (`{line}`)")
}

/// The config's `[workload]`: inline, or a profile file with the table's
/// other top-level keys replacing the file's.
fn resolve_workload(file: &str, text: &str, base: &Path, raw: RawWorkload) -> Result<Profile, ConfigError> {
    let invalid = |message: String| ConfigError::Invalid { file: file.to_string(), message };
    let mut profile = match raw.profile {
        None => {
            // Read again from the text itself, so errors carry its lines.
            #[derive(Deserialize)]
            struct Inline {
                workload: Profile,
            }
            let inline: Inline = toml::from_str(text).map_err(|e| invalid(one_line(text, &e)))?;
            let mut p = inline.workload;
            resolve_stream_path(&mut p, base);
            p
        }
        Some(path) if path.is_empty() => return Err(invalid(format!("{}`workload.profile` is empty: name a profile file", key_at(text, "profile")))),
        Some(path) => {
            let path = base.join(path);
            let mut p = load_profile(&path)?;
            if !raw.rest.is_empty() {
                let mut merged = toml::Table::try_from(&p).map_err(|e| invalid(e.to_string()))?;
                merged.extend(raw.rest);
                p = Profile::deserialize(merged).map_err(|e| invalid(format!("[workload] overrides of {}: {}", path.display(), e.message().trim_end())))?;
            }
            p
        }
    };
    if profile.name.is_empty() {
        profile.name = "inline".into();
    }
    profile.validate().map_err(|e| invalid(format!("{}{e}", key_at(text, e.key))))?;
    Ok(profile)
}

/// Reads a profile file (TOML, the profile's keys at top level).
pub fn load_profile(path: &Path) -> Result<Profile, ConfigError> {
    let file = path.display().to_string();
    let text = read_text(path)?;
    let invalid = |message: String| ConfigError::Invalid { file: file.clone(), message };
    let mut profile: Profile = toml::from_str(&text).map_err(|e| invalid(one_line(&text, &e)))?;
    resolve_stream_path(&mut profile, path.parent().unwrap_or(Path::new(".")));
    if profile.name.is_empty() {
        profile.name = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    }
    profile.validate().map_err(|e| invalid(format!("{}{e}", key_at(&text, e.key))))?;
    Ok(profile)
}

/// toml's errors span several lines with a caret; keep the facts on one:
/// the line number, the line itself, and the message.
pub fn one_line(text: &str, e: &toml::de::Error) -> String {
    let message = e.message().trim_end();
    let Some(span) = e.span() else { return message.to_string() };
    if let Some(named) = too_large(text, span.clone()) {
        return named;
    }
    let start = span.start.min(text.len());
    let line_no = text.get(..start).unwrap_or("").matches('\n').count() + 1;
    let line = text.lines().nth(line_no - 1).unwrap_or("").trim();
    format!("line {line_no} (`{line}`): {message}")
}
