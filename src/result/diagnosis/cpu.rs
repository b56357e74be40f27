//! The client's CPU: whether a run's client was short of it (`cpu_short`,
//! which the verdicts ask too), and the `client_cpu` finder, said once for
//! many hosts alike.

use super::counted::{Seen, runs_text, with_counters};
use super::group::{self, Each};
use super::{Confidence, Finding, Kind, measured_secs};
use crate::result::counters::RunCounters;
use crate::result::{ResultDoc, RunResult};

/// Runs measured for less than this are not judged on CPU: the kernel
/// counts CPU time in ticks (100 or 250 a second), so a metadata phase of
/// 20 ms on 2 CPUs has 4 ticks to share out and reads 20% or 100% by luck
/// (seen: a thread "at 101% of a core" on a host 20% busy).
const CPU_MIN_SECS: f64 = 0.5;
/// volbench's own CPU must be visible in the host's: the host's busy time
/// (over all CPUs) at least this share of what volbench's threads say they
/// used, or one of the two is miscounted and neither is trusted.
const CPU_AGREE: f64 = 0.75;
/// Host CPU busy (user + system + steal) at or above this, in percent of
/// all CPUs, is saturated: what is left is too little to keep I/O going.
const CPU_BUSY: f64 = 90.0;
/// One volbench I/O thread using this much of a core is core-bound.
const THREAD_BUSY: f64 = 90.0;
/// A client short of CPU in one run: how busy (the host's CPUs, or each of
/// volbench's I/O threads of its core) and whether it was the whole host.
#[derive(Debug, Clone, Copy)]
pub(super) struct CpuShort {
    pub(crate) busy: f64,
    pub(crate) host_wide: bool,
    /// The host's CPUs were busy with other processes' work, volbench using
    /// little of them: its figures may carry waits for a CPU, but nothing
    /// shows the client set their level (a flat cap stays a cap).
    pub(crate) others: bool,
}

/// Whether a run's client was short of CPU, from the run's own counters:
/// its host's CPUs saturated (whoever's load it was), or volbench's direct
/// I/O threads each on a full core with the host's count agreeing. The one
/// test `client_cpu` and the verdicts (`verdict`) share.
pub(super) fn cpu_short(r: &RunResult) -> Option<CpuShort> {
    let c = r.counters.as_ref()?;
    let cpu = c.summary.as_ref()?.cpu.as_ref()?;
    if measured_secs(r) < CPU_MIN_SECS {
        return None;
    }
    let own = r.totals.cpu.user_pct + r.totals.cpu.sys_pct;
    let per_thread = own / r.io_threads.max(1) as f64;
    let host_saw = cpu.busy_pct() * c.cpus.max(1) as f64;
    // A page-cache or metadata run is served by the kernel on the
    // thread's own CPU: a thread on a full core is what such a run is,
    // at the concurrency asked for, not a limit put on the storage's
    // figures (a saturated host still is, above).
    let storage_io = !r.workload.buffered && r.meta_ops.is_empty();
    if cpu.busy_pct() >= CPU_BUSY {
        let own_share = own / c.cpus.max(1) as f64;
        let stolen = cpu.steal_pct >= cpu.user_pct + cpu.system_pct;
        Some(CpuShort {
            busy: cpu.busy_pct(),
            host_wide: true,
            others: own_share < cpu.busy_pct() / 2.0 && !stolen,
        })
    } else if per_thread >= THREAD_BUSY && storage_io && host_saw >= CPU_AGREE * own {
        Some(CpuShort {
            busy: per_thread,
            host_wide: false,
            others: false,
        })
    } else {
        None
    }
}

/// The share of the host's CPUs (percent of all of them) that went to
/// other work than volbench's in a run: the host's busy time (steal
/// included) less volbench's own, when the run's counters say and it was
/// measured long enough to count CPU ticks.
pub(super) fn others_pct(r: &RunResult) -> Option<f64> {
    let c = r.counters.as_ref()?;
    let cpu = c.summary.as_ref()?.cpu.as_ref()?;
    if measured_secs(r) < CPU_MIN_SECS {
        return None;
    }
    let own = (r.totals.cpu.user_pct + r.totals.cpu.sys_pct) / c.cpus.max(1) as f64;
    Some((cpu.busy_pct() - own).max(0.0))
}

