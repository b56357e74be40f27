//! How a host is reached, as the user wrote it: `--launcher` (a built-in
//! name or a template) or `--ssh-command` (or `$VOLBENCH_SSH_COMMAND`),
//! read once into its words and its form; `remote::launch` runs it.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::path::Path;

use crate::error::{Result, VbError, clip};
use crate::input::words::split_words;
use crate::units::bounds::MAX_LAUNCHER_BYTES as MAX_TEMPLATE_BYTES;

/// Environment variable that replaces the ssh program, like `--ssh-command`.
pub(crate) const SSH_ENV: &str = "VOLBENCH_SSH_COMMAND";

/// A launcher volbench knows by name.
#[derive(Debug)]
pub(crate) struct Builtin {
    /// What `--launcher` takes.
    pub(crate) name: &'static str,
    /// The command it stands for: a template with `{host}` (exec form) or a
    /// program that takes the host first (ssh's form).
    pub(crate) template: &'static str,
    /// How its agents start.
    pub(crate) start: Start,
}

/// How a launcher's agents start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Start {
    /// One launcher process per host (bounded by `--launch-parallel`).
    PerHost,
    /// Every agent a task of one `srun` step (`remote::launch::slurm`); the
    /// template then serves one-off commands (`--push-binary`) only.
    SrunStep,
}

/// Every launcher known by name, one row each: a new one is its line here
/// (and, when it starts its agents in a way of its own, its file in
/// `remote::launch`). `--launcher`'s help and the many-hosts guide are held
/// to this list by a test.
pub(crate) const BUILTIN: &[Builtin] = &[
    // volbench's default: ssh's form, the host first.
    Builtin {
        name: "ssh",
        template: "ssh",
        start: Start::PerHost,
    },
    // One task on the named node as a step of the current allocation
    // (--overlap: it shares the node with the job's other steps, a batch
    // script's own, an earlier probe), for one-off commands; the agents
    // start as one step of their own.
    Builtin {
        name: "slurm",
        template: "srun --overlap -N1 -n1 -w {host}",
        start: Start::SrunStep,
    },
    // A pod, reached by its name.
    Builtin {
        name: "kubectl",
        template: "kubectl exec -i {host} --",
        start: Start::PerHost,
    },
    // Containers as the hosts, by name or id (Podman's `podman exec -i
    // {host}` is the same template, given as one).
    Builtin {
        name: "docker",
        template: "docker exec -i {host}",
        start: Start::PerHost,
    },
];

/// How the words reach a host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LaunchForm {
    /// `CMD HOST 'LINE'`; `is_ssh` adds ssh's batch options.
    Ssh { is_ssh: bool },
    /// `{host}` substituted, the remote argv appended; `remote_shell`: the
    /// program is ssh, which joins its arguments into one line for the
    /// far side's shell, so that line is quoted for it.
    Exec { remote_shell: bool },
}

/// A launcher read: its words (a built-in name expanded), its form, and
/// the text as the user gave it.
#[derive(Debug, Clone)]
pub(crate) struct LaunchSpec {
    pub(crate) words: Vec<String>,
    pub(crate) form: LaunchForm,
    /// As the user named it (`slurm`, or the template).
    pub(crate) given: String,
    /// How its agents start (a template of the user's: one per host).
    pub(crate) start: Start,
}

impl LaunchSpec {
    /// From `--launcher` (a built-in name or a template), else
    /// `--ssh-command` / `VOLBENCH_SSH_COMMAND`, else `ssh`.
    pub(crate) fn new(launcher: Option<&str>, ssh_command: Option<&str>) -> Result<Self> {
        match (launcher, ssh_command) {
            (Some(l), _) => Self::parse(l, "--launcher"),
            // --ssh-command predates templates: its words are taken as
            // they are, braces and all, as before.
            (None, Some(c)) => Self::parse(c, "--ssh-command"),
            (None, None) => Self::parse("ssh", "--launcher"),
        }
    }

    /// `--ssh-command`, else its environment variable (when not blank).
    pub(crate) fn ssh_command(flag: Option<&str>) -> Option<String> {
        flag.map(str::to_string)
            .or_else(|| std::env::var(SSH_ENV).ok().filter(|s| !s.trim().is_empty()))
    }

    fn parse(text: &str, flag: &str) -> Result<Self> {
        let bad = |msg: String| VbError::input(format!("{flag} '{}': {msg}", clip(text)));
        if text.len() > MAX_TEMPLATE_BYTES {
            return Err(VbError::input(format!(
                "{flag} is {} bytes long; at most {MAX_TEMPLATE_BYTES}",
                text.len()
            )));
        }
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return Err(VbError::input(format!("{flag} is empty")));
        }
        let row = BUILTIN.iter().find(|b| b.name == trimmed);
        let expanded = row.map_or(trimmed, |b| b.template);
        let words = split_words(expanded).map_err(&bad)?;
        let mut has_host = false;
        if flag == "--launcher" {
            for w in &words {
                has_host |= check_placeholders(w).map_err(&bad)?;
            }
        }
        let Some(program) = words.first() else {
            return Err(VbError::input(format!("{flag} is empty")));
        };
        if has_host && program.contains("{host}") {
            return Err(bad("the program itself cannot be {host}".into()));
        }
        let is_ssh = Path::new(program).file_name().is_some_and(|n| n == "ssh");
        let form = if has_host {
            LaunchForm::Exec {
                remote_shell: is_ssh,
            }
        } else {
            LaunchForm::Ssh { is_ssh }
        };
        Ok(Self {
            words,
            form,
            given: trimmed.to_string(),
            start: row.map_or(Start::PerHost, |b| b.start),
        })
    }
}

/// Checks a template word's `{...}`: only `{host}` is known. Returns
/// whether the word holds `{host}`.
fn check_placeholders(word: &str) -> std::result::Result<bool, String> {
    let mut has_host = false;
    let mut rest = word;
    while let Some(at) = rest.find(['{', '}']) {
        let tail = rest.get(at..).unwrap_or("");
        if tail.starts_with('}') {
            return Err("a '}' without its '{'".into());
        }
        let Some(end) = tail.find('}') else {
            return Err("a '{' without its '}'".into());
        };
        let inner = tail.get(1..end).unwrap_or("");
        if inner != "host" {
            return Err(format!(
                "unknown placeholder {{{inner}}} (a launcher takes only {{host}})"
            ));
        }
        has_host = true;
        rest = tail.get(end + 1..).unwrap_or("");
    }
    Ok(has_host)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_is_named_once_in_the_help_and_the_guide() {
        // A launcher's row is the one place its name and template live; the
        // help of --launcher and the guide's table say it to the user.
        use clap::CommandFactory;
        let cli = crate::input::args::Cli::command();
        let run = cli.find_subcommand("run").unwrap();
        let arg = run
            .get_arguments()
            .find(|a| a.get_id() == "launcher")
            .unwrap();
        let help = arg.get_long_help().or(arg.get_help()).unwrap().to_string();
        let guide = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/guide/many-hosts.md"),
        )
        .unwrap();
        for (i, b) in BUILTIN.iter().enumerate() {
            assert!(
                BUILTIN[..i].iter().all(|o| o.name != b.name),
                "{} twice",
                b.name
            );
            assert!(help.contains(b.name), "--launcher's help lacks {}", b.name);
            assert!(
                guide.contains(&format!("| `{}`", b.name)),
                "many-hosts.md's launcher table lacks {}",
                b.name
            );
            let l = LaunchSpec::new(Some(b.name), None).unwrap();
            assert_eq!(l.start, b.start);
            assert_eq!(l.words.join(" "), b.template);
        }
    }
}
