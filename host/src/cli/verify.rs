//! `memlab verify`: a recorded run's kept segments read back through the
//! serializer the run kept (held to its sha256), against the record.

use std::path::{Path, PathBuf};

use super::CliError;
use crate::bench;
use crate::plugin::{self, EngineSettings, PluginHost};
use crate::record::BenchResult;
use crate::registry;
use crate::seam::Kind;
use crate::session::KEPT_COMPONENTS;

/// The plugin of `kind` a recorded variant's segments (or log) are read
/// back with: the bundled one by name, else the component the run kept,
/// by the sha256 the record names. Never a file or crate the record
/// points at: a read-only re-check runs no code a record names outside
/// the sandbox, and no other bytes than the run's.
fn recorded_plugin(run_dir: &Path, v: &crate::record::VariantResult, kind: Kind, name: &str) -> Result<String, CliError> {
    if v.variant.runtime == crate::record::Runtime::Native || registry::find_kind(name, kind).is_some() {
        return Ok(name.to_string());
    }
    let recorded = v.plugins.iter().find(|p| p.kind == kind).map(|p| p.sha256.clone()).unwrap_or_default();
    let kept = run_dir.join(KEPT_COMPONENTS).join(format!("{recorded}.wasm"));
    if recorded.len() == 64 && recorded.bytes().all(|b| b.is_ascii_hexdigit()) && std::fs::symlink_metadata(&kept).is_ok() {
        // Through the one resolver: a kept component linked out of the
        // run is refused as a link out, not used.
        let name = crate::record::RunPath::new(format!("{KEPT_COMPONENTS}/{recorded}.wasm"));
        let kept = name.under(run_dir).map_err(|e| CliError::Verify(format!("variant `{}`: {e}", v.variant.name)))?;
        // Picked by name, held by content: a swapped file is refused.
        let bytes = crate::util::read_bounded(&kept, plugin::MAX_PLUGIN_BYTES, "kept component")
            .map_err(|e| CliError::Verify(format!("variant `{}`: {}: {e}", v.variant.name, kept.display())))?;
        let found = plugin::sha256_hex(&bytes);
        if found != recorded.to_ascii_lowercase() {
            return Err(CliError::Verify(format!(
                "variant `{}`: {} has sha256 {found}, but the record names {recorded}: it is not the component the run kept",
                v.variant.name,
                kept.display()
            )));
        }
        return Ok(kept.display().to_string());
    }
    Err(CliError::Verify(format!(
        "variant `{}`: its {kind} `{name}` is not bundled and the run kept no component with its sha256 ({}); memlab verify never loads or builds a plugin the record names from elsewhere",
        v.variant.name,
        if recorded.is_empty() { "none recorded" } else { &recorded }
    )))
}

/// `memlab verify`'s arguments.
#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// The run: its directory, or its `run.json`.
    run_dir: PathBuf,
}

/// `memlab verify`: every variant's kept segments against its record.
/// A sweep's directory: every point in turn.
pub(super) fn run(args: &Args) -> Result<(), CliError> {
    let runs = super::show::run_paths(&args.run_dir)?;
    let host = PluginHost::new(EngineSettings { instance_slots: 0, ..EngineSettings::default() })?;
    let (mut broken, mut checked) = (0, 0);
    for run in &runs {
        if runs.len() > 1 || run != &args.run_dir {
            sayln!("{}:", crate::util::text::for_terminal(&run.display().to_string()));
        }
        let (b, c) = verify_run(&host, run)?;
        (broken, checked) = (broken + b, checked + c);
    }
    if broken > 0 {
        return Err(CliError::VerifyFailed { broken, checked });
    }
    Ok(())
}

