//! Which volbench each host runs: its own `volbench=` or
//! `--remote-volbench`, checked against the host's system before anything
//! is launched, so a path its shell would misread is one line, not a
//! failed launch; or, with `--push-binary`, the copy pushed there (this
//! Linux binary through the shell, volbench.exe over SFTP).

use super::super::launch::{cmdline, fanout, quote};
use super::super::push::shell::{self, PosixDir};
use super::super::push::windows::{self as winpush, WinDir};
use super::super::push::{Swept, binary};
use super::{Options, Remote};
use crate::error::{Result, VbError};
use crate::events::Raise as _;
use crate::executor::Observer;
use crate::input::hosts::{Assignment, HostOs, HostSpec};
use crate::units::bounds::one_line;

/// How the far side names the volbench it runs.
pub(super) enum RemoteBinary {
    /// A path or command taken as is.
    Plain(String),
    /// A shell word (a `~/` path becomes `"$HOME"/...`).
    Shell(String),
    /// A Windows host's volbench.exe, started through its cmd.exe.
    Windows(String),
}

/// The volbench that runs on each host, pushed there first if asked; what
/// a push swept from a host's push directory is said through `obs`.
pub(super) fn remote_binaries(opts: &Options, obs: &dyn Observer) -> Result<Vec<RemoteBinary>> {
    let (dir, windows_exe) = match &opts.remote {
        Remote::Installed(default) => {
            return opts
                .hosts
                .iter()
                .map(|a| {
                    let path = installed(&a.host, default)?;
                    Ok(if a.host.agent.os == HostOs::Windows {
                        RemoteBinary::Windows(path)
                    } else if path.starts_with('~') {
                        RemoteBinary::Shell(quote::quote_remote_path(&path))
                    } else {
                        RemoteBinary::Plain(path)
                    })
                })
                .collect();
        }
        Remote::Push { dir, windows_exe } => (dir, windows_exe),
    };
    let dirs = push_dirs(&opts.hosts, dir)?;
    let any = |os: HostOs| opts.hosts.iter().any(|a| a.host.agent.os == os);
    // Each binary read once, and only when some host takes it.
    let linux = if any(HostOs::Linux) {
        Some(binary::to_push()?)
    } else {
        None
    };
    let windows = if any(HostOs::Windows) {
        Some(binary::windows_exe(windows_exe.as_deref())?.1)
    } else {
        None
    };
    // Bounded like the launches: a thousand hosts are not a thousand
    // copies in flight.
    let results: Vec<Result<(RemoteBinary, Swept)>> =
        fanout::par_map(opts.launch_parallel, &opts.hosts, |i, a| {
            let name = &a.host.name;
            let wait = opts.timeout;
            match (dirs.get(i), &linux, &windows) {
                (Some(PushDir::Windows(d)), _, Some(bytes)) => {
                    winpush::push(&opts.launcher, name, d, bytes, wait)
                        .map(|(p, swept)| (RemoteBinary::Windows(p), swept))
                }
                (Some(PushDir::Linux(d)), Some((exe, bytes)), _) => {
                    shell::push_binary(&opts.launcher, name, d, exe, bytes, wait)
                        .map(|p| (RemoteBinary::Shell(p.word), p.swept))
                }
                _ => Err(VbError::run(format!("host {name}: nothing to push"))),
            }
        });
    let errors: Vec<String> = results
        .iter()
        .filter_map(|r| r.as_ref().err().map(|e| e.to_string()))
        .collect();
    if !errors.is_empty() {
        return Err(VbError::target(format!(
            "--push-binary failed on {} of {} hosts:\n  {}",
            errors.len(),
            opts.hosts.len(),
            errors.join("\n  ")
        )));
    }
    let mut binaries = Vec::with_capacity(results.len());
    for ((b, swept), a) in results.into_iter().filter_map(|r| r.ok()).zip(&opts.hosts) {
        let dir = a.host.agent.push_dir.as_deref().unwrap_or(dir);
        if let Some(line) = swept.note(&a.host.name, dir) {
            obs.note(&line);
        }
        binaries.push(b);
    }
    Ok(binaries)
}

