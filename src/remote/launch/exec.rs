//! The exec form of a launcher: a template with `{host}` (`kubectl exec -i
//! {host} --`, `ip netns exec {host}`), `{host}` replaced in its words and
//! the remote command appended as separate arguments, never as a shell
//! string. When the template's program is ssh itself (`ssh -F cfg
//! {host}`), ssh joins what follows the host into one line for the far
//! side's shell, so that line is quoted for it.

use super::{RemoteCmd, exec_line, quote::quote, win_line};

/// The template's words with `{host}` replaced and `remote` appended;
/// `remote_shell`: the program is ssh, and `extra` (its multiplexing
/// options) goes before the host word, where ssh still reads options.
pub(super) fn argv(
    words: &[String],
    remote_shell: bool,
    extra: &[String],
    host: &str,
    remote: &RemoteCmd,
) -> Vec<String> {
    let mut v: Vec<String> = words.iter().map(|w| w.replace("{host}", host)).collect();
    if remote_shell {
        let at = host_word(words).unwrap_or(v.len());
        v.splice(at..at, extra.iter().cloned());
        if matches!(remote, RemoteCmd::Sftp) {
            let at = at + extra.len();
            v.insert(at, "-s".to_string());
            v.push("sftp".to_string());
            return v;
        }
    }
    match remote {
        RemoteCmd::Sftp => v.push("sftp-server".to_string()),
        // `ssh -F cfg {host}`: one line, quoted for the remote shell, or it
        // re-splits the script and runs `sh -c umask`.
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

/// Where the word holding `{host}` is.
pub(super) fn host_word(words: &[String]) -> Option<usize> {
    words.iter().position(|w| w.contains("{host}"))
}

#[cfg(test)]
mod tests {
    use super::super::Launcher;
    use super::super::tests::args;
    use super::*;

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
}
