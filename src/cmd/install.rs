//! `volbench completions SHELL` and `volbench man`: generated from the clap
//! definitions, so they never disagree with `--help`.

use clap::builder::PossibleValuesParser;
use clap::{Command, ValueHint};

use crate::error::{Result, VbError, exit};
use crate::input::args::help;
use crate::input::args::launch::{CompletionShell, ManArgs};

/// The words a value can be, for completion only: the flags stay text in
/// clap (the spec layer parses them, with its own errors), so these lists
/// change the completion scripts and nothing a command accepts. The unit
/// test below parses each word with the spec's parser, so a list cannot
/// offer what `run` refuses.
/// `--engine`'s words: auto, then every engine of the table that runs on
/// the system this binary was built for (no `overlapped` on Linux, no
/// `io_uring` on Windows: `run` refuses them there).
fn engines() -> Vec<&'static str> {
    std::iter::once("auto")
        .chain(
            crate::spec::ENGINES
                .iter()
                .filter(|r| r.caps.platform.runs_here())
                .map(|r| r.name),
        )
        .collect()
}
const PATTERNS: [&str; 6] = ["read", "write", "randread", "randwrite", "rw", "randrw"];
const WRITE_SYNC: [&str; 3] = ["none", "dsync", "sync"];
const ARRIVALS: [&str; 2] = ["uniform", "poisson"];

/// Each argument id with what completes it.
fn hint(id: &str) -> Option<Hint> {
    let words = |w: &[&'static str]| Some(Hint::Words(w.to_vec()));
    match id {
        "engine" => Some(Hint::Words(engines())),
        "rw" => words(&PATTERNS),
        "write_sync" => words(&WRITE_SYNC),
        "arrivals" => words(&ARRIVALS),
        "suite" => Some(Hint::Words(
            crate::input::suite::BUILTIN
                .iter()
                .map(|(n, _)| *n)
                .collect(),
        )),
        "hosts_file" | "catalogue" | "journal" | "file" => Some(Hint::Path(ValueHint::FilePath)),
        "target" => Some(Hint::Path(ValueHint::AnyPath)),
        "dir" | "dirs" => Some(Hint::Path(ValueHint::DirPath)),
        _ => None,
    }
}

enum Hint {
    Words(Vec<&'static str>),
    Path(ValueHint),
}

/// The command tree with the completion hints on every subcommand's args.
fn with_hints(mut cmd: Command) -> Command {
    let ids: Vec<String> = cmd
        .get_arguments()
        .map(|a| a.get_id().to_string())
        .collect();
    for id in ids {
        match hint(&id) {
            Some(Hint::Words(w)) => {
                cmd = cmd.mut_arg(&id, |a| a.value_parser(PossibleValuesParser::new(w)));
            }
            Some(Hint::Path(h)) => cmd = cmd.mut_arg(&id, |a| a.value_hint(h)),
            None => {}
        }
    }
    let subs: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect();
    for s in subs {
        cmd = cmd.mut_subcommand(&s, with_hints);
    }
    cmd
}

pub(crate) fn cmd_completions(shell: CompletionShell) -> Result<i32> {
    let shell = match shell {
        CompletionShell::Bash => clap_complete::Shell::Bash,
        CompletionShell::Zsh => clap_complete::Shell::Zsh,
        CompletionShell::Fish => clap_complete::Shell::Fish,
    };
    let mut cmd = with_hints(help::command());
    // Written whole through the console: clap_complete panics on a write
    // error (`> /dev/full`).
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut cmd, "volbench", &mut script);
    crate::console::out_bytes(&script)
        .map_err(|e| VbError::run(format!("cannot write the completions: {e}")))?;
    if shell == clap_complete::Shell::Fish {
        // clap's fish script completes no positional values: the suite
        // names are added here, beside fish's file completion (a suite
        // can be a file).
        let names: Vec<&str> = crate::input::suite::BUILTIN
            .iter()
            .map(|(n, _)| *n)
            .collect();
        crate::console::outln!(
            "complete -c volbench -n \"__fish_volbench_using_subcommand suite; and __fish_seen_subcommand_from run show\" -a \"{}\"",
            names.join(" ")
        );
    }
    Ok(exit::OK)
}

/// Every page: volbench.1 and one per subcommand (volbench-run.1,
/// volbench-suite-run.1...), named as the pages' SEE ALSO lists them.
fn pages() -> Result<Vec<(String, Vec<u8>)>> {
    fn walk(cmd: &Command, out: &mut Vec<(String, Vec<u8>)>) -> Result<()> {
        let man = clap_mangen::Man::new(cmd.clone());
        let mut text = Vec::new();
        man.render(&mut text)
            .map_err(|e| VbError::run(format!("cannot render the man page: {e}")))?;
        out.push((man.get_filename(), text));
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            walk(sub, out)?;
        }
        Ok(())
    }
    // Built once, so each subcommand carries its full name (volbench-suite-run).
    let mut cmd = help::command().disable_help_subcommand(true);
    cmd.build();
    let mut out = Vec::new();
    walk(&cmd, &mut out)?;
    Ok(out)
}

