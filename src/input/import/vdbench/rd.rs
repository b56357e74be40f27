//! An rd's parameters for block I/O: its for-loops (threads, transfer
//! sizes, read and seek percentages, rates), timing, arrivals and format,
//! each mapped or refused.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use super::super::{Mapping, Notes};
use super::parse::{Def, Param, exact, for_list, items, noted, seconds};
use crate::spec::Arrivals;
use crate::units::bounds;

/// An rd's parameters: its for-loops and timing.
pub(super) struct Loops {
    pub(super) threads: Option<Vec<String>>,
    pub(super) sizes: Option<Vec<String>>,
    pub(super) pcts: Option<Vec<String>>,
    pub(super) seeks: Option<Vec<String>>,
    /// One entry per run: None is as fast as it goes.
    pub(super) rates: Vec<Option<f64>>,
    pub(super) elapsed: f64,
    pub(super) warmup: Option<f64>,
    pub(super) interval: f64,
    pub(super) curve: Option<Vec<f64>>,
    pub(super) arrivals: Option<Arrivals>,
    pub(super) direct: bool,
    pub(super) skip: bool,
}

/// `iorate=` (or `foriorate=`): max, curve, one rate or a list of rates.
fn iorate(p: &Param, notes: &mut Notes) -> Option<Result<Vec<Option<f64>>, ()>> {
    let v = p.value.to_ascii_lowercase();
    match v.as_str() {
        "max" => return Some(Ok(vec![None])),
        "curve" => return Some(Err(())),
        _ => {}
    }
    let list = items(&v);
    if list.is_empty() || list.len() > bounds::MAX_SWEEP_POINTS {
        notes.refuse(
            &p.at,
            &p.text(),
            format!("max, curve, or 1..{} rates", bounds::MAX_SWEEP_POINTS),
        );
        return None;
    }
    let mut rates = Vec::new();
    for x in &list {
        if x == "max" {
            rates.push(None);
            continue;
        }
        let r = x
            .parse::<f64>()
            .map_err(|_| format!("'{x}' is not a rate (I/Os per second) nor max"))
            .and_then(|r| {
                bounds::number("the rate", r, bounds::MIN_RATE, bounds::MAX_RATE)
                    .map_err(|e| e.message)
            });
        match r {
            Ok(r) => rates.push(Some(r)),
            Err(e) => {
                notes.refuse(&p.at, &p.text(), e);
                return None;
            }
        }
    }
    Some(Ok(rates))
}

/// An rd's parameters, each mapped or refused.
pub(super) fn rd_loops(
    rd: &Def,
    m: &mut Vec<Mapping>,
    notes: &mut Notes,
    write_sync: &mut Option<&'static str>,
) -> Loops {
    let mut l = Loops {
        threads: None,
        sizes: None,
        pcts: None,
        seeks: None,
        rates: vec![None],
        elapsed: 30.0,
        warmup: None,
        interval: 1.0,
        curve: None,
        arrivals: None,
        direct: false,
        skip: false,
    };
    let mut iorate_curve = false;
    for p in &rd.params {
        let t = p.text();
        let list =
            |slot: &mut Option<Vec<String>>, m: &mut Vec<Mapping>, notes: &mut Notes, how| {
                match for_list(p) {
                    Ok(v) => {
                        *slot = Some(v);
                        exact(m, p, how);
                    }
                    Err(e) => notes.refuse(&p.at, &t, e),
                }
            };
        match p.key.as_str() {
            "wd" | "sd" => exact(m, p, "the workload and its luns"),
            "threads" | "forthreads" => list(
                &mut l.threads,
                m,
                notes,
                "threads per target (vdbench's threads per sd)",
            ),
            "forxfersize" => list(&mut l.sizes, m, notes, "one run per transfer size"),
            "forrdpct" => list(&mut l.pcts, m, notes, "one run per read percentage"),
            "forseekpct" => list(&mut l.seeks, m, notes, "one run per seek percentage"),
            "elapsed" | "warmup" | "interval" => match seconds(p) {
                Ok(s) => {
                    let how = match p.key.as_str() {
                        "elapsed" => {
                            l.elapsed = s;
                            "duration"
                        }
                        "warmup" => {
                            l.warmup = Some(s);
                            "warmup (measured apart, left out of the totals)"
                        }
                        _ => {
                            l.interval = s;
                            "interval"
                        }
                    };
                    exact(m, p, how);
                }
                Err(e) => notes.refuse(&p.at, &t, e),
            },
            "iorate" | "foriorate" => match iorate(p, notes) {
                Some(Ok(rates)) => {
                    iorate_curve = false;
                    if rates.len() > 1 {
                        exact(
                            m,
                            p,
                            "one run per rate, in order, as vdbench runs one per iorate",
                        );
                    } else if rates == [None] {
                        exact(m, p, "as fast as it goes");
                    }
                    l.rates = rates;
                }
                Some(Err(())) => {
                    iorate_curve = true;
                    l.rates = vec![None];
                    exact(m, p, "a curve: the maximum first, then its percentages");
                }
                None => {}
            },
            "curve" => match items(&p.value).iter().map(|x| x.parse::<f64>()).collect() {
                Ok(c) => {
                    l.curve = Some(c);
                    exact(m, p, "curve percentages");
                }
                Err(_) => notes.refuse(&p.at, &t, "curve takes percentages"),
            },
            "distribution" => match p.value.as_str() {
                "exponential" => l.arrivals = Some(Arrivals::Poisson),
                "uniform" => l.arrivals = Some(Arrivals::Uniform),
                _ => notes.unsupported(
                    &p.at,
                    &t,
                    "arrival distributions other than exponential and uniform",
                ),
            },
            "format" => match p.value.to_ascii_lowercase().as_str() {
                "no" | "yes" | "(yes)" | "restart" => noted(
                    m,
                    p,
                    "volbench fills each file set once before its first run",
                ),
                "only" => {
                    noted(
                        m,
                        p,
                        "volbench fills each file set before measuring: no run of its own",
                    );
                    l.skip = true;
                }
                _ => notes.unsupported(&p.at, &t, "this format= value"),
            },
            "openflags" => super::flags::openflags(
                notes,
                &p.at,
                &t,
                &items(&p.value),
                &mut l.direct,
                write_sync,
            ),
            "pause" if seconds(p).ok() == Some(0.0) => {
                exact(m, p, "the next run starts at once, as in volbench")
            }
            "pause" => notes.unsupported(&p.at, &t, "this run parameter"),
            _ => super::keys::judge("rd", p, m, notes),
        }
    }
    if iorate_curve && l.curve.is_none() {
        l.curve = Some(vec![10.0, 50.0, 70.0, 80.0, 90.0, 100.0]);
    }
    l
}
