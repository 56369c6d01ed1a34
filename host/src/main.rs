use clap::Parser;

fn main() -> anyhow::Result<()> {
    memlab::cli::run(memlab::cli::Cli::parse())?;
    Ok(())
}
