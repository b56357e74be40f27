//! The event loop: waits on the hosts' lines and closes until a condition
//! holds, keeps heartbeats going, fails hosts that fall silent, and turns
//! failures before any I/O into one error naming every host.

use std::sync::atomic::Ordering;
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

use super::super::protocol::{FromAgent, ToAgent, sanitize};
use super::host::{Event, Host, all_live};
use super::spawn::wait_briefly;
use super::{Coordinator, PINGS, TICK};
use crate::error::{Kind, Result, VbError};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Outcome {
    Done,
    Stopped,
    TimedOut,
}

impl Coordinator<'_> {
    /// Handles events until `done` holds for every live host, Ctrl-C, or the
    /// deadline. Keeps heartbeats going and fails silent hosts meanwhile.
    pub(super) fn wait_for(
        &mut self,
        deadline: Option<Instant>,
        done: impl Fn(&Host) -> bool,
    ) -> Outcome {
        self.wait_until(deadline, |hosts| all_live(hosts, &done))
    }

    /// Like `wait_for`, with a condition over all hosts (live or not).
    pub(super) fn wait_until(
        &mut self,
        deadline: Option<Instant>,
        cond: impl Fn(&[Host]) -> bool,
    ) -> Outcome {
        self.wait_inner(deadline, cond, true)
    }

    /// `heed_stop: false` keeps waiting after Ctrl-C: for the results of
    /// the hosts told to stop.
    pub(super) fn wait_inner(
        &mut self,
        deadline: Option<Instant>,
        cond: impl Fn(&[Host]) -> bool,
        heed_stop: bool,
    ) -> Outcome {
        loop {
            if cond(&self.hosts) {
                return Outcome::Done;
            }
            if heed_stop && self.stop.load(Ordering::Relaxed) {
                return Outcome::Stopped;
            }
            let now = Instant::now();
            if deadline.is_some_and(|d| now >= d) {
                return Outcome::TimedOut;
            }
            let wait = deadline.map_or(TICK, |d| (d - now).min(TICK));
            match self.events.recv_timeout(wait) {
                Ok((i, ev)) => self.handle(i, ev),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return Outcome::Done,
            }
            // Drain whatever else is already queued before the checks.
            while let Ok((i, ev)) = self.events.try_recv() {
                self.handle(i, ev);
            }
            self.tick();
        }
    }

    fn tick(&mut self) {
        let now = Instant::now();
        if now.duration_since(self.last_beat) >= self.heartbeat {
            self.last_beat = now;
            for h in self.hosts.iter().filter(|h| h.live()) {
                h.send(&ToAgent::Heartbeat);
            }
        }
        for i in 0..self.hosts.len() {
            let h = &self.hosts[i];
            let silent = now.duration_since(h.link.last_heard);
            // Before its hello a host is still connecting: the connect
            // deadline governs that, not the heartbeat silence.
            if h.live() && h.version.is_some() && silent > self.timeout {
                let secs = silent.as_secs_f64();
                self.fail(
                    i,
                    format!("no word from it for {secs:.1}s (host down or network cut)"),
                );
            }
        }
    }

    pub(super) fn fail(&mut self, i: usize, why: String) {
        let h = &mut self.hosts[i];
        if h.failed.is_some() {
            return;
        }
        h.failed = Some(why.clone());
        // Closing its stdin stops the agent if the link still works; killing
        // ssh frees us from a link that does not.
        h.link.tx = None;
        if let Some(child) = h.link.child.as_mut() {
            let _ = child.kill();
        }
        let name = h.a.host.name.clone();
        if self.run.is_some() || self.fill_bar {
            self.end_fill_bar();
            self.obs.note(&format!("host {name} failed: {why}"));
        }
    }

    fn handle(&mut self, i: usize, ev: Event) {
        if !self.hosts[i].live() {
            return;
        }
        match ev {
            Event::Closed { why, stderr } => {
                let status = self.hosts[i]
                    .link
                    .child
                    .as_mut()
                    .and_then(|c| wait_briefly(c, Duration::from_secs(1)));
                let mut msg = why;
                if let Some(st) = status {
                    msg.push_str(&format!(" ({st})"));
                }
                if !stderr.is_empty() {
                    msg.push_str(&format!(": {stderr}"));
                }
                if self.hosts[i].version.is_none() {
                    if status.and_then(|s| s.code()) == Some(127) || stderr.contains("not found") {
                        msg.push_str(
                            "; is volbench installed there? --push-binary copies this one \
                             (or --remote-volbench PATH names it)",
                        );
                    }
                    msg = format!("cannot start the agent: {msg}");
                }
                self.fail(i, msg);
            }
            Event::Line(bytes) => {
                self.hosts[i].link.last_heard = Instant::now();
                let msg: FromAgent = match crate::remote::protocol::decode(&bytes) {
                    Ok(m) => m,
                    Err(e) => {
                        let text =
                            String::from_utf8_lossy(&bytes[..bytes.len().min(120)]).into_owned();
                        self.fail(
                            i,
                            format!("sent malformed output ({e}): '{}'", sanitize(&text, 120)),
                        );
                        return;
                    }
                };
                if let Err(why) = self.on_message(i, msg) {
                    self.fail(i, why);
                }
            }
        }
    }

    /// After a phase before any I/O: every failed host is named in one error.
    pub(super) fn before_io(&mut self, what: &str, outcome: Outcome) -> Result<()> {
        if outcome == Outcome::Stopped {
            self.shutdown();
            return Err(VbError {
                kind: Kind::Run,
                message: "interrupted before any I/O".into(),
            });
        }
        if outcome == Outcome::TimedOut {
            for i in 0..self.hosts.len() {
                let h = &self.hosts[i];
                let done = if what.starts_with("start") {
                    h.version.is_some() && h.clock.pings.len() as u32 >= PINGS
                } else {
                    h.setup.planned.is_some()
                };
                if h.live() && !done {
                    let why = if what.starts_with("start") {
                        format!(
                            "no hello from the agent within {}s (--host-timeout)",
                            self.timeout.as_secs_f64()
                        )
                    } else {
                        format!("no answer in time while trying to {what}")
                    };
                    self.fail(i, why);
                }
            }
        }
        if let Some(e) = self.failures(what) {
            self.shutdown();
            return Err(e);
        }
        Ok(())
    }

    /// One error naming every failed host, if any failed.
    pub(super) fn failures(&self, what: &str) -> Option<VbError> {
        let failed: Vec<&Host> = self.hosts.iter().filter(|h| !h.live()).collect();
        if failed.is_empty() {
            return None;
        }
        let kind = failed
            .iter()
            .find_map(|h| h.error_kind)
            .unwrap_or(Kind::Target);
        let lines: Vec<String> = failed
            .iter()
            .map(|h| format!("  {}: {}", h.name(), h.failed.as_deref().unwrap_or("")))
            .collect();
        Some(VbError {
            kind,
            message: format!(
                "could not {what} on {} of {} hosts (nothing was run):\n{}",
                failed.len(),
                self.hosts.len(),
                lines.join("\n")
            ),
        })
    }
}
