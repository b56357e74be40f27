//! `-h` and `--help`: the short help of `run` names the flags a first run
//! needs, the workload's first; `--help` gives every option, those first
//! too. The exit codes end both.
//!
//! Done on the built command rather than with attributes on each field:
//! the fields live in a dozen flattened structs shared by several
//! commands, and one list here says what a first run sees.

use clap::{Command, CommandFactory, FromArgMatches};

use super::Cli;

/// Every exit code, for `-h` and `--help` (docs/reference/exit-codes.md).
pub(crate) const EXIT_CODES: &str = "Exit codes: 0 done; 1 the run failed (an I/O error, data that \
    came back wrong); 2 bad input; 3 refused for safety; 4 target unusable; 5 data cannot be \
    checked (written without --verify); 6 compare --fail-below: a figure below the ratio; \
    130 interrupted (results so far written).";

const BOUNDS: &str =
    "Every number has a stated bound, checked before any I/O (docs/reference/bounds.md).";

/// `run -h`: these flags (argument ids), in this order; the rest with
/// `--help`. The workload first (what, how hard, how long), then where
/// the results go.
pub(crate) const RUN_SHORT: [&str; 16] = [
    "target", "size", "rw", "read_pct", "bs", "threads", "iodepth", "duration", "warmup", "direct",
    "rate", "files", "output", "dry_run", "quiet", "hosts",
];

/// The command line's definition as parsed, printed, completed and paged.
pub(crate) fn command() -> Command {
    let exits = format!("{EXIT_CODES}\n{BOUNDS}");
    Cli::command()
        .after_help(exits.clone())
        .mut_subcommand("run", |run| {
            short_first(run, &RUN_SHORT)
                .after_help(format!(
                    "{EXIT_CODES}\n`volbench run --help` lists every option; \
                 docs/guide/run.md walks through them."
                ))
                .after_long_help(exits)
        })
}

/// `short` shown by `-h` in its order and first in `--help`; every other
/// option only in `--help`, in its own order after them.
fn short_first(mut cmd: Command, short: &[&str]) -> Command {
    let ids: Vec<(String, usize)> = cmd
        .get_arguments()
        .map(|a| (a.get_id().to_string(), a.get_display_order()))
        .collect();
    for (id, order) in ids {
        let at = short.iter().position(|s| *s == id);
        cmd = cmd.mut_arg(&id, |a| match at {
            Some(i) => a.display_order(i),
            None => a.hide_short_help(true).display_order(short.len() + order),
        });
    }
    cmd
}

/// `Cli::try_parse`, with the help shaped as above.
pub fn parse() -> Result<Cli, clap::Error> {
    let mut cmd = command();
    let mut matches = cmd.try_get_matches_from_mut(std::env::args_os())?;
    Cli::from_arg_matches_mut(&mut matches).map_err(|e| e.format(&mut cmd))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_short_flag_is_an_argument_of_run() {
        let cmd = command();
        let run = cmd.find_subcommand("run").unwrap();
        for id in RUN_SHORT {
            assert!(
                run.get_arguments().any(|a| a.get_id() == id),
                "run has no argument {id}"
            );
        }
    }
}
