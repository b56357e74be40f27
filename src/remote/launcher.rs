//! How a command reaches a host: `--launcher` (and the older
//! `--ssh-command`). Two forms:
//!
//! - **ssh's form** (a command without `{host}`, e.g. `ssh -F cfg`): run as
//!   `CMD HOST 'REMOTE SHELL LINE'`, the remote side's shell reads the line.
//! - **exec form** (a template with `{host}`, e.g. `kubectl exec -i {host} --`,
//!   `ip netns exec {host}`): `{host}` is substituted in the words and the
//!   remote command follows as separate arguments, never as a shell string,
//!   so nothing is quoted twice and no shell is needed where no shell
//!   script is run (an installed volbench starts directly).
//!
//! Built-in names: `ssh`, `slurm` (`srun` inside an allocation), `kubectl`.
//! The launcher's text is read at input (`input::hosts::launcher`), before
//! any host source runs; here is what it starts.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use super::quote::quote;
use crate::error::{Result, VbError};
use crate::input::hosts::launcher::{LaunchForm as Form, LaunchSpec};

/// Options added when the program is ssh itself: never prompt (stdin is the
/// protocol), no terminal, and keep-alives so a dead link is noticed by ssh
/// too. They come after the user's own words, so `-o` options the user
/// gives win (ssh keeps the first value it sees).
const SSH_DEFAULTS: [&str; 9] = [
    "-T",
    "-o",
    "BatchMode=yes",
    "-o",
    "ServerAliveInterval=5",
    "-o",
    "ServerAliveCountMax=3",
    "-o",
    "ConnectTimeout=10",
];

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
    /// ssh `-o` options volbench adds for this one command (multiplexing,
    /// `mux.rs`): after the user's words, so the user's own `-o` still win.
    extra: Vec<String>,
}

impl From<LaunchSpec> for Launcher {
    fn from(s: LaunchSpec) -> Self {
        Self {
            words: s.words,
            form: s.form,
            given: s.given,
            extra: Vec::new(),
        }
    }
}

impl Launcher {
    /// From `--launcher` (a built-in name or a template), else
    /// `--ssh-command` / `VOLBENCH_SSH_COMMAND`, else `ssh`.
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

    /// The local ssh command line for `host` with `options` in place of a
    /// remote command (`-G`: print the resolved configuration; `-O exit`),
    /// after the user's words (`-F cfg`), so the user's own `-o` still win.
    /// None unless the program is ssh.
    pub(crate) fn ssh_local(&self, host: &str, options: &[String]) -> Option<Vec<String>> {
        if !self.is_ssh() {
            return None;
        }
        let mut v: Vec<String> = self
            .words
            .iter()
            .map(|w| w.replace("{host}", host))
            .collect();
        match self.form {
            Form::Ssh { .. } => {
                v.extend(options.iter().cloned());
                v.push(host.to_string());
            }
            Form::Exec { .. } => {
                let at = self
                    .words
                    .iter()
                    .position(|w| w.contains("{host}"))
                    .unwrap_or(v.len());
                v.splice(at..at, options.iter().cloned());
            }
        }
        Some(v)
    }

    /// `--launcher slurm`: the agents start as the tasks of one srun step
    /// (`remote/step.rs`); the per-host template runs one-off commands.
    pub(crate) fn is_slurm_step(&self) -> bool {
        self.given == "slurm"
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
        super::windows::adopt(&child);
        Ok(child)
    }

    /// Starts a whole command line built elsewhere (the srun step) the
    /// way `spawn` starts a host's.
    pub(crate) fn spawn_argv(&self, argv: &[String]) -> std::io::Result<Child> {
        let child = Self::command_of(argv).spawn()?;
        #[cfg(windows)]
        super::windows::adopt(&child);
        Ok(child)
    }

