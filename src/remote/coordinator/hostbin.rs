//! Which installed volbench each host runs: its own `volbench=` or
//! `--remote-volbench`, checked against the host's system before anything
//! is launched, so a path its shell would misread is one line, not a
//! failed launch.

use super::super::cmdline;
use crate::error::{Result, VbError};
use crate::input::hosts::{HostOs, HostSpec};
use crate::units::bounds::one_line;

/// The volbench `host` runs when nothing is pushed.
pub(super) fn installed(host: &HostSpec, default: &str) -> Result<String> {
    let path = host.agent.volbench.as_deref().unwrap_or(default);
    let name = one_line(&host.name);
    match host.agent.os {
        HostOs::Windows => match cmdline::bad_program(path) {
            Some(why) => Err(VbError::input(format!("host {name} (os=windows): {why}"))),
            None => Ok(path.to_string()),
        },
        HostOs::Linux if windows_path(path) => Err(VbError::input(format!(
            "host {name}: volbench '{}' is a Windows path and the host is a Linux one; add \
             os=windows to its line in the hosts file if it runs Windows",
            one_line(path)
        ))),
        HostOs::Linux => Ok(path.to_string()),
    }
}

/// `--push-binary` sends this Linux binary; a Windows host, or a host that
/// names its own installed volbench, cannot take it.
pub(super) fn check_push(hosts: &[crate::input::hosts::Assignment]) -> Result<()> {
    for a in hosts {
        let name = one_line(&a.host.name);
        if a.host.agent.os == HostOs::Windows {
            return Err(VbError::input(format!(
                "--push-binary: host {name} is os=windows, and volbench pushes only to Linux \
                 hosts; install volbench.exe there and name it with volbench=PATH on its line \
                 (without --push-binary)"
            )));
        }
        if a.host.agent.volbench.is_some() {
            return Err(VbError::input(format!(
                "host {name}: volbench= names an installed volbench, but --push-binary runs \
                 the pushed copy; give one or the other"
            )));
        }
    }
    Ok(())
}

/// A drive-letter or UNC path: what a Linux host's shell cannot run.
fn windows_path(p: &str) -> bool {
    let b = p.as_bytes();
    matches!(b, [d, b':', ..] if d.is_ascii_alphabetic()) || p.starts_with("\\\\")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::hosts::AgentSide;

    fn host(os: HostOs, volbench: Option<&str>) -> HostSpec {
        HostSpec {
            name: "h1".into(),
            target: None,
            threads: None,
            vm_size: None,
            agent: AgentSide {
                os,
                volbench: volbench.map(str::to_string),
            },
        }
    }

    #[test]
    fn each_host_runs_its_own_volbench_or_the_default() {
        let h = host(HostOs::Windows, Some(r"C:\Tools\volbench.exe"));
        assert_eq!(installed(&h, "volbench").unwrap(), r"C:\Tools\volbench.exe");
        assert_eq!(
            installed(&host(HostOs::Linux, None), "/opt/vb").unwrap(),
            "/opt/vb"
        );
    }

    #[test]
    fn a_path_of_the_other_system_is_refused_naming_the_host() {
        let e = installed(&host(HostOs::Linux, Some(r"C:\vb.exe")), "volbench").unwrap_err();
        assert_eq!(e.kind, crate::error::Kind::Input);
        assert!(
            e.message.contains("h1") && e.message.contains("os=windows"),
            "{e}"
        );
        let e = installed(&host(HostOs::Windows, None), "~/bin/volbench").unwrap_err();
        assert!(e.message.contains("h1") && e.message.contains("'~'"), "{e}");
        let e = installed(&host(HostOs::Windows, Some("%TEMP%\\vb.exe")), "x").unwrap_err();
        assert!(e.message.contains("cmd.exe"), "{e}");
    }

    #[test]
    fn a_windows_hosts_agent_is_one_cmd_line_over_ssh_and_argv_through_a_template() {
        use super::super::super::launcher::{Launcher, RemoteCmd};
        let agent = RemoteCmd::WinArgv(vec![
            r"C:\Program Files\volbench\volbench.exe".into(),
            "agent".into(),
            "--session".into(),
            "run 1&2".into(),
        ]);
        let words = |l: &Launcher| -> Vec<String> {
            let c = l.command("win1", &agent);
            c.get_args()
                .map(|a| a.to_string_lossy().into_owned())
                .collect()
        };
        let want = r#""C:\Program Files\volbench\volbench.exe" agent --session ^"run 1^&2^""#;
        // ssh's form, plain or as a template: the last word is the line
        // for the host's cmd.exe, with no POSIX `exec` in front.
        for l in [
            Launcher::new(None, None).unwrap(),
            Launcher::new(Some("ssh -F cfg {host}"), None).unwrap(),
        ] {
            let a = words(&l);
            assert_eq!(a.last().map(String::as_str), Some(want), "{a:?}");
        }
        let k = Launcher::new(Some("kubectl exec -i {host} --"), None).unwrap();
        assert_eq!(
            words(&k)[4..],
            [
                r"C:\Program Files\volbench\volbench.exe",
                "agent",
                "--session",
                "run 1&2"
            ]
        );
    }
}
