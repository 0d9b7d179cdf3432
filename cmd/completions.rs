//! `kapi completions SHELL`: generated from the same clap definition the
//! binary parses with, so they cannot drift (a test keeps `completions/` current).

use std::process::ExitCode;

use clap::CommandFactory;
use clap_complete::Shell;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The shell to generate completions for.
    shell: Shell,
}

pub fn run(args: Args) -> ExitCode {
    let mut cmd = super::Cli::command();
    clap_complete::generate(args.shell, &mut cmd, "kapi", &mut std::io::stdout());
    ExitCode::SUCCESS
}
