//! One handler per agent message. Each checks the message against what the
//! host was asked (an answer to something not asked is a protocol violation
//! that fails the host) and cleans any text before it can reach a terminal.

use crate::events::Raise as _;
use std::sync::atomic::Ordering;

use super::super::protocol::{FromAgent, PROTOCOL, TargetResult, sanitize};
use super::Coordinator;
use super::clock::{first_ping, on_pong};
use crate::error::Kind;
use crate::result::merge;
use crate::spec::EngineKind;

impl Coordinator<'_> {
    /// Takes in one message; an `Err` is a protocol violation that fails the host.
    pub(super) fn on_message(
        &mut self,
        i: usize,
        msg: FromAgent,
    ) -> std::result::Result<(), String> {
        let n_targets = self.hosts[i].a.targets.len();
        let step_name = self.step.as_ref().map(|s| s.0.name.clone());
        let h = &mut self.hosts[i];
        match msg {
            FromAgent::Heartbeat => {}
            FromAgent::Hello {
                protocol,
                version,
                host,
                ..
            } => {
                if h.version.is_some() {
                    return Err("said hello twice".into());
                }
                let version = sanitize(&version, 40);
                if protocol != PROTOCOL {
                    return Err(format!(
                        "it runs volbench {version} speaking agent protocol {protocol}; this is \
                         volbench {} speaking protocol {PROTOCOL}. Install the same version there, \
                         or pass --push-binary",
                        env!("CARGO_PKG_VERSION")
                    ));
                }
                if version != env!("CARGO_PKG_VERSION") {
                    let note = format!(
                        "host {} runs volbench {version}, this is {} (same protocol)",
                        h.a.host.name,
                        env!("CARGO_PKG_VERSION")
                    );
                    self.notes.push(note);
                }
                let h = &mut self.hosts[i];
                h.version = Some(version);
                h.info = host.map(|mut info| {
                    info.hostname = sanitize(&info.hostname, 100);
                    info.kernel = sanitize(&info.kernel, 100);
                    *info
                });
                if let Some(info) = &h.info {
                    crate::result::check::check_host_environment(info)?;
                }
                first_ping(h);
            }
            FromAgent::Pong {
                id,
                sent_ns,
                agent_ns,
            } => on_pong(h, id, sent_ns, agent_ns)?,
            FromAgent::Planned { targets, notes } => {
                if targets.len() != n_targets
                    || targets.iter().any(|t| t.runs.len() != h.job.runs.len())
                {
                    return Err("planned another job than it was sent".into());
                }
                super::super::protocol::sizes_understood(&h.job, &targets)?;
                // An engine this volbench does not know would be shown and
                // recorded as some other engine: refuse the host instead.
                for r in targets.iter().flat_map(|t| &t.runs) {
                    EngineKind::from_name(&r.engine).map_err(|e| format!("planned an {e}"))?;
                }
                h.setup.planned = Some(targets);
                let name = h.a.host.name.clone();
                for n in notes {
                    self.note(&name, &n);
                }
            }
            FromAgent::Progress { done, total } => {
                if done > total {
                    return Err("reported more filled than there is to fill".into());
                }
                h.setup.fill.done = done;
                h.setup.fill.total = total;
                h.setup.fill.known = true;
                self.show_fill();
            }
            FromAgent::Prepared {
                targets,
                notes,
                fill,
            } => {
                if targets.len() != n_targets || !h.setup.prepare_sent {
                    return Err("prepared other targets than it was sent".into());
                }
                h.setup.prepared = Some(
                    targets
                        .into_iter()
                        .map(|mut t| {
                            t.path = sanitize(&t.path, 4096);
                            t
                        })
                        .collect(),
                );
                for t in h.setup.prepared.iter().flatten() {
                    crate::result::check::check_blocks(t)?;
                }
                for f in &fill {
                    f.check().map_err(|e| format!("sent a fill with {e}"))?;
                }
                let name = h.a.host.name.clone();
                h.setup.fills = fill
                    .into_iter()
                    .map(|mut f| {
                        f.host = name.clone();
                        f.path = sanitize(&f.path, 4096);
                        f
                    })
                    .collect();
                // The fills are shown once, above the result's tables, as on
                // one host; printed here too they appeared twice.
                for n in notes {
                    self.note(&name, &n);
                }
                self.show_fill();
            }
            FromAgent::Ready { index } => {
                if self.run.as_ref().map(|r| r.0) != Some(index) || h.run.ready {
                    return Err(format!("ready for run {index}, which was not asked"));
                }
                h.run.ready = true;
            }
            FromAgent::Started {
                index,
                target,
                at_ns,
            } => {
                let t = target as usize;
                if self.run.as_ref().map(|r| r.0) != Some(index) || t >= n_targets {
                    return Err("started something it was not asked".into());
                }
                h.run.started[t] = Some(at_ns as i128 - h.clock.offset_ns);
            }
            FromAgent::Interval {
                index,
                target,
                seq,
                interval,
            } => {
                let t = target as usize;
                let Some((cur, run)) = &self.run else {
                    return Err("an interval outside a run".into());
                };
                if *cur != index || t >= n_targets || seq as usize != h.run.intervals[t].len() {
                    return Err("an interval out of order".into());
                }
                let longest = (run.spec.warmup_s + run.spec.duration_s) * 2.0 + 60.0;
                merge::check_interval(&interval, longest).map_err(|e| format!("sent {e}"))?;
                if h.run.intervals[t].len() > crate::result::MAX_INTERVALS * 4 {
                    return Err("too many intervals".into());
                }
                super::progress::pass_through(self.obs, run, h, t, &interval);
                h.run.intervals[t].push(interval);
                self.print_intervals();
            }
            FromAgent::RunDone {
                index,
                results,
                error,
            } => self.on_run_done(i, index, results, error, step_name)?,
            FromAgent::Note { message } => {
                let name = h.a.host.name.clone();
                self.note(&name, &message);
            }
            FromAgent::Error { message, code } => {
                h.error_kind = Some(match code {
                    2 => Kind::Input,
                    3 => Kind::Refused,
                    4 => Kind::Target,
                    5 => Kind::Unchecked,
                    _ => Kind::Run,
                });
                return Err(sanitize(&message, 2000));
            }
        }
        Ok(())
    }

    /// A host's results for the run in progress, checked before they are kept.
    fn on_run_done(
        &mut self,
        i: usize,
        index: u32,
        results: Vec<TargetResult>,
        error: Option<String>,
        step_name: Option<String>,
    ) -> std::result::Result<(), String> {
        let n_targets = self.hosts[i].a.targets.len();
        let h = &mut self.hosts[i];
        if self.run.as_ref().map(|r| r.0) != Some(index) || h.run.done.is_some() {
            return Err(format!("results for run {index}, which was not asked"));
        }
        let mut spec = h.job.runs[index as usize].clone();
        // A search step's result carries the step's name.
        if let Some(n) = step_name {
            spec.name = n;
        }
        let spec = &spec;
        let mut seen = vec![false; n_targets];
        for r in &results {
            let t = r.target as usize;
            if t >= n_targets || std::mem::replace(&mut seen[t], true) {
                return Err("results for targets it does not have".into());
            }
            merge::check_run(&r.result, spec)
                .map_err(|e| format!("sent an invalid result: {e}"))?;
        }
        // A run the agent cut short by itself (it heard nothing from us for
        // --host-timeout, or was signalled) would merge as if it had run
        // the whole time: a loss, not a result.
        let asked_to_stop = h.run.stopped || self.stop.load(Ordering::Relaxed);
        if !asked_to_stop && results.iter().any(|r| r.result.interrupted) {
            let why = error.map(|e| format!(": {}", sanitize(&e, 300)));
            return Err(format!(
                "ended run {index} early on its own (it heard nothing from this \
                 coordinator for --host-timeout, or was signalled){}",
                why.unwrap_or_default()
            ));
        }
        h.run.done = Some((results, error.map(|e| sanitize(&e, 2000))));
        Ok(())
    }

    /// A host's note, shown once however many hosts say it.
    fn note(&mut self, host: &str, message: &str) {
        let message = sanitize(message, 1000);
        if self
            .notes
            .iter()
            .any(|n| n.ends_with(&format!(": {message}")))
        {
            return;
        }
        let line = format!("{host}: {message}");
        self.obs.note(&line);
        self.notes.push(line);
    }
}
