//! `memlab bench`: flags into the session's options, the session run
//! with the terminal as its sink.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use super::CliError;
use super::flags::{deadline, max_rounds, max_time, positive, repeats, rse};
use crate::config::{BenchConfig, DEFAULT_CONFIG};
use crate::session::{self, DecideOverrides, Progress, SessionOptions};

/// `memlab bench`'s flags.
#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// A bench config (TOML).
    config: Option<PathBuf>,
    /// Where run directories go.
    #[arg(long, default_value = "memlab-runs")]
    out: PathBuf,
    /// Keep segment files after verification.
    #[arg(long)]
    keep_segments: bool,
    /// Do not print a line per flush.
    #[arg(long)]
    quiet: bool,
    /// Rounds of every variant, interleaved, exactly this many
    /// (overrides `bench.repeats` and `[bench.decide]`).
    #[arg(long, value_parser = repeats)]
    repeats: Option<usize>,
    /// Rounds until decided, at most this many (sets
    /// `bench.decide.max_rounds`; 2 to 100).
    #[arg(long, value_parser = max_rounds)]
    max_rounds: Option<usize>,
    /// Rounds until decided, starting no round that would end past
    /// this time, e.g. "80s" (sets `bench.decide.max_time`).
    #[arg(long, value_parser = max_time)]
    max_time: Option<std::time::Duration>,
    /// Rounds until decided, stopping once every ratio is known to
    /// this relative standard error (sets `bench.decide.rse`).
    #[arg(long, value_parser = rse)]
    rse: Option<f64>,
    /// Do not print interval lines.
    #[arg(long)]
    no_intervals: bool,
    /// An epoch deadline per plugin call in milliseconds, 1 to 3600000
    /// (overrides `bench.call_deadline_ms`).
    #[arg(long, value_parser = deadline)]
    deadline_ms: Option<f64>,
    /// The watchdog ends the run when a plugin call makes no progress
    /// for this many seconds (with a per-call deadline, for longer than
    /// the deadline too: a native call knows none), or for 2 s once
    /// Ctrl-C or SIGTERM has come.
    #[arg(long, default_value_t = 60, value_parser = positive)]
    stall_s: u64,
    /// Build plugins the config names as crate folders: runs their
    /// build scripts and proc-macros on this machine, outside the sandbox.
    #[arg(long)]
    build: bool,
    /// Build crate folders a variant runs with `runtime = "native"` for
    /// this machine too, and load them into memlab: their code runs
    /// outside the sandbox, with your rights (needs `--build`).
    #[arg(long, requires = "build")]
    native: bool,
    /// After the measured rounds, run each variant once more with its
    /// stacks sampled, for flame graphs (sets `bench.profile`).
    #[arg(long)]
    profile: bool,
    /// With a `[sweep]`: run only these of its values (`--points 1,8`),
    /// to split a sweep across machines; `memlab show` merges them.
    #[arg(long, value_delimiter = ',')]
    points: Vec<String>,
    /// Pin the run to these CPUs (`0,1`, `0-3`), recorded with it, so its
    /// rounds get the same cores whatever runs beside them.
    #[arg(long, value_parser = session::pin::parse)]
    cpus: Option<session::pin::CpuSet>,
    /// Replay a run's stream byte for byte: the `stream_salt` its record
    /// shows (32 hex digits). Without it each run draws a secret salt.
    #[arg(long)]
    salt: Option<crate::workload::Salt>,
}

impl Args {
    fn options(self) -> SessionOptions {
        SessionOptions {
            out: self.out,
            keep_segments: self.keep_segments,
            log_flushes: !self.quiet,
            intervals: !self.no_intervals,
            repeats: self.repeats,
            decide: DecideOverrides { max_rounds: self.max_rounds, max_time: self.max_time, rse: self.rse },
            deadline: self.deadline_ms.map(|ms| std::time::Duration::from_secs_f64(ms / 1e3)),
            stall: std::time::Duration::from_secs(self.stall_s),
            build: self.build,
            native: self.native,
            profile: self.profile,
            points: self.points,
            cpus: self.cpus.map(|c| c.0).unwrap_or_default(),
            salt: self.salt,
        }
    }
}

pub(super) fn run(args: Args) -> Result<(), CliError> {
    let config = match &args.config {
        Some(path) => BenchConfig::load(path)?,
        None => BenchConfig::parse("(built-in default config)", DEFAULT_CONFIG)?,
    };
    if let (Some(_), Some(file)) = (args.salt, &config.workload.stream) {
        let file = crate::util::text::for_terminal(&file.display().to_string());
        return Err(CliError::Usage(format!("--salt replays a generated stream; this config replays the stream file {file}, which is never salted")));
    }
    let interrupt = Arc::new(AtomicBool::new(false));
    // A second Ctrl-C (or SIGTERM, as a service manager sends) ends the
    // process at once; the first stops cleanly, the stopped variant marked.
    // A closed terminal (SIGHUP) stops it as SIGTERM does.
    for (signal, status) in [(signal_hook::consts::SIGINT, 130), (signal_hook::consts::SIGTERM, 143), (signal_hook::consts::SIGHUP, 129)] {
        let _ = signal_hook::flag::register_conditional_shutdown(signal, status, Arc::clone(&interrupt));
        let _ = signal_hook::flag::register(signal, Arc::clone(&interrupt));
    }
    let progress: Arc<dyn Progress> = Arc::new(super::terminal::Terminal);
    session::run(config, &args.options(), &progress, &interrupt)?;
    Ok(())
}
