//! Runs held to a rate that did not keep it: what held each back, from the
//! one judgement (`verdict`), never "the storage is saturated" by default
//! (a run of one thread at iodepth 1 cannot carry 2,300 IOPS at 2 ms
//! whatever the storage does).

use super::verdict::{self, Limit};
use super::{Confidence, Finding, Kind, measured, num};
use crate::result::{ResultDoc, RunResult};

/// A run that did not keep its rate: the run, the IOPS asked and done, and
/// what held it.
type Missed<'a> = (&'a RunResult, f64, f64, Limit);

/// One finding per limit: the run furthest from its rate leads, the others
/// held back by the same kind of limit are counted with it.
pub(super) fn rate_not_reached(doc: &ResultDoc) -> Vec<Finding> {
    let mut by_limit: Vec<(&'static str, Vec<Missed>)> = Vec::new();
    for r in measured(doc) {
        let Some(rate) = r
            .rate
            .as_ref()
            .filter(|x| !x.reached && x.target_iops > 0.0)
        else {
            continue;
        };
        let limit = verdict::judge(doc, r, rate.target_iops);
        let hit = (r, rate.target_iops, rate.achieved_iops, limit);
        match by_limit.iter_mut().find(|(k, _)| *k == hit.3.key()) {
            Some((_, v)) => v.push(hit),
            None => by_limit.push((hit.3.key(), vec![hit])),
        }
    }
    let mut out = Vec::new();
    for (_, hits) in by_limit {
        let Some((r, asked, did, limit)) = hits
            .iter()
            .min_by(|a, b| (a.2 / a.1).total_cmp(&(b.2 / b.1)))
            .cloned()
        else {
            continue;
        };
        let more = match hits.len() {
            1 => String::new(),
            n => format!(" (and {} more runs alike)", n - 1),
        };
        let message = format!(
            "rate not reached: run {} asked {} IOPS and did {} ({:.0}%){more}; {}",
            r.name,
            num(asked),
            num(did),
            did / asked * 100.0,
            limit.sentence()
        );
        let sure = match &limit {
            Limit::NoStorage => Confidence::High,
            Limit::TooFewInFlight {
                evidence: Some(_), ..
            }
            | Limit::Storage { .. } => Confidence::High,
            Limit::ClientCpu { busy_pct, .. } if *busy_pct >= 97.0 => Confidence::High,
            _ => Confidence::Medium,
        };
        let mut f = Finding::new(Kind::RateNotReached, sure, message)
            .figure("asked_iops", asked)
            .figure("achieved_iops", did)
            .figure("percent", did / asked * 100.0)
            .figure("concurrency", f64::from(r.littles_law.concurrency));
        if let Limit::TooFewInFlight {
            needed, latency_us, ..
        } = &limit
        {
            f = f
                .figure("needed_in_flight", *needed)
                .figure("latency_us", *latency_us);
        }
        out.push(f.runs(hits.iter().map(|h| h.0)));
    }
    out
}
