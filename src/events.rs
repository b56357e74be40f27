//! What a running job tells whoever watches it: the `Event` enum every
//! `Observer` matches, the interval events with their `{host, target}`
//! labels, `Tee` (several observers as one) and `Totals` (per-part
//! intervals summed into one total per period). The executor and the
//! coordinator raise the events; the terminal, `--live` and
//! `--metrics-listen` (`output::live`) receive them.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::SystemTime;

pub(crate) use crate::io::progress::Progress;
use crate::plan::PlannedRun;
use crate::result::{Interval, RunResult};

/// Which figures an interval event holds: one target on one host, or the
/// sum over every target and host of the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scope<'a> {
    Part { host: &'a str, target: &'a str },
    Total,
}

/// One interval of a run, as measured (a part) or summed (the total).
/// Every part of a period comes before the period's total.
#[derive(Clone, Copy)]
pub(crate) struct IntervalEvent<'a> {
    pub(crate) run: &'a PlannedRun,
    /// Seconds of the run so far, and the run's planned length.
    pub(crate) elapsed_s: f64,
    pub(crate) total_s: f64,
    pub(crate) iv: &'a Interval,
    pub(crate) scope: Scope<'a>,
    /// What the run's protocol client did in the interval (an `nfs://`
    /// target's part on this host; None elsewhere and on totals).
    pub(crate) proto: Option<&'a crate::result::protocol::ProtocolInterval>,
}

