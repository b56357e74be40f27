//! Starting many agents without a thousand of anything at once: a bounded
//! pool (`--launch-parallel`) for whatever is done per host, and ssh
//! multiplexing (`--ssh-mux`) so agents that land on one machine share one
//! authenticated connection instead of each making its own.
//!
//! Multiplexing: the hosts are grouped by what ssh resolves them to
//! (`ssh -G`: user, host name, port), so two aliases of one machine share.
//! Each group of two or more agents gets one master, `ssh -N` with
//! `ControlPersist`, which forks into the background once authenticated
//! (its exit is the signal that the socket is ready); every agent of the
//! group then runs as a mux client on that socket: no TCP connection, key
//! exchange or encryption of its own, its stdio handed to the master. A
//! master carries at most `MUX_SESSIONS` agents (sshd's default
//! `MaxSessions`); a larger group gets several. The sockets live in a
//! private 0700 directory made here through the gate; the masters are told
//! to exit (`ssh -O exit`) when the run ends, and `ControlPersist` ends one
//! on its own a few seconds after its last agent if the coordinator is
//! killed outright.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use super::Launcher;
use crate::error::{Result, VbError};

/// Agents per master: sshd's default `MaxSessions` is 10, and a session
/// past it is refused.
pub(crate) const MUX_SESSIONS: usize = 10;
/// How long a master lingers without agents: the time it takes to start
/// its group's agents, and its end when nobody says `-O exit`.
const PERSIST_S: u32 = 10;
/// A socket path longer than this does not fit `sun_path` (108 bytes).
const MAX_SOCKET_PATH: usize = 100;
/// How long `ssh -G` (local, reads config files) may take.
const RESOLVE_TIMEOUT: Duration = Duration::from_secs(10);

/// `f` over `items` on at most `n` threads at once; results in order.
pub(crate) fn par_map<T: Sync, R: Send>(
    n: usize,
    items: &[T],
    f: impl Fn(usize, &T) -> R + Sync,
) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let out: Mutex<Vec<Option<R>>> = Mutex::new((0..items.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..n.clamp(1, items.len().max(1)) {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(i) else { break };
                    let r = f(i, item);
                    if let Ok(mut o) = out.lock() {
                        o[i] = Some(r);
                    }
                }
            });
        }
    });
    out.into_inner()
        .unwrap_or_default()
        .into_iter()
        .flatten()
        .collect()
}

/// Agents launched together: with a `socket`, through one master.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Group {
    /// The host name the master is started with (the group's first).
    pub(crate) host: String,
    pub(crate) socket: Option<PathBuf>,
    /// Indices into the host list.
    pub(crate) agents: Vec<usize>,
}

/// The private socket directory and the masters started in it.
pub(crate) struct Mux {
    dir: PathBuf,
    launcher: Launcher,
    started: Mutex<Vec<(String, PathBuf)>>,
    parallel: usize,
}

/// Groups the hosts for launching: one group a host without multiplexing
/// (`on` false, a launcher that is not ssh, or every host its own machine),
/// else groups of up to `MUX_SESSIONS` per machine with a socket each.
pub(crate) fn plan(
    launcher: &Launcher,
    hosts: &[&str],
    on: bool,
    parallel: usize,
) -> Result<(Option<Mux>, Vec<Group>)> {
    let single = || {
        hosts
            .iter()
            .enumerate()
            .map(|(i, h)| Group {
                host: h.to_string(),
                socket: None,
                agents: vec![i],
            })
            .collect()
    };
    if !on || !launcher.is_ssh() || hosts.len() < 2 {
        return Ok((None, single()));
    }
    let keys = par_map(parallel, hosts, |_, h| machine_of(launcher, h));
    let mut by_key: Vec<(String, Vec<usize>)> = Vec::new();
    for (i, k) in keys.into_iter().enumerate() {
        match by_key.iter_mut().find(|(key, _)| *key == k) {
            Some((_, v)) => v.push(i),
            None => by_key.push((k, vec![i])),
        }
    }
    if by_key.iter().all(|(_, v)| v.len() < 2) {
        return Ok((None, single()));
    }
    let dir = private_dir()?;
    let mut groups = Vec::new();
    for (_, agents) in by_key {
        for chunk in agents.chunks(MUX_SESSIONS) {
            let socket = (chunk.len() > 1).then(|| dir.join(groups.len().to_string()));
            groups.push(Group {
                host: hosts[chunk[0]].to_string(),
                socket,
                agents: chunk.to_vec(),
            });
        }
    }
    let mux = Mux {
        dir,
        launcher: launcher.clone(),
        started: Mutex::new(Vec::new()),
        parallel,
    };
    Ok((Some(mux), groups))
}

