//! vdbench's file-system workloads (`fsd=`, `fwd=`, `rd=` with `fwd=`) as
//! volbench's metadata runs: the fsd's anchor, depth, width, files and
//! sizes (one, or a distribution) are the tree (`fsd.rs`); `format=yes` is
//! a create phase; each rd a timed mix of its fwds' operations at
//! `fwdrate=` (a list: one run per rate), or, for `mkdir`/`rmdir`, a phase
//! over the tree.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use super::super::table::{self, Row, Rule, Said, Verdict, row};
use super::super::{Imported, Mapping, Notes, PathMap, dedup, run_name, secs_text};
use super::fsd::{Fwd, on_shape, read_fsd, read_fwd};
use super::parse::{Def, Opt, exact, items, noted, seconds, with_defaults};
use crate::error::{Result, VbError};
use crate::input::suite::write::value;
use crate::input::suite::{RunEntry, SuiteFile};
use crate::spec::TableKind;
use crate::units::bounds;

use Rule::{Always, Map};
use Verdict::Exact;

/// True when the parameters describe a file-system workload.
pub(super) fn is_fs(defs: &[Def]) -> bool {
    defs.iter().any(|d| d.kind == "fsd" || d.kind == "fwd")
}

pub(super) fn translate(
    origin: &str,
    defs: &[Def],
    map: &PathMap,
    notes: &mut Notes,
) -> Result<Imported> {
    let mut global = Vec::new();
    let mut fsd: Option<Def> = None;
    let mut fwds: Vec<Def> = Vec::new();
    let mut rds: Vec<Def> = Vec::new();
    for (i, d) in defs.iter().enumerate() {
        if d.name == "default" {
            continue;
        }
        let full = with_defaults(defs, i);
        match d.kind.as_str() {
            "fsd" if fsd.is_some() => notes.refuse(
                &d.at,
                &format!("fsd={}", d.name),
                "a second fsd; volbench's runs share one tree (import them apart)",
            ),
            "fsd" => fsd = Some(full),
            "fwd" => fwds.push(full),
            "rd" => rds.push(full),
            k => notes.refuse(
                &d.at,
                &format!("{k}={}", d.name),
                "beside fsd/fwd: volbench's suite is a tree or block I/O, not both (import them apart)",
            ),
        }
    }
    let Some(fsd) = fsd else {
        return Err(VbError::input(format!("{origin}: fwd without an fsd")));
    };
    let tree = read_fsd(&fsd, map, &mut global, notes);
    let mut phases = Vec::new();
    let mut interval = None;
    let mut formatted = false;
    for rd in &rds {
        one_rd(rd, &fwds, &mut phases, &mut interval, &mut formatted, notes);
    }
    notes.check()?;
    if phases.is_empty() {
        return Err(VbError::input(format!("{origin}: no rd with fwd=")));
    }
    let mut suite = SuiteFile::new(
        &run_name(origin.split(' ').next().unwrap_or("vdbench")),
        &format!("vdbench parameters {origin}"),
        TableKind::Ops,
        // A discarded copy of a phase would leave the tree changed for the real one.
        false,
    );
    suite.defaults.interval = interval.map(secs_text).and_then(value);
    let mut imp = Imported::new(suite, tree.target.clone());
    imp.said = global;
    for (mut run, said) in phases {
        // Every run states the tree it works on.
        run.depth = value(tree.depth);
        run.width = value(tree.width);
        run.files_per_dir = value(tree.files_per_dir);
        run.file_size = value(tree.file_size.as_str());
        run.shared_dirs = tree.shared_dirs.then_some(true).and_then(value);
        imp.push_run(run, said);
    }
    Ok(imp)
}

/// An rd with `fwd=`: its keys as its rows read them.
pub(super) struct RdFs {
    elapsed: f64,
    warmup: Option<f64>,
    interval: Option<f64>,
    rates: Vec<Option<f64>>,
    format: bool,
    /// `format=restart`: the create phase keeps what is complete.
    restart: bool,
    said: Vec<Mapping>,
}

impl Said for RdFs {
    fn said(&mut self) -> &mut Vec<Mapping> {
        &mut self.said
    }
}

