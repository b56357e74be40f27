//! The plan of a job on many hosts: the hosts the input read (`HostsSpec`),
//! the target each one runs against, the parts of a shared tree, a
//! host-count sweep, and each host's own copy of the job (its threads, its
//! VM size). How the hosts are reached (the launcher, the binary) rides
//! along for the coordinator, which builds them.

use std::time::Duration;

use crate::error::{Result, VbError};
use crate::input::hosts::spec::HostsSpec;
use crate::input::hosts::{self, Assignment};
use crate::spec::JobSpec;
use crate::units::bounds::one_line;

/// Everything the coordinator runs, and how it reaches the hosts.
pub(crate) struct HostsPlan {
    pub(crate) hosts: Vec<Assignment>,
    /// One job per host (per-host thread overrides applied), same order.
    pub(crate) jobs: Vec<JobSpec>,
    /// The job as given, its target the template; it heads the result.
    pub(crate) template: JobSpec,
    pub(crate) session: String,
    pub(crate) heartbeat: Duration,
    pub(crate) timeout: Duration,
    /// The user gave the working set (else each host sizes its targets).
    pub(crate) size_given: bool,
    /// How the hosts are reached, what they run, what a lost host means.
    pub(crate) how: HostsSpec,
}

/// The plan for `template_job` (its target path the template) on the
/// hosts `spec` names, read at input.
pub(crate) fn plan(template_job: JobSpec, spec: &HostsSpec, size_given: bool) -> Result<HostsPlan> {
    let mut template_job = template_job;
    let mut hosts = spec.hosts.clone();
    let mut template = template_job.target.path.to_string_lossy().into_owned();
    // A tree: each host in its own part of it unless the target names the host.
    let parts =
        hosts::trees::tree_targets(&template_job, &mut hosts, &template, spec.shared_target)?;
    if let Some((t, _)) = &parts {
        hosts::trees::mark_part(&mut template_job, t != &template);
        template.clone_from(t);
    }
    let assigned = hosts::assign(&hosts, &template, spec.shared_target)?;
    if let Some((flag, counts)) = &spec.counts {
        hosts::counts::apply(&mut template_job, flag, counts, assigned.len())?;
    }
    let mut jobs = Vec::with_capacity(assigned.len());
    for (i, h) in assigned.iter().enumerate() {
        let mut job = template_job.clone();
        if let Some((_, p)) = &parts {
            hosts::trees::mark_part(&mut job, p.get(i).copied().unwrap_or(false));
        }
        if let Some(v) = &h.host.vm_size {
            job.reading.vm_size = Some(v.clone());
        }
        if let Some(t) = h.host.threads {
            for run in &mut job.runs {
                run.threads = t;
            }
            job.validate()
                .map_err(|e| VbError::input(format!("host {}: {e}", h.host.name)))?;
        }
        jobs.push(job);
    }
    replay_parts(&mut jobs)?;
    let session = spec.session.clone().unwrap_or_else(|| {
        format!(
            "{}-{}",
            crate::io::host::this_host().hostname,
            std::process::id()
        )
    });
    let timeout = spec.timeout;
    Ok(HostsPlan {
        hosts: assigned,
        jobs,
        template: template_job,
        session,
        // Heartbeats well inside the timeout, never less than 4 a timeout.
        heartbeat: (timeout / 5).clamp(Duration::from_millis(200), Duration::from_secs(1)),
        timeout,
        size_given,
        how: spec.clone(),
    })
}

/// A replay across hosts: each host's job carries its part of the trace
/// (`--replay-split`), read once here, before any host is reached.
fn replay_parts(jobs: &mut [JobSpec]) -> Result<()> {
    let n = jobs.len() as u32;
    let Some(spec) = jobs
        .first()
        .and_then(|j| j.runs.iter().find_map(|r| r.replay.clone()))
    else {
        return Ok(());
    };
    let parts = crate::io::replay::split::split(&spec, n)?;
    let offset_ns = match spec.split {
        Some(crate::spec::replay::ReplaySplit::Whole { offset_ns }) => offset_ns,
        _ => 0,
    };
    for (i, job) in jobs.iter_mut().enumerate() {
        // `whole` made one part, every host's.
        let Some(part) = parts.get(i).or(parts.first()) else {
            continue;
        };
        for r in job.runs.iter_mut().filter_map(|r| r.replay.as_mut()) {
            r.part = Some(crate::spec::replay::HostPart {
                host: i as u32,
                hosts: n,
                bytes: part.text.len() as u64,
                delay_ns: offset_ns.saturating_mul(i as u64),
            });
            r.summary = part.summary.clone();
            r.text = Some(part.text.clone());
        }
    }
    Ok(())
}

