//! `--launcher slurm`: every agent a task of ONE srun step (`remote/launch/slurm.rs`
//! has the framing). One writer thread frames each host's lines onto srun's
//! stdin, which srun gives every task; one reader splits srun's labelled
//! stdout into each host's events and another keeps each task's stderr, so
//! the rest of the coordinator sees the hosts exactly as with one launcher
//! process each. The per-host `srun -w {host}` of the template stays for
//! one-off commands (`--push-binary`).

use std::collections::VecDeque;
use std::io::{BufReader, Write};
use std::process::ChildStdin;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::super::launch::RemoteCmd;
use super::super::launch::slurm::{
    Joiner, Tap, ToTask, ended_tasks, frame, label, read_bounded, srun_argv,
};
use super::super::protocol::sanitize;
use super::host::{Event, Host};
use super::{Coordinator, Options};
use crate::error::{Result, VbError};
use crate::executor::Observer;

/// Stderr lines kept per task (and for srun itself) to explain a loss.
const TAIL: usize = 8;

/// Starts one srun step for every host and sends each agent the hello.
pub(super) fn connect<'a>(
    opts: &Options,
    obs: &'a dyn Observer,
    stop: &'a AtomicBool,
) -> Result<Coordinator<'a>> {
    let remote = one_remote(opts, obs)?;
    let names: Vec<&str> = opts.hosts.iter().map(|a| a.host.name.as_str()).collect();
    let argv = srun_argv(&names, &remote);
    let mut child = opts
        .launcher
        .spawn_argv(&argv)
        .map_err(|e| VbError::target(format!("cannot start the srun step ('{}'): {e}", argv[0])))?;
    let (Some(stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        let _ = child.kill();
        let _ = child.wait();
        return Err(VbError::run("srun started without its pipes"));
    };
    let n = names.len();
    let (ev_tx, ev_rx) = mpsc::channel();
    let (to_tx, to_rx) = mpsc::channel::<ToTask>();
    let tails = Arc::new(Mutex::new(vec![VecDeque::new(); n + 1]));
    let started = thread("vb-step-to", move || write_loop(stdin, to_rx, n))
        .and_then(|_| {
            let (tails, ev) = (tails.clone(), ev_tx.clone());
            thread("vb-step-err", move || err_loop(stderr, n, &tails, &ev))
        })
        .and_then(|done| {
            let tails = tails.clone();
            thread("vb-step-from", move || {
                out_loop(stdout, n, &tails, &ev_tx, done)
            })
        });
    if let Err(e) = started {
        let _ = child.kill();
        let _ = child.wait();
        return Err(e);
    }
    let hello = super::spawn::hello(opts);
    let mut hosts = Vec::with_capacity(n);
    for (i, (a, job)) in opts.hosts.iter().zip(&opts.jobs).enumerate() {
        let mut host = Host::new(a.clone(), job.clone());
        let tap = Tap::new(i as u32, to_tx.clone());
        tap.send(&hello);
        host.link.step = Some(tap);
        hosts.push(host);
    }
    drop(to_tx);
    let mut c = Coordinator::new(
        hosts,
        ev_rx,
        obs,
        stop,
        opts.heartbeat,
        opts.timeout,
        opts.keep_going,
    );
    c.launcher = describe(n);
    c.carrier = Some(child);
    Ok(c)
}

/// What the result says reached the hosts: the step's srun, its host list
/// (a thousand names) left out.
pub(super) fn describe(n: usize) -> String {
    let argv = srun_argv(&["HOSTS"], &RemoteCmd::Argv(vec!["volbench".into()]));
    let words: Vec<String> = argv
        .into_iter()
        .take_while(|w| w != "volbench")
        .map(|w| w.replace("--ntasks=1", &format!("--ntasks={n}")))
        .collect();
    format!("slurm (one srun step: {})", words.join(" "))
}

/// The one agent command every task runs: the step cannot give tasks
/// different ones.
fn one_remote(opts: &Options, obs: &dyn Observer) -> Result<RemoteCmd> {
    // Before remote_commands, which pushes the binaries.
    if opts
        .hosts
        .iter()
        .any(|a| a.host.agent.os == crate::input::hosts::HostOs::Windows)
    {
        return Err(VbError::input(
            "--launcher slurm cannot start a Windows host (os=windows): Slurm runs \
             no Windows node; use --launcher ssh for it",
        ));
    }
    let all = super::spawn::remote_commands(opts, obs)?;
    let Some(first) = all.first() else {
        return Err(VbError::input("--launcher slurm needs at least one host"));
    };
    let same = all.iter().all(|r| match (r, first) {
        (RemoteCmd::Argv(a), RemoteCmd::Argv(b)) => a == b,
        (RemoteCmd::Script(a), RemoteCmd::Script(b)) => a == b,
        _ => false,
    });
    if !same {
        return Err(VbError::target(
            "--launcher slurm runs one command on every host, but the pushed \
             binary's path differs between hosts; use --remote-volbench PATH",
        ));
    }
    Ok(first.clone())
}

fn thread(name: &str, f: impl FnOnce() + Send + 'static) -> Result<Receiver<()>> {
    let (done_tx, done_rx) = mpsc::channel();
    std::thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            f();
            drop(done_tx);
        })
        .map(|_| done_rx)
        .map_err(|e| VbError::run(format!("cannot start a thread: {e}")))
}