/// An rd's keys over a tree (an rd over luns has its own, `rd.rs`).
pub(super) const RD_FS: &[Row<RdFs>] = &[
    row("fwd", Always(Exact("the file workloads"))),
    row("elapsed", Map(elapsed)),
    row("warmup", Map(warmup)),
    row("interval", Map(interval)),
    row("fwdrate", Map(fwdrate_key)),
    row("format", Map(format)),
];

fn elapsed(p: &Opt, r: &mut RdFs, notes: &mut Notes) {
    match seconds(p) {
        Ok(s) => {
            r.elapsed = s;
            exact(&mut r.said, p, "duration");
        }
        Err(e) => p.refuse(notes, e),
    }
}

fn warmup(p: &Opt, r: &mut RdFs, notes: &mut Notes) {
    match seconds(p) {
        Ok(s) => {
            r.warmup = Some(s);
            exact(&mut r.said, p, "warmup");
        }
        Err(e) => p.refuse(notes, e),
    }
}

fn interval(p: &Opt, r: &mut RdFs, notes: &mut Notes) {
    match seconds(p) {
        Ok(s) => {
            r.interval = Some(s);
            exact(&mut r.said, p, "interval");
        }
        Err(e) => p.refuse(notes, e),
    }
}

fn fwdrate_key(p: &Opt, r: &mut RdFs, notes: &mut Notes) {
    r.rates = fwdrate(p, &mut r.said, notes);
}

fn format(p: &Opt, r: &mut RdFs, notes: &mut Notes) {
    match p.val().trim() {
        "yes" => {
            r.format = true;
            noted(
                &mut r.said,
                p,
                "a create phase over the tree before the run (vdbench's format is untimed; \
                 reported apart here)",
            );
        }
        "no" => exact(&mut r.said, p, "the tree is used as it is"),
        "restart" => {
            r.format = true;
            r.restart = true;
            noted(
                &mut r.said,
                p,
                "a create phase over the tree before the run with keep_complete = true: each \
                 file already there at its full size is kept, the missing and short ones made \
                 (a short one made again whole rather than extended); the phase counts the \
                 files it made (result.json ops[].kept the others)",
            );
        }
        _ => notes.unsupported(&p.at, &p.text(), "format= other than yes, no or restart"),
    }
}

