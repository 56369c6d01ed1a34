//! The command line.

use std::path::PathBuf;
use std::sync::Arc;

use clap::{Parser, Subcommand};

use crate::bench::{self, BenchOptions};
use crate::config::{BenchConfig, DEFAULT_CONFIG};
use crate::plugin::{self, EngineSettings, PluginHost};
use crate::{bundled, report};

/// Try out the write path of an LSM engine, with its strategies as
/// sandboxed WebAssembly components.
#[derive(Debug, Parser)]
#[command(name = "memlab", version)]
pub struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Runs a bench config (the built-in default comparison without one).
    Bench {
        /// A bench config (TOML).
        config: Option<PathBuf>,
        /// Where segment files go.
        #[arg(long, default_value = "memlab-runs")]
        out: PathBuf,
        /// Keep segment files after verification.
        #[arg(long)]
        keep_segments: bool,
        /// Do not print a line per flush.
        #[arg(long)]
        quiet: bool,
    },
    /// Lists the bundled plugins: name, kind, version, sha256.
    List,
    /// Wraps a core wasm module (built with memlab-sdk) into a component.
    Componentize {
        /// The core module (`target/wasm32-unknown-unknown/release/*.wasm`).
        input: PathBuf,
        /// Where to write the component.
        #[arg(short, long)]
        output: PathBuf,
    },
}

/// A command's failure, for `main` to print.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    #[error(transparent)]
    Plugin(#[from] plugin::PluginError),
    #[error("{path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("{0} of {1} variants failed")]
    VariantsFailed(usize, usize),
}

/// Runs the parsed command line.
pub fn run(cli: Cli) -> Result<(), CliError> {
    match cli.command.unwrap_or(Command::Bench { config: None, out: "memlab-runs".into(), keep_segments: false, quiet: false }) {
        Command::Bench { config, out, keep_segments, quiet } => {
            let config = match &config {
                Some(path) => BenchConfig::load(path)?,
                None => BenchConfig::parse("(built-in default config)", DEFAULT_CONFIG)?,
            };
            let host = PluginHost::new(EngineSettings::default())?;
            let name = if config.bench.name.is_empty() { "bench".to_string() } else { config.bench.name.clone() };
            let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
            let options = BenchOptions { run_dir: out.join(format!("{name}-{stamp}")), keep_segments, log_flushes: !quiet };
            println!("memlab bench: {name} — {}", config.bench.description);
            let result = bench::run(&host, &config, &options, |line| eprintln!("memlab: {line}"));
            for v in &result.variants {
                println!("\n{}", report::summary(v));
            }
            print!("{}", report::comparison(&result));
            let failed = result.variants.iter().filter(|v| v.failure.is_some()).count();
            if failed > 0 {
                return Err(CliError::VariantsFailed(failed, result.variants.len()));
            }
            Ok(())
        }
        Command::List => {
            let host: Arc<PluginHost> = PluginHost::new(EngineSettings::default())?;
            for b in bundled::all() {
                let plugin = host.load(b.name)?;
                println!("{:<12} {:<11} {:<8} {}", b.name, b.kind.to_string(), env!("CARGO_PKG_VERSION"), plugin.sha256);
            }
            Ok(())
        }
        Command::Componentize { input, output } => {
            let bytes = std::fs::read(&input).map_err(|source| CliError::Io { path: input.display().to_string(), source })?;
            let component = plugin::to_component(&input.display().to_string(), &bytes)?;
            let host = PluginHost::new(EngineSettings { cache_dir: None, ..EngineSettings::default() })?;
            let checked = host.load_bytes(&input.display().to_string(), plugin::Source::File(input.display().to_string()), &component)?;
            std::fs::write(&output, &component).map_err(|source| CliError::Io { path: output.display().to_string(), source })?;
            println!("{}: {} plugin, sha256 {}", output.display(), checked.kind, checked.sha256);
            Ok(())
        }
    }
}