    fn argv(&self, host: &str, remote: &RemoteCmd) -> Vec<String> {
        match self.form {
            Form::Ssh { is_ssh } => {
                let mut v = self.words.clone();
                if is_ssh {
                    v.extend(SSH_DEFAULTS.iter().map(|s| s.to_string()));
                    v.extend(self.extra.iter().cloned());
                }
                let line = match remote {
                    // ssh's subsystem: an option before the host, no line.
                    RemoteCmd::Sftp => {
                        v.extend(["-s".to_string(), host.to_string(), "sftp".to_string()]);
                        return v;
                    }
                    RemoteCmd::Script(s) => s.clone(),
                    RemoteCmd::WinArgv(a) => win_line(a),
                    // exec: the remote shell gives way to volbench, so
                    // the link's end is volbench's end.
                    RemoteCmd::Argv(a) => exec_line(a),
                };
                v.push(host.to_string());
                v.push(line);
                v
            }
            Form::Exec { remote_shell } => {
                let mut v: Vec<String> = self
                    .words
                    .iter()
                    .map(|w| w.replace("{host}", host))
                    .collect();
                if remote_shell {
                    // Before the host word, where ssh still reads options.
                    let at = self
                        .words
                        .iter()
                        .position(|w| w.contains("{host}"))
                        .unwrap_or(v.len());
                    v.splice(at..at, self.extra.iter().cloned());
                    if matches!(remote, RemoteCmd::Sftp) {
                        let at = at + self.extra.len();
                        v.insert(at, "-s".to_string());
                        v.push("sftp".to_string());
                        return v;
                    }
                }
                match remote {
                    RemoteCmd::Sftp => v.push("sftp-server".to_string()),
                    // `ssh -F cfg {host}`: one line, quoted for the remote
                    // shell, or it re-splits the script and runs `sh -c umask`.
                    RemoteCmd::Script(s) if remote_shell => v.push(format!("sh -c {}", quote(s))),
                    RemoteCmd::WinArgv(a) if remote_shell => v.push(win_line(a)),
                    RemoteCmd::Argv(a) if remote_shell => v.push(exec_line(a)),
                    RemoteCmd::Script(s) => {
                        v.extend(["sh".to_string(), "-c".to_string(), s.clone()]);
                    }
                    RemoteCmd::Argv(a) | RemoteCmd::WinArgv(a) => v.extend(a.iter().cloned()),
                }
                v
            }
        }
    }

    /// Runs a short remote command with `input` on its stdin; returns
    /// stdout, or an error naming the host with the exit status and stderr.
    pub(crate) fn run(
        &self,
        host: &str,
        remote: &RemoteCmd,
        input: &[u8],
        timeout: Duration,
    ) -> Result<String> {
        let child = self.spawn(host, remote).map_err(|e| {
            VbError::target(format!(
                "host {host}: cannot start '{}': {e}",
                self.program()
            ))
        })?;
        let done = crate::io::child::finish(child, input, 1 << 20, 1 << 16, timeout);
        let (status, out, err) = (done.status, done.stdout, done.stderr);
        let err = super::protocol::sanitize(String::from_utf8_lossy(&err).trim(), 2000);
        let tail = if err.is_empty() {
            String::new()
        } else {
            format!(": {err}")
        };
        match status {
            Some(st) if st.success() => Ok(String::from_utf8_lossy(&out).into_owned()),
            Some(st) => Err(VbError::target(format!(
                "host {host}: remote command failed through '{}' ({st}){tail}",
                self.program()
            ))),
            None => Err(VbError::target(format!(
                "host {host}: no answer within {}s{tail}",
                timeout.as_secs()
            ))),
        }
    }
}

/// A POSIX host's command as one line its shell runs in its own place.
fn exec_line(argv: &[String]) -> String {
    format!("exec {}", super::quote::line(argv))
}

