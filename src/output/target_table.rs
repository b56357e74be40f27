//! The per-target table, one for local target lists and multi-host runs:
//! each target's own IOPS, MiB/s and latency beside its siblings (the
//! targets one client drove together), so one slow volume among fast ones
//! shows instead of vanishing in the total.

use crate::output::fmt::{mib_s, micros, number};
use crate::output::table::Table;
use crate::result::RunResult;
use crate::result::diagnosis::hosts::others_median;
use crate::result::targets::by_host;

pub const TITLE: &str = "Per target";

/// Whether a run's targets say more than its totals: some client drove
/// two or more of them.
pub fn has_targets(r: &RunResult) -> bool {
    by_host(r).iter().any(|(_, ts)| ts.len() >= 2)
}

/// Each target's figures per run, with its share of the median of its
/// siblings; a host column when the targets were on hosts.
pub fn per_target(runs: &[&RunResult]) -> Option<Table> {
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
