//! The latency search's decisions (`--latency-target`): which rate to run
//! next, from the steps done so far, and what the search found. Pure over
//! the steps' figures, so the same rules serve any runner and are tested
//! without I/O.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use crate::result::search::{SearchStep, StepKind};
use crate::spec::latency::LatencySearch;

/// An open-loop step whose achieved IOPS fall short of the rate tried by
/// more than this did not carry the load, whatever its latency says (the
/// I/Os it never issued have no latency).
pub(crate) const MIN_ACHIEVED: f64 = 0.95;

/// What the search does next.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Next {
    /// A run of this kind, open loop at this rate (None: closed loop).
    Run(StepKind, Option<f64>),
    Done,
}

/// The lowest rate that failed, and the highest below it that passed
/// (0 when none did): the bracket the answer lies in. A rate that passed
/// above one that failed is noise and does not widen the bracket.
fn bracket(done: &[SearchStep]) -> (f64, Option<f64>) {
    let open = || done.iter().filter_map(|s| s.rate_iops.map(|r| (r, s.pass)));
    let hi = open()
        .filter(|(_, pass)| !pass)
        .map(|(r, _)| r)
        .min_by(f64::total_cmp);
    let lo = open()
        .filter(|&(r, pass)| pass && hi.is_none_or(|h| r < h))
        .map(|(r, _)| r)
        .max_by(f64::total_cmp)
        .unwrap_or(0.0);
    (lo, hi)
}

/// Whether the search ended on a confirming run that passed.
fn confirmed(done: &[SearchStep]) -> bool {
    done.last()
        .is_some_and(|l| l.kind == StepKind::Confirm && l.pass)
}

/// The next step of a search, given the steps done (in order).
pub(crate) fn next(s: &LatencySearch, done: &[SearchStep]) -> Next {
    let Some(first) = done.first() else {
        return Next::Run(StepKind::Max, None);
    };
    let max = first.iops;
    if max.is_nan() || max <= 0.0 || done.len() >= s.max_steps as usize || confirmed(done) {
        return Next::Done;
    }
    let (lo, hi) = bracket(done);
    let last_one = done.len() + 1 == s.max_steps as usize;
    let Some(hi) = hi else {
        // Nothing failed yet: try the ceiling itself, then confirm it.
        return if lo > 0.0 {
            Next::Run(StepKind::Confirm, Some(lo))
        } else {
            Next::Run(StepKind::Probe, Some(max))
        };
    };
    if lo > 0.0 && (last_one || hi - lo <= s.precision_pct / 100.0 * max) {
        return Next::Run(StepKind::Confirm, Some(lo));
    }
    let mid = (lo + hi) / 2.0;
    if lo <= 0.0 && hi <= s.precision_pct / 100.0 * max || mid < crate::units::bounds::MIN_RATE {
        // Even a small fraction of the maximum misses the target.
        return Next::Done;
    }
    Next::Run(StepKind::Probe, Some(mid))
}

/// What a finished (or stopped) search found: the confirmed rate, else the
/// highest rate that passed below any that failed, unconfirmed.
pub(crate) fn found(done: &[SearchStep]) -> (Option<f64>, bool) {
    if let (true, Some(last)) = (confirmed(done), done.last()) {
        return (last.rate_iops, true);
    }
    let (lo, _) = bracket(done);
    ((lo > 0.0).then_some(lo), false)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::spec::latency::LatencyLimit;

    fn search(steps: u32, pct: f64) -> LatencySearch {
        LatencySearch {
            limits: vec![LatencyLimit::parse("x", "p99=20ms").unwrap()],
            max_steps: steps,
            precision_pct: pct,
        }
    }

    /// Runs a search against a synthetic service that meets the target at
    /// and below `knee` IOPS and reaches `max` closed-loop.
    fn drive(s: &LatencySearch, max: f64, knee: f64) -> Vec<SearchStep> {
        let mut done = Vec::new();
        while let Next::Run(kind, rate) = next(s, &done) {
            let (iops, pass) = match rate {
                None => (max, false),
                Some(r) => (r.min(max), r <= knee),
            };
            done.push(SearchStep {
                step: done.len() as u32 + 1,
                run: String::new(),
                kind,
                rate_iops: rate,
                iops,
                measured: Vec::new(),
                pass,
            });
            assert!(
                done.len() <= s.max_steps as usize,
                "the search ran past its bound"
            );
        }
        done
    }

    #[test]
    fn finds_the_knee_within_the_precision_and_confirms_it() {
        let s = search(10, 5.0);
        let done = drive(&s, 520.0, 500.0);
        assert_eq!(done[0].kind, StepKind::Max);
        assert_eq!(done[1].rate_iops, Some(520.0), "the ceiling is tried first");
        let (rate, confirmed) = found(&done);
        let rate = rate.unwrap();
        assert!(confirmed);
        assert!((500.0 - 0.05 * 520.0..=500.0).contains(&rate), "{rate}");
        assert_eq!(done.last().unwrap().kind, StepKind::Confirm);
    }

    #[test]
    fn a_service_that_keeps_the_target_at_its_maximum_is_found_there() {
        let done = drive(&search(10, 5.0), 800.0, 1e9);
        assert_eq!(done.len(), 3, "max, the ceiling, its confirmation");
        assert_eq!(found(&done), (Some(800.0), true));
    }

    #[test]
    fn no_rate_meets_an_impossible_target() {
        let done = drive(&search(40, 5.0), 800.0, 0.0);
        assert_eq!(found(&done), (None, false));
        assert!(
            done.len() < 40,
            "stops once the bracket is below the precision"
        );
    }

    #[test]
    fn the_step_bound_holds_and_ends_with_a_confirmation() {
        let s = search(4, 0.1);
        let done = drive(&s, 1000.0, 700.0);
        assert_eq!(done.len(), 4);
        assert_eq!(done[3].kind, StepKind::Confirm);
        assert_eq!(found(&done), (Some(500.0), true));
    }

    #[test]
    fn a_failed_confirmation_bisects_below_it() {
        let s = search(10, 5.0);
        let step = |kind, rate: Option<f64>, pass| SearchStep {
            step: 0,
            run: String::new(),
            kind,
            rate_iops: rate,
            iops: rate.unwrap_or(1000.0),
            measured: Vec::new(),
            pass,
        };
        let done = vec![
            step(StepKind::Max, None, false),
            step(StepKind::Probe, Some(1000.0), false),
            step(StepKind::Probe, Some(500.0), true),
            step(StepKind::Probe, Some(750.0), false),
            step(StepKind::Probe, Some(625.0), false),
            step(StepKind::Probe, Some(562.5), false),
            step(StepKind::Probe, Some(531.25), false),
            step(StepKind::Confirm, Some(500.0), false),
        ];
        assert_eq!(next(&s, &done), Next::Run(StepKind::Probe, Some(250.0)));
        assert_eq!(found(&done), (None, false));
    }

    #[test]
    fn a_closed_loop_run_that_did_nothing_ends_the_search() {
        let s = search(10, 5.0);
        let max = SearchStep {
            step: 1,
            run: String::new(),
            kind: StepKind::Max,
            rate_iops: None,
            iops: 0.0,
            measured: Vec::new(),
            pass: false,
        };
        assert_eq!(next(&s, &[max]), Next::Done);
    }
}
