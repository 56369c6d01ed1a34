use std::process::ExitCode;

use clap::Parser;

fn run() -> anyhow::Result<()> {
    memlab::cli::run(memlab::cli::Cli::parse())?;
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // One line: every error names its file, plugin or operation,
            // and already includes its cause.
            // Plugin messages inside it are escaped, never raw.
            eprintln!("error: {}", memlab::for_terminal(&e.to_string()));
            ExitCode::from(e.downcast_ref::<memlab::cli::CliError>().map_or(1, memlab::cli::CliError::exit_code))
        }
    }
}
