//! `memlab show`: a saved run, verdict first, or against a baseline; a
//! sweep's directory or several of its points, merged into one table.

use std::path::{Path, PathBuf};

use super::CliError;
use super::error::io;
use crate::record::{self, BenchResult};
use crate::report;

/// `memlab show`'s arguments.
#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// A run: its directory, or its `run.json`; or a sweep's
    /// directory, or several points' (`memlab show a/ b/ c/`).
    #[arg(required = true, num_args = 1..)]
    runs: Vec<PathBuf>,
    /// A baseline run (directory or `run.json`) to compare against, variant by variant.
    #[arg(short, long)]
    baseline: Option<PathBuf>,
    /// With -b: match variants by name (the default) or by position.
    #[arg(long, value_enum, default_value_t = MatchBy::Name, requires = "baseline")]
    by: MatchBy,
    /// With -b: pair the run's variant RUN with the baseline's BASE
    /// (`--pair RUN=BASE`, repeatable; names may hold `=` themselves:
    /// the split that names a variant on each side is taken); overrides --by.
    #[arg(long, requires = "baseline")]
    pair: Vec<String>,
    /// With -b: judge pairs whose variants differ in what ran (settings,
    /// parameters, plugins' bytes) or ran on different machines, and show
    /// records of different workloads; each difference is listed beside
    /// the verdict it then carries.
    #[arg(long, requires = "baseline")]
    across_differences: bool,
    /// Also write the run's HTML report here.
    #[arg(long)]
    html: Option<PathBuf>,
}

/// How `show -b` matches variants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum MatchBy {
    /// Variants of the same name.
    Name,
    /// The first with the first, and so on.
    Position,
}

pub(super) fn read_run(path: &Path) -> Result<BenchResult, CliError> {
    Ok(BenchResult::load(&record::file_in(path))?)
}

pub(super) fn run(args: Args) -> Result<(), CliError> {
    let Args { runs, baseline, by, pair, across_differences, html } = args;
    // One run: a path that is no directory, or a directory with a record.
    let single = runs.len() == 1 && (!runs[0].is_dir() || record::is_run_dir(&runs[0]));
    if !single {
        if baseline.is_some() {
            return Err(CliError::Usage("-b compares one run with one baseline; a sweep's points merge with `memlab show a/ b/ c/`".into()));
        }
        return sweep(&runs, html.as_deref());
    }
    let run = &runs[0];
    let result = read_run(run)?;
    match baseline {
        None => print_run(&result),
        Some(path) => {
            let base = read_run(&path)?;
            let pairing = match (pair.is_empty(), by) {
                (false, _) => report::Pairing::Explicit(pair.iter().map(|p| self::pair(p, &result, &base)).collect::<Result<_, _>>()?),
                (true, MatchBy::Name) => report::Pairing::ByName,
                (true, MatchBy::Position) => report::Pairing::ByPosition,
            };
            let pairs = report::pairs(&base, &result, &pairing)?;
            say!("{}", report::against_baseline_paired(&base, &result, &pairs, across_differences)?);
        }
    }
    if let Some(path) = html {
        let json = record::file_in(run);
        crate::util::files::write_whole(&path, report::html::render_in(&result, json.parent()).as_bytes()).map_err(io(&path))?;
    }
    Ok(())
}

/// The verdict and the comparison first: the first screen says who won;
/// each run's summary follows.
fn print_run(result: &BenchResult) {
    let cut = report::cut_short(result);
    if let Some(cut) = &cut {
        sayln!("{cut}\n");
    }
    let comparison = report::comparison(result);
    say!("{comparison}");
    for v in &result.variants {
        sayln!("\n{}", report::summary(v));
    }
    if !comparison.is_empty() {
        let again = report::headline(result).map(|h| h.text).unwrap_or_default();
        sayln!("\n{again}");
    }
    say!("{}", report::fidelity(result));
    if let Some(cut) = &cut {
        sayln!("\n{cut}");
    }
}

/// `--pair RUN=BASE`, split where the run's variant and the baseline's
/// are both names: a name may hold `=` itself.
fn pair(text: &str, run: &BenchResult, base: &BenchResult) -> Result<(String, String), CliError> {
    let named = |r: &BenchResult, n: &str| r.variants.iter().any(|v| v.variant.name == n);
    let splits: Vec<(&str, &str)> =
        text.match_indices('=').map(|(i, _)| (&text[..i], &text[i + 1..])).filter(|(a, b)| named(run, a) && named(base, b)).collect();
    match splits.as_slice() {
        [(a, b)] => Ok((a.to_string(), b.to_string())),
        [] => Err(CliError::Usage(format!(
            "--pair `{text}`: no split at a `=` names a variant of the run on its left and one of the baseline on its right, e.g. `--pair \"trie x32=trie\"`"
        ))),
        _ => Err(CliError::Usage(format!("--pair `{text}`: more than one split at a `=` names variants on both sides; rename one of them"))),
    }
}

/// The records behind `path`: its own, or its folders' (a sweep's directory).
fn records_in(path: &Path) -> Result<Vec<(String, BenchResult)>, CliError> {
    run_paths(path)?.iter().map(|d| Ok((d.display().to_string(), read_run(d)?))).collect()
}

/// The runs behind `path`: itself (a run's directory or its record), or
/// the run directories in it (a sweep's points), sorted; `show` and
/// `verify` both take either.
pub(super) fn run_paths(path: &Path) -> Result<Vec<PathBuf>, CliError> {
    // A path that is no folder is read as a record, and a missing one
    // fails there, naming itself.
    if !path.is_dir() || record::is_run_dir(path) {
        return Ok(vec![path.to_path_buf()]);
    }
    let listing = std::fs::read_dir(path).map_err(io(path))?;
    let mut dirs: Vec<PathBuf> = listing.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| record::is_run_dir(p)).collect();
    if dirs.is_empty() {
        // A run killed in its first variant leaves a folder like this:
        // no record to read, which is a failure, not a usage error.
        let why = "no record there (nor run.json.gz), nor in its folders: a run stopped before its first variant ended saves none";
        return Err(CliError::Io { path: path.join(record::RUN_FILE).display().to_string(), source: std::io::Error::new(std::io::ErrorKind::NotFound, why) });
    }
    dirs.sort();
    Ok(dirs)
}

/// Prints the merged points of one sweep; `--html` writes its report.
fn sweep(paths: &[PathBuf], html: Option<&Path>) -> Result<(), CliError> {
    let mut records = Vec::new();
    for path in paths {
        records.extend(records_in(path)?);
    }
    let sweep = record::sweep::merge(records)?;
    say!("{}", report::sweep::table(&sweep));
    if let Some(path) = html {
        crate::util::files::write_whole(path, report::sweep::html(&sweep).as_bytes()).map_err(io(path))?;
    }
    Ok(())
}
