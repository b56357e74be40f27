//! Reaching the hosts: pushing this binary if asked, starting one
//! `LAUNCHER HOST volbench agent` per host with its reader and writer threads,
//! and ending them again.

use crate::events::Raise as _;
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read};
use std::process::Child;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc::{self, Sender, SyncSender};
use std::time::{Duration, Instant};

use super::super::launch::{Launcher, RemoteCmd, fanout, quote};
use super::super::protocol::{MAX_LINE, PROTOCOL, ToAgent, encode, read_line, sanitize};
use super::host::{Event, Host, ToAgentPipe};
use super::hostbin::{RemoteBinary, remote_binaries};
use super::{Coordinator, Options, STOP_TIMEOUT};
use crate::error::{Result, VbError};
use crate::executor::Observer;

/// Starts an agent on every host (after pushing the binary, if asked),
/// at most `--launch-parallel` launches in flight, agents sharing a machine
/// through one ssh master (`fanout.rs`), and sends each the hello. Hosts
/// whose launcher cannot even start are reported together. The socket
/// directory of the masters comes back with the coordinator: dropped, it
/// ends them.
pub(super) fn connect<'a>(
    opts: &Options,
    obs: &'a dyn Observer,
    stop: &'a AtomicBool,
) -> Result<(Coordinator<'a>, Option<fanout::Mux>)> {
    let remotes = remote_commands(opts, obs)?;
    let (ev_tx, ev_rx) = mpsc::channel();
    let names: Vec<&str> = opts.hosts.iter().map(|a| a.host.name.as_str()).collect();
    let (mux, groups) = fanout::plan(&opts.launcher, &names, opts.ssh_mux, opts.launch_parallel)?;
    let hello = hello(opts);
    let pool = super::launch::Pool {
        launcher: &opts.launcher,
        parallel: opts.launch_parallel,
        wait: opts.timeout,
        heartbeat: opts.heartbeat,
        stop,
    };
    let launched = pool.all(&groups, mux.as_ref(), opts.hosts.len(), |l, i, first| {
        let (child, mut pipe) = spawn_agent(l, names[i], &remotes[i], i, ev_tx.clone(), first)?;
        // A broken pipe shows as the agent's closed output.
        pipe.send(&hello);
        Ok((child, pipe))
    });
    if let Some(m) = &mux {
        obs.note(&format!(
            "{} ssh masters for {} agents sharing machines",
            m.masters(),
            groups
                .iter()
                .filter(|g| g.socket.is_some())
                .map(|g| g.agents.len())
                .sum::<usize>()
        ));
    }
    let mut hosts = Vec::with_capacity(opts.hosts.len());
    let mut errors = Vec::new();
    for ((a, job), l) in opts.hosts.iter().zip(&opts.jobs).zip(launched) {
        let mut host = Host::new(a.clone(), job.clone());
        match l {
            Some(Ok((child, pipe))) => {
                host.link.child = Some(child);
                match pipe {
                    ToAgentPipe::Thread(tx) => host.link.tx = Some(tx),
                    #[cfg(unix)]
                    ToAgentPipe::Direct(d) => *host.link.out.get_mut() = Some(d),
                }
            }
            Some(Err(e)) => errors.push(e.to_string()),
            // Not launched: Ctrl-C came first, and the wait for the
            // hellos sees it.
            None => {}
        }
        hosts.push(host);
    }
    let mut c = Coordinator::new(
        hosts,
        ev_rx,
        obs,
        stop,
        opts.heartbeat,
        opts.timeout,
        opts.keep_going,
    );
    c.launcher = opts.launcher.describe();
    if !errors.is_empty() {
        c.shutdown();
        return Err(VbError::target(errors.join("\n")));
    }
    Ok((c, mux))
}

/// Each host's `volbench agent` command (after pushing the binary, if asked).
pub(super) fn remote_commands(opts: &Options, obs: &dyn Observer) -> Result<Vec<RemoteCmd>> {
    Ok(remote_binaries(opts, obs)?
        .iter()
        .map(|b| agent_command(b, &opts.session))
        .collect())
}

/// The hello every agent is sent first.
pub(super) fn hello(opts: &Options) -> String {
    encode(&ToAgent::Hello {
        protocol: PROTOCOL,
        version: env!("CARGO_PKG_VERSION").into(),
        heartbeat_ms: opts.heartbeat.as_millis() as u64,
        timeout_ms: opts.timeout.as_millis() as u64,
    })
}

/// `volbench agent` on the far side: run directly when its path needs no
/// shell (so a container without one can run it), else through one that
/// expands `~/` and `exec`s it.
fn agent_command(binary: &RemoteBinary, session: &str) -> RemoteCmd {
    match binary {
        RemoteBinary::Plain(p) => RemoteCmd::Argv(vec![
            p.clone(),
            "agent".into(),
            "--session".into(),
            session.into(),
        ]),
        RemoteBinary::Shell(word) => RemoteCmd::Script(format!(
            "exec {word} agent --session {}",
            quote::quote(session)
        )),
        RemoteBinary::Windows(p) => RemoteCmd::WinArgv(vec![
            p.clone(),
            "agent".into(),
            "--session".into(),
            session.into(),
        ]),
    }
}

