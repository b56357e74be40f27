//! How a command reaches a host: `--launcher` (and the older
//! `--ssh-command`). Two forms:
//!
//! - **ssh's form** (a command without `{host}`, e.g. `ssh -F cfg`): run as
//!   `CMD HOST 'REMOTE SHELL LINE'`, the remote side's shell reads the line
//!   (`ssh.rs`).
//! - **exec form** (a template with `{host}`, e.g. `kubectl exec -i {host} --`,
//!   `ip netns exec {host}`): `{host}` is substituted in the words and the
//!   remote command follows as separate arguments, never as a shell string,
//!   so nothing is quoted twice and no shell is needed where no shell
//!   script is run (an installed volbench starts directly) (`exec.rs`).
//!
//! A launcher volbench knows by name is one row of `input::hosts::launcher::
//! BUILTIN`, read at input with the rest of the hosts' options; here is what
//! it starts. A launcher that starts its agents in a way of its own has its
//! file here (`slurm.rs`).

pub(crate) mod cmdline;
pub(crate) mod exec;
pub(crate) mod fanout;
pub(crate) mod k8s;
pub(crate) mod quote;
pub(crate) mod slurm;
pub(crate) mod ssh;
#[cfg(windows)]
pub(crate) mod windows;

use std::process::{Child, Command, Stdio};

use crate::error::Result;
use crate::input::hosts::launcher::{LaunchForm as Form, LaunchSpec, Start};

/// What runs on the far side.
#[derive(Debug, Clone)]
pub(crate) enum RemoteCmd {
    /// A POSIX shell script (pushing the binary, `~/` paths).
    Script(String),
    /// A program and its arguments, no shell involved.
    Argv(Vec<String>),
    /// A program and its arguments on a Windows host: one cmd.exe line
    /// where a remote shell reads it (Windows' OpenSSH), arguments through
    /// an exec template (`cmdline.rs`).
    WinArgv(Vec<String>),
    /// The host's SFTP server (`--push-binary` to a Windows host): ssh's
    /// subsystem (`ssh -s HOST sftp`), or `sftp-server` run through an exec
    /// template (on a Windows host's PATH with its OpenSSH).
    Sftp,
}

#[derive(Debug, Clone)]
pub(crate) struct Launcher {
    words: Vec<String>,
    form: Form,
    /// As the user named it (`slurm`, or the template).
    given: String,
    /// How the agents start (a template of the user's: one per host).
    start: Start,
    /// ssh `-o` options volbench adds for this one command (multiplexing,
    /// `fanout.rs`): after the user's words, so the user's own `-o` still win.
    extra: Vec<String>,
}

impl From<LaunchSpec> for Launcher {
    fn from(s: LaunchSpec) -> Self {
        Self {
            words: s.words,
            form: s.form,
            given: s.given,
            start: s.start,
            extra: Vec::new(),
        }
    }
}

impl Launcher {
    /// From `--launcher` (a built-in name or a template), else
    /// `--ssh-command` / `VOLBENCH_SSH_COMMAND`, else `ssh`: read as input
    /// reads it (`LaunchSpec`).
    pub(crate) fn new(launcher: Option<&str>, ssh_command: Option<&str>) -> Result<Self> {
        LaunchSpec::new(launcher, ssh_command).map(Self::from)
    }

    /// Whether the program is ssh itself (either form), so ssh's own
    /// options (`-G`, `-o ControlPath=...`) can be given to it.
    pub(crate) fn is_ssh(&self) -> bool {
        matches!(
            self.form,
            Form::Ssh { is_ssh: true } | Form::Exec { remote_shell: true }
        )
    }

    /// This launcher with ssh options added to every command it makes
    /// (only meaningful when `is_ssh`).
    pub(crate) fn with_ssh_options(&self, options: &[String]) -> Launcher {
        let mut l = self.clone();
        l.extra = options.to_vec();
        l
    }

    /// The agents start as the tasks of one srun step (`--launcher
    /// slurm`, `slurm.rs`); the per-host template runs one-off commands.
    pub(crate) fn is_slurm_step(&self) -> bool {
        self.start == Start::SrunStep
    }

    /// What the result and `--dry-run` say reached the hosts.
    pub(crate) fn describe(&self) -> String {
        let full = self.words.join(" ");
        if full == self.given {
            full
        } else {
            format!("{} ({full})", self.given)
        }
    }

    /// The program run locally (for error messages).
    pub(crate) fn program(&self) -> &str {
        self.words.first().map_or("", String::as_str)
    }

    /// The launcher's command for `host` running `remote`, with pipes for
    /// stdin/stdout/stderr, in its own process group so a terminal's Ctrl-C
    /// reaches only the coordinator, which then stops the agents cleanly.
    pub(crate) fn command(&self, host: &str, remote: &RemoteCmd) -> Command {
        Self::command_of(&self.argv(host, remote))
    }