pub(crate) fn cmd_man(a: &ManArgs) -> Result<i32> {
    let pages = pages()?;
    if let Some(dir) = &a.dir {
        let out = crate::output::file::OutputDir::open(dir)?;
        for (name, text) in &pages {
            out.write(name, &String::from_utf8_lossy(text))?;
        }
        crate::console::errln!("{} man pages in {}", pages.len(), dir.display());
        return Ok(exit::OK);
    }
    let want = if a.command.is_empty() {
        "volbench.1".to_string()
    } else {
        format!("volbench-{}.1", a.command.join("-"))
    };
    let Some((_, text)) = pages.iter().find(|(n, _)| *n == want) else {
        let names: Vec<&str> = pages
            .iter()
            .filter_map(|(n, _)| n.strip_prefix("volbench-")?.strip_suffix(".1"))
            .collect();
        return Err(VbError::input(format!(
            "no man page for `volbench {}`; pages: {}",
            a.command.join(" "),
            names.join(", ")
        )));
    };
    crate::console::out_bytes(text)
        .map_err(|e| VbError::run(format!("cannot write the man page: {e}")))?;
    Ok(exit::OK)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::spec::{Arrivals, EngineChoice, Pattern, WriteSync};

    #[test]
    fn every_completion_word_is_accepted_by_the_spec() {
        engines()
            .iter()
            .for_each(|w| assert!(EngineChoice::parse(w).is_ok(), "{w}"));
        PATTERNS
            .iter()
            .for_each(|w| assert!(Pattern::parse(w).is_ok(), "{w}"));
        WRITE_SYNC
            .iter()
            .for_each(|w| assert!(WriteSync::parse(w).is_ok(), "{w}"));
        ARRIVALS
            .iter()
            .for_each(|w| assert!(Arrivals::parse(w).is_ok(), "{w}"));
    }

    #[test]
    fn completion_offers_only_the_engines_this_system_runs() {
        let words = engines();
        #[cfg(target_os = "linux")]
        {
            assert!(!words.contains(&"overlapped"), "{words:?}");
            assert!(words.contains(&"io_uring"), "{words:?}");
        }
        #[cfg(windows)]
        {
            assert!(words.contains(&"overlapped"), "{words:?}");
            assert!(!words.contains(&"io_uring"), "{words:?}");
        }
        assert!(words.contains(&"auto") && words.contains(&"psync"));
        let mut bash = Vec::new();
        clap_complete::generate(
            clap_complete::Shell::Bash,
            &mut with_hints(help::command()),
            "volbench",
            &mut bash,
        );
        let bash = String::from_utf8(bash).unwrap();
        assert!(bash.contains("io_uring") == cfg!(target_os = "linux"));
        assert!(bash.contains("overlapped") == cfg!(windows));
    }

    #[test]
    fn every_subcommand_has_its_page_and_see_also_names_only_those() {
        let pages = pages().unwrap();
        let names: Vec<&str> = pages.iter().map(|(n, _)| n.as_str()).collect();
        for want in [
            "volbench.1",
            "volbench-run.1",
            "volbench-suite-run.1",
            "volbench-man.1",
        ] {
            assert!(names.contains(&want), "{want} in {names:?}");
        }
        assert!(!names.contains(&"volbench-agent.1"), "hidden: {names:?}");
        for (_, text) in &pages {
            let text = String::from_utf8_lossy(text);
            // Every page another page names, e.g. "volbench\-run(1)", exists.
            for (i, _) in text.match_indices("(1)") {
                let head = &text[..i];
                let start = head.rfind(|c: char| c.is_whitespace()).map_or(0, |s| s + 1);
                let named = head[start..].replace("\\-", "-");
                if named.starts_with("volbench") {
                    assert!(names.contains(&format!("{named}.1").as_str()), "{named}");
                }
            }
        }
    }
}
