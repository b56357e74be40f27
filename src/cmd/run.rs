//! The one road of every command that runs I/O: `run`, `suite run` and the
//! importers' runs (an import is a suite). Arguments -> `JobSpec` -> plan
//! (one target, a list of targets, or many hosts) -> the runner (the
//! executor on this host, or the coordinator of the hosts) -> `finish`.
//! The front ends differ only in how they make the job; where it runs is
//! decided once, in `Where::of`.

use std::path::PathBuf;

use super::{finish, stop};
use crate::error::{Result, VbError, exit};
use crate::executor::{self, Observer as _};
use crate::input::args::launch::OnOff;
use crate::input::args::{CommonArgs, HostArgs, OutputArgs, RunArgs, SuiteRunArgs};
use crate::input::hosts::{HostOs, HostSpec};
use crate::input::targets::{attach, check_threads_total, expand_local};
use crate::input::{flags, suite};
use crate::output::file::OutputDir;
use crate::plan::{self, Plan};
use crate::remote::{coordinator, k8s, launcher};
use crate::result::expect::Expectation;
use crate::spec::JobSpec;
use crate::units::bounds::one_line;

/// `volbench run`.
pub(crate) fn cmd_run(a: &RunArgs) -> Result<i32> {
    // --like PROFILE: the flags derived from a captured profile, each said
    // with the figure it came from; flags the user gave win.
    let (a, derived) = crate::input::like::resolve(a)?;
    let a = &a;
    for l in derived {
        crate::console::errln!("{l}");
    }
    let c = &a.common;
    let expect = finish::expectation(c)?;
    let counts = c.remote.counts.host_counts.clone();
    let at = Where::of(c, None, counts.map(|t| ("--host-counts", t)))?;
    let mut first = a.clone();
    first.common.target = at.path(c);
    let job = flags::job_from_run_args(&first)?;
    run_job(
        Road {
            job,
            common: c,
            expect,
            show_plan: false,
            first: None,
        },
        at,
    )
}

/// `volbench suite run`.
pub(crate) fn cmd_suite_run(a: &SuiteRunArgs) -> Result<i32> {
    let (origin, text) = suite::load(&a.suite)?;
    let mut parsed = suite::parse(&origin, &text)?;
    let mut first = None;
    if a.published.published {
        let (p, lines) = suite::published::select(parsed, &origin)?;
        for l in lines {
            crate::console::errln!("{l}");
        }
        parsed = p;
    } else if parsed.published.is_some() {
        // Said once the job is valid, so no one reads a scaled-down run's
        // figures as the paper's, and bad input is still one error line.
        let (scaled, published) = suite::published::variants(&origin, &text)?;
        first = Some(format!(
            "volbench: note: {} runs its scaled-down defaults ({scaled}); --published runs the paper's ({})",
            parsed.name,
            published.unwrap_or_default()
        ));
    }
    let run = SuiteRun {
        origin: &origin,
        text: &text,
        no_warmup_run: a.no_warmup_run,
        listed: None,
        first,
    };
    run_suite(run, parsed, &a.common)
}

/// `suite run` on a suite's text (an import's); `listed` hosts (an
/// import's) replace the host flags' list.
pub(crate) fn run_suite_text(
    origin: &str,
    text: &str,
    c: &CommonArgs,
    no_warmup_run: bool,
    listed: Option<Vec<HostSpec>>,
) -> Result<i32> {
    let parsed = suite::parse(origin, text)?;
    let run = SuiteRun {
        origin,
        text,
        no_warmup_run,
        listed,
        first: None,
    };
    run_suite(run, parsed, c)
}

/// A suite about to run: its text, and a line to print once its job is
/// valid (before any I/O).
struct SuiteRun<'a> {
    origin: &'a str,
    text: &'a str,
    no_warmup_run: bool,
    listed: Option<Vec<HostSpec>>,
    first: Option<String>,
}

fn run_suite(r: SuiteRun<'_>, parsed: suite::SuiteFile, c: &CommonArgs) -> Result<i32> {
    let expect = finish::expectation(c)?;
    let multi_host = c.remote.is_multi_host() || r.listed.is_some();
    let c = &with_suite_threads_total(c, parsed.threads_total, multi_host)?;
    let host_counts = match (&c.remote.counts.host_counts, parsed.host_counts_text()) {
        (Some(t), _) => Some(("--host-counts", t.clone())),
        (None, Some(t)) => Some(("host_counts", t)),
        (None, None) => None,
    };
    let at = Where::of(c, r.listed, host_counts)?;
    let mut args = c.clone();
    args.target = at.path(c);
    let overrides = suite::Overrides {
        args,
        no_warmup_run: r.no_warmup_run,
    };
    let job = suite::to_job(r.origin, r.text, &parsed, &overrides)?;
    run_job(
        Road {
            job,
            common: c,
            expect,
            show_plan: true,
            first: r.first,
        },
        at,
    )
}

