//! vdbench's definitions as a suite: hosts and their luns, one run per
//! point of each rd's for-loops (threads, transfer sizes, read and seek
//! percentages, and rates: an `iorate=` list is one run per rate, as
//! vdbench runs it).
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::collections::BTreeSet;

use super::super::{How, Imported, Mapping, Notes, PathMap, arrivals_value, bs_text, dedup};
use super::super::{file_name, run_name, secs_text, size_text};
use super::defs::{Defs, Sd, hosts_and_sds};
use super::parse::{Def, items, wildcard, with_defaults, xfersize};
use super::rd::{Loops, rd_loops};
use super::wd::{Workload, workload};
use crate::error::{Result, VbError};
use crate::input::suite::write::{count_of, value};
use crate::input::suite::{Defaults, Param, RunEntry, SuiteFile};
use crate::spec::{Pattern, TableKind};
use crate::units::bounds;

/// vdbench's default threads= of an sd.
const VDBENCH_SD_THREADS: u64 = 8;

/// What holds for the whole suite, gathered over its rds.
#[derive(Default)]
struct Suite {
    global: Vec<Mapping>,
    write_sync: Option<&'static str>,
    /// Each run and how its keys were mapped.
    runs: Vec<(RunEntry, Vec<Mapping>)>,
    fill: super::fill::Fill,
    /// The sds the runs use, and the rd that first named them.
    used: Option<(Vec<String>, String)>,
    direct: Option<bool>,
    interval: Option<f64>,
}

pub(super) fn translate(
    origin: &str,
    defs: &[Def],
    map: &PathMap,
    notes: &mut Notes,
) -> Result<Imported> {
    let mut su = Suite::default();
    let Defs { hosts, sds, data } =
        hosts_and_sds(defs, map, notes, &mut su.global, &mut su.write_sync);
    notes.check()?;
    // No hosts anywhere: every sd is on this machine, a list of local targets
    // whose rate is the run's total, as vdbench's iorate is.
    let local = hosts.is_empty() && sds.iter().all(|s| s.host.is_none());
    let wds: Vec<Def> = defs
        .iter()
        .enumerate()
        .filter(|(_, d)| d.kind == "wd" && d.name != "default")
        .map(|(i, _)| with_defaults(defs, i))
        .collect();
    for (i, d) in defs.iter().enumerate() {
        if d.kind == "rd" && d.name != "default" {
            one_rd(&with_defaults(defs, i), &wds, &sds, local, &mut su, notes);
        }
    }
    let fill_bs = su.fill.bs;
    let fill_threads = su.fill.threads;
    let fill = std::mem::take(&mut su.fill);
    fill.settle(&mut su.runs, &mut su.global);
    notes.check()?;
    let Some((used, _)) = su.used.take() else {
        return Err(VbError::input(format!("{origin}: no rd= run definitions")));
    };
    let chosen: Vec<&Sd> = sds.iter().filter(|s| used.contains(&s.name)).collect();
    let sizes: BTreeSet<Option<u64>> = chosen.iter().map(|s| s.size).collect();
    if sizes.len() > 1 {
        notes.unsupported(origin, "sd= sizes", "luns of different sizes in one suite");
    }
    let size = sizes.into_iter().next().flatten();
    // The first run's threads: each lun's, when they run as a list.
    let threads = su
        .runs
        .first()
        .and_then(|(r, _)| count_of(&r.threads))
        .unwrap_or(1);
    let luns = super::place::Luns {
        chosen: &chosen,
        size,
        threads,
        local,
    };
    let (target, hosts) = super::place::place(origin, &hosts, &luns, &mut su.global, notes)?;
    notes.check()?;
    let mut suite = SuiteFile::new(
        &file_name(origin.split(' ').next().unwrap_or("vdbench"), "vdbench"),
        &format!("vdbench parameters {origin}"),
        TableKind::Patterns,
        // vdbench runs no discarded warm-up run of its own.
        false,
    );
    suite.defaults = Defaults {
        size: size.map(size_text).and_then(value),
        files: value(1u64),
        fill_bs: fill_bs.map(size_text).and_then(value),
        fill_threads: fill_threads.and_then(value),
        direct: value(su.direct.unwrap_or(false)),
        write_sync: su.write_sync.and_then(value),
        engine: value(crate::spec::EngineKind::Psync.name()),
        interval: su.interval.map(secs_text).and_then(value),
        ..data
    };
    let mut imp = Imported::new(suite, target);
    imp.hosts = hosts;
    imp.said = dedup(su.global);
    for (run, said) in su.runs {
        imp.push_run(run, said);
    }
    Ok(imp)
}