/// Everything a running job tells whoever watches it. An observer takes
/// them in one `match` with an arm for each (nextest's reporter is the
/// model), so a new event is a compile error in every observer until it
/// says what it does with it, never silently dropped.
#[derive(Clone, Copy)]
pub(crate) enum Event<'a> {
    /// A note for the person watching (a fallback taken, a host's message).
    Note(&'a str),
    /// A fill of `total_bytes` begins; `what` says which ("filling").
    FillStarted {
        total_bytes: u64,
        what: &'a str,
    },
    /// `bytes` more of the fill are written.
    FillAdvanced {
        bytes: u64,
    },
    FillFinished,
    /// Run `index` of `count` begins (its workers are not released yet).
    RunStarted {
        index: usize,
        count: usize,
        run: &'a PlannedRun,
    },
    /// The workers were released at `at` (wall clock): the run's I/O
    /// begins. A multi-host agent reports it so the coordinator can measure
    /// start skew.
    IoStarted {
        run: &'a PlannedRun,
        at: SystemTime,
    },
    /// Once per interval per part, then once with the period's total.
    Interval(IntervalEvent<'a>),
    /// A run's result, merged over its targets and hosts. The live views
    /// take only the run's end from it (the result is for `finish`); the
    /// tests' observers read it whole.
    RunFinished(#[cfg_attr(not(test), allow(dead_code))] &'a RunResult),
    /// A host of a multi-host run changed state ("running", "failed: why",
    /// "done"); a local run has one host and never raises it.
    HostState {
        host: &'a str,
        state: &'a str,
    },
}

/// Whoever watches a running job: the executor and the coordinator raise
/// events, the terminal, `--live` and `--metrics-listen` (`output::live`)
/// and the agent's link to its coordinator receive them.
pub(crate) trait Observer: Sync {
    fn on(&self, ev: &Event<'_>);
}

/// The events by name, for the code that raises them. Implemented for
/// every observer at once, so no observer can override one and step
/// around its `match`.
pub(crate) trait Raise {
    fn note(&self, message: &str);
    fn run_started(&self, index: usize, count: usize, run: &PlannedRun);
    fn io_started(&self, run: &PlannedRun, at: SystemTime);
    fn interval(&self, ev: &IntervalEvent<'_>);
    fn run_finished(&self, run: &RunResult);
    fn host_state(&self, host: &str, state: &str);
}

impl<T: Observer + ?Sized> Raise for T {
    fn note(&self, message: &str) {
        self.on(&Event::Note(message));
    }
    fn run_started(&self, index: usize, count: usize, run: &PlannedRun) {
        self.on(&Event::RunStarted { index, count, run });
    }
    fn io_started(&self, run: &PlannedRun, at: SystemTime) {
        self.on(&Event::IoStarted { run, at });
    }
    fn interval(&self, ev: &IntervalEvent<'_>) {
        self.on(&Event::Interval(*ev));
    }
    fn run_finished(&self, run: &RunResult) {
        self.on(&Event::RunFinished(run));
    }
    fn host_state(&self, host: &str, state: &str) {
        self.on(&Event::HostState { host, state });
    }
}

/// The I/O layer's fill progress (`io::progress`), as events.
impl<T: Observer + ?Sized> Progress for T {
    fn start(&self, total_bytes: u64, what: &str) {
        self.on(&Event::FillStarted { total_bytes, what });
    }
    fn advance(&self, bytes: u64) {
        self.on(&Event::FillAdvanced { bytes });
    }
    fn finish(&self) {
        self.on(&Event::FillFinished);
    }
}

/// This machine's name, the `host` label of a local part.
pub(crate) fn this_host() -> &'static str {
    static NAME: OnceLock<String> = OnceLock::new();
    NAME.get_or_init(crate::io::host::hostname)
}

/// Several observers as one: each event goes to each, in order.
#[derive(Default)]
pub(crate) struct Tee {
    observers: Vec<Box<dyn Observer>>,
}

impl Tee {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    pub(crate) fn push(&mut self, obs: Box<dyn Observer>) {
        self.observers.push(obs);
    }
}

impl Observer for Tee {
    fn on(&self, ev: &Event<'_>) {
        self.observers.iter().for_each(|o| o.on(ev));
    }
}

/// Passes each part's interval through at once and, once every one of the
/// `n` parts has reported a period, that period's total (merged exactly,
/// `result::merge`). One per run; shared by the parts' threads. A period
/// is dropped once its total is sent: only the periods some part has not
/// yet reported are held (every one ever reported was, and a run's memory
/// grew by its histograms each interval, 25 MiB in a 30-minute soak).
pub(crate) struct Totals<'a> {
    inner: &'a dyn Observer,
    /// Each part's periods not yet in a total, oldest first.
    state: Mutex<Vec<VecDeque<Interval>>>,
    /// Parts that report no more (a target left out): no period waits
    /// for them.
    ended: Mutex<Vec<bool>>,
    started: AtomicBool,
}

impl<'a> Totals<'a> {
    pub(crate) fn new(inner: &'a dyn Observer, n: usize) -> Self {
        Self {
            inner,
            state: Mutex::new(vec![VecDeque::new(); n]),
            ended: Mutex::new(vec![false; n]),
            started: AtomicBool::new(false),
        }
    }

    /// Part `part` reports no more intervals (a target left out when its
    /// server was lost): the totals go on with the others.
    pub(crate) fn part_ended(&self, part: usize) {
        if let Ok(mut e) = self.ended.lock() {
            if let Some(x) = e.get_mut(part) {
                *x = true;
            }
        }
    }

    /// The first part's start is the run's start.
    pub(crate) fn io_started(&self, run: &PlannedRun, at: SystemTime) {
        if !self.started.swap(true, Ordering::SeqCst) {
            self.inner.io_started(run, at);
        }
    }

    /// Part `part`'s event: passed on, then any period now complete as a total.
    pub(crate) fn part(&self, part: usize, ev: &IntervalEvent<'_>) {
        self.inner.interval(ev);
        let Ok(mut series) = self.state.lock() else {
            return;
        };
        if let Some(s) = series.get_mut(part) {
            s.push_back(ev.iv.clone());
        }
        let Ok(ended) = self.ended.lock() else {
            return;
        };
        // A period is complete when every part still running reported it
        // (a part that ended adds what it reported before it ended).
        let complete = |series: &[VecDeque<Interval>]| {
            series.iter().any(|s| !s.is_empty())
                && series
                    .iter()
                    .enumerate()
                    .all(|(i, s)| !s.is_empty() || ended.get(i).is_some_and(|e| *e))
        };
        while complete(&series) {
            let period: Vec<Interval> = series.iter_mut().filter_map(VecDeque::pop_front).collect();
            let at: Vec<&Interval> = period.iter().collect();
            let merged = crate::result::merge::merge_intervals(&at);
            self.inner.interval(&IntervalEvent {
                run: ev.run,
                elapsed_s: merged.t_s,
                total_s: ev.total_s,
                iv: &merged,
                scope: Scope::Total,
                proto: None,
            });
        }
    }
}

/// An observer that passes everything to `inner` but makes each interval
/// a part of `totals` (one target of a run on this host).
pub(crate) struct PartObserver<'a> {
    pub(crate) totals: &'a Totals<'a>,
    pub(crate) part: usize,
    /// Notes are prefixed with the target when there are several.
    pub(crate) prefix: Option<String>,
}

impl Observer for PartObserver<'_> {
    fn on(&self, ev: &Event<'_>) {
        match ev {
            Event::Note(m) => match &self.prefix {
                Some(p) => self.totals.inner.note(&format!("{p}: {m}")),
                None => self.totals.inner.note(m),
            },
            Event::IoStarted { run, at } => self.totals.io_started(run, *at),
            Event::Interval(iv) => self.totals.part(self.part, iv),
            // The run's start and end are the whole run's, said once by
            // whoever runs the parts.
            Event::RunStarted { .. } | Event::RunFinished(_) => {}
            Event::FillStarted { .. }
            | Event::FillAdvanced { .. }
            | Event::FillFinished
            | Event::HostState { .. } => self.totals.inner.on(ev),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::IntervalOp;

    /// Records the scopes and read IOPS it is shown.
    #[derive(Default)]
    struct Seen(Mutex<Vec<(String, f64)>>);
    impl Observer for Seen {
        fn on(&self, ev: &Event<'_>) {
            let Event::Interval(ev) = ev else {
                return;
            };
            let who = match ev.scope {
                Scope::Part { target, .. } => target.to_string(),
                Scope::Total => "total".into(),
            };
            self.0.lock().unwrap().push((who, ev.iv.read.iops));
        }
    }

    fn planned() -> PlannedRun {
        PlannedRun {
            spec: crate::spec::RunSpec::default(),
            engine: crate::spec::EngineKind::Psync,
            engine_note: None,
            io_threads: 1,
            depth: 1,
            open_files: None,
        }
    }

    fn iv(iops: f64) -> Interval {
        Interval {
            t_s: 1.0,
            duration_s: 1.0,
            phase: crate::result::PhaseName::Measure,
            read: IntervalOp {
                iops,
                ..IntervalOp::default()
            },
            write: IntervalOp::default(),
            meta_ops: Vec::new(),
        }
    }

    #[test]
    fn parts_pass_through_and_the_total_comes_once_all_parts_reported() {
        let seen = Seen::default();
        let totals = Totals::new(&seen, 2);
        let run = planned();
        let ev = |i: &'static Interval, t: &'static str| IntervalEvent {
            run: &run,
            elapsed_s: 1.0,
            total_s: 2.0,
            iv: i,
            scope: Scope::Part {
                host: "h",
                target: t,
            },
            proto: None,
        };
        let (a, b) = (
            Box::leak(Box::new(iv(100.0))),
            Box::leak(Box::new(iv(50.0))),
        );
        totals.part(0, &ev(a, "a"));
        assert_eq!(seen.0.lock().unwrap().len(), 1, "no total before b reports");
        totals.part(1, &ev(b, "b"));
        let got = seen.0.lock().unwrap().clone();
        assert_eq!(
            got,
            vec![
                ("a".into(), 100.0),
                ("b".into(), 50.0),
                ("total".into(), 150.0)
            ]
        );
    }

    /// A part left out (its target's server lost) holds no total back:
    /// what it reported before still counts, then the others alone.
    #[test]
    fn a_part_that_ended_holds_no_total_back() {
        let seen = Seen::default();
        let totals = Totals::new(&seen, 2);
        let run = planned();
        let ev = |i: &'static Interval, t: &'static str| IntervalEvent {
            run: &run,
            elapsed_s: 1.0,
            total_s: 2.0,
            iv: i,
            scope: Scope::Part {
                host: "h",
                target: t,
            },
            proto: None,
        };
        totals.part(1, &ev(Box::leak(Box::new(iv(5.0))), "b"));
        totals.part(0, &ev(Box::leak(Box::new(iv(100.0))), "a"));
        totals.part(0, &ev(Box::leak(Box::new(iv(200.0))), "a"));
        totals.part_ended(1);
        totals.part(0, &ev(Box::leak(Box::new(iv(300.0))), "a"));
        let got: Vec<f64> = seen
            .0
            .lock()
            .unwrap()
            .iter()
            .filter(|(t, _)| t == "total")
            .map(|x| x.1)
            .collect();
        // The first period with b's, the second held until b ended, the
        // third at once.
        assert_eq!(got, vec![105.0, 200.0, 300.0]);
    }

    #[test]
    fn totals_come_in_order_and_no_period_is_held_after_its_total() {
        // Every period ever reported was held: a run's memory grew with
        // its length (25 MiB of histograms in a 30-minute soak).
        let seen = Seen::default();
        let totals = Totals::new(&seen, 2);
        let run = planned();
        let ev = |i: &'static Interval, t: &'static str| IntervalEvent {
            run: &run,
            elapsed_s: 1.0,
            total_s: 2.0,
            iv: i,
            scope: Scope::Part {
                host: "h",
                target: t,
            },
            proto: None,
        };
        for k in 1..=3 {
            totals.part(0, &ev(Box::leak(Box::new(iv(100.0 * k as f64))), "a"));
        }
        assert_eq!(
            totals.state.lock().unwrap()[0].len(),
            3,
            "b has not reported"
        );
        for k in 1..=3 {
            totals.part(1, &ev(Box::leak(Box::new(iv(k as f64))), "b"));
        }
        let got: Vec<f64> = seen
            .0
            .lock()
            .unwrap()
            .iter()
            .filter(|(w, _)| w == "total")
            .map(|(_, v)| *v)
            .collect();
        assert_eq!(got, [101.0, 202.0, 303.0]);
        assert!(totals.state.lock().unwrap().iter().all(VecDeque::is_empty));
    }

    #[test]
    fn a_tee_gives_every_observer_every_event() {
        let mut tee = Tee::new();
        let one = std::sync::Arc::new(Seen::default());
        struct Shared(std::sync::Arc<Seen>);
        impl Observer for Shared {
            fn on(&self, ev: &Event<'_>) {
                self.0.on(ev);
            }
        }
        tee.push(Box::new(Shared(one.clone())));
        tee.push(Box::new(Shared(one.clone())));
        let run = planned();
        let i = iv(7.0);
        tee.interval(&IntervalEvent {
            run: &run,
            elapsed_s: 1.0,
            total_s: 1.0,
            iv: &i,
            scope: Scope::Total,
            proto: None,
        });
        assert_eq!(one.0.lock().unwrap().len(), 2);
    }
}