/// What `--dry-run` shows for many hosts: who runs what where, reached
/// with `launcher`, running `remote`. Every name in it is the user's text,
/// escaped so it cannot drive the terminal.
pub(crate) fn describe(p: &HostsPlan, launcher: &str, remote: &str) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "hosts:    {} (reached with: {})",
        p.hosts.len(),
        one_line(launcher)
    );
    for (h, job) in p.hosts.iter().zip(&p.jobs) {
        let threads: Vec<String> = job.runs.iter().map(|r| r.threads.to_string()).collect();
        let _ = writeln!(
            out,
            "  [{}] {:<20} threads {}  targets: {}",
            h.index,
            one_line(&h.host.name),
            threads.join(","),
            h.targets
                .iter()
                .map(|p| one_line(&p.display().to_string()))
                .collect::<Vec<_>>()
                .join(" ")
        );
    }
    let mut counts: Vec<u32> = Vec::new();
    for n in p.template.runs.iter().filter_map(|r| r.host_count) {
        if !counts.contains(&n) {
            counts.push(n);
        }
    }
    if !counts.is_empty() {
        let _ = writeln!(
            out,
            "host counts: each run once per count, on the first N hosts; the others stay connected and idle"
        );
        for n in counts {
            let names: Vec<String> = p
                .hosts
                .iter()
                .filter(|h| hosts::counts::takes_part(Some(n), h.index))
                .map(|h| one_line(&h.host.name))
                .collect();
            let runs: Vec<String> = p
                .template
                .runs
                .iter()
                .filter(|r| r.host_count == Some(n))
                .map(|r| one_line(&r.name))
                .collect();
            let _ = writeln!(
                out,
                "  {n:>4} hosts: {}  runs: {}",
                names.join(" "),
                runs.join(" ")
            );
        }
    }
    // A search's steps are runs on every host; the rate it names is the
    // whole job's, each target given an even share (`--rate` is per target).
    let n_targets: usize = p.hosts.iter().map(|h| h.targets.len()).sum();
    for r in &p.template.runs {
        if let Some(t) = &r.latency_target {
            let _ = writeln!(
                out,
                "search:   {}: the highest rate keeping {}, up to {} runs of {}s on all hosts, \
                 each judged on their merged histograms; a step's rate is the whole job's, \
                 each of the {n_targets} targets given an even share",
                one_line(&r.name),
                t.label(),
                t.max_steps,
                r.warmup_s + r.duration_s
            );
        }
    }
    replay_lines(&mut out, p);
    let _ = writeln!(out, "remote:   {remote}");
    out
}

/// A replay across hosts: each host's part as `replay_parts` dealt it
/// (the parts the hosts are sent): what it issues, over which span, and
/// when it starts.
fn replay_lines(out: &mut String, p: &HostsPlan) {
    use crate::spec::replay::ReplaySplit;
    use crate::units::{format_duration, format_size, thousands};
    use std::fmt::Write as _;
    let Some(spec) = p.template.runs.iter().find_map(|r| r.replay.as_ref()) else {
        return;
    };
    let rule = match spec.split {
        Some(ReplaySplit::Whole { offset_ns }) => format!(
            "the whole trace on every host, each starting {} after the one before",
            format_duration(Duration::from_nanos(offset_ns))
        ),
        _ => "each request to one host by its offset's 1 MiB stripe".to_string(),
    };
    let _ = writeln!(
        out,
        "replay:   {} ({}): {rule}",
        one_line(&spec.path.display().to_string()),
        spec.format.name()
    );
    for (h, job) in p.hosts.iter().zip(&p.jobs) {
        for r in job.runs.iter().filter_map(|r| r.replay.as_ref()) {
            let s = &r.summary;
            let start = r.part.as_ref().map_or(0, |x| x.delay_ns);
            let _ = writeln!(
                out,
                "  [{}] {:<20} {} requests: {} reads ({}), {} writes ({}), {} flushes, {} \
                 discards; span {}; trace time {}; starts at +{}",
                h.index,
                one_line(&h.host.name),
                thousands(s.requests as f64),
                thousands(s.reads as f64),
                format_size(s.read_bytes),
                thousands(s.writes as f64),
                format_size(s.write_bytes),
                thousands(s.flushes as f64),
                thousands(s.discards as f64),
                format_size(s.span_bytes),
                format_duration(Duration::from_nanos(s.last_ns)),
                format_duration(Duration::from_nanos(start))
            );
        }
    }
}
