//! `--on-host-loss continue` over a list of targets on this host: a target
//! whose server was lost in a run (its run failed with `Kind::Lost`: a
//! protocol client that did not reach its server again within the URL's
//! `reconnect=`) is left out of that run's totals and of every run after,
//! as a lost host is left out of a multi-host run, while at least one other
//! target finished the run. What it ran before the loss and why it was left
//! out are kept (`runs[].left_out`, and a note). Without `continue`, or
//! with no target left, a loss is the run's failure like any other.

use super::targets::{OnHost, Outcome};
use crate::error::Kind;
use crate::events::Raise as _;
use crate::result::targets::LeftOut;
use crate::result::{PhaseName, ResultDoc};

/// The outcomes the run's totals are made of, the lost targets taken out
/// (and recorded in `host` for the runs after), and every target this run
/// went without: those left out before it, then those lost in it.
pub(super) fn leave_out(
    host: &mut OnHost,
    run: &str,
    outcomes: Vec<(usize, Outcome)>,
    doc: &mut ResultDoc,
    obs: &dyn super::Observer,
) -> (Vec<(usize, Outcome)>, Vec<LeftOut>) {
    let path = |host: &OnHost, t: usize| {
        host.plans
            .get(t)
            .map(|p| p.job.target.path.display().to_string())
            .unwrap_or_default()
    };
    let mut gone: Vec<LeftOut> = host
        .left_out
        .iter()
        .enumerate()
        .filter_map(|(t, why)| {
            Some(LeftOut {
                path: path(host, t),
                error: why.clone()?,
                measured_s: 0.0,
            })
        })
        .collect();
    let lost = |o: &Outcome| matches!(o, Err(f) if f.0.kind == Kind::Lost);
    let survived = outcomes.iter().any(|(_, o)| o.is_ok());
    if !host.keep_going || !survived || !outcomes.iter().any(|(_, o)| lost(o)) {
        return (outcomes, gone);
    }
    let total = host.plans.len();
    let mut kept = Vec::with_capacity(outcomes.len());
    let mut now = Vec::new();
    for (t, o) in outcomes {
        let f = match o {
            Err(f) if f.0.kind == Kind::Lost => f,
            o => {
                kept.push((t, o));
                continue;
            }
        };
        let (e, partial) = *f;
        let measured_s = partial.map_or(0.0, |r| {
            r.phases
                .iter()
                .filter(|p| p.name == PhaseName::Measure)
                .map(|p| p.duration_s)
                .sum()
        });
        let error = e.to_string();
        host.leave_out(t, error.clone());
        now.push(LeftOut {
            path: path(host, t),
            error,
            measured_s,
        });
    }
    let left = total - gone.len() - now.len();
    for l in &now {
        let note = format!(
            "run '{run}': {} left out after {:.1} s (--on-host-loss continue): {}; the totals \
             are partial, the other {left} of {total} targets'",
            l.path, l.measured_s, l.error
        );
        obs.note(&note);
        doc.notes.push(note);
    }
    gone.extend(now);
    (kept, gone)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Nothing is left out without `continue`, or without a target that
    /// finished the run: the loss is then the run's failure.
    #[test]
    fn a_loss_is_a_failure_without_continue_or_a_survivor() {
        let t = tempfile::tempdir().unwrap();
        let mut job = crate::spec::tests::sample();
        job.target.path = t.path().join("a");
        let plan = crate::plan::plan(job).unwrap();
        let mut host = OnHost::for_tests(vec![plan.clone(), plan]);
        let lost = || -> Outcome {
            Err(Box::new((
                crate::error::VbError::lost("run 'r': the NFS server did not come back"),
                None,
            )))
        };
        let failed = || -> Outcome { Err(Box::new((crate::error::VbError::run("r"), None))) };
        let mut doc = ResultDoc::begin(
            crate::io::host::this_host(),
            String::new(),
            crate::spec::tests::sample(),
        );
        let obs = crate::events::Tee::new();
        // Every target lost: no survivor, the outcomes untouched.
        host.keep_going = true;
        let (kept, gone) = leave_out(
            &mut host,
            "r",
            vec![(0, lost()), (1, lost())],
            &mut doc,
            &obs,
        );
        assert_eq!((kept.len(), gone.len()), (2, 0));
        // One lost, the other failed otherwise: still the run's failure.
        let (kept, _) = leave_out(
            &mut host,
            "r",
            vec![(0, lost()), (1, failed())],
            &mut doc,
            &obs,
        );
        assert_eq!(kept.len(), 2);
        assert!(host.left_out.iter().all(Option::is_none));
        assert!(doc.notes.is_empty());
    }
}
