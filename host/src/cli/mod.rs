//! The command line: one file per subcommand (its arguments and what it
//! runs), each parsing flags, calling the library and printing. The bench
//! session itself is `crate::session`.

use clap::{Parser, Subcommand};

// Output that may carry a plugin's or a record's strings goes through
// `for_terminal`: no raw control character reaches the terminal. A closed
// pipe (`memlab show | head`) is not an error: a bench keeps running and
// saving, it only stops printing. Any other failed write (a full disk,
// `> /dev/full`) is kept, and the command then fails with it (`run`).
macro_rules! say {
    ($($t:tt)*) => { $crate::cli::emit(&mut std::io::stdout(), &format!($($t)*), false) };
}
macro_rules! sayln {
    ($($t:tt)*) => { $crate::cli::emit(&mut std::io::stdout(), &format!($($t)*), true) };
}
macro_rules! warnln {
    ($($t:tt)*) => { $crate::cli::emit(&mut std::io::stderr(), &format!($($t)*), true) };
}

pub(crate) fn emit(out: &mut impl std::io::Write, text: &str, newline: bool) {
    let written = out.write_all(crate::util::text::for_terminal(text).as_bytes());
    lost(written.and_then(|()| if newline { out.write_all(b"\n") } else { out.flush() }));
}

/// The first write that failed other than on a closed pipe.
static LOST: std::sync::Mutex<Option<std::io::Error>> = std::sync::Mutex::new(None);

fn lost(written: std::io::Result<()>) {
    if let Err(e) = written
        && e.kind() != std::io::ErrorKind::BrokenPipe
    {
        LOST.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(e);
    }
}

/// The command's own result, or the output it lost: what was to be
/// printed and was not is a failure, not a silent exit 0.
fn delivered(result: Result<(), CliError>) -> Result<(), CliError> {
    lost(std::io::Write::flush(&mut std::io::stdout()));
    let lost = LOST.lock().unwrap_or_else(|p| p.into_inner()).take();
    match (result, lost) {
        (Ok(()), Some(source)) => Err(CliError::Io { path: "standard output".into(), source }),
        (result, _) => result,
    }
}

mod bench;
mod check;
mod componentize;
mod error;
mod flags;
mod list;
mod new;
mod show;
mod stream;
mod terminal;
mod verify;

pub use error::CliError;

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
    /// Runs a bench config (the built-in default comparison without one);
    /// writes run.json and report.html into the run's directory.
    Bench(bench::Args),
    /// Writes a profile's stream to a file that a bench can replay
    /// (`stream = "file"` in the workload).
    Stream(stream::Args),
    /// Prints a saved run, or compares it with a baseline run; given a
    /// sweep's directory or several sweep points, merges them into one
    /// table.
    Show(show::Args),
    /// Checks a plugin against the host's reference, property by property,
    /// with the sandbox's limits on; a failure prints a shrunk case.
    Check(check::Args),
    /// Re-reads a run's kept segments (`bench --keep-segments`) through
    /// their serializers and checks them against the run's record: every
    /// checksum, every row count, and the digest of the state they hold.
    Verify(verify::Args),
    /// Writes a new plugin crate, outside memlab's tree: its strategy, a
    /// README and a bench config against the bundled strategies.
    New(new::NewArgs),
    /// Writes C bindings for a kind's world (`<world>.h`, `<world>.c` and
    /// `<world>_component_type.o`), from the WIT built into memlab; see
    /// examples/c-sorted-array.
    Bindings(new::BindingsArgs),
    /// Lists the bundled plugins: name, kind, version, sha256.
    List,
    /// Wraps a core wasm module into a component: any module that carries
    /// the component type of a memlab world (memlab-sdk's, wit-bindgen's
    /// from Rust or C), with no WASI.
    Componentize(componentize::Args),
}

/// Runs the parsed command line; no subcommand is the default comparison.
pub fn run(cli: Cli) -> Result<(), CliError> {
    let command = match cli.command {
        Some(command) => command,
        None => match Cli::try_parse_from(["memlab", "bench"]).map(|c| c.command) {
            Ok(Some(bench)) => bench,
            _ => return Err(CliError::Usage("the default `memlab bench` did not parse".into())),
        },
    };
    delivered(match command {
        Command::Bench(args) => bench::run(args),
        Command::Stream(args) => stream::run(args),
        Command::Show(args) => show::run(args),
        Command::Check(args) => check::run(args),
        Command::Verify(args) => verify::run(&args),
        Command::New(args) => new::new(args),
        Command::Bindings(args) => new::bindings(args),
        Command::List => list::run(),
        Command::Componentize(args) => componentize::run(args),
    })
}