/// One rd: its workload, its loops, then one run per point.
fn one_rd(rd: &Def, wds: &[Def], sds: &[Sd], local: bool, su: &mut Suite, notes: &mut Notes) {
    let rd_opt = format!("rd={}", rd.name);
    let Some(wdp) = rd.get("wd") else {
        notes.unsupported(&rd.at, &rd_opt, "a run without wd=");
        return;
    };
    let Some(chosen) = super::parse::named(wds, wdp, "wd", notes) else {
        return;
    };
    // Several wds at once (skew=) and hotbands: one workload.
    let Some((wd, zones, mix)) = super::skew::combine(&chosen, notes, &wdp.at, &wdp.text()) else {
        return;
    };
    let mut m: Vec<Mapping> = Vec::new();
    let zones = zones.map(|z| (z, wdp.at.clone()));
    let mut w = workload(&wd, zones, &mut m, notes, &mut su.write_sync);
    // The wds' skews weigh their reads and sizes into one workload.
    if let Some(mix) = mix {
        w.rdpct = mix.read_pct;
        w.bs = mix.bs;
        m.push(mix.said);
    }
    if let Some(p) = rd.get("sd") {
        w.sd_pat = items(p.val());
    }
    let mut names: Vec<String> = sds
        .iter()
        .filter(|s| w.sd_pat.iter().any(|p| wildcard(p, &s.name)))
        .map(|s| s.name.clone())
        .collect();
    names.sort();
    if names.is_empty() {
        notes.refuse(
            &wd.at,
            &format!("wd={}", wd.name),
            "its sd= matches no sd defined before",
        );
        return;
    }
    let loops = rd_loops(rd, &mut m, notes, &mut su.write_sync);
    if loops.skip {
        return;
    }
    // One set of luns for the whole suite: volbench's runs share their targets.
    match &su.used {
        None => su.used = Some((names.clone(), rd.at.clone())),
        Some((u, at)) if *u != names => notes.unsupported(
            &rd.at,
            &rd_opt,
            &format!("a different set of sds from the run at {at} (import them apart)"),
        ),
        _ => {}
    }
    let chosen_sds: Vec<&Sd> = sds.iter().filter(|s| names.contains(&s.name)).collect();
    let run_direct = w.direct || loops.direct || chosen_sds.iter().all(|s| s.direct);
    if chosen_sds.iter().any(|s| s.direct) != chosen_sds.iter().all(|s| s.direct) {
        notes.unsupported(&rd.at, &rd_opt, "o_direct on some sds only");
    }
    match su.direct {
        None => su.direct = Some(run_direct),
        Some(d) if d != run_direct => {
            notes.unsupported(&rd.at, &rd_opt, "o_direct in some runs only")
        }
        _ => {}
    }
    match su.interval {
        None => su.interval = Some(loops.interval),
        Some(x) if x != loops.interval => {
            notes.unsupported(&rd.at, &rd_opt, "a different interval per run")
        }
        _ => {}
    }
    let run = Run {
        rd,
        wd: &wd,
        w: &w,
        loops: &loops,
        sds: &chosen_sds,
        local,
    };
    run.points(m, su, notes);
}

/// One rd's runs: its workload and loops over its sds.
struct Run<'a> {
    rd: &'a Def,
    wd: &'a Def,
    w: &'a Workload,
    loops: &'a Loops,
    sds: &'a [&'a Sd],
    local: bool,
}

