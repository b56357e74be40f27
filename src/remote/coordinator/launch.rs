//! The launch pool: at most `--launch-parallel` launches in flight, a
//! launch being in flight from its start until its agent's first line (or
//! its end, or `--host-timeout`). A thousand hosts are then not a thousand
//! ssh handshakes at once on the coordinator and on whatever they share (a
//! bastion, an LDAP server, the hosts' sshd `MaxStartups`). The agents
//! already started are sent heartbeats while the others start, so a slow
//! start-up never reads as a silent coordinator.

use std::process::Child;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender};
use std::time::{Duration, Instant};

use super::super::launch::Launcher;
use super::super::launch::fanout::{Group, Mux};
use super::super::protocol::{ToAgent, encode};
use super::host::ToAgentPipe;
use crate::error::Result;

/// An agent's launcher process and the pipe of lines to it.
pub(super) type Launched = Result<(Child, ToAgentPipe)>;

pub(super) struct Pool<'a> {
    pub(crate) launcher: &'a Launcher,
    pub(crate) parallel: usize,
    /// How long one launch is waited for before the next takes its place
    /// (it goes on starting; the wait for the hellos judges it).
    pub(crate) wait: Duration,
    pub(crate) heartbeat: Duration,
    pub(crate) stop: &'a AtomicBool,
}

impl Pool<'_> {
    /// Launches every group's agents through `spawn` (launcher, host
    /// index, first-line signal); one entry per host, None for hosts not
    /// launched because of Ctrl-C.
    pub(super) fn all(
        &self,
        groups: &[Group],
        mux: Option<&Mux>,
        n_hosts: usize,
        spawn: impl Fn(&Launcher, usize, SyncSender<()>) -> Launched + Sync,
    ) -> Vec<Option<Launched>> {
        let results: Mutex<Vec<Option<Launched>>> =
            Mutex::new((0..n_hosts).map(|_| None).collect());
        let next = AtomicUsize::new(0);
        let beat = encode(&ToAgent::Heartbeat);
        std::thread::scope(|s| {
            let (done_tx, done_rx) = mpsc::channel::<()>();
            for _ in 0..self.parallel.clamp(1, groups.len().max(1)) {
                let done = done_tx.clone();
                let (results, next, spawn) = (&results, &next, &spawn);
                s.spawn(move || {
                    let _done = done;
                    loop {
                        let k = next.fetch_add(1, Ordering::Relaxed);
                        let Some(g) = groups.get(k) else { break };
                        if self.stop.load(Ordering::Relaxed) {
                            break;
                        }
                        self.group(g, mux, results, spawn);
                    }
                });
            }
            drop(done_tx);
            // Heartbeats to the agents started so far, until every worker
            // has finished (its sender dropped).
            while let Err(RecvTimeoutError::Timeout) = done_rx.recv_timeout(self.heartbeat) {
                if let Ok(mut r) = results.lock() {
                    for (_, pipe) in r.iter_mut().flatten().flatten() {
                        pipe.send(&beat);
                    }
                }
            }
        });
        results.into_inner().unwrap_or_default()
    }

    /// One group: its master (when it has one), then its agents, then the
    /// wait for each agent's first line.
    fn group(
        &self,
        g: &Group,
        mux: Option<&Mux>,
        results: &Mutex<Vec<Option<Launched>>>,
        spawn: &(impl Fn(&Launcher, usize, SyncSender<()>) -> Launched + Sync),
    ) {
        let deadline = Instant::now() + self.wait;
        let options = mux.map(|m| m.start(g, self.wait)).unwrap_or_default();
        let via = if options.is_empty() {
            self.launcher.clone()
        } else {
            self.launcher.with_ssh_options(&options)
        };
        let mut firsts: Vec<Receiver<()>> = Vec::with_capacity(g.agents.len());
        for &i in &g.agents {
            let (tx, rx) = mpsc::sync_channel(1);
            let r = spawn(&via, i, tx);
            if r.is_ok() {
                firsts.push(rx);
            }
            if let Ok(mut all) = results.lock() {
                if let Some(slot) = all.get_mut(i) {
                    *slot = Some(r);
                }
            }
        }
        for rx in firsts {
            loop {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() || self.stop.load(Ordering::Relaxed) {
                    return;
                }
                match rx.recv_timeout(left.min(Duration::from_millis(100))) {
                    Err(RecvTimeoutError::Timeout) => {}
                    _ => break,
                }
            }
        }
    }
}