/// What ssh will connect to for `host`: `user@hostname:port` from
/// `ssh -G`, or the name itself when ssh cannot say (then only the same
/// name shares a master).
fn machine_of(launcher: &Launcher, host: &str) -> String {
    let Some(argv) = launcher.ssh_local(host, &["-G".to_string()]) else {
        return host.to_string();
    };
    let out = run_quiet(&argv, RESOLVE_TIMEOUT, true);
    let text = String::from_utf8_lossy(&out.unwrap_or_default()).into_owned();
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name).and_then(|r| r.strip_prefix(' ')))
            .map(str::trim)
            .unwrap_or("")
            .to_string()
    };
    let (user, name, port) = (field("user"), field("hostname"), field("port"));
    if name.is_empty() {
        host.to_string()
    } else {
        format!("{user}@{name}:{port}")
    }
}

/// Runs a local command with no input; its stdout when it exits 0 within
/// `limit` (`capture` false: stdout is not even read, only the status).
fn run_quiet(argv: &[String], limit: Duration, capture: bool) -> Option<Vec<u8>> {
    let (program, args) = argv.split_first()?;
    let mut c = Command::new(program);
    c.args(args)
        .stdin(Stdio::null())
        .stdout(if capture {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stderr(Stdio::null());
    // Its own process group: a Ctrl-C at the terminal is the coordinator's
    // to handle, not a signal that kills a master half-started.
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut c, 0);
    let child = c.spawn().ok()?;
    let done = crate::io::child::finish(child, b"", 1 << 20, 1 << 12, limit);
    match done.status {
        Some(st) if st.success() => Some(done.stdout),
        _ => None,
    }
}

/// A new directory of our own for the sockets, 0700, in the temp
/// directory (`$TMPDIR`): made exclusively, so nothing already there, link
/// or not, is ever used.
fn private_dir() -> Result<PathBuf> {
    let base = std::env::temp_dir();
    for n in 0..100u32 {
        let dir = base.join(format!("vb-mux-{}-{n}", std::process::id()));
        // The socket names are a group number: 5 characters at most.
        if dir.as_os_str().len() + 6 > MAX_SOCKET_PATH {
            return Err(VbError::input(format!(
                "--ssh-mux: the temp directory {} is too long a path for ssh's sockets \
                 (at most {} bytes); set TMPDIR shorter or pass --ssh-mux off",
                base.display(),
                MAX_SOCKET_PATH - 6 - 16
            )));
        }
        match crate::io::gate::mkdir(&dir, 0o700) {
            Ok(()) => return Ok(dir),
            Err(crate::io::sys::io::Errno::EXIST) => continue,
            Err(e) => {
                return Err(VbError::run(format!(
                    "cannot make a directory for ssh's sockets in {}: {e}",
                    base.display()
                )));
            }
        }
    }
    Err(VbError::run(format!(
        "cannot make a directory for ssh's sockets in {}: every name taken",
        base.display()
    )))
}

fn control_path(socket: &Path) -> String {
    format!("ControlPath={}", socket.display())
}

impl Mux {
    /// Starts the group's master and waits (at most `limit`) until it is
    /// authenticated and listening. The ssh options for the group's agents:
    /// mux clients of it, or none at all when the master could not start
    /// (each agent then connects on its own and reports its own error).
    pub(crate) fn start(&self, g: &Group, limit: Duration) -> Vec<String> {
        let Some(socket) = &g.socket else {
            return Vec::new();
        };
        let o = |s: String| ["-o".to_string(), s];
        let mut opts: Vec<String> = vec!["-N".into()];
        for s in [
            "ControlMaster=yes".to_string(),
            format!("ControlPersist={PERSIST_S}"),
            control_path(socket),
            "BatchMode=yes".into(),
            "ConnectTimeout=10".into(),
            "ServerAliveInterval=5".into(),
            "ServerAliveCountMax=3".into(),
        ] {
            opts.extend(o(s));
        }
        let Some(argv) = self.launcher.ssh_local(&g.host, &opts) else {
            return Vec::new();
        };
        // ControlPersist makes ssh fork once authenticated: the command
        // we wait for ends when the socket is there.
        if run_quiet(&argv, limit, false).is_none() {
            return Vec::new();
        }
        if let Ok(mut s) = self.started.lock() {
            s.push((g.host.clone(), socket.clone()));
        }
        let mut client = o("ControlMaster=no".into()).to_vec();
        client.extend(o(control_path(socket)));
        client
    }

    /// Masters started and still to be ended.
    pub(crate) fn masters(&self) -> usize {
        self.started.lock().map(|s| s.len()).unwrap_or(0)
    }
}

impl Drop for Mux {
    /// Tells every master to exit, then removes what is left of the
    /// directory: the sockets a master did not get to remove (only
    /// sockets, only in our own directory), then the directory itself.
    fn drop(&mut self) {
        let started = self
            .started
            .lock()
            .map(|mut s| std::mem::take(&mut *s))
            .unwrap_or_default();
        par_map(self.parallel, &started, |_, (host, socket)| {
            let opts = [
                "-O".to_string(),
                "exit".into(),
                "-o".into(),
                control_path(socket),
            ];
            if let Some(argv) = self.launcher.ssh_local(host, &opts) {
                run_quiet(&argv, Duration::from_secs(5), false);
            }
        });
        // Windows' OpenSSH makes no control sockets: nothing to remove.
        #[cfg(unix)]
        remove_sockets(&self.dir, &started);
        let _ = crate::io::gate::remove_empty_dir(&self.dir);
    }
}

/// Removes the control sockets the masters left: only sockets, reached
/// without following a link, in the directory volbench made for them.
#[cfg(unix)]
fn remove_sockets(dir: &Path, started: &[(String, PathBuf)]) {
    let Ok(dir) = rustix::fs::open(
        dir,
        rustix::fs::OFlags::DIRECTORY | rustix::fs::OFlags::NOFOLLOW,
        rustix::fs::Mode::empty(),
    ) else {
        return;
    };
    for (_, socket) in started {
        let Some(name) = socket.file_name() else {
            continue;
        };
        let is_socket = rustix::fs::statat(&dir, name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW)
            .is_ok_and(|st| {
                rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::Socket
            });
        if is_socket {
            let _ = crate::io::gate::unlink_at(&dir, name);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn par_map_keeps_the_order_and_bounds_the_threads() {
        let items: Vec<u32> = (0..50).collect();
        let live = AtomicUsize::new(0);
        let most = AtomicUsize::new(0);
        let out = par_map(4, &items, |i, x| {
            let now = live.fetch_add(1, Ordering::SeqCst) + 1;
            most.fetch_max(now, Ordering::SeqCst);
            std::thread::yield_now();
            live.fetch_sub(1, Ordering::SeqCst);
            (i as u32, x * 2)
        });
        assert_eq!(out, (0..50).map(|i| (i, i * 2)).collect::<Vec<_>>());
        assert!(most.load(Ordering::SeqCst) <= 4);
        assert!(par_map(4, &[] as &[u32], |_, x| *x).is_empty());
    }

    #[test]
    fn no_multiplexing_without_ssh_or_without_shared_machines() {
        let exec = Launcher::new(Some("ip netns exec {host}"), None).unwrap();
        let (m, g) = plan(&exec, &["a", "b", "c"], true, 4).unwrap();
        assert!(m.is_none());
        assert_eq!(g.len(), 3);
        assert!(g.iter().all(|g| g.socket.is_none() && g.agents.len() == 1));
        let ssh = Launcher::new(None, None).unwrap();
        let (m, g) = plan(&ssh, &["a", "b"], false, 4).unwrap();
        assert!(m.is_none() && g.len() == 2);
    }

    #[test]
    fn aliases_of_one_machine_share_masters_of_at_most_ten() {
        // A config that names 12 aliases of one machine and one other.
        let dir = tempfile::tempdir().unwrap();
        let cfg = dir.path().join("cfg");
        std::fs::write(
            &cfg,
            "Host a*\n  HostName 10.9.9.9\n  User u\nHost other\n  HostName 10.9.9.10\n",
        )
        .unwrap();
        if Command::new("ssh").arg("-V").output().is_err() {
            crate::console::errln!("skipped: no ssh client to resolve the aliases");
            return;
        }
        let l = Launcher::new(Some(&format!("ssh -F {}", cfg.display())), None).unwrap();
        let names: Vec<String> = (0..12).map(|i| format!("a{i}")).collect();
        let mut hosts: Vec<&str> = names.iter().map(String::as_str).collect();
        hosts.insert(3, "other");
        let (m, g) = plan(&l, &hosts, true, 4).unwrap();
        let m = m.expect("a shared machine gets a socket directory");
        let sizes: Vec<usize> = g.iter().map(|g| g.agents.len()).collect();
        assert_eq!(sizes, [10, 2, 1], "{g:?}");
        assert!(g[0].socket.is_some() && g[1].socket.is_some() && g[2].socket.is_none());
        assert_eq!(g[2].agents, [3]);
        let meta = std::fs::symlink_metadata(&m.dir).unwrap();
        assert!(meta.is_dir());
        assert_eq!(
            std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o777,
            0o700
        );
        let d = m.dir.clone();
        drop(m);
        assert!(!d.exists(), "the socket directory is removed");
    }
}
