//! An rd's parameters for block I/O: its for-loops (threads, transfer
//! sizes, read and seek percentages, rates), timing, arrivals and format,
//! each mapped or refused.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use super::super::table::{self, Row, Rule, Said, Verdict, alias, row};
use super::super::{Mapping, Notes};
use super::parse::{Def, Opt, exact, for_list, items, noted, seconds};
use crate::spec::Arrivals;
use crate::units::bounds;

use Rule::{Always, Map};
use Verdict::Refuse;

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
fn iorate(p: &Opt, notes: &mut Notes) -> Option<Result<Vec<Option<f64>>, ()>> {
    let v = p.val().to_ascii_lowercase();
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

/// An rd's keys as its rows read them.
pub(super) struct RdRead {
    l: Loops,
    /// `iorate=curve`: a curve, its points `curve=` or vdbench's own.
    curve: bool,
    write_sync: Option<&'static str>,
    said: Vec<Mapping>,
}

impl Said for RdRead {
    fn said(&mut self) -> &mut Vec<Mapping> {
        &mut self.said
    }
}

const RD_OTHER: &str = "this run parameter";

/// An rd's keys for block I/O (an rd with `fwd=` has its own, `fs.rs`).
pub(super) const RD: &[Row<RdRead>] = &[
    row("elapsed", Map(elapsed)),
    row("warmup", Map(warmup)),
    row("interval", Map(interval)),
    row("iorate", Map(iorate_key)),
    row("curve", Map(curve)),
    row("stopcurve", Always(Refuse(RD_OTHER))),
    row("distribution", Map(distribution)),
    row("format", Map(format)),
    row("openflags", Map(openflags)),
    row("pause", Map(pause)),
    row("maxdata", Always(Refuse(RD_OTHER))),
    row("threads", Map(threads)),
    row("forthreads", Map(threads)),
    alias("forxfersize", &["xfersize"], Map(forxfersize)),
    alias("forrdpct", &["rdpct"], Map(forrdpct)),
    alias("forseekpct", &["seekpct"], Map(forseekpct)),
    row("foriorate", Map(iorate_key)),
    row("forcompratio", Always(Refuse(RD_OTHER))),
    row("forwss", Always(Refuse(RD_OTHER))),
    row("forhitarea", Always(Refuse(RD_OTHER))),
    row("wd", Map(links)),
    row("sd", Map(links)),
];

/// A for-loop's values, or its refusal.
fn list(
    p: &Opt,
    slot: &mut Option<Vec<String>>,
    m: &mut Vec<Mapping>,
    notes: &mut Notes,
    how: &str,
) {
    match for_list(p) {
        Ok(v) => {
            *slot = Some(v);
            exact(m, p, how);
        }
        Err(e) => p.refuse(notes, e),
    }
}

fn links(p: &Opt, r: &mut RdRead, _: &mut Notes) {
    exact(&mut r.said, p, "the workload and its luns");
}

fn threads(p: &Opt, r: &mut RdRead, notes: &mut Notes) {
    let how = "threads per target (vdbench's threads per sd)";
    list(p, &mut r.l.threads, &mut r.said, notes, how);
}

fn forxfersize(p: &Opt, r: &mut RdRead, notes: &mut Notes) {
    list(
        p,
        &mut r.l.sizes,
        &mut r.said,
        notes,
        "one run per transfer size",
    );
}

fn forrdpct(p: &Opt, r: &mut RdRead, notes: &mut Notes) {
    list(
        p,
        &mut r.l.pcts,
        &mut r.said,
        notes,
        "one run per read percentage",
    );
}

fn forseekpct(p: &Opt, r: &mut RdRead, notes: &mut Notes) {
    list(
        p,
        &mut r.l.seeks,
        &mut r.said,
        notes,
        "one run per seek percentage",
    );
}

fn elapsed(p: &Opt, r: &mut RdRead, notes: &mut Notes) {
    match seconds(p) {
        Ok(s) => {
            r.l.elapsed = s;
            exact(&mut r.said, p, "duration");
        }
        Err(e) => p.refuse(notes, e),
    }
}

fn warmup(p: &Opt, r: &mut RdRead, notes: &mut Notes) {
    match seconds(p) {
        Ok(s) => {
            r.l.warmup = Some(s);
            exact(
                &mut r.said,
                p,
                "warmup (measured apart, left out of the totals)",
            );
        }
        Err(e) => p.refuse(notes, e),
    }
}

fn interval(p: &Opt, r: &mut RdRead, notes: &mut Notes) {
    match seconds(p) {
        Ok(s) => {
            r.l.interval = s;
            exact(&mut r.said, p, "interval");
        }
        Err(e) => p.refuse(notes, e),
    }
}

/// `iorate=` and `foriorate=`.
fn iorate_key(p: &Opt, r: &mut RdRead, notes: &mut Notes) {
    match iorate(p, notes) {
        Some(Ok(rates)) => {
            r.curve = false;
            if rates.len() > 1 {
                exact(
                    &mut r.said,
                    p,
                    "one run per rate, in order, as vdbench runs one per iorate",
                );
            } else if rates == [None] {
                exact(&mut r.said, p, "as fast as it goes");
            }
            r.l.rates = rates;
        }
        Some(Err(())) => {
            r.curve = true;
            r.l.rates = vec![None];
            exact(
                &mut r.said,
                p,
                "a curve: the maximum first, then its percentages",
            );
        }
        None => {}
    }
}

fn curve(p: &Opt, r: &mut RdRead, notes: &mut Notes) {
    match items(p.val()).iter().map(|x| x.parse::<f64>()).collect() {
        Ok(c) => {
            r.l.curve = Some(c);
            exact(&mut r.said, p, "curve percentages");
        }
        Err(_) => p.refuse(notes, "curve takes percentages"),
    }
}

fn distribution(p: &Opt, r: &mut RdRead, notes: &mut Notes) {
    match p.val() {
        "exponential" => r.l.arrivals = Some(Arrivals::Poisson),
        "uniform" => r.l.arrivals = Some(Arrivals::Uniform),
        _ => notes.unsupported(
            &p.at,
            &p.text(),
            "arrival distributions other than exponential and uniform",
        ),
    }
}

fn format(p: &Opt, r: &mut RdRead, notes: &mut Notes) {
    match p.val().to_ascii_lowercase().as_str() {
        "no" | "yes" | "(yes)" | "restart" => noted(
            &mut r.said,
            p,
            "volbench fills each file set once before its first run",
        ),
        "only" => {
            noted(
                &mut r.said,
                p,
                "volbench fills each file set before measuring: no run of its own",
            );
            r.l.skip = true;
        }
        _ => notes.unsupported(&p.at, &p.text(), "this format= value"),
    }
}

fn openflags(p: &Opt, r: &mut RdRead, notes: &mut Notes) {
    super::flags::openflags(p, notes, &mut r.l.direct, &mut r.write_sync);
}

fn pause(p: &Opt, r: &mut RdRead, notes: &mut Notes) {
    if seconds(p).ok() == Some(0.0) {
        exact(
            &mut r.said,
            p,
            "the next run starts at once, as in volbench",
        );
    } else {
        notes.unsupported(&p.at, &p.text(), RD_OTHER);
    }
}

/// An rd's keys, each mapped or refused.
pub(super) fn rd_loops(
    rd: &Def,
    m: &mut Vec<Mapping>,
    notes: &mut Notes,
    write_sync: &mut Option<&'static str>,
) -> Loops {
    let mut r = RdRead {
        l: Loops {
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
        },
        curve: false,
        write_sync: *write_sync,
        said: Vec::new(),
    };
    for p in &rd.params {
        table::read(RD, p, &mut r, notes, "rd parameter");
    }
    if r.curve && r.l.curve.is_none() {
        r.l.curve = Some(vec![10.0, 50.0, 70.0, 80.0, 90.0, 100.0]);
    }
    *write_sync = r.write_sync;
    m.append(&mut r.said);
    r.l
}