/// Frames the hosts' lines onto srun's stdin. The same line sent to host
/// after host (a heartbeat, a start, a stop) goes out once, to all or to a
/// list: a thousand heartbeats a period would otherwise be a thousand lines
/// read by every agent. Ends, closing srun's stdin, when every tap is gone.
fn write_loop(stdin: ChildStdin, rx: Receiver<ToTask>, n: usize) {
    let mut out = std::io::BufWriter::new(stdin);
    let mut open = vec![true; n];
    let mut open_count = n;
    let mut in_group = vec![false; n];
    while let Ok(first) = rx.recv() {
        let mut batch = vec![first];
        batch.extend(rx.try_iter());
        let mut k = 0;
        let mut text = String::new();
        while k < batch.len() {
            let line = batch[k].line.clone();
            let mut marked = Vec::new();
            // A task twice is two lines for it: the group ends there.
            while k < batch.len() && batch[k].line == line {
                let t = batch[k].task as usize;
                if t < n && in_group[t] {
                    break;
                }
                k += 1;
                if t < n {
                    in_group[t] = true;
                    marked.push(t);
                }
            }
            for &t in &marked {
                in_group[t] = false;
            }
            let tasks: Vec<u32> = marked
                .into_iter()
                .filter(|&t| open[t])
                .map(|t| t as u32)
                .collect();
            if tasks.is_empty() {
                continue;
            }
            let all = tasks.len() == open_count;
            for l in frame(&tasks, all, line.as_deref()) {
                text.push_str(&l);
            }
            if line.is_none() {
                for t in tasks {
                    open[t as usize] = false;
                    open_count -= 1;
                }
            }
        }
        if out
            .write_all(text.as_bytes())
            .and_then(|_| out.flush())
            .is_err()
        {
            // srun is gone: its reader reports the end.
            return;
        }
        if open_count == 0 {
            return;
        }
    }
}

/// Each task's stderr lines into its tail; srun's own lines into the last
/// tail, and its word that tasks ended into their hosts' loss at once.
fn err_loop(
    stderr: std::process::ChildStderr,
    n: usize,
    tails: &Mutex<Vec<VecDeque<String>>>,
    events: &Sender<(usize, Event)>,
) {
    let mut r = BufReader::new(std::io::Read::take(stderr, 1 << 24));
    let mut buf = Vec::new();
    while let Ok(Some(())) = read_bounded(&mut r, &mut buf, 1 << 16) {
        let (slot, text) = match label(&buf) {
            Some((t, rest)) if (t as usize) < n => (t as usize, rest),
            _ => (n, &buf[..]),
        };
        let text = sanitize(String::from_utf8_lossy(text).trim_end(), 300);
        if text.is_empty() {
            continue;
        }
        let ended = if slot == n {
            ended_tasks(&text)
        } else {
            Vec::new()
        };
        if let Ok(mut t) = tails.lock() {
            t[slot].push_back(text.clone());
            if t[slot].len() > TAIL {
                t[slot].pop_front();
            }
            for task in ended.into_iter().filter(|&k| (k as usize) < n) {
                let stderr = Vec::from(t[task as usize].clone()).join(" | ");
                let why = format!("its task ended ({text})");
                let _ = events.send((task as usize, Event::Closed { why, stderr }));
            }
        }
    }
}

/// srun's labelled stdout into each host's lines; at its end every host
/// is told its connection closed (a host already finished or lost
/// ignores it).
fn out_loop(
    stdout: std::process::ChildStdout,
    n: usize,
    tails: &Mutex<Vec<VecDeque<String>>>,
    events: &Sender<(usize, Event)>,
    err_done: Receiver<()>,
) {
    let mut r = BufReader::new(stdout);
    let mut buf = Vec::new();
    let mut joiner = Joiner::new(n);
    // A piece is at most srun's message and its label; more is not srun.
    let why = loop {
        match read_bounded(&mut r, &mut buf, 1 << 16) {
            Ok(Some(())) => {}
            Ok(None) => break "the srun step ended".to_string(),
            Err(e) => break format!("srun's output is unreadable ({e})"),
        }
        let Some((task, piece)) = label(&buf) else {
            continue;
        };
        match joiner.push(task, piece) {
            Ok(Some(line)) => {
                if events.send((task as usize, Event::Line(line))).is_err() {
                    return;
                }
            }
            Ok(None) => {}
            Err(e) if (task as usize) < n => {
                let stderr = String::new();
                let _ = events.send((task as usize, Event::Closed { why: e, stderr }));
            }
            Err(_) => {}
        }
    };
    // srun's last words (why the step failed) explain the close.
    let _ = err_done.recv_timeout(Duration::from_secs(2));
    let Ok(t) = tails.lock() else { return };
    let step = Vec::from(t[n].clone()).join(" | ");
    for (i, tail) in t.iter().take(n).enumerate() {
        let mut stderr = Vec::from(tail.clone()).join(" | ");
        if !step.is_empty() {
            if !stderr.is_empty() {
                stderr.push_str(" | ");
            }
            stderr.push_str(&step);
        }
        let _ = events.send((
            i,
            Event::Closed {
                why: why.clone(),
                stderr,
            },
        ));
    }
}
