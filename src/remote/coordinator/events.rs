//! The event loop: waits on the hosts' lines and closes until a condition
//! holds, keeps heartbeats going, fails hosts that fall silent, and turns
//! failures before any I/O into one error naming every host.

use crate::events::Raise as _;
use std::sync::atomic::Ordering;
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

use super::super::protocol::{FromAgent, ToAgent, encode, sanitize};
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
        // Toward the agents, a beat every third of the timeout, not every
        // heartbeat: an agent only needs to hear something within the
        // timeout (three beats' margin), and at a thousand agents these
        // pipe writes and the wake-ups they cause were a fifth of this
        // loop's CPU. The agents' own silence is still judged on the
        // timeout, their beats on the heartbeat.
        let every = self.heartbeat.max(self.timeout / 3);
        if now.duration_since(self.last_beat) >= every {
            self.last_beat = now;
            // Encoded once for every host: a thousand of them each second.
            let line = encode(&ToAgent::Heartbeat);
            for h in self.hosts.iter().filter(|h| h.live()) {
                h.send_line(&line);
            }
        }
        // The loop comes here after every burst of lines (thousands a second
        // from a thousand hosts); looking for silent hosts once a tick is
        // as good for a timeout of a second or more, at a fraction of the cost.
        if now.duration_since(self.last_scan) < TICK {
            return;
        }
        self.last_scan = now;
        #[cfg(unix)]
        for h in &self.hosts {
            h.link.flush();
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
        h.link.close();
        if let Some(child) = h.link.child.as_mut() {
            let _ = child.kill();
        }
        let name = h.a.host.name.clone();
        self.obs.host_state(&name, "failed");
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
                    // Its reader waited for stderr's end, so the launcher has
                    // usually exited; never block the loop long (at a
                    // thousand hosts a second each starved the heartbeats).
                    .and_then(|c| wait_briefly(c, Duration::from_millis(20)));
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
                    // A launcher that exits cleanly before any hello ran
                    // something other than the agent appended to it.
                    if status.and_then(|s| s.code()) == Some(0) {
                        msg.push_str(&format!(
                            "; the launcher '{}' ended without starting an agent \
                             (it must run the command appended after its words)",
                            self.launcher
                        ));
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
        if self.drop_failed(what) {
            return Ok(());
        }
        if let Some(e) = self.failures(what) {
            self.shutdown();
            return Err(e);
        }
        Ok(())
    }

    /// `--on-host-loss continue` before any I/O: hosts that failed (never
    /// answered, refused) are left out with a note, as long as one is left.
    /// False when there is nothing to drop or it is not ours to drop.
    pub(super) fn drop_failed(&mut self, what: &str) -> bool {
        let new: Vec<usize> = (0..self.hosts.len())
            .filter(|&i| !self.hosts[i].live() && !self.hosts[i].dropped)
            .collect();
        if !self.keep_going || new.is_empty() || !self.hosts.iter().any(|h| h.live()) {
            return false;
        }
        let causes: Vec<(&str, &str)> = new
            .iter()
            .map(|&i| {
                let h = &self.hosts[i];
                (h.name(), h.failed.as_deref().unwrap_or(""))
            })
            .collect();
        let note = format!(
            "{} of {} hosts left out, they could not {what} (--on-host-loss continue):\n{}",
            new.len(),
            self.hosts.len(),
            group_causes(&causes).join("\n")
        );
        for &i in &new {
            self.hosts[i].dropped = true;
        }
        self.obs.note(&note);
        self.notes.push(note);
        true
    }

    /// One error naming every failed host, if any failed.
    pub(super) fn failures(&self, what: &str) -> Option<VbError> {
        let failed: Vec<&Host> = self
            .hosts
            .iter()
            .filter(|h| !h.live() && !h.dropped)
            .collect();
        if failed.is_empty() {
            return None;
        }
        let kind = failed
            .iter()
            .find_map(|h| h.error_kind)
            .unwrap_or(Kind::Target);
        let causes: Vec<(&str, &str)> = failed
            .iter()
            .map(|h| (h.name(), h.failed.as_deref().unwrap_or("")))
            .collect();
        let lines = group_causes(&causes);
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

/// One line per distinct cause with the hosts it hit: a start failing on
/// 200 hosts for one reason (a missing binary, a refused key) reads as one
/// line, not 200. A host's own name in its cause counts as `{host}`, so
/// "ssh: connect to host b ..." groups with the same failure on host c.
pub(super) fn group_causes(failed: &[(&str, &str)]) -> Vec<String> {
    const SHOWN: usize = 8;
    let mut groups: Vec<(String, Vec<&str>)> = Vec::new();
    for (host, cause) in failed {
        // A cause is an agent's or ssh's text: kept to its line.
        let cause = crate::units::bounds::one_line(cause);
        let key = replace_word(&cause, host, "{host}");
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, hosts)) => hosts.push(host),
            None => groups.push((key, vec![host])),
        }
    }
    groups
        .into_iter()
        .map(|(cause, hosts)| {
            let mut names = hosts
                .iter()
                .take(SHOWN)
                .copied()
                .collect::<Vec<_>>()
                .join(", ");
            if hosts.len() > SHOWN {
                names.push_str(&format!(" and {} more", hosts.len() - SHOWN));
            }
            let cause = match hosts.as_slice() {
                [one] => cause.replace("{host}", one),
                _ => cause,
            };
            format!("  {names}: {cause}")
        })
        .collect()
}

/// `text` with each whole-word `word` (not inside a longer name: host
/// "a" is not the a of "agent") replaced.
fn replace_word(text: &str, word: &str, with: &str) -> String {
    if word.is_empty() {
        return text.to_string();
    }
    let part = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || "-_.".contains(c));
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find(word) {
        let (before, after) = (
            rest.get(..i).unwrap_or(""),
            rest.get(i + word.len()..).unwrap_or(""),
        );
        let whole = !part(before.chars().next_back()) && !part(after.chars().next());
        out.push_str(before);
        out.push_str(if whole { with } else { word });
        rest = after;
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod group_tests {
    use super::group_causes;

    #[test]
    fn one_line_per_cause_with_its_hosts() {
        let lines = group_causes(&[
            ("a", "volbench not found on PATH"),
            ("b", "ssh: connect to host b port 22: Connection refused"),
            ("c", "volbench not found on PATH"),
            ("d", "ssh: connect to host d port 22: Connection refused"),
            ("e", "agent is version 0.0.9"),
            ("g", "agent is version 0.0.9"),
        ]);
        assert_eq!(
            lines,
            [
                "  a, c: volbench not found on PATH",
                "  b, d: ssh: connect to host {host} port 22: Connection refused",
                "  e, g: agent is version 0.0.9",
            ]
        );
    }

    #[test]
    fn many_hosts_are_counted_not_all_listed() {
        let names: Vec<String> = (0..20).map(|i| format!("n{i:02}")).collect();
        let failed: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), "refused")).collect();
        let lines = group_causes(&failed);
        assert_eq!(lines.len(), 1);
        assert!(lines[0].ends_with("n07 and 12 more: refused"), "{lines:?}");
    }
}