/// A Windows host's command as the line its cmd.exe runs.
fn win_line(argv: &[String]) -> String {
    let (program, args) = argv.split_first().map_or(("", &[][..]), |(p, a)| (p, a));
    super::cmdline::line(program, args)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::bounds::MAX_LAUNCHER_BYTES as MAX_TEMPLATE_BYTES;

    fn args(l: &Launcher, host: &str, remote: &RemoteCmd) -> Vec<String> {
        let c = l.command(host, remote);
        std::iter::once(c.get_program())
            .chain(c.get_args())
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    /// What ssh does with the words after the host: joins them with
    /// spaces and hands the line to the remote shell.
    fn as_ssh_runs_it(l: &Launcher, remote: &RemoteCmd) -> String {
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
    fn an_ssh_template_with_its_own_options_quotes_for_the_remote_shell() {
        // `--launcher 'ssh -F cfg {host}'` with --push-binary: the push
        // script and the agent's argv must reach the far side whole.
        let l = Launcher::new(Some("ssh -F cfg {host}"), None).unwrap();
        assert_eq!(
            args(&l, "h", &RemoteCmd::Argv(vec![]))[..4],
            ["ssh", "-F", "cfg", "h"]
        );
        let script = r#"umask 077 && t='a b'; printf '%s|' "$t" x"#;
        assert_eq!(
            as_ssh_runs_it(&l, &RemoteCmd::Script(script.into())),
            "a b|x|"
        );
        let argv = RemoteCmd::Argv(vec!["printf".into(), "%s|".into(), "it's a $x".into()]);
        assert_eq!(as_ssh_runs_it(&l, &argv), "it's a $x|");
    }

    #[test]
    fn exec_templates_take_the_remote_command_as_arguments() {
        let k = Launcher::new(Some("kubectl exec -i {host} --"), None).unwrap();
        let agent = RemoteCmd::Argv(vec!["/opt/vb dir/volbench".into(), "agent".into()]);
        assert_eq!(
            args(&k, "vb-0", &agent),
            [
                "kubectl",
                "exec",
                "-i",
                "vb-0",
                "--",
                "/opt/vb dir/volbench",
                "agent"
            ]
        );
        let s = RemoteCmd::Script("echo $HOME".into());
        assert_eq!(
            args(&k, "vb-0", &s)[5..],
            ["sh", "-c", "echo $HOME"],
            "a script is one argument of sh -c, not re-split"
        );
        let n = Launcher::new(Some("ip netns exec ns-{host}"), None).unwrap();
        assert_eq!(
            args(&n, "h1", &agent)[..4],
            ["ip", "netns", "exec", "ns-h1"]
        );
    }

    #[test]
    fn the_sftp_server_is_ssh_subsystem_or_a_command_through_a_template() {
        let ssh = Launcher::new(None, None).unwrap();
        let a = args(&ssh, "win1", &RemoteCmd::Sftp);
        assert_eq!(a[a.len() - 3..], ["-s", "win1", "sftp"]);
        assert!(a.contains(&"BatchMode=yes".to_string()), "{a:?}");
        let t = Launcher::new(Some("ssh -F cfg {host}"), None)
            .unwrap()
            .with_ssh_options(&["-o".into(), "ControlPath=x".into()]);
        assert_eq!(
            args(&t, "win1", &RemoteCmd::Sftp),
            [
                "ssh",
                "-F",
                "cfg",
                "-o",
                "ControlPath=x",
                "-s",
                "win1",
                "sftp"
            ]
        );
        let e = Launcher::new(Some("ip netns exec ns-{host}"), None).unwrap();
        assert_eq!(
            args(&e, "w", &RemoteCmd::Sftp)[3..],
            ["ns-w", "sftp-server"]
        );
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
    fn ssh_options_go_after_the_users_words_and_before_the_host() {
        // ssh keeps an option's first value: the user's own -o must win.
        let o = ["-o".to_string(), "ControlPath=/s/0".into()];
        let plain = RemoteCmd::Argv(vec!["vb".into()]);
        let s = Launcher::new(None, Some("ssh -o ControlPath=mine")).unwrap();
        let a = args(&s.with_ssh_options(&o), "h", &plain);
        let mine = a.iter().position(|w| w == "ControlPath=mine").unwrap();
        let ours = a.iter().position(|w| w == "ControlPath=/s/0").unwrap();
        let host = a.iter().position(|w| w == "h").unwrap();
        assert!(mine < ours && ours < host, "{a:?}");
        let e = Launcher::new(Some("ssh -F cfg {host}"), None).unwrap();
        let a = args(&e.with_ssh_options(&o), "h", &plain);
        assert_eq!(a[..6], ["ssh", "-F", "cfg", "-o", "ControlPath=/s/0", "h"]);
        assert_eq!(
            e.ssh_local("h", &["-G".into()]).unwrap(),
            ["ssh", "-F", "cfg", "-G", "h"]
        );
        assert_eq!(
            s.ssh_local("h", &["-G".into()]).unwrap(),
            ["ssh", "-o", "ControlPath=mine", "-G", "h"]
        );
        // Not ssh: no ssh options are ever added.
        let k = Launcher::new(Some("kubectl"), None).unwrap();
        assert!(!k.is_ssh() && k.ssh_local("p", &[]).is_none());
        let w = Launcher::new(None, Some("my-wrapper")).unwrap();
        assert!(!w.is_ssh());
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
