//! `volbench run --hosts ...` and suites on many hosts: turns a job and the
//! host flags into the coordinator's options, then hands the merged result
//! to the same finishing step as a local run.

use std::time::Duration;

use std::path::Path;

use crate::error::{Result, VbError, exit};
use crate::executor::Observer;
use crate::input::args::{HostArgs, RunArgs};
use crate::input::flags;
use crate::input::hosts;
use crate::remote::{coordinator, launcher};
use crate::result::expect::Expectation;
use crate::spec::JobSpec;
use crate::units::parse_duration_in;

/// `volbench run --hosts ...`: the same job on every host, merged.
pub fn cmd_run(a: &RunArgs, expect: Option<Expectation>) -> Result<i32> {
    // The targets are on the hosts: a missing --size is resolved by each
    // agent (a file or device whole), the directory default meanwhile.
    let job = flags::job_with_size(a, Some(crate::spec::defaults::DIR_SIZE))?;
    let c = &a.common;
    run_job(JobRun {
        job,
        size_given: c.size.is_some(),
        hosts: &c.remote,
        listed: None,
        output: c.out.output.as_deref(),
        json: c.out.json,
        dry_run: c.out.dry_run,
        expect,
        host_counts: c
            .remote
            .counts
            .host_counts
            .clone()
            .map(|t| ("--host-counts", t)),
    })
}

/// A job from any front end (flags, a suite) to run on many hosts.
pub struct JobRun<'a> {
    /// Its target path is the template.
    pub job: JobSpec,
    pub size_given: bool,
    pub hosts: &'a HostArgs,
    /// Hosts given by an import (vdbench's hd=), used unless the host flags name others.
    pub listed: Option<Vec<hosts::HostSpec>>,
    pub output: Option<&'a Path>,
    pub json: bool,
    pub dry_run: bool,
    /// --expect, recorded in the merged result and read by the diagnosis.
    pub expect: Option<Expectation>,
    /// A host-count sweep: the flag or suite key that asked, and its text.
    pub host_counts: Option<(&'static str, String)>,
}

pub fn run_job(r: JobRun) -> Result<i32> {
    crate::input::rate::refuse_search(&r.job, "a search over --hosts")?;
    let opts = options(r.job, r.size_given, r.hosts, r.listed, r.host_counts)?;
    if r.dry_run {
        print!("{}", describe(&opts));
        println!("resolved spec (per host, before each host checks its targets):");
        println!(
            "{}",
            serde_json::to_string_pretty(&opts.template)
                .map_err(|e| VbError::run(e.to_string()))?
        );
        return Ok(exit::OK);
    }
    let out = r
        .output
        .map(crate::output::file::OutputDir::open)
        .transpose()?;
    // The hosts get STOP_TIMEOUT to report after a stop, and the merge a moment.
    let grace = crate::remote::coordinator::STOP_TIMEOUT + super::stop::GRACE;
    let (stop, finisher) = super::stop::arm_with_grace(out, r.json, r.expect, grace)?;
    let obs = crate::output::ui::TerminalObserver::new(true);
    obs.note(&format!(
        "{} hosts, {} targets",
        opts.hosts.len(),
        opts.hosts.iter().map(|h| h.targets.len()).sum::<usize>()
    ));
    // A host whose ssh has gone must be an error on its pipe, not a SIGPIPE
    // ending the coordinator; the default comes back for our own output.
    crate::remote::set_sigpipe(libc::SIG_IGN);
    let doc = coordinator::run(opts, &obs, &stop);
    crate::remote::set_sigpipe(libc::SIG_DFL);
    finisher.finish(doc?)
}

