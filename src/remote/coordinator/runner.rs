//! The coordinator as a `Runner`: the hosts' plan put together with how
//! they are reached (the launcher, a Kubernetes Job that makes them, the
//! binary they run), what `--dry-run` says of it, and the run, with the
//! hosts' time to report after a stop.

use std::fmt::Write as _;
use std::time::Duration;

use super::{Options, Remote, STOP_TIMEOUT};
use crate::error::{Result, VbError};
use crate::events::Raise as _;
use crate::executor::runner::{Runner, Watch};
use crate::input::hosts::HostOs;
use crate::plan::hosts::HostsPlan;
use crate::remote::launch::k8s::{self, K8sJob};
use crate::remote::launch::{Launcher, RemoteCmd};
use crate::result::ResultDoc;
use crate::units::bounds::one_line;

/// A job on many hosts.
pub(crate) struct Hosts {
    plan: HostsPlan,
    launcher: Launcher,
    /// `--k8s-job`: the Job whose pods are the hosts, made when the run
    /// starts and deleted however it ends.
    k8s: Option<K8sJob>,
}

impl Hosts {
    /// The hosts' plan with its launcher and Job built (checked before
    /// anything runs).
    pub(crate) fn new(plan: HostsPlan) -> Result<Self> {
        let k8s = match &plan.how.k8s {
            Some(k) => {
                let runs_s: f64 = plan
                    .template
                    .runs
                    .iter()
                    .map(|x| x.warmup_s + x.duration_s)
                    .sum();
                Some(K8sJob::new(k, runs_s, plan.timeout)?)
            }
            None => None,
        };
        let launcher = match &k8s {
            Some(j) => Launcher::new(Some(&j.launcher()), None)?,
            None => Launcher::from(plan.how.launcher.clone()),
        };
        Ok(Self {
            plan,
            launcher,
            k8s,
        })
    }

    /// What the hosts run, as `--dry-run` says it.
    fn runs(&self) -> Result<String> {
        Ok(match &self.plan.how.binary {
            Remote::Installed(p) => format!("runs '{} agent' on each host", one_line(p)),
            Remote::Push { dir, windows_exe } => {
                // Which volbench.exe is said now, or why there is none.
                let windows = if self
                    .plan
                    .hosts
                    .iter()
                    .any(|a| a.host.agent.os == HostOs::Windows)
                {
                    let (exe, _) =
                        crate::remote::push::binary::windows_exe(windows_exe.as_deref())?;
                    format!(" ({} to the os=windows hosts)", exe.display())
                } else {
                    String::new()
                };
                format!(
                    "pushes this binary into {} on each host{windows}",
                    one_line(dir)
                )
            }
        })
    }

    /// `--launcher slurm`'s one srun command (a pushed binary's path is
    /// known only once pushed).
    fn step_line(&self) -> String {
        let path = match &self.plan.how.binary {
            Remote::Installed(p) => p.clone(),
            Remote::Push { .. } => "PUSHED-VOLBENCH".into(),
        };
        let names: Vec<&str> = self
            .plan
            .hosts
            .iter()
            .map(|a| a.host.name.as_str())
            .collect();
        let agent = RemoteCmd::Argv(vec![
            path,
            "agent".into(),
            "--session".into(),
            self.plan.session.clone(),
        ]);
        let argv = crate::remote::launch::slurm::srun_argv(&names, &agent);
        one_line(&crate::remote::launch::quote::line(&argv))
    }
}

impl Runner for Hosts {
    fn dry_run(&self) -> Result<String> {
        let h = &self.plan;
        let mut out = crate::plan::hosts::describe(h, &self.launcher.describe(), &self.runs()?);
        if let Some(j) = &self.k8s {
            out.push_str(&k8s_dry_run(j)?);
        }
        if self.launcher.is_slurm_step() {
            let _ = writeln!(
                out,
                "launch:   one srun step for all hosts: {}",
                self.step_line()
            );
        } else {
            // What start-up will hold at once (fanout.rs).
            let mux = if self.launcher.is_ssh() && h.how.ssh_mux {
                "; ssh multiplexing on for hosts sharing a machine"
            } else {
                ""
            };
            let _ = writeln!(
                out,
                "launch:   {} at a time (--launch-parallel){mux}",
                h.how.launch_parallel
            );
        }
        let spec =
            serde_json::to_string_pretty(&h.template).map_err(|e| VbError::run(e.to_string()))?;
        let _ = writeln!(
            out,
            "resolved spec (per host, before each host checks its targets):\n{spec}"
        );
        Ok(out)
    }

    /// The hosts get `STOP_TIMEOUT` to report after a stop.
    fn stop_grace(&self) -> Duration {
        STOP_TIMEOUT
    }

    fn run(self: Box<Self>, w: &Watch<'_>) -> Result<ResultDoc> {
        let Hosts {
            plan,
            launcher,
            k8s,
        } = *self;
        // Deleted when this returns, however it returns, or on a stop's exit.
        let _job = k8s.clone().map(|j| {
            let owned = k8s::Owned::new(j);
            (w.on_exit)(Box::new(owned.deleter()));
            owned
        });
        w.obs.note(&format!(
            "{} hosts, {} targets",
            plan.hosts.len(),
            plan.hosts.iter().map(|h| h.targets.len()).sum::<usize>()
        ));
        let how = plan.how;
        let opts = Options {
            hosts: plan.hosts,
            jobs: plan.jobs,
            template: plan.template,
            size_given: plan.size_given,
            launcher,
            remote: how.binary,
            session: plan.session,
            heartbeat: plan.heartbeat,
            timeout: plan.timeout,
            shared_target: how.shared_target,
            keep_going: how.keep_going,
            launch_parallel: how.launch_parallel,
            ssh_mux: how.ssh_mux,
            k8s,
        };
        // A host whose ssh has gone is an EPIPE on its pipe: SIGPIPE stays
        // ignored (`console`).
        super::run(opts, w.obs, w.stop)
    }
}

/// What `--k8s-job` would do: the manifest and the kubectl commands.
fn k8s_dry_run(j: &K8sJob) -> Result<String> {
    let line = |argv: Vec<String>| one_line(&crate::remote::launch::quote::line(&argv));
    let mut out = String::new();
    let _ = writeln!(
        out,
        "kubernetes: Indexed Job {} of {} pods, in order:",
        j.name, j.pods
    );
    let _ = writeln!(
        out,
        "  {}  (the manifest below on stdin)",
        line(j.apply_argv())
    );
    let _ = writeln!(
        out,
        "  {}  (until all {} are listed)",
        line(j.list_argv()),
        j.pods
    );
    let _ = writeln!(out, "  {}", line(j.wait_argv(j.start)));
    let _ = writeln!(
        out,
        "  {} POD -- ...  (each agent)",
        j.launcher().replace(" {host} --", "")
    );
    let _ = writeln!(
        out,
        "  {}  (at the end, a stop or a failure)",
        line(j.delete_argv())
    );
    let manifest =
        serde_json::to_string_pretty(&j.manifest()).map_err(|e| VbError::run(e.to_string()))?;
    let _ = writeln!(out, "{manifest}");
    Ok(out)
}
