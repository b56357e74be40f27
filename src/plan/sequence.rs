//! What one run of a job takes from the runs before it: whether a stop rule
//! skips it (the knee of a curve is passed), and a rate given as a share of
//! an earlier run's IOPS. The same answers on one host, on several targets
//! and across hosts (the coordinator asks them too).

use super::PlannedRun;
use crate::error::{Result, VbError};
use crate::result::RunResult;
use crate::spec::StopRule;

/// Why a run with this stop rule should be skipped, judging the runs of its
/// group already done; None to go ahead.
pub(crate) fn stop_reason(rule: &StopRule, done: &[RunResult]) -> Option<String> {
    let group: Vec<&RunResult> = done
        .iter()
        .filter(|r| {
            r.workload
                .stop_rule
                .as_ref()
                .is_some_and(|s| s.group == rule.group)
        })
        .collect();
    if let (Some(pct), [.., prev, last]) = (rule.gain_below_pct, group.as_slice()) {
        let (a, b) = (prev.total_iops(), last.total_iops());
        if b < a * (1.0 + pct / 100.0) {
            return Some(format!(
                "IOPS grew {:.1}% from {} to {} (less than {pct}%): the knee is passed",
                (b / a - 1.0) * 100.0,
                prev.name,
                last.name
            ));
        }
    }
    if let (Some(limit), Some(last)) = (rule.latency_above_us, group.last()) {
        let lat = last.mean_latency_us();
        if lat > limit {
            return Some(format!(
                "{} reached a mean latency of {lat:.0}us, above the {limit:.0}us limit",
                last.name
            ));
        }
    }
    if let Some(last) = group.last() {
        let broken = crate::result::search::check(last, &rule.percentile_above);
        if let Some(b) = broken.iter().find(|c| !c.pass) {
            return Some(format!(
                "{} measured {} against {}",
                last.name,
                b.measured_us
                    .map_or("no I/O".into(), |us| format!("{us:.0}us")),
                b.limit.label()
            ));
        }
    }
    None
}

/// Turns a rate given as a percentage of an earlier run into IOPS.
pub(crate) fn resolve_rate(run: &PlannedRun, done: &[RunResult]) -> Result<PlannedRun> {
    let mut run = run.clone();
    if let Some(p) = &run.spec.rate_pct {
        let base = done.iter().find(|r| r.name == p.of).ok_or_else(|| {
            VbError::input(format!(
                "run '{}' sets its rate as {}% of run '{}', which has not run",
                run.spec.name, p.percent, p.of
            ))
        })?;
        let iops = base.total_iops() * p.percent / 100.0;
        if iops <= 0.0 {
            return Err(VbError::run(format!(
                "run '{}': run '{}' measured no IOPS to take {}% of",
                run.spec.name, p.of, p.percent
            )));
        }
        run.spec.rate_iops = Some(iops);
    }
    Ok(run)
}
