//! The per-target table, one for local target lists and multi-host runs:
//! each target's own IOPS, MiB/s and latency beside its siblings (the
//! targets one client drove together), so one slow volume among fast ones
//! shows instead of vanishing in the total.

use crate::output::fmt::{mib_s, micros, number};
use crate::output::table::Table;
use crate::result::diagnosis::hosts::others_median;
use crate::result::merge::HostStatus;
use crate::result::targets::by_host;
use crate::result::{ResultDoc, RunResult};

pub(crate) const TITLE: &str = "Per target";

/// Whether a run's targets say more than its totals: some client drove
/// two or more of them.
pub(crate) fn has_targets(r: &RunResult) -> bool {
    by_host(r).iter().any(|(_, ts)| ts.len() >= 2)
}

/// Each target's figures per run, with its share of the median of its
/// siblings; a host column when the targets were on hosts.
pub(crate) fn per_target(runs: &[&RunResult]) -> Option<Table> {
    let runs: Vec<&RunResult> = runs.iter().copied().filter(|r| has_targets(r)).collect();
    if runs.is_empty() {
        return None;
    }
    let hosts = runs
        .iter()
        .any(|r| r.targets.iter().any(|t| t.host.is_some()));
    let mut head = vec!["run"];
    if hosts {
        head.push("host");
    }
    head.extend([
        "target",
        "threads",
        "IOPS",
        "MiB/s",
        "mean",
        "p99",
        "% of siblings",
    ]);
    let mut t = Table::new(TITLE, &head, if hosts { 3 } else { 2 });
    for run in runs {
        for (host, ts) in by_host(run) {
            let iops: Vec<f64> = ts.iter().map(|t| t.total_iops()).collect();
            for (i, tr) in ts.iter().enumerate() {
                let med = others_median(&iops, i);
                let share = if ts.len() >= 2 && med > 0.0 {
                    format!("{:.0}%", iops[i] / med * 100.0)
                } else {
                    "-".into()
                };
                let mut row = vec![run.name.clone()];
                if hosts {
                    row.push(host.unwrap_or("-").to_string());
                }
                let threads = match tr.io_threads {
                    0 => "-".to_string(),
                    n => n.to_string(),
                };
                row.extend([
                    tr.path.clone(),
                    threads,
                    number(tr.total_iops()),
                    mib_s(tr.total_mib_s()),
                    micros(tr.lat_us.mean),
                    micros(tr.lat_us.p99),
                    share,
                ]);
                t.rows.push(row);
            }
        }
    }
    t.notes.push(
        "each target's own figures, reads and writes together; the run's totals are their exact \
         merge; % of siblings: its share of the median of the other targets its client drove"
            .into(),
    );
    Some(t)
}

/// Up to this many hosts, the per-host table has a row for each; past it,
/// a row per host would bury the one that matters (a thousand rows), so
/// the table shows how the hosts spread and names the slowest.
pub(crate) const MANY_HOSTS: usize = 32;
/// The slowest hosts named by name in a many-host table.
pub(crate) const SLOWEST: usize = 10;
/// The spread rows of a many-host table: (row label, quantile).
pub(crate) const SPREAD: [(&str, f64); 5] = [
    ("min", 0.0),
    ("p5", 0.05),
    ("median", 0.5),
    ("p95", 0.95),
    ("max", 1.0),
];

/// The `q` quantile of `v` (sorted here), the nearest rank below.
pub(crate) fn quantile(v: &[f64], q: f64) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    match s.len() {
        0 => 0.0,
        n => s[((n - 1) as f64 * q.clamp(0.0, 1.0)).floor() as usize],
    }
}

