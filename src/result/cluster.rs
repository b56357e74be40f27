//! The multi-host part of a result file: the cluster, each host's status
//! and share, and what the coordinator cost. Types only, so the merge and
//! the checks of what hosts send can both use them.

use serde::{Deserialize, Serialize};

use crate::result::{HostInfo, Interval, RunResult, TargetInfo};

/// The multi-host part of a result file.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Cluster {
    /// One entry per host, in the order given, whether it finished or not.
    pub hosts: Vec<HostResult>,
    /// Per run: how many hosts are in the merge and how close their starts were.
    pub(crate) runs: Vec<ClusterRun>,
    /// The ssh command used to reach the hosts.
    pub(crate) ssh_command: String,
    /// What coordinating cost on this machine.
    pub(crate) coordinator: CoordinatorCost,
}

/// How a host came through the invocation; "ok" or "failed" in JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum HostStatus {
    Ok,
    Failed,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HostResult {
    pub name: String,
    pub(crate) index: u32,
    /// `failed` comes with `error`: its figures after the failure are missing.
    pub(crate) status: HostStatus,
    pub(crate) error: Option<String>,
    /// volbench version the agent runs.
    pub(crate) version: Option<String>,
    pub(crate) host: Option<HostInfo>,
    /// Agent clock minus coordinator clock, estimated from the lowest-latency
    /// of several pings; uncertain by about half of `rtt_ms`.
    pub(crate) clock_offset_ms: Option<f64>,
    pub(crate) rtt_ms: Option<f64>,
    pub(crate) targets: Vec<TargetInfo>,
    /// This host's own results, merged over its targets, one per finished run.
    pub runs: Vec<RunResult>,
    /// Read from older results only: now in `runs[].targets[]`.
    #[serde(default, skip_serializing)]
    pub(crate) target_runs: Vec<crate::result::targets::TargetRun>,
    /// For a host that failed during a run: that run's intervals received
    /// before it failed (its totals never arrived, so none are claimed).
    pub(crate) unfinished: Option<Unfinished>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Unfinished {
    pub(crate) run: String,
    pub(crate) intervals: Vec<Interval>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct ClusterRun {
    pub(crate) name: String,
    /// Hosts whose results are merged into this run's totals.
    pub(crate) hosts_merged: u32,
    pub(crate) hosts_total: u32,
    /// Spread of the measured start times over every host and target,
    /// corrected by the clock offsets.
    pub(crate) start_skew_ms: f64,
    /// Hosts were lost and the run went on without them
    /// (`--on-host-loss continue`): the totals are the survivors' only.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) partial: bool,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct CoordinatorCost {
    /// CPU seconds of the coordinating volbench process itself.
    pub(crate) user_s: f64,
    pub(crate) sys_s: f64,
    pub(crate) wall_s: f64,
    /// (user + sys) / wall, in percent of one core.
    pub(crate) cpu_pct: f64,
    /// CPU seconds of the ssh client processes it ran.
    pub(crate) ssh_user_s: f64,
    pub(crate) ssh_sys_s: f64,
    /// Seconds from the first launch until every agent had said hello and
    /// answered its clock pings (absent in results made before it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) launch_s: Option<f64>,
    /// Its CPU while the hosts' I/O ran (release to last result), in percent
    /// of one core: the cost that grows with the hosts, without the start-up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) run_cpu_pct: Option<f64>,
}
