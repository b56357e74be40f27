//! Command handlers, one file per command; this file only dispatches. Every
//! command that runs I/O takes the one road in `run.rs` and ends in
//! `finish.rs`, which returns the process exit code.

use crate::error::{Result, exit};
use crate::input::args::results::StoreCommands;
use crate::input::args::{Cli, Command, SuiteCommand};

pub(crate) mod baseline;
pub(crate) mod capture;
pub(crate) mod clean;
pub(crate) mod compare;
pub(crate) mod finish;
pub(crate) mod history;
pub(crate) mod import;
pub(crate) mod install;
pub mod littles_law;
pub(crate) mod quick;
pub(crate) mod report;
pub(crate) mod run;
pub(crate) mod service;
mod signals;
pub(crate) mod stop;
pub(crate) mod store;
pub(crate) mod suite;
pub(crate) mod trend;
pub(crate) mod verify;

/// `volbench agent [--session NAME [--task-env VAR]]` exactly as the
/// coordinator starts it (`--task-env`: the variable holding the agent's
/// task when one srun step carries every agent, `remote/launch/slurm.rs`; only in
/// this form, as the coordinator writes it), run without clap: building the whole command tree (every subcommand's
/// flags and help text) touched code and heap that each of a thousand
/// agents on one machine kept resident. Anything else (`agent --help`, a
/// typo) goes through clap as usual. None: not such a command line.
pub fn agent_fast_path(args: &[std::ffi::OsString]) -> Option<Result<i32>> {
    let word = |w: &std::ffi::OsString| !w.to_string_lossy().starts_with('-');
    let session = |a: &std::ffi::OsString, s: &std::ffi::OsString, name| {
        a == "agent" && s == "--session" && word(name)
    };
    match args {
        [a] if a == "agent" => Some(crate::remote::agent::main(None)),
        [a, s, name] if session(a, s, name) => Some(crate::remote::agent::main(None)),
        [a, s, name, t, var] if session(a, s, name) && t == "--task-env" && word(var) => {
            Some(crate::remote::agent::main(Some(&var.to_string_lossy())))
        }
        _ => None,
    }
}

pub fn main(cli: Cli) -> Result<i32> {
    // The commands that run I/O catch their stop signals from the start:
    // one arriving while the job is still being read or planned must not
    // end the process silently, with an output directory left empty.
    if matches!(
        cli.command,
        Command::Run(_)
            | Command::Quick(_)
            | Command::Suite(SuiteCommand::Run(_))
            | Command::Fio(_)
            | Command::Vdbench(_)
            | Command::Diskspd(_)
    ) {
        stop_flag()?;
    }
    match cli.command {
        Command::Run(a) => run::cmd_run(&a),
        Command::Capture(a) => capture::cmd_capture(&a),
        Command::Quick(a) => quick::cmd_quick(&a),
        Command::Agent(_) => crate::remote::agent::main(None),
        Command::Clean(a) => clean::cmd_clean(&a),
        Command::Verify(a) => verify::cmd_verify(&a),
        Command::Suite(SuiteCommand::List) => suite::cmd_suite_list(),
        Command::Suite(SuiteCommand::Show { suite, published }) => {
            suite::cmd_suite_show(&suite, published.published)
        }
        Command::Suite(SuiteCommand::Run(a)) => run::cmd_suite_run(&a),
        Command::Plan(a) => {
            crate::console::outln!("{}", littles_law::answer(&a)?);
            Ok(exit::OK)
        }
        Command::Size(a) => service::cmd_size(&a),
        Command::Service(c) => service::cmd_service(&c),
        Command::Report(a) => report::cmd_report(&a),
        Command::Compare(a) => compare::cmd_compare(&a),
        Command::Import(c) => import::cmd_import(&c),
        Command::Fio(a) => import::cmd_fio(&a),
        Command::Vdbench(a) => import::cmd_vdbench(&a),
        Command::Diskspd(a) => import::cmd_diskspd(&a),
        Command::Completions(a) => install::cmd_completions(a.shell),
        Command::Man(a) => install::cmd_man(&a),
        Command::Store(StoreCommands::History(a)) => history::cmd_history(&a),
        Command::Store(StoreCommands::Baseline(c)) => baseline::cmd_baseline(&c),
        Command::Store(StoreCommands::Store(c)) => store::cmd_store(&c),
    }
}

pub(crate) use stop::stop_flag;