/// Each run as each host that finished it did it: (run, [(host, result)]).
pub(crate) fn host_runs(doc: &ResultDoc) -> Vec<(&str, Vec<(&str, &RunResult)>)> {
    let Some(c) = &doc.cluster else {
        return Vec::new();
    };
    doc.runs
        .iter()
        .filter(|r| !r.workload.discard)
        .map(|run| {
            let hosts = c
                .hosts
                .iter()
                .filter(|h| h.status == HostStatus::Ok)
                .filter_map(|h| {
                    h.runs
                        .iter()
                        .find(|r| r.name == run.name)
                        .map(|r| (h.name.as_str(), r))
                })
                .collect();
            (run.name.as_str(), hosts)
        })
        .collect()
}

/// The per-host table of a multi-host result, for the terminal and the
/// report alike: a row per run and host, with its share of the other
/// hosts' median IOPS; past `MANY_HOSTS` hosts, per run the spread of the
/// hosts (min, p5, median, p95, max of each column on its own) and the
/// `SLOWEST` hosts by name. Every host stays in result.json.
pub(crate) fn per_host(doc: &ResultDoc) -> Option<Table> {
    let c = doc.cluster.as_ref().filter(|c| c.hosts.len() >= 2)?;
    let mut t = Table::new(
        "Per host",
        &["run", "host", "IOPS", "MiB/s", "mean", "p99", "% of others"],
        2,
    );
    let many = c.hosts.len() > MANY_HOSTS;
    for (run, hosts) in host_runs(doc) {
        let iops: Vec<f64> = hosts.iter().map(|(_, r)| r.total_iops()).collect();
        let share = |i: usize| {
            let med = others_median(&iops, i);
            if hosts.len() >= 2 && med > 0.0 {
                format!("{:.0}%", iops[i] / med * 100.0)
            } else {
                "-".into()
            }
        };
        let row = |host: String, r: &RunResult, share: String| {
            let l = r.latency();
            vec![
                run.to_string(),
                host,
                number(r.total_iops()),
                mib_s(r.total_mib_s()),
                micros(l.mean),
                micros(l.p99),
                share,
            ]
        };
        if !many {
            for (i, (host, r)) in hosts.iter().enumerate() {
                t.rows.push(row(host.to_string(), r, share(i)));
            }
            continue;
        }
        let col = |f: &dyn Fn(&RunResult) -> f64| -> Vec<f64> {
            hosts.iter().map(|(_, r)| f(r)).collect()
        };
        let mib = col(&|r| r.total_mib_s());
        let mean = col(&|r| r.latency().mean);
        let p99 = col(&|r| r.latency().p99);
        for (label, q) in SPREAD {
            t.rows.push(vec![
                run.to_string(),
                format!("{label} of {}", hosts.len()),
                number(quantile(&iops, q)),
                mib_s(quantile(&mib, q)),
                micros(quantile(&mean, q)),
                micros(quantile(&p99, q)),
                "-".into(),
            ]);
        }
        let mut order: Vec<usize> = (0..hosts.len()).collect();
        order.sort_by(|&a, &b| iops[a].total_cmp(&iops[b]));
        for &i in order.iter().take(SLOWEST) {
            let (host, r) = hosts[i];
            t.rows.push(row(format!("slow: {host}"), r, share(i)));
        }
    }
    if many {
        t.notes.push(format!(
            "{} hosts: each column's spread over the hosts (min..max, each figure on its own), \
             then the {SLOWEST} slowest by IOPS; every host's figures are in result.json \
             (cluster.hosts[].runs[])",
            c.hosts.len()
        ));
    }
    let failed: Vec<String> = c
        .hosts
        .iter()
        .filter(|h| h.status == HostStatus::Failed)
        .map(|h| {
            format!(
                "{} failed: {}",
                h.name,
                h.error.as_deref().unwrap_or("no reason given")
            )
        })
        .collect();
    if many && failed.len() > SLOWEST {
        let n = failed.len();
        t.notes.extend(failed.into_iter().take(SLOWEST));
        t.notes.push(format!(
            "and {} more failed hosts (result.json)",
            n - SLOWEST
        ));
    } else {
        t.notes.extend(failed);
    }
    Some(t)
}
