//! A latency search on this host (`--latency-target`): the closed-loop
//! run, the open-loop runs `plan::search` chooses, each judged on its merged
//! histograms, recorded as runs and as the result's `latency_search`.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use super::{Observer, Sets, run_on_all};
use crate::plan::search::{MIN_ACHIEVED, Next, found, next};
use crate::plan::{Plan, PlannedRun};
use crate::result::search::{LatencySearchResult, SearchStep, StepKind, check};
use crate::result::{ResultDoc, RunResult};
use crate::spec::latency::LatencySearch;

/// Runs the search for `run`, each step a run of its own in `doc.runs`;
/// false when the job must end here (a stop or an error, as `one_run`).
pub(super) fn run(
    all: (&[Plan], &[Sets]),
    done: &mut [Vec<RunResult>],
    i: usize,
    s: &LatencySearch,
    doc: &mut ResultDoc,
    obs: &dyn Observer,
    stop: &Arc<AtomicBool>,
) -> bool {
    // The search is refused over several targets and hosts (input::rate),
    // so the first plan's run is the one searched.
    let Some(run) = all.0.first().and_then(|p| p.runs.get(i)).cloned() else {
        return false;
    };
    let run = &run;
    let mut steps: Vec<SearchStep> = Vec::new();
    let mut go_on = true;
    while let Next::Run(kind, rate) = next(s, &steps) {
        let n = steps.len() as u32 + 1;
        let before = doc.runs.len();
        let make = |r: &PlannedRun| step_run(r, n, kind, rate);
        go_on = run_on_all(all, done, i, Some(&make), doc, obs, stop);
        // A step stopped midway still measured something, but too little
        // to judge the rate on: the search ends with the steps it judged.
        let judged = go_on && doc.runs.len() > before;
        if let (true, Some(r)) = (judged, doc.runs.last()) {
            let measured = check(r, &s.limits);
            let carried = rate.is_none_or(|want| r.total_iops() >= MIN_ACHIEVED * want);
            let pass = carried && measured.iter().all(|m| m.pass);
            let st = SearchStep {
                step: steps.len() as u32 + 1,
                run: r.name.clone(),
                kind,
                rate_iops: rate,
                iops: r.total_iops(),
                measured,
                pass,
            };
            obs.note(&step_line(&st));
            steps.push(st);
        }
        record(doc, run, s, &steps);
        if !judged {
            break;
        }
    }
    if let Some(last) = doc.latency_search.last() {
        obs.note(&last.line());
    }
    go_on
}

/// The step as a run of its own: the searched run at this rate, named so
/// its place in the search shows wherever runs are listed.
fn step_run(run: &PlannedRun, n: u32, kind: StepKind, rate: Option<f64>) -> PlannedRun {
    let mut step = run.clone();
    step.spec.latency_target = None;
    step.spec.rate_iops = rate;
    step.spec.name = match rate {
        None => format!("{}-s{n}-max", run.spec.name),
        Some(r) => format!("{}-s{n}-{}-{}iops", run.spec.name, kind.name(), r.round()),
    };
    step
}

/// Keeps the search's record in the result as it grows, so a stop leaves it.
fn record(doc: &mut ResultDoc, run: &PlannedRun, s: &LatencySearch, steps: &[SearchStep]) {
    let (found_iops, confirmed) = found(steps);
    let r = LatencySearchResult {
        run: run.spec.name.clone(),
        limits: s.limits.clone(),
        max_iops: steps
            .first()
            .filter(|f| f.kind == StepKind::Max)
            .map(|f| f.iops),
        found_iops,
        confirmed,
        steps: steps.to_vec(),
    };
    match doc.latency_search.iter_mut().find(|x| x.run == r.run) {
        Some(x) => *x = r,
        None => doc.latency_search.push(r),
    }
    super::rescue::keep(doc, false);
}

/// "step 3 (probe at 260 IOPS): p99 4.1ms <= 20ms: pass".
pub(crate) fn step_line(st: &SearchStep) -> String {
    let at = match st.rate_iops {
        None => "closed loop".to_string(),
        Some(r) => format!("at {} IOPS", crate::units::thousands(r)),
    };
    let checks: Vec<String> = st
        .measured
        .iter()
        .map(|m| {
            format!(
                "{} measured {}",
                m.limit.label(),
                m.measured_us
                    .map_or("nothing".into(), crate::spec::latency::show_us)
            )
        })
        .collect();
    format!(
        "search step {} ({} {at}): {} IOPS; {}: {}",
        st.step,
        st.kind.name(),
        crate::units::thousands(st.iops),
        checks.join(", "),
        if st.pass { "pass" } else { "fail" }
    )
}
