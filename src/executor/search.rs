//! A latency search (`--latency-target`): the closed-loop run, the
//! open-loop runs `plan::search` chooses, each judged on its merged
//! histograms (over every target here, or over every host through the
//! coordinator), recorded as runs and as the result's `latency_search`.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use super::{Observer, OnHost, run_on_all};
use crate::events::Raise as _;
use crate::plan::PlannedRun;
use crate::plan::search::{MIN_ACHIEVED, Next, found, next};
use crate::result::ResultDoc;
use crate::result::search::{LatencySearchResult, SearchStep, StepKind, check};
use crate::spec::latency::LatencySearch;

/// One step to run: its rate for the whole job (None: closed loop) and the
/// name of its run (which says its kind).
pub(crate) struct Step {
    pub(crate) rate: Option<f64>,
    pub(crate) name: String,
}

/// How a step ran: `Judged` when its merged result was pushed onto
/// `doc.runs` whole; `Again` when it measured on fewer parts than it was
/// dealt over (a host lost and left out), so the same rate is tried once
/// more on what is left; `End` when the job ends here (a stop, an error).
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Ran {
    Judged,
    Again,
    End,
}

/// Runs the search for `run`, each step a run of its own in `doc.runs`;
/// false when the job must end here (a stop or an error, as `one_run`).
pub(super) fn run(
    host: &mut OnHost,
    i: usize,
    s: &LatencySearch,
    doc: &mut ResultDoc,
    obs: &dyn Observer,
    stop: &Arc<AtomicBool>,
) -> bool {
    let Some(name) = host
        .plans
        .first()
        .and_then(|p| p.runs.get(i))
        .map(|r| r.spec.name.clone())
    else {
        return false;
    };
    // A step's rate is the job's: each target of a list gets the share of
    // it that it has of the threads, as with --rate over a list.
    let threads: Vec<f64> = host
        .plans
        .iter()
        .map(|p| p.runs.get(i).map_or(0.0, |r| f64::from(r.spec.threads)))
        .collect();
    let sum: f64 = threads.iter().sum::<f64>().max(1.0);
    search(&name, s, doc, obs, false, &mut |st, doc| {
        let before = doc.runs.len();
        let make = |t: usize, r: &PlannedRun| {
            let part = threads.get(t).map_or(1.0, |n| n / sum);
            step_run(r, st, st.rate.map(|x| x * part))
        };
        let go_on = run_on_all(host, i, Some(&make), doc, obs, stop);
        // A step stopped midway still measured something, but too little
        // to judge the rate on: the search ends with the steps it judged.
        if go_on && doc.runs.len() > before {
            Ran::Judged
        } else {
            Ran::End
        }
    })
}

/// The search's loop, whoever runs the steps: `step` runs one (pushing its
/// merged result onto `doc.runs`); each judged step is checked against the
/// limits and kept in `doc.latency_search` as it grows, so a stop leaves it.
/// `whole_runs_only` is the rescue's flag of the runner. False when the job
/// must end here.
pub(crate) fn search(
    name: &str,
    s: &LatencySearch,
    doc: &mut ResultDoc,
    obs: &dyn Observer,
    whole_runs_only: bool,
    step: &mut dyn FnMut(&Step, &mut ResultDoc) -> Ran,
) -> bool {
    let mut steps: Vec<SearchStep> = Vec::new();
    let mut go_on = true;
    // Every run made, judged or not, so no two steps' runs share a name.
    let mut made = 0u32;
    while let Next::Run(kind, rate) = next(s, &steps) {
        made += 1;
        let st = Step {
            rate,
            name: step_name(name, made, kind, rate),
        };
        let ran = step(&st, doc);
        go_on = ran != Ran::End;
        if let (Ran::Judged, Some(r)) = (&ran, doc.runs.last()) {
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
        record(doc, name, s, &steps, whole_runs_only);
        if ran == Ran::End {
            break;
        }
    }
    if let Some(last) = doc.latency_search.iter().find(|x| x.run == name) {
        obs.note(&last.line());
    }
    go_on
}

/// "NAME-s3-probe-256iops": the step's place in the search shows wherever
/// runs are listed.
fn step_name(name: &str, n: u32, kind: StepKind, rate: Option<f64>) -> String {
    match rate {
        None => format!("{name}-s{n}-max"),
        Some(r) => format!("{name}-s{n}-{}-{}iops", kind.name(), r.round()),
    }
}

/// The step as a run of its own: the searched run at `rate` (this part's
/// share of the step's), named as the step.
pub(crate) fn step_run(run: &PlannedRun, st: &Step, rate: Option<f64>) -> PlannedRun {
    let mut step = run.clone();
    step.spec.latency_target = None;
    step.spec.rate_iops = rate;
    step.spec.name = st.name.clone();
    step
}

/// Keeps the search's record in the result as it grows, so a stop leaves it.
fn record(
    doc: &mut ResultDoc,
    name: &str,
    s: &LatencySearch,
    steps: &[SearchStep],
    whole_runs_only: bool,
) {
    let (found_iops, confirmed) = found(steps);
    let r = LatencySearchResult {
        run: name.to_string(),
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
    super::rescue::keep(doc, whole_runs_only);
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
