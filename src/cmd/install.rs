//! `volbench completions SHELL` and `volbench man`: generated from the clap
//! definitions, so they never disagree with `--help`.

use clap::CommandFactory;

use crate::error::{Result, VbError, exit};
use crate::input::args::Cli;
use crate::input::args::launch::CompletionShell;

pub fn cmd_completions(shell: CompletionShell) -> Result<i32> {
    let shell = match shell {
        CompletionShell::Bash => clap_complete::Shell::Bash,
        CompletionShell::Zsh => clap_complete::Shell::Zsh,
        CompletionShell::Fish => clap_complete::Shell::Fish,
    };
    let mut cmd = Cli::command();
    clap_complete::generate(shell, &mut cmd, "volbench", &mut std::io::stdout());
    Ok(exit::OK)
}

pub fn cmd_man() -> Result<i32> {
    let man = clap_mangen::Man::new(Cli::command());
    man.render(&mut std::io::stdout())
        .map_err(|e| VbError::run(format!("cannot write the man page: {e}")))?;
    Ok(exit::OK)
}