/// Starts `LAUNCHER HOST volbench agent` with a writer thread for its
/// stdin and reader threads for stdout (protocol lines) and stderr (kept
/// for error messages). `first` hears when the agent's first line came
/// (or is dropped when its output ends before one): the launch pool's
/// sign that this launch is done.
pub(super) fn spawn_agent(
    launcher: &Launcher,
    host: &str,
    remote: &RemoteCmd,
    index: usize,
    events: Sender<(usize, Event)>,
    first: SyncSender<()>,
) -> Result<(Child, ToAgentPipe)> {
    let mut child = launcher.spawn(host, remote).map_err(|e| {
        VbError::target(format!(
            "host {host}: cannot start the launcher '{}': {e}",
            launcher.program()
        ))
    })?;
    let (stdin, stdout, stderr) =
        match (child.stdin.take(), child.stdout.take(), child.stderr.take()) {
            (Some(i), Some(o), Some(e)) => (i, o, e),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(VbError::run("the launcher started without its pipes"));
            }
        };
    let spawn = |name: String, f: Box<dyn FnOnce() + Send>| {
        std::thread::Builder::new()
            .name(name)
            .spawn(f)
            .map(|_| ())
            .map_err(|e| VbError::run(format!("cannot start a thread: {e}")))
    };
    let to_agent = to_agent_pipe(stdin, index, &spawn)?;
    let (err_tx, err_rx) = mpsc::channel::<String>();
    spawn(
        format!("vb-err-{index}"),
        Box::new(move || {
            let mut tail: VecDeque<String> = VecDeque::new();
            let mut r = BufReader::new(stderr.take(1 << 22));
            let mut line = Vec::new();
            while let Ok(n) = r.read_until(b'\n', &mut line) {
                if n == 0 {
                    break;
                }
                let text = sanitize(String::from_utf8_lossy(&line).trim_end(), 300);
                if !text.is_empty() {
                    tail.push_back(text);
                    if tail.len() > 8 {
                        tail.pop_front();
                    }
                }
                line.clear();
            }
            let _ = err_tx.send(Vec::from(tail).join(" | "));
        }),
    )?;
    spawn(
        format!("vb-from-{index}"),
        Box::new(move || {
            let mut r = BufReader::new(stdout);
            let mut buf = Vec::new();
            let mut first = Some(first);
            let why = loop {
                match read_line(&mut r, &mut buf) {
                    Ok(Some(())) => {
                        if let Some(f) = first.take() {
                            let _ = f.try_send(());
                        }
                        if events
                            .send((index, Event::Line(std::mem::take(&mut buf))))
                            .is_err()
                        {
                            return;
                        }
                    }
                    Ok(None) => break "the connection closed".to_string(),
                    Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
                        break format!("sent a line over {MAX_LINE} bytes");
                    }
                    Err(e) => break format!("unreadable output ({e})"),
                }
            };
            drop(first);
            // ssh's last words (e.g. "Connection refused") explain the close.
            let stderr = err_rx
                .recv_timeout(Duration::from_secs(2))
                .unwrap_or_default();
            let _ = events.send((index, Event::Closed { why, stderr }));
        }),
    )?;
    Ok((child, to_agent))
}

#[cfg(unix)]
fn to_agent_pipe(
    stdin: std::process::ChildStdin,
    _index: usize,
    _spawn: &dyn Fn(String, Box<dyn FnOnce() + Send>) -> Result<()>,
) -> Result<ToAgentPipe> {
    super::host::Direct::new(stdin)
        .map(ToAgentPipe::Direct)
        .map_err(|e| VbError::run(format!("cannot set up the agent's stdin: {e}")))
}

#[cfg(not(unix))]
fn to_agent_pipe(
    stdin: std::process::ChildStdin,
    index: usize,
    spawn: &dyn Fn(String, Box<dyn FnOnce() + Send>) -> Result<()>,
) -> Result<ToAgentPipe> {
    use std::io::Write;
    let (tx, rx) = mpsc::channel::<String>();
    spawn(
        format!("vb-to-{index}"),
        Box::new(move || {
            let mut stdin = stdin;
            for line in rx {
                if stdin
                    .write_all(line.as_bytes())
                    .and_then(|_| stdin.flush())
                    .is_err()
                {
                    break;
                }
            }
            // Dropping stdin here is the agent's end-of-input: it stops.
        }),
    )?;
    Ok(ToAgentPipe::Thread(tx))
}

impl Coordinator<'_> {
    /// Says goodbye, closes every agent's stdin and waits for the ssh
    /// clients to exit (killing any that do not within a few seconds).
    pub(super) fn shutdown(&mut self) {
        for h in &mut self.hosts {
            if h.live() {
                h.send(&ToAgent::Bye);
            }
            h.link.close();
        }
        let deadline = Instant::now() + STOP_TIMEOUT;
        for h in &mut self.hosts {
            if let Some(mut child) = h.link.child.take() {
                let left = deadline.saturating_duration_since(Instant::now());
                if wait_briefly(&mut child, left).is_none() {
                    let _ = child.kill();
                    let _ = child.wait();
                }
            }
        }
        // The srun step: its stdin closed with the last host's, it ends
        // when its tasks have.
        if let Some(mut child) = self.carrier.take() {
            let left = deadline.saturating_duration_since(Instant::now());
            if wait_briefly(&mut child, left).is_none() {
                let _ = child.kill();
                let _ = child.wait();
            }
        }
    }
}

pub(super) use crate::io::child::wait_briefly;

/// User and system CPU seconds of the children waited for (the ssh clients).
#[cfg(unix)]
pub(super) fn children_cpu() -> (f64, f64) {
    // SAFETY: getrusage fills the zeroed struct we pass and reads nothing else.
    let usage = unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        if libc::getrusage(libc::RUSAGE_CHILDREN, &mut u) != 0 {
            return (0.0, 0.0);
        }
        u
    };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (secs(usage.ru_utime), secs(usage.ru_stime))
}

/// The launchers' CPU from their job object's accounting (Windows has no
/// RUSAGE_CHILDREN).
#[cfg(windows)]
pub(super) fn children_cpu() -> (f64, f64) {
    crate::remote::launch::windows::children_cpu()
}