/// One run's variant rounds: how many broke (their segments or any kept
/// log), and how many were checked.
fn verify_run(host: &std::sync::Arc<PluginHost>, path: &Path) -> Result<(usize, usize), CliError> {
    let json = crate::record::file_in(path);
    let run_dir = json.parent().unwrap_or(Path::new("."));
    let record = BenchResult::load(&json)?;
    let (mut broken, mut checked) = (0, 0);
    for v in &record.variants {
        let label = format!("{} (repeat {})", v.variant.name, v.repeat);
        let Some(folder) = v.segments.as_ref().filter(|_| v.failure().is_none()) else {
            sayln!("  -     {label}: no segments kept (run the bench with --keep-segments)");
            continue;
        };
        let serializer = recorded_plugin(run_dir, v, Kind::Serializer, v.variant.plugin(Kind::Serializer))?;
        let open = bench::reader(host, v.variant.runtime.into(), &serializer, v.variant.args(Kind::Serializer))?;
        checked += 1;
        let folder = folder.under(run_dir).map_err(crate::record::RecordError::from)?;
        let mut holds = true;
        match crate::verify::recheck(&folder, v.verified.map(Into::into).as_ref(), record.schema, crate::config::DEFAULT_SAMPLE, open.as_ref()) {
            crate::verify::Recheck::Holds(x) => sayln!("  OK    {label}: {} keys, digest {:032x}, {} rows read back", x.keys, x.digest, x.rows_read),
            crate::verify::Recheck::ReadBack(rows) => {
                sayln!("  OK    {label}: {rows} rows read back, every checksum holds (a schema-{} record: no comparable digest)", record.schema)
            }
            crate::verify::Recheck::NotVerified(rows) => {
                let why = v.not_verified.as_deref().map_or_else(|| "its record holds no verified state".to_string(), str::to_string);
                sayln!("  OK    {label}: {rows} rows read back, every checksum holds; its final state was not verified at run time ({why})")
            }
            crate::verify::Recheck::Broken(why) => {
                holds = false;
                sayln!("  FAIL  {label}: {why}");
            }
        }
        holds &= kept_log(host, run_dir, &folder, v, &label)? == 0;
        broken += usize::from(!holds);
    }
    Ok((broken, checked))
}

/// Replays a variant's kept commit log, segment by segment; the number of
/// segments that do not hold what the run logged.
fn kept_log(host: &std::sync::Arc<PluginHost>, run_dir: &Path, folder: &Path, v: &crate::record::VariantResult, label: &str) -> Result<usize, CliError> {
    use crate::verify::kept_log::{Kept, LogCheck, check};
    let (Some(_), Some(figures)) = (&v.variant.log, &v.commitlog) else { return Ok(0) };
    let plugin = recorded_plugin(run_dir, v, Kind::CommitLog, v.variant.plugin(Kind::CommitLog))?;
    let mut format = bench::commitlog_format(host, v.variant.runtime.into(), &plugin, &v.variant.args(Kind::CommitLog))?;
    let mut broken = 0;
    for kept in &figures.kept {
        let file = &kept.file;
        let expected = Kept { file: &kept.file, bytes: kept.bytes, rows: kept.rows, digest: &kept.digest };
        match check(folder, expected, &mut format) {
            Ok(LogCheck::Holds { rows }) => sayln!("  OK    {label}: commit log {file}: {rows} rows replayed, as the run logged them"),
            Ok(LogCheck::Short { at, tail, rows, logged }) => {
                broken += 1;
                let how = match tail {
                    memlab_sdk::Tail::Damaged => "damaged",
                    memlab_sdk::Tail::Torn => "torn",
                    memlab_sdk::Tail::Clean => "cut short",
                };
                sayln!(
                    "  FAIL  {label}: commit log {file} is {how} at byte {at} of {}: it replays {rows} of the {logged} rows the run logged and made durable there",
                    kept.bytes
                );
            }
            Ok(LogCheck::Differs(why)) => {
                broken += 1;
                sayln!("  FAIL  {label}: commit log {file} replays {why}");
            }
            Err(e) => {
                broken += 1;
                sayln!("  FAIL  {label}: commit log {file}: {}", crate::util::text::for_terminal(&e));
            }
        }
    }
    Ok(broken)
}
