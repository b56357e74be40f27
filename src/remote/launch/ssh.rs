//! ssh, volbench's default launcher, and ssh's form of a launcher
//! (`CMD HOST 'REMOTE SHELL LINE'`): a command without `{host}` takes the
//! host as its first argument and the remote command as one line that the
//! far side's shell reads.

use super::{Launcher, RemoteCmd, exec_line, win_line};

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

/// ssh's form: `WORDS [ssh's options] HOST LINE`; `is_ssh` adds ssh's
/// batch options and `extra` (multiplexing) after the user's words.
pub(super) fn argv(
    words: &[String],
    is_ssh: bool,
    extra: &[String],
    host: &str,
    remote: &RemoteCmd,
) -> Vec<String> {
    let mut v = words.to_vec();
    if is_ssh {
        v.extend(SSH_DEFAULTS.iter().map(|s| s.to_string()));
        v.extend(extra.iter().cloned());
    }
    let line = match remote {
        // ssh's subsystem: an option before the host, no line.
        RemoteCmd::Sftp => {
            v.extend(["-s".to_string(), host.to_string(), "sftp".to_string()]);
            return v;
        }
        RemoteCmd::Script(s) => s.clone(),
        RemoteCmd::WinArgv(a) => win_line(a),
        // exec: the remote shell gives way to volbench, so the link's end
        // is volbench's end.
        RemoteCmd::Argv(a) => exec_line(a),
    };
    v.push(host.to_string());
    v.push(line);
    v
}

impl Launcher {
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
            super::Form::Ssh { .. } => {
                v.extend(options.iter().cloned());
                v.push(host.to_string());
            }
            super::Form::Exec { .. } => {
                let at = super::exec::host_word(&self.words).unwrap_or(v.len());
                v.splice(at..at, options.iter().cloned());
            }
        }
        Some(v)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{args, as_ssh_runs_it};
    use super::*;

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
}