    /// `argv` with the pipes and process group of `command`.
    fn command_of(argv: &[String]) -> Command {
        let mut c = Command::new(argv.first().map_or("", String::as_str));
        c.args(argv.iter().skip(1));
        c.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut c, 0);
        // Windows' counterpart: Ctrl-C goes to a console's process groups,
        // and this one is the launcher's own.
        #[cfg(windows)]
        std::os::windows::process::CommandExt::creation_flags(
            &mut c,
            windows_sys::Win32::System::Threading::CREATE_NEW_PROCESS_GROUP,
        );
        c
    }

    /// Starts `command`. On Windows the launcher joins the coordinator's
    /// job object, so a coordinator killed outright leaves no agent behind
    /// (on Unix the agent sees its stdin close and stops itself).
    pub(crate) fn spawn(&self, host: &str, remote: &RemoteCmd) -> std::io::Result<Child> {
        let child = self.command(host, remote).spawn()?;
        #[cfg(windows)]
        windows::adopt(&child);
        Ok(child)
    }

    /// Starts a whole command line built elsewhere (the srun step) the
    /// way `spawn` starts a host's.
    pub(crate) fn spawn_argv(&self, argv: &[String]) -> std::io::Result<Child> {
        let child = Self::command_of(argv).spawn()?;
        #[cfg(windows)]
        windows::adopt(&child);
        Ok(child)
    }

    fn argv(&self, host: &str, remote: &RemoteCmd) -> Vec<String> {
        match self.form {
            Form::Ssh { is_ssh } => ssh::argv(&self.words, is_ssh, &self.extra, host, remote),
            Form::Exec { remote_shell } => {
                exec::argv(&self.words, remote_shell, &self.extra, host, remote)
            }
        }
    }
}

/// A POSIX host's command as one line its shell runs in its own place.
fn exec_line(argv: &[String]) -> String {
    format!("exec {}", quote::line(argv))
}

/// A Windows host's command as the line its cmd.exe runs.
fn win_line(argv: &[String]) -> String {
    let (program, args) = argv.split_first().map_or(("", &[][..]), |(p, a)| (p, a));
    cmdline::line(program, args)
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::units::bounds::MAX_LAUNCHER_BYTES as MAX_TEMPLATE_BYTES;

    pub(super) fn args(l: &Launcher, host: &str, remote: &RemoteCmd) -> Vec<String> {
        let c = l.command(host, remote);
        std::iter::once(c.get_program())
            .chain(c.get_args())
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    /// What ssh does with the words after the host: joins them with
    /// spaces and hands the line to the remote shell.
    pub(super) fn as_ssh_runs_it(l: &Launcher, remote: &RemoteCmd) -> String {
        let a = args(l, "h", remote);
        let at = a.iter().position(|w| w == "h").unwrap();
        let line = a[at + 1..].join(" ");
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(line)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    #[test]
    fn builtins_expand_and_ssh_keeps_its_form() {
        let s = Launcher::new(Some("slurm"), None).unwrap();
        let a = args(&s, "node07", &RemoteCmd::Argv(vec!["volbench".into()]));
        assert_eq!(a[0], "srun");
        assert!(a.windows(2).any(|w| w == ["-w", "node07"]), "{a:?}");
        assert_eq!(a.last().map(String::as_str), Some("volbench"));
        assert!(s.describe().starts_with("slurm (srun"), "{}", s.describe());

        let ssh = Launcher::new(None, None).unwrap();
        let a = args(
            &ssh,
            "vm1",
            &RemoteCmd::Argv(vec!["vol bench".into(), "agent".into()]),
        );
        assert!(a.contains(&"BatchMode=yes".to_string()));
        assert_eq!(a[a.len() - 2..], ["vm1", "exec 'vol bench' agent"]);
        let w = Launcher::new(None, Some("my-wrapper --x")).unwrap();
        assert_eq!(
            args(&w, "h1", &RemoteCmd::Script("true".into())),
            ["my-wrapper", "--x", "h1", "true"]
        );
    }

    #[test]
    fn bad_templates_are_refused_with_the_reason() {
        for (t, want) in [
            ("", "is empty"),
            ("   ", "is empty"),
            ("kubectl exec {pod} --", "unknown placeholder {pod}"),
            ("docker exec -i {host", "without its '}'"),
            ("docker exec -i host}", "without its '{'"),
            ("{host} run", "program itself"),
            ("ssh 'oops", "closing"),
        ] {
            let e = Launcher::new(Some(t), None).unwrap_err();
            assert_eq!(e.kind, crate::error::Kind::Input, "{t}");
            assert!(e.to_string().contains(want), "{t}: {e}");
        }
        // --ssh-command keeps its old meaning: no placeholders at all.
        let w = Launcher::new(None, Some("sh -c 'echo {\"a\":1}' {host}")).unwrap();
        assert_eq!(
            args(&w, "h", &RemoteCmd::Script("x".into()))[3..],
            ["{host}", "h", "x"]
        );
        let long = "x".repeat(MAX_TEMPLATE_BYTES + 1);
        assert!(
            Launcher::new(Some(&long), None)
                .unwrap_err()
                .to_string()
                .contains("at most 4096")
        );
    }
}