/// The flags with a suite's `threads_total = true` applied: over a local
/// list its threads are the total, as with `--threads-total`; over one
/// target total and per target are the same; with hosts it is refused, as
/// the flag is.
fn with_suite_threads_total(
    c: &CommonArgs,
    suite_says: bool,
    multi_host: bool,
) -> Result<CommonArgs> {
    let mut c = c.clone();
    if suite_says && !c.targets.threads_total {
        if multi_host {
            return Err(VbError::input(
                "the suite's threads_total = true is for several targets on this host; with --hosts, threads are per target",
            ));
        }
        c.targets.threads_total = expand_local(&c.target)?.len() > 1;
    }
    Ok(c)
}

/// Where a job runs, decided once from the flags.
enum Where {
    /// On this host: one target, or a list run together.
    Here(Vec<PathBuf>),
    /// On many hosts, the target path a template; `listed` are an
    /// import's hosts, `host_counts` a host-count sweep (the flag or suite
    /// key that asked, and its text).
    Hosts {
        listed: Option<Vec<HostSpec>>,
        host_counts: Option<(&'static str, String)>,
    },
}

impl Where {
    fn of(
        c: &CommonArgs,
        listed: Option<Vec<HostSpec>>,
        host_counts: Option<(&'static str, String)>,
    ) -> Result<Self> {
        if c.remote.is_multi_host() || listed.is_some() {
            check_threads_total(c.targets.threads_total, 0, true)?;
            return Ok(Where::Hosts {
                listed,
                host_counts,
            });
        }
        if let Some((flag, _)) = &host_counts {
            return Err(crate::input::hosts::counts::refuse_local(flag));
        }
        if let Some(flag) = c.remote.hosts_only_flag() {
            return Err(VbError::input(format!(
                "{flag} is for a run on many hosts (--hosts, --hosts-file, --hosts-from or \
                 --k8s-job), and this one runs here"
            )));
        }
        flags::check_here(&c.target)?;
        let paths = expand_local(&c.target)?;
        check_threads_total(c.targets.threads_total, paths.len(), false)?;
        Ok(Where::Here(paths))
    }

    /// The target path the job is made with: the first local target, or
    /// the hosts' template.
    fn path(&self, c: &CommonArgs) -> PathBuf {
        match self {
            Where::Here(paths) => paths.first().cloned().unwrap_or_default(),
            Where::Hosts { .. } => c.target.clone(),
        }
    }
}

/// A job from any front end, and where and how it runs.
struct Road<'a> {
    /// Its target path is the first local target, or the hosts' template.
    job: JobSpec,
    common: &'a CommonArgs,
    /// --expect, recorded in the result and read by the diagnosis.
    expect: Option<Expectation>,
    /// The plan is shown before the run (suites), not only for --dry-run.
    show_plan: bool,
    /// A line to say once the job is planned.
    first: Option<String>,
}

/// The line a suite says once its job is planned.
fn say(first: Option<&String>) {
    if let Some(l) = first {
        crate::console::errln!("{l}");
    }
}

fn run_job(road: Road<'_>, at: Where) -> Result<i32> {
    match at {
        Where::Here(paths) => here(road, paths),
        Where::Hosts {
            listed,
            host_counts,
        } => on_hosts(road, listed, host_counts),
    }
}

/// The job on this host, over `paths` (one target, or a list run together).
fn here(road: Road<'_>, paths: Vec<PathBuf>) -> Result<i32> {
    let c = road.common;
    let size_given = c.size.is_some();
    let mut job = road.job;
    let (plans, shown) = if paths.len() > 1 {
        attach(&mut job, paths, c.targets.threads_total)?;
        let plans = plan::targets::plan_targets(&job, size_given)?;
        let list = job
            .targets
            .as_ref()
            .ok_or_else(|| VbError::input("no list of targets"))?;
        let shown = plan::targets::describe(&plans, list);
        (plans, shown)
    } else {
        let plan = plan::plan_sized(job, size_given)?;
        job = plan.job.clone();
        let shown = plan.describe();
        (vec![plan], shown)
    };
    say(road.first.as_ref());
    if c.out.dry_run {
        crate::console::out!("{shown}");
        crate::console::outln!("resolved spec:");
        crate::console::outln!(
            "{}",
            serde_json::to_string_pretty(&job).map_err(|e| VbError::run(e.to_string()))?
        );
        return Ok(exit::OK);
    }
    let shown = (road.show_plan || plans.len() > 1).then_some(shown);
    run_here(&job, &plans, shown.as_deref(), &c.out, road.expect)
}

/// The runner on this host, then the finish. The output directory is
/// proven usable before the benchmark, not found unusable after it, and a
/// stop from here on leaves the result gathered so far.
pub(crate) fn run_here(
    job: &JobSpec,
    plans: &[Plan],
    shown: Option<&str>,
    o: &OutputArgs,
    expect: Option<Expectation>,
) -> Result<i32> {
    let out = o.output.as_deref().map(OutputDir::open).transpose()?;
    // The terminal and the live outputs the flags ask for, each file
    // created and port bound before any I/O.
    let obs = crate::output::live::observers(&o.live)?;
    let (stop, finisher) = stop::arm(out, o.json, expect)?;
    if let Some(s) = shown {
        crate::console::err!("{s}");
    }
    if let [one] = plans {
        for n in &one.notes {
            crate::executor::Observer::note(&obs, n);
        }
    }
    let doc = executor::execute(job, plans, &obs, &stop)?;
    finisher.finish(doc)
}

/// `--launcher slurm`'s one srun command, as `--dry-run` shows it (a
/// pushed binary's path is known only once pushed).
fn step_line(hp: &plan::hosts::HostsPlan, remote: &coordinator::Remote) -> String {
    let path = match remote {
        coordinator::Remote::Installed(p) => p.clone(),
        coordinator::Remote::Push { .. } => "PUSHED-VOLBENCH".into(),
    };
    let names: Vec<&str> = hp.hosts.iter().map(|a| a.host.name.as_str()).collect();
    let agent = crate::remote::launcher::RemoteCmd::Argv(vec![
        path,
        "agent".into(),
        "--session".into(),
        hp.session.clone(),
    ]);
    let argv = crate::remote::step::srun_argv(&names, &agent);
    one_line(&crate::remote::quote::line(&argv))
}

/// The job on many hosts: the hosts' plan, then the coordinator, then the
/// same finish as a run here.
fn on_hosts(
    road: Road<'_>,
    listed: Option<Vec<HostSpec>>,
    host_counts: Option<(&'static str, String)>,
) -> Result<i32> {
    let c = road.common;
    let r = &c.remote;
    // The launcher first: a template naming no program is refused before
    // --hosts-from runs anything.
    let k8s = k8s_job_of(r, &road.job)?;
    let launcher = match &k8s {
        Some(j) => launcher::Launcher::new(Some(&j.launcher()), None)?,
        None => launcher_of(r)?,
    };
    let listed = match (&k8s, listed) {
        (Some(_), Some(_)) => {
            return Err(VbError::input(
                "--k8s-job makes the hosts, and this job lists its own: give one of them",
            ));
        }
        (Some(j), None) => Some(j.hosts()),
        (None, l) => l,
    };
    let hp = plan::hosts::plan(road.job, r, listed, host_counts)?;
    say(road.first.as_ref());
    let remote = if r.push_binary {
        coordinator::Remote::Push {
            dir: r.push_dir.clone(),
            windows_exe: r.windows_exe.clone(),
        }
    } else {
        coordinator::Remote::Installed(r.remote_volbench.clone())
    };
    if c.out.dry_run {
        let runs = match &remote {
            coordinator::Remote::Installed(p) => {
                format!("runs '{} agent' on each host", one_line(p))
            }
            coordinator::Remote::Push { dir, windows_exe } => {
                // Which volbench.exe is said now, or why there is none.
                let windows = if hp.hosts.iter().any(|a| a.host.agent.os == HostOs::Windows) {
                    let (exe, _) = crate::remote::binary::windows_exe(windows_exe.as_deref())?;
                    format!(" ({} to the os=windows hosts)", exe.display())
                } else {
                    String::new()
                };
                format!(
                    "pushes this binary into {} on each host{windows}",
                    one_line(dir)
                )
            }
        };
        crate::console::out!(
            "{}",
            plan::hosts::describe(&hp, &launcher.describe(), &runs)
        );
        // What start-up will hold at once (fanout.rs).
        let mux = if launcher.is_ssh() && r.launch.ssh_mux == OnOff::On {
            "; ssh multiplexing on for hosts sharing a machine"
        } else {
            ""
        };
        if let Some(j) = &k8s {
            k8s_dry_run(j)?;
        }
        if launcher.is_slurm_step() {
            crate::console::outln!(
                "launch:   one srun step for all hosts: {}",
                step_line(&hp, &remote)
            );
        } else {
            crate::console::outln!(
                "launch:   {} at a time (--launch-parallel){mux}",
                r.launch.launch_parallel
            );
        }
        crate::console::outln!("resolved spec (per host, before each host checks its targets):");
        crate::console::outln!(
            "{}",
            serde_json::to_string_pretty(&hp.template).map_err(|e| VbError::run(e.to_string()))?
        );
        return Ok(exit::OK);
    }
    let opts = coordinator::Options {
        hosts: hp.hosts,
        jobs: hp.jobs,
        template: hp.template,
        size_given: c.size.is_some(),
        launcher,
        remote,
        session: hp.session,
        heartbeat: hp.heartbeat,
        timeout: hp.timeout,
        shared_target: r.shared_target,
        keep_going: r.on_host_loss == crate::input::args::hosts::HostLoss::Continue,
        launch_parallel: r.launch.launch_parallel,
        ssh_mux: r.launch.ssh_mux == OnOff::On,
        k8s: k8s.clone(),
    };
    // Deleted when this returns, however it returns, or on a stop's exit.
    let _job = k8s.map(|j| {
        let owned = k8s::Owned::new(j);
        stop::on_exit(Box::new(owned.deleter()));
        owned
    });
    let out = c.out.output.as_deref().map(OutputDir::open).transpose()?;
    // The hosts get STOP_TIMEOUT to report after a stop, and the merge a moment.
    let grace = coordinator::STOP_TIMEOUT + stop::GRACE;
    let obs = crate::output::live::observers(&c.out.live)?;
    let (stop, finisher) = stop::arm_with_grace(out, c.out.json, road.expect, grace)?;
    obs.note(&format!(
        "{} hosts, {} targets",
        opts.hosts.len(),
        opts.hosts.iter().map(|h| h.targets.len()).sum::<usize>()
    ));
    // A host whose ssh has gone is an EPIPE on its pipe: SIGPIPE stays
    // ignored (`console`).
    let doc = coordinator::run(opts, &obs, &stop);
    finisher.finish(doc?)
}

/// `--k8s-job`'s Job, its deadline from the runs' time.
fn k8s_job_of(r: &HostArgs, job: &JobSpec) -> Result<Option<k8s::K8sJob>> {
    let Some(n) = r.launch.k8s_job else {
        return Ok(None);
    };
    let timeout = crate::units::parse_duration_in(
        "--host-timeout",
        &r.host_timeout,
        crate::units::bounds::MIN_HOST_TIMEOUT,
        crate::units::bounds::MAX_HOST_TIMEOUT,
    )?;
    let runs_s: f64 = job.runs.iter().map(|x| x.warmup_s + x.duration_s).sum();
    let image = r.launch.k8s_image.as_deref().unwrap_or_default();
    k8s::K8sJob::new(
        n,
        image,
        r.launch.k8s_namespace.as_deref(),
        r.launch.k8s_volume.as_deref(),
        runs_s,
        timeout,
    )
    .map(Some)
}

/// What `--k8s-job` would do: the manifest and the kubectl commands.
fn k8s_dry_run(j: &k8s::K8sJob) -> Result<()> {
    let line = |argv: Vec<String>| one_line(&crate::remote::quote::line(&argv));
    crate::console::outln!(
        "kubernetes: Indexed Job {} of {} pods, in order:",
        j.name,
        j.pods
    );
    crate::console::outln!("  {}  (the manifest below on stdin)", line(j.apply_argv()));
    crate::console::outln!(
        "  {}  (until all {} are listed)",
        line(j.list_argv()),
        j.pods
    );
    crate::console::outln!("  {}", line(j.wait_argv(j.start)));
    crate::console::outln!(
        "  {} POD -- ...  (each agent)",
        j.launcher().replace(" {host} --", "")
    );
    crate::console::outln!(
        "  {}  (at the end, a stop or a failure)",
        line(j.delete_argv())
    );
    crate::console::outln!(
        "{}",
        serde_json::to_string_pretty(&j.manifest()).map_err(|e| VbError::run(e.to_string()))?
    );
    Ok(())
}

/// How the hosts are reached: --launcher, else --ssh-command or its
/// environment variable, else ssh.
fn launcher_of(r: &HostArgs) -> Result<launcher::Launcher> {
    let ssh_cmd = r.ssh_command.clone().or_else(|| {
        std::env::var(launcher::SSH_ENV)
            .ok()
            .filter(|s| !s.trim().is_empty())
    });
    launcher::Launcher::new(r.launch.launcher.as_deref(), ssh_cmd.as_deref())
}