/// One point of an rd's loops, as written in the file.
struct Point<'a> {
    threads: &'a str,
    size: Option<&'a String>,
    pct: &'a str,
    seek: &'a str,
    rate: Option<f64>,
}

impl Run<'_> {
    fn points(&self, mut m: Vec<Mapping>, su: &mut Suite, notes: &mut Notes) {
        let (rd, l) = (self.rd, self.loops);
        let rd_opt = format!("rd={}", rd.name);
        let sd_cap = self.sds.iter().filter_map(|s| s.threads).min();
        let threads = l.threads.clone().unwrap_or_else(|| {
            // With no threads= in the rd, vdbench runs each sd with the
            // sd's own threads=, 8 when that is not given either.
            let th = sd_cap.unwrap_or(VDBENCH_SD_THREADS);
            m.push(Mapping {
                at: rd.at.clone(),
                option: format!("{rd_opt} (no threads=)"),
                how: How::Exact(format!(
                    "threads = {th}: the sd's threads= ({VDBENCH_SD_THREADS} when not set), as vdbench"
                )),
            });
            vec![th.to_string()]
        });
        if l.warmup.is_none() {
            m.push(Mapping {
                at: rd.at.clone(),
                option: format!("{rd_opt} (no warmup=)"),
                how: How::Exact(
                    "warmup = one interval, which vdbench leaves out by default".into(),
                ),
            });
        }
        for r in l.rates.iter().flatten() {
            let n = self.sds.len();
            m.push(Mapping {
                at: rd.at.clone(),
                option: format!("iorate={r}"),
                how: How::Exact(if self.local {
                    format!("rate = {r}, over all {n} sds")
                } else {
                    format!("rate per target per host: {r} across all {n} sds")
                }),
            });
        }
        let seeks = l.seeks.clone().unwrap_or_else(|| vec![self.w.seek.clone()]);
        let pcts = l
            .pcts
            .clone()
            .unwrap_or_else(|| vec![self.w.rdpct.to_string()]);
        let sizes: Vec<Option<&String>> = match &l.sizes {
            Some(v) => v.iter().map(Some).collect(),
            None => vec![None],
        };
        // Each point is a run: refused here, by name, rather than written
        // as a suite no run takes (bounds::MAX_RUNS, as for the flags).
        let points = [
            threads.len(),
            sizes.len(),
            pcts.len(),
            seeks.len(),
            l.rates.len(),
        ]
        .into_iter()
        .fold(1usize, usize::saturating_mul);
        if points > bounds::MAX_RUNS {
            notes.refuse(
                &rd.at,
                &rd_opt,
                format!(
                    "its lists make {points} runs, more than {} in one job",
                    bounds::MAX_RUNS
                ),
            );
            return;
        }
        let many = (
            threads.len() > 1,
            sizes.len() > 1,
            pcts.len() > 1,
            seeks.len() > 1,
            l.rates.len() > 1,
        );
        for t in &threads {
            for x in &sizes {
                for pc in &pcts {
                    for sk in &seeks {
                        for r in &l.rates {
                            let p = Point {
                                threads: t,
                                size: *x,
                                pct: pc,
                                seek: sk,
                                rate: *r,
                            };
                            self.point(&p, many, sd_cap, &m, su, notes);
                        }
                    }
                }
            }
        }
    }

    /// The run of one point, set aside when it is the suite's fill.
    fn point(
        &self,
        p: &Point,
        many: (bool, bool, bool, bool, bool),
        sd_cap: Option<u64>,
        m: &[Mapping],
        su: &mut Suite,
        notes: &mut Notes,
    ) {
        let (rd, wd, l) = (self.rd, self.wd, self.loops);
        let rd_opt = format!("rd={}", rd.name);
        let max = bounds::MAX_THREADS;
        let Some(mut th) = p
            .threads
            .parse::<u64>()
            .ok()
            .filter(|t| (1..=max).contains(t))
        else {
            notes.refuse(
                &rd.at,
                &rd_opt,
                format!("threads '{}' is not a whole number in 1..{max}", p.threads),
            );
            return;
        };
        let mut notes_here = m.to_vec();
        if let Some(cap) = sd_cap.filter(|cap| th > *cap) {
            notes_here.push(Mapping {
                at: rd.at.clone(),
                option: format!("threads={th}"),
                how: How::Exact(format!("capped at the sd's threads={cap}")),
            });
            th = cap;
        }
        let Ok(pct) = p.pct.parse::<u8>() else {
            notes.refuse(&rd.at, &rd_opt, format!("rdpct '{}' is not 0..100", p.pct));
            return;
        };
        let pct = pct.min(100);
        let sk = p.seek;
        let seek_pct = sk.parse::<u8>().ok().filter(|n| (1..100).contains(n));
        let random = match sk {
            "random" | "100" => true,
            "seq" | "sequential" | "0" | "eof" => false,
            _ if seek_pct.is_some() => true,
            other => {
                notes.unsupported(
                    &rd.at,
                    &format!("forseekpct {other}"),
                    "a partial seek percentage",
                );
                return;
            }
        };
        let rw = match (random, pct) {
            (true, 100) => Pattern::Randread,
            (true, 0) => Pattern::Randwrite,
            (true, _) => Pattern::Randrw,
            (false, 100) => Pattern::Read,
            (false, 0) => Pattern::Write,
            (false, _) => Pattern::Rw,
        };
        let run_bs = match p.size {
            Some(s) => match xfersize(s) {
                Ok(b) => b,
                Err(e) => {
                    notes.refuse(&rd.at, &format!("forxfersize {s}"), e);
                    return;
                }
            },
            None => self.w.bs.clone(),
        };
        let mut io_limit = None;
        if sk == "eof" {
            io_limit = self.sds.iter().filter_map(|s| s.size).max();
            notes_here.push(Mapping {
                at: wd.at.clone(),
                option: "seekpct=eof".into(),
                how: How::Exact(
                    "one sequential pass to the end of each target: io_limit = its size".into(),
                ),
            });
        } else if !random && th > 1 {
            notes_here.push(Mapping {
                at: wd.at.clone(),
                option: format!("seekpct=0 with threads={th}"),
                how: How::Note("vdbench's threads share one sequential stream per sd; volbench's threads each stream through their own part of it".into()),
            });
        }
        let mut name = rd.name.clone();
        if many.0 {
            name.push_str(&format!("-{th}t"));
        }
        if let (Some(s), true) = (p.size, many.1) {
            name.push_str(&format!("-{s}"));
        }
        if many.2 {
            name.push_str(&format!("-{pct}r"));
        }
        if many.3 {
            name.push_str(&format!("-{}", if random { "rand" } else { "seq" }));
        }
        if many.4 {
            match p.rate {
                Some(r) => name.push_str(&format!("-{}iops", bounds::short(r))),
                None => name.push_str("-max"),
            }
        }
        let total_sds = self.sds.len().max(1) as f64;
        let warmup = l.warmup.unwrap_or(l.interval);
        let mut run = RunEntry::named(&run_name(&name));
        run.rw = value(rw.name());
        if rw.is_mixed() {
            run.read_pct = value(u64::from(pct));
        }
        run.bs = value(bs_text(&run_bs));
        run.threads = value(th);
        run.iodepth = value(1u64);
        run.rate = p
            .rate
            .map(|r| if self.local { r } else { r / total_sds })
            .and_then(value);
        run.arrivals = l.arrivals.and_then(arrivals_value);
        run.duration = value(secs_text(l.elapsed));
        run.warmup = value(secs_text(if sk == "eof" { 0.0 } else { warmup }));
        run.io_limit = io_limit.map(size_text).and_then(value);
        run.seek_pct = seek_pct.map(u64::from).and_then(value);
        run.distribution = self.w.zones.as_deref().and_then(value);
        run.curve = l
            .curve
            .as_ref()
            .map(|c| c.iter().map(|p| Param::from(*p)).collect::<Vec<Param>>())
            .and_then(value);
        if su.fill.takes(sk, pct, &run_bs, th, wd, notes) {
            su.fill.runs.push((run, notes_here));
        } else {
            su.runs.push((run, notes_here));
        }
    }
}