/// The client's CPUs saturated, or volbench's threads each on a full core:
/// the figures are then the client's limit, not the storage's.
pub(super) fn client_cpu(doc: &ResultDoc) -> Vec<Finding> {
    // Per host: its runs over the line, how busy, and whether host-wide.
    type Busy<'a> = (&'a RunResult, f64, bool);
    let mut hosts: Vec<(String, String, &RunCounters, Vec<Busy>)> = Vec::new();
    let mut judged: Vec<String> = Vec::new();
    for Seen {
        host,
        name,
        run: r,
        c,
        ..
    } in with_counters(doc)
    {
        if !judged.contains(&name) {
            judged.push(name.clone());
        }
        let Some(CpuShort {
            busy, host_wide, ..
        }) = cpu_short(r)
        else {
            continue;
        };
        match hosts.iter_mut().find(|(h, _, _, _)| *h == host) {
            Some((_, _, _, v)) => v.push((r, busy, host_wide)),
            None => hosts.push((host, name, c, vec![(r, busy, host_wide)])),
        }
    }
    let mut each = Vec::new();
    for (host, name, c, runs) in hosts {
        let Some(&(worst, busy, host_wide)) = runs.iter().max_by(|a, b| a.1.total_cmp(&b.1)) else {
            continue;
        };
        let Some(cpu) = worst
            .counters
            .as_ref()
            .and_then(|c| c.summary.as_ref())
            .and_then(|s| s.cpu.as_ref())
        else {
            continue;
        };
        let own = worst.totals.cpu.user_pct + worst.totals.cpu.sys_pct;
        // volbench's own CPU in percent of the whole host, to tell its load
        // from someone else's.
        let own_share = own / c.cpus.max(1) as f64;
        // Whose load it was decides what to say: volbench's (the client is
        // the limit), other processes' (the figures may carry waits for a
        // CPU, nothing more is known), or the hypervisor's (steal).
        let others = host_wide && own_share < busy / 2.0;
        let stolen = host_wide && cpu.steal_pct >= cpu.user_pct + cpu.system_pct;
        let runs_said = runs_text(worst, runs.len());
        let (class, message, sure) = if stolen {
            (
                STOLEN,
                format!(
                    "{host} short of CPU: its {} CPUs were {busy:.0}% busy in {runs_said}, {:.0}% \
                     of it steal (the hypervisor running other work), user {:.0}%, system \
                     {:.0}%. The figures may be the VM's, not the storage's: a larger or \
                     dedicated VM, then measure again.",
                    c.cpus, cpu.steal_pct, cpu.user_pct, cpu.system_pct,
                ),
                Confidence::Medium,
            )
        } else if others {
            (
                OTHERS,
                format!(
                    "{host} busy with other work: its {} CPUs were {busy:.0}% busy in \
                     {runs_said} but volbench used {own_share:.0}% of the host. The figures may \
                     include waits for a CPU: measure again on a quiet client.",
                    c.cpus,
                ),
                Confidence::Low,
            )
        } else if host_wide {
            (
                CPU_BOUND,
                format!(
                    "{host} CPU-bound: its {} CPUs were {busy:.0}% busy (user {:.0}%, system \
                     {:.0}%) in {runs_said}. The storage may do more than measured: add \
                     clients, or use fewer threads with more iodepth (io_uring), as the papers \
                     advise.",
                    c.cpus, cpu.user_pct, cpu.system_pct,
                ),
                sure_of(busy),
            )
        } else {
            (
                CORE_BOUND,
                format!(
                    "{host} core-bound: each of volbench's {} I/O threads used {busy:.0}% of a \
                     core in {runs_said} (the busiest CPU {:.0}% busy). More threads (or \
                     iodepth with io_uring) may give more.",
                    worst.io_threads, cpu.busiest_cpu_pct,
                ),
                sure_of(busy),
            )
        };
        let finding = Finding::new(Kind::ClientCpu, sure, message)
            .figure("host_busy_pct", cpu.busy_pct())
            .figure("user_pct", cpu.user_pct)
            .figure("system_pct", cpu.system_pct)
            .figure("steal_pct", cpu.steal_pct)
            .figure("busiest_cpu_pct", cpu.busiest_cpu_pct)
            .figure("volbench_cpu_pct", own)
            .figure("volbench_host_pct", own_share)
            .figure("thread_core_pct", own / worst.io_threads.max(1) as f64)
            .figure("cpus", c.cpus as f64)
            .runs(runs.iter().map(|(r, _, _)| *r));
        each.push(Each {
            subject: name,
            class,
            finding,
        });
    }
    group::fold(each, judged.len(), "hosts", cpu_group)
}

/// The classes of `client_cpu`, each with its own advice.
const STOLEN: &str = "stolen";
const OTHERS: &str = "others";
const CPU_BOUND: &str = "cpu-bound";
const CORE_BOUND: &str = "core-bound";

/// What many hosts short of CPU alike are told, after "N of M hosts: ".
fn cpu_group(class: &str, m: &[&Finding]) -> String {
    let busy = group::span(m, "host_busy_pct", group::pct);
    let runs = match m
        .iter()
        .flat_map(|f| &f.runs)
        .collect::<Vec<_>>()
        .as_slice()
    {
        [] => String::new(),
        [one, rest @ ..] if rest.iter().all(|r| r == one) => format!(" in run {one}"),
        [one, ..] => format!(" in run {one} and others"),
    };
    match class {
        STOLEN => format!(
            "client CPU short, mostly steal: their CPUs were {busy}% busy{runs}, {}% of it \
             steal (the hypervisor running other work). The figures may be the VMs', not the \
             storage's: larger or dedicated VMs, then measure again.",
            group::span(m, "steal_pct", group::pct)
        ),
        OTHERS => format!(
            "client CPU busy with other work: their CPUs were {busy}% busy{runs} while \
             volbench used {}% of each host. The figures may include waits for a CPU: measure \
             again on quiet clients.",
            group::span(m, "volbench_host_pct", group::pct)
        ),
        CPU_BOUND => format!(
            "client CPU-bound: their CPUs were {busy}% busy (user {}%, system {}%){runs}. The \
             storage may do more than measured: add clients, or use fewer threads with more \
             iodepth (io_uring), as the papers advise.",
            group::span(m, "user_pct", group::pct),
            group::span(m, "system_pct", group::pct)
        ),
        _ => format!(
            "client core-bound: each of volbench's I/O threads used {}% of a core{runs}. More \
             threads (or iodepth with io_uring) may give more.",
            group::span(m, "thread_core_pct", group::pct)
        ),
    }
}

fn sure_of(busy: f64) -> Confidence {
    if busy >= 97.0 {
        Confidence::High
    } else {
        Confidence::Medium
    }
}
