//! vdbench's definitions as a suite: hosts and their luns, one run per
//! point of each rd's for-loops (threads, transfer sizes, read and seek
//! percentages, and rates: an `iorate=` list is one run per rate, as
//! vdbench runs it).
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::collections::BTreeSet;
use std::path::Path;

use super::super::{Draft, DraftRun, How, Mapping, Notes, PathMap, run_name};
use super::defs::{Sd, hosts_and_sds};
use super::parse::{Def, Param, exact, items, wildcard, with_defaults, xfersize};
use super::rd::{Loops, rd_loops};
use crate::error::{Result, VbError};
use crate::spec::Pattern;
use crate::units::bounds;

/// vdbench's default threads= of an sd.
const VDBENCH_SD_THREADS: u64 = 8;

/// What holds for the whole suite, gathered over its rds.
#[derive(Default)]
struct Suite {
    global: Vec<Mapping>,
    write_sync: Option<&'static str>,
    runs: Vec<DraftRun>,
    fill: super::fill::Fill,
    /// The sds the runs use, and the rd that first named them.
    used: Option<(Vec<String>, String)>,
    direct: Option<bool>,
    interval: Option<f64>,
}

/// A wd's parameters: what each run of an rd does.
struct Workload {
    rdpct: u64,
    seek: String,
    bs: Vec<(u64, u32)>,
    sd_pat: Vec<String>,
    zones: Option<String>,
    direct: bool,
}

pub(super) fn translate(
    origin: &str,
    defs: &[Def],
    map: &PathMap,
    notes: &mut Notes,
) -> Result<Draft> {
    let mut su = Suite::default();
    let mut data: Vec<(&'static str, String)> = Vec::new();
    let (hosts, sds) = hosts_and_sds(
        defs,
        map,
        notes,
        &mut su.global,
        &mut su.write_sync,
        &mut data,
    );
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
    let threads = su.runs.first().map_or(1, |r| r.threads);
    let luns = super::place::Luns {
        chosen: &chosen,
        size,
        threads,
        local,
    };
    let (target, draft_hosts) = super::place::place(origin, &hosts, &luns, &mut su.global, notes)?;
    notes.check()?;
    Ok(Draft {
        name: run_name(
            Path::new(origin.split(' ').next().unwrap_or("vdbench"))
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "vdbench".into())
                .as_str(),
        ),
        source: format!("vdbench parameters {origin}"),
        target,
        size,
        files: Some(1),
        fill_bs,
        threads_total: false,
        direct: su.direct.unwrap_or(false),
        write_sync: su.write_sync,
        data,
        engine: Some(crate::spec::EngineKind::Psync.name()),
        interval_s: su.interval,
        seed: None,
        hosts: draft_hosts,
        global: super::super::dedup(su.global),
        runs: su.runs,
        tree: None,
    })
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
    let Some(wd) = super::skew::combine(&chosen, notes, &wdp.at, &wdp.text()) else {
        return;
    };
    let mut m: Vec<Mapping> = Vec::new();
    let mut w = workload(&wd, &mut m, notes, &mut su.write_sync);
    if let Some(p) = rd.get("sd") {
        w.sd_pat = items(&p.value);
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

/// A wd's parameters, each mapped or refused.
fn workload(
    wd: &Def,
    m: &mut Vec<Mapping>,
    notes: &mut Notes,
    write_sync: &mut Option<&'static str>,
) -> Workload {
    let mut w = Workload {
        rdpct: 100,
        seek: "random".into(),
        bs: vec![(4096, 1)],
        sd_pat: Vec::new(),
        zones: None,
        direct: false,
    };
    let mut wd_rate: Option<&Param> = None;
    for p in &wd.params {
        let t = p.text();
        match p.key.as_str() {
            "sd" => w.sd_pat = items(&p.value),
            "rdpct" | "wrpct" => match p.value.parse::<u64>() {
                Ok(v) if v <= 100 && p.key == "rdpct" => {
                    w.rdpct = v;
                    exact(m, p, "read_pct");
                }
                Ok(v) if v <= 100 => {
                    w.rdpct = 100 - v;
                    exact(m, p, "read_pct = 100 - this");
                }
                _ => notes.refuse(&p.at, &t, "must be 0..100"),
            },
            "seekpct" => match p.value.to_ascii_lowercase().as_str() {
                "0" | "seq" | "sequential" => w.seek = "seq".into(),
                "100" | "random" => w.seek = "random".into(),
                "eof" => w.seek = "eof".into(),
                n if n.parse::<u8>().is_ok_and(|n| n < 100) => w.seek = n.into(),
                _ => notes.refuse(&p.at, &t, "seekpct is 0..100, seq, random or eof"),
            },
            "xfersize" => match xfersize(&p.value) {
                Ok(x) => {
                    w.bs = x;
                    exact(m, p, "bs");
                }
                Err(e) => notes.refuse(&p.at, &t, e),
            },
            "iorate" => wd_rate = Some(p),
            "openflags" => super::flags::openflags(
                notes,
                &p.at,
                &t,
                &items(&p.value),
                &mut w.direct,
                write_sync,
            ),
            k if k == super::skew::ZONES_KEY => {
                m.push(Mapping {
                    at: p.at.clone(),
                    option: format!("skew=/hotband= of wd={}", wd.name),
                    how: How::Note(format!("distribution = \"{}\" (each band's share of the I/O, the rest spread by width; within a band vdbench favours its low end, volbench spreads evenly)", p.value)),
                });
                w.zones = Some(p.value.clone());
            }
            _ => super::keys::judge("wd", p, m, notes),
        }
    }
    if let Some(p) = wd_rate {
        notes.unsupported(&p.at, &p.text(), "a workload's share of the run's rate");
    }
    w
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
        let local = self.local;
        let warmup = l.warmup.unwrap_or(l.interval);
        let run = DraftRun {
            name: run_name(&name),
            rw,
            read_pct: pct,
            bs: run_bs,
            threads: th,
            iodepth: 1,
            files: None,
            rate: p.rate.map(|r| if local { r } else { r / total_sds }),
            arrivals: l.arrivals,
            duration_s: l.elapsed,
            warmup_s: if sk == "eof" { 0.0 } else { warmup },
            io_limit,
            curve: l.curve.clone(),
            shape: seek_pct
                .map(|n| ("seek_pct", n.to_string()))
                .into_iter()
                .chain(
                    self.w
                        .zones
                        .as_ref()
                        .map(|z| ("distribution", format!("\"{z}\""))),
                )
                .collect(),
            notes: notes_here,
            replay: None,
        };
        if su.fill.takes(sk, pct, &run.bs, wd, notes) {
            su.fill.runs.push(run);
        } else {
            su.runs.push(run);
        }
    }
}