/// Everything the coordinator needs.
pub fn options(
    template_job: JobSpec,
    size_given: bool,
    r: &HostArgs,
    listed: Option<Vec<hosts::HostSpec>>,
    host_counts: Option<(&'static str, String)>,
) -> Result<coordinator::Options> {
    // The launcher first: a template naming no program is refused before
    // --hosts-from runs anything.
    let ssh_cmd = r.ssh_command.clone().or_else(|| {
        std::env::var(launcher::SSH_ENV)
            .ok()
            .filter(|s| !s.trim().is_empty())
    });
    let launcher = launcher::Launcher::new(r.launch.launcher.as_deref(), ssh_cmd.as_deref())?;
    let mut template_job = template_job;
    let mut hosts = match (&r.hosts, &r.hosts_file, listed) {
        (Some(list), _, _) => hosts::parse_list(list)?,
        (None, Some(file), _) => hosts::read_file(file)?,
        (None, None, _) if let Some(cmd) = &r.launch.hosts_from => {
            crate::input::hosts::from_command::read(cmd)?
        }
        (None, None, Some(l)) => l,
        (None, None, None) => return Err(VbError::input("no hosts given")),
    };
    let mut template = template_job.target.path.to_string_lossy().into_owned();
    // A tree: each host in its own part of it unless the target names the host.
    let parts = crate::input::hosts::trees::tree_targets(
        &template_job,
        &mut hosts,
        &template,
        r.shared_target,
    )?;
    if let Some((t, _)) = &parts {
        crate::input::hosts::trees::mark_part(&mut template_job, t != &template);
        template.clone_from(t);
    }
    let assigned = hosts::assign(&hosts, &template, r.shared_target)?;
    if let Some((flag, text)) = &host_counts {
        let counts = crate::input::hosts::counts::parse(flag, text)?;
        crate::input::hosts::counts::apply(&mut template_job, flag, &counts, assigned.len())?;
    }
    let mut jobs = Vec::with_capacity(assigned.len());
    for (i, h) in assigned.iter().enumerate() {
        let mut job = template_job.clone();
        if let Some((_, p)) = &parts {
            crate::input::hosts::trees::mark_part(&mut job, p.get(i).copied().unwrap_or(false));
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
    let timeout = parse_duration_in(
        "--host-timeout",
        &r.host_timeout,
        crate::units::bounds::MIN_HOST_TIMEOUT,
        crate::units::bounds::MAX_HOST_TIMEOUT,
    )?;
    if let Some(s) = &r.session {
        crate::units::bounds::name("--session", s)?;
    }
    let session = r.session.clone().unwrap_or_else(|| {
        format!(
            "{}-{}",
            crate::io::host::this_host().hostname,
            std::process::id()
        )
    });
    Ok(coordinator::Options {
        hosts: assigned,
        jobs,
        template: template_job,
        size_given,
        launcher,
        remote: if r.push_binary {
            coordinator::Remote::Push(r.push_dir.clone())
        } else {
            coordinator::Remote::Installed(r.remote_volbench.clone())
        },
        session,
        // Heartbeats well inside the timeout, never less than 4 a timeout.
        heartbeat: (timeout / 5).clamp(Duration::from_millis(200), Duration::from_secs(1)),
        timeout,
        shared_target: r.shared_target,
    })
}

/// What `--dry-run` shows for many hosts: who runs what where.
/// Every name in it is the user's text, escaped so it cannot drive the
/// terminal.
fn describe(o: &coordinator::Options) -> String {
    use crate::units::bounds::one_line;
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "hosts:    {} (reached with: {})",
        o.hosts.len(),
        one_line(&o.launcher.describe())
    );
    for (h, job) in o.hosts.iter().zip(&o.jobs) {
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
    for n in o.template.runs.iter().filter_map(|r| r.host_count) {
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
            let names: Vec<String> = o
                .hosts
                .iter()
                .filter(|h| crate::input::hosts::counts::takes_part(Some(n), h.index))
                .map(|h| one_line(&h.host.name))
                .collect();
            let runs: Vec<String> = o
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
    let _ = writeln!(
        out,
        "remote:   {}",
        match &o.remote {
            coordinator::Remote::Installed(p) =>
                format!("runs '{} agent' on each host", one_line(p)),
            coordinator::Remote::Push(d) =>
                format!("pushes this binary into {} on each host", one_line(d)),
        }
    );
    out
}