/// The volbench `host` runs when nothing is pushed.
pub(super) fn installed(host: &HostSpec, default: &str) -> Result<String> {
    if host.agent.push_dir.is_some() {
        return Err(VbError::input(format!(
            "host {}: push_dir= is where --push-binary puts its copy, and this run pushes \
             nothing; add --push-binary or drop it",
            one_line(&host.name)
        )));
    }
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

/// Where one host's pushed copy goes, read for its system.
#[derive(Debug)]
enum PushDir {
    Linux(PosixDir),
    Windows(WinDir),
}

/// Each host's push directory (its `push_dir=`, else `--push-dir`), checked
/// for its system before anything is pushed anywhere; a host that names
/// its own installed volbench cannot take a pushed one.
fn push_dirs(hosts: &[Assignment], default: &str) -> Result<Vec<PushDir>> {
    hosts
        .iter()
        .map(|a| {
            let name = one_line(&a.host.name);
            if a.host.agent.volbench.is_some() {
                return Err(VbError::input(format!(
                    "host {name}: volbench= names an installed volbench, but --push-binary runs \
                     the pushed copy; give one or the other"
                )));
            }
            let (dir, from) = match &a.host.agent.push_dir {
                Some(d) => (d.as_str(), "push_dir="),
                None => (default, "--push-dir"),
            };
            match a.host.agent.os {
                HostOs::Windows => WinDir::parse(dir).map(PushDir::Windows).map_err(|why| {
                    VbError::input(format!("host {name} (os=windows): {from} {why}"))
                }),
                HostOs::Linux if windows_path(dir) => Err(VbError::input(format!(
                    "host {name}: {from} '{}' is a Windows path and the host is a Linux one; \
                     give this host its own push_dir= in the hosts file",
                    one_line(dir)
                ))),
                HostOs::Linux => PosixDir::parse(dir)
                    .map(PushDir::Linux)
                    .map_err(|why| VbError::input(format!("host {name}: {from} {why}"))),
            }
        })
        .collect()
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
                push_dir: None,
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

    fn assigned(host: HostSpec) -> Assignment {
        Assignment {
            host,
            index: 0,
            targets: Vec::new(),
        }
    }

    #[test]
    fn each_host_pushes_into_a_directory_of_its_own_system() {
        let lin = assigned(host(HostOs::Linux, None));
        let mut win = assigned(host(HostOs::Windows, None));
        // The default, under the home, serves both systems.
        let d = push_dirs(&[lin.clone(), win.clone()], "~/.cache/volbench").unwrap();
        assert!(
            matches!(&d[..], [PushDir::Linux(_), PushDir::Windows(_)]),
            "{d:?}"
        );
        // A drive path for a Linux host, a POSIX one for a Windows host:
        // refused naming the host and where the directory came from.
        let e = push_dirs(std::slice::from_ref(&lin), r"D:\vb").unwrap_err();
        assert!(
            e.message.contains("h1") && e.message.contains("push_dir="),
            "{e}"
        );
        let e = push_dirs(std::slice::from_ref(&win), "/opt/vb").unwrap_err();
        assert!(e.message.contains("h1 (os=windows): --push-dir"), "{e}");
        win.host.agent.push_dir = Some(r"D:\vb\CON".into());
        let e = push_dirs(std::slice::from_ref(&win), "/opt/vb").unwrap_err();
        assert!(
            e.message.contains("push_dir=") && e.message.contains("reserved"),
            "{e}"
        );
        win.host.agent.push_dir = Some(r"D:\vb".into());
        assert!(push_dirs(&[lin, win.clone()], "/opt/vb").is_ok());
        // A push_dir= with nothing pushed is not ignored.
        let e = installed(&win.host, "volbench").unwrap_err();
        assert!(e.message.contains("--push-binary"), "{e}");
        let mut both = host(HostOs::Linux, Some("/opt/vb"));
        both.agent.push_dir = None;
        let e = push_dirs(&[assigned(both)], "~/x").unwrap_err();
        assert!(e.message.contains("one or the other"), "{e}");
    }

    #[test]
    fn a_windows_hosts_agent_is_one_cmd_line_over_ssh_and_argv_through_a_template() {
        use super::super::super::launch::{Launcher, RemoteCmd};
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