/// The weighted mix of the fwds' operations: two fwds of one operation
/// are one weight; fwds without skew= share what the others leave, evenly
/// (as vdbench).
fn mix(fwds: &[Fwd], rd: &Def, notes: &mut Notes) -> Vec<(&'static str, u64)> {
    let mut merged: Vec<(&'static str, u64)> = Vec::new();
    for f in fwds {
        let Some(o) = f.op else { continue };
        let w = f.skew.unwrap_or(0);
        match merged.iter_mut().find(|(x, _)| *x == o) {
            Some(e) if e.1 > 0 && w > 0 => e.1 += w,
            Some(_) => notes.unsupported(
                &rd.at,
                &format!("rd={}", rd.name),
                "two fwds of one operation, one without skew=",
            ),
            None => merged.push((o, w)),
        }
    }
    let given: u64 = merged.iter().map(|(_, s)| s).sum();
    let free = merged.iter().filter(|(_, s)| *s == 0).count() as u64;
    for (_, s) in merged.iter_mut().filter(|(_, s)| *s == 0) {
        *s = (100u64.saturating_sub(given) / free.max(1)).max(1);
    }
    merged
}

/// `fwdrate=`: max, one rate or a list (one run per rate), in operations
/// per second over the rd's threads.
fn fwdrate(p: &Opt, m: &mut Vec<Mapping>, notes: &mut Notes) -> Vec<Option<f64>> {
    let v = p.val().trim().to_ascii_lowercase();
    if v == "max" {
        exact(m, p, "as fast as it goes");
        return vec![None];
    }
    if v == "curve" {
        notes.unsupported(
            &p.at,
            &p.text(),
            "a curve over a tree (a run with ops takes one rate; give fwdrate=(r1,r2,...))",
        );
        return vec![None];
    }
    let list = items(&v);
    let mut rates = Vec::new();
    for x in &list {
        let r = x
            .parse::<f64>()
            .map_err(|_| format!("'{x}' is not a rate (operations per second) nor max"))
            .and_then(|r| {
                bounds::number("the rate", r, bounds::MIN_RATE, bounds::MAX_RATE)
                    .map_err(|e| e.message)
            });
        match r {
            Ok(r) => rates.push(Some(r)),
            Err(e) => {
                notes.refuse(&p.at, &p.text(), e);
                return vec![None];
            }
        }
    }
    if rates.is_empty() || rates.len() > bounds::MAX_SWEEP_POINTS {
        notes.refuse(
            &p.at,
            &p.text(),
            format!("max, or 1..{} rates", bounds::MAX_SWEEP_POINTS),
        );
        return vec![None];
    }
    exact(
        m,
        p,
        if rates.len() > 1 {
            "rate: operations per second over all threads, one run per rate in order"
        } else {
            "rate: operations per second over all threads"
        },
    );
    rates
}

/// One rd with fwd=: its format phase, then its mix (or shape phase) at
/// each of its rates: each run (without the tree's keys) and how its keys
/// were mapped.
fn one_rd(
    rd: &Def,
    fwds: &[Def],
    runs: &mut Vec<(RunEntry, Vec<Mapping>)>,
    interval: &mut Option<f64>,
    formatted: &mut bool,
    notes: &mut Notes,
) {
    let Some(fp) = rd.get("fwd") else {
        notes.unsupported(&rd.at, &format!("rd={}", rd.name), "an rd without fwd=");
        return;
    };
    let Some(chosen) = super::parse::named(fwds, fp, "fwd", notes) else {
        return;
    };
    let mut m = Vec::new();
    let read: Vec<Fwd> = chosen.iter().map(|w| read_fwd(w, &mut m, notes)).collect();
    let threads: u64 = read.iter().map(|f| f.threads).sum();
    let mix = mix(&read, rd, notes);
    let mut r = RdFs {
        elapsed: 30.0,
        warmup: None,
        interval: None,
        rates: vec![None],
        format: false,
        restart: false,
        said: Vec::new(),
    };
    for p in &rd.params {
        table::read(RD_FS, p, &mut r, notes, "rd parameter with fwd=");
    }
    if r.interval.is_some() {
        *interval = r.interval;
    }
    m.append(&mut r.said);
    let name = run_name(&rd.name);
    if r.format && *formatted {
        notes.unsupported(
            &rd.at,
            &format!("rd={} format=yes", rd.name),
            "formatting the tree a second time (vdbench deletes and re-creates it)",
        );
    }
    *formatted |= r.format;
    if r.format {
        let mut run = RunEntry::named(&format!("{name}-format"));
        if r.restart {
            run.keep_complete = value(true);
        }
        run.ops = value("create");
        run.threads = value(threads);
        runs.push((run, Vec::new()));
    }
    let shape_op = mix.iter().find(|(o, _)| on_shape(o)).map(|(o, _)| *o);
    if let Some(o) = shape_op.filter(|_| mix.len() > 1) {
        notes.unsupported(
            &rd.at,
            &format!("rd={}", rd.name),
            &format!("{o} beside other operations (volbench runs {o} as a phase over the tree, on its own)"),
        );
        return;
    }
    // vdbench leaves the first interval out of its totals.
    let warmup = r.warmup.or(r.interval).unwrap_or(1.0);
    let ops = match shape_op {
        Some(o) => o.to_string(),
        None => mix
            .iter()
            .map(|(o, w)| format!("{o}:{w}"))
            .collect::<Vec<_>>()
            .join(","),
    };
    for rate in &r.rates {
        let mut run_name = name.clone();
        if r.rates.len() > 1 {
            match rate {
                Some(x) => run_name.push_str(&format!("-{}ops", bounds::short(*x))),
                None => run_name.push_str("-max"),
            }
        }
        let mut run = RunEntry::named(&run_name);
        run.ops = value(ops.as_str());
        run.threads = value(threads);
        run.duration = value(secs_text(r.elapsed));
        // A phase covers the tree once; only a timed mix warms up.
        if shape_op.is_none() {
            run.warmup = value(secs_text(warmup));
        }
        run.rate = rate.and_then(value);
        runs.push((run, dedup(m.clone())));
    }
}
