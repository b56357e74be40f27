//! vdbench's definitions as a suite: hosts and their luns, one run per
//! point of each rd's for-loops.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::collections::BTreeSet;
use std::path::Path;

use super::super::{Draft, DraftHost, DraftRun, How, Mapping, Notes, PathMap, run_name};
use super::defs::{Sd, hosts_and_sds};
use super::parse::{
    Def, Param, exact, for_list, items, noted, seconds, wildcard, with_defaults, xfersize,
};
use crate::error::{Result, VbError};
use crate::spec::{Arrivals, Pattern};

/// vdbench's default threads= of an sd.
const VDBENCH_SD_THREADS: u64 = 8;

#[allow(clippy::too_many_lines)]
pub(super) fn translate(
    origin: &str,
    defs: &[Def],
    map: &PathMap,
    notes: &mut Notes,
) -> Result<Draft> {
    let mut global: Vec<Mapping> = Vec::new();
    let mut write_sync: Option<&'static str> = None;
    let mut data: Vec<(&'static str, String)> = Vec::new();
    let (hosts, sds) = hosts_and_sds(defs, map, notes, &mut global, &mut write_sync, &mut data);
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
    let mut runs = Vec::new();
    let mut fill = super::fill::Fill::default();
    let mut used: Option<(Vec<String>, String)> = None;
    let mut direct = None;
    let mut interval = None;
    for (i, d) in defs.iter().enumerate() {
        if d.kind != "rd" || d.name == "default" {
            continue;
        }
        let rd = with_defaults(defs, i);
        let rd_opt = format!("rd={}", rd.name);
        let Some(wdp) = rd.get("wd") else {
            notes.unsupported(&rd.at, &rd_opt, "a run without wd=");
            continue;
        };
        let Some(chosen) = super::parse::named(&wds, wdp, "wd", notes) else {
            continue;
        };
        // Several wds at once (skew=) and hotbands: one workload.
        let Some(wd) = super::skew::combine(&chosen, notes, &wdp.at, &wdp.text()) else {
            continue;
        };
        let wd = &wd;
        let mut zones: Option<String> = None;
        let mut m: Vec<Mapping> = Vec::new();
        let mut rdpct = 100u64;
        let mut seek = "random".to_string();
        let mut bs = vec![(4096u64, 1u32)];
        let mut sd_pat: Vec<String> = Vec::new();
        let mut wd_rate: Option<&Param> = None;
        let mut openflag_direct = false;
        for p in &wd.params {
            let t = p.text();
            match p.key.as_str() {
                "sd" => sd_pat = items(&p.value),
                "rdpct" => match p.value.parse::<u64>() {
                    Ok(v) if v <= 100 => {
                        rdpct = v;
                        exact(&mut m, p, "read_pct");
                    }
                    _ => notes.refuse(&p.at, &t, "must be 0..100"),
                },
                "wrpct" => match p.value.parse::<u64>() {
                    Ok(v) if v <= 100 => {
                        rdpct = 100 - v;
                        exact(&mut m, p, "read_pct = 100 - this");
                    }
                    _ => notes.refuse(&p.at, &t, "must be 0..100"),
                },
                "seekpct" | "seek" => {
                    let v = p.value.to_ascii_lowercase();
                    match v.as_str() {
                        "0" | "seq" | "sequential" => seek = "seq".into(),
                        "100" | "random" => seek = "random".into(),
                        "eof" => seek = "eof".into(),
                        n if n.parse::<u8>().is_ok_and(|n| n < 100) => seek = n.into(),
                        _ => {
                            notes.refuse(&p.at, &t, "seekpct is 0..100, seq, random or eof");
                            continue;
                        }
                    }
                }
                "xfersize" => match xfersize(&p.value) {
                    Ok(x) => {
                        bs = x;
                        exact(&mut m, p, "bs");
                    }
                    Err(e) => notes.refuse(&p.at, &t, e),
                },
                "iorate" => wd_rate = Some(p),
                "openflags" => super::flags::openflags(
                    notes,
                    &p.at,
                    &t,
                    &items(&p.value),
                    &mut openflag_direct,
                    &mut write_sync,
                ),
                "host" | "hd" => noted(&mut m, p, "every host of the sd runs it"),
                k if k == super::skew::ZONES_KEY => {
                    m.push(Mapping {
                        at: p.at.clone(),
                        option: format!("skew=/hotband= of wd={}", wd.name),
                        how: How::Note(format!("distribution = \"{}\" (each band's share of the I/O, the rest spread by width; within a band vdbench favours its low end, volbench spreads evenly)", p.value)),
                    });
                    zones = Some(p.value.clone());
                }
                "rhpct" | "whpct" | "range" | "stride" | "priority" | "streams" => {
                    notes.unsupported(&p.at, &t, "cache hits, ranges, strides and streams")
                }
                _ => notes.refuse(
                    &p.at,
                    &t,
                    "not supported yet (no volbench equivalent of this wd parameter)",
                ),
            }
        }
        if let Some(p) = wd_rate {
            notes.unsupported(&p.at, &p.text(), "a workload's share of the run's rate");
        }
        if let Some(p) = rd.get("sd") {
            sd_pat = items(&p.value);
        }
        let mut names: Vec<String> = sds
            .iter()
            .filter(|s| sd_pat.iter().any(|p| wildcard(p, &s.name)))
            .map(|s| s.name.clone())
            .collect();
        names.sort();
        if names.is_empty() {
            notes.refuse(
                &wd.at,
                &format!("wd={}", wd.name),
                "its sd= matches no sd defined before",
            );
            continue;
        }
        let mut threads: Option<Vec<String>> = None;
        let mut fx: Option<Vec<String>> = None;
        let mut fr: Option<Vec<String>> = None;
        let mut fs: Option<Vec<String>> = None;
        let mut elapsed = 30.0;
        let mut warmup: Option<f64> = None;
        let mut rate: Option<f64> = None;
        let mut curve: Option<Vec<f64>> = None;
        let mut iorate_curve = false;
        let mut arrivals = None;
        let mut skip = false;
        let mut rd_interval = 1.0;
        for p in &rd.params {
            let t = p.text();
            match p.key.as_str() {
                "wd" | "sd" => exact(&mut m, p, "the workload and its luns"),
                "threads" | "forthreads" => match for_list(p) {
                    Ok(v) => {
                        threads = Some(v);
                        exact(&mut m, p, "threads per target (vdbench's threads per sd)");
                    }
                    Err(e) => notes.refuse(&p.at, &t, e),
                },
                "forxfersize" => match for_list(p) {
                    Ok(v) => {
                        fx = Some(v);
                        exact(&mut m, p, "one run per transfer size");
                    }
                    Err(e) => notes.refuse(&p.at, &t, e),
                },
                "forrdpct" => match for_list(p) {
                    Ok(v) => {
                        fr = Some(v);
                        exact(&mut m, p, "one run per read percentage");
                    }
                    Err(e) => notes.refuse(&p.at, &t, e),
                },
                "forseekpct" => match for_list(p) {
                    Ok(v) => {
                        fs = Some(v);
                        exact(&mut m, p, "one run per seek percentage");
                    }
                    Err(e) => notes.refuse(&p.at, &t, e),
                },
                "elapsed" | "warmup" | "interval" => match seconds(p) {
                    Ok(s) => {
                        match p.key.as_str() {
                            "elapsed" => elapsed = s,
                            "warmup" => warmup = Some(s),
                            _ => rd_interval = s,
                        }
                        exact(
                            &mut m,
                            p,
                            match p.key.as_str() {
                                "elapsed" => "duration",
                                "warmup" => "warmup (measured apart, left out of the totals)",
                                _ => "interval",
                            },
                        );
                    }
                    Err(e) => notes.refuse(&p.at, &t, e),
                },
                "iorate" => match p.value.to_ascii_lowercase().as_str() {
                    "max" => {
                        rate = None;
                        iorate_curve = false;
                        exact(&mut m, p, "as fast as it goes");
                    }
                    "curve" => {
                        iorate_curve = true;
                        exact(
                            &mut m,
                            p,
                            "a curve: the maximum first, then its percentages",
                        );
                    }
                    v => match v.parse::<f64>() {
                        Ok(r) if r > 0.0 && r.is_finite() => {
                            rate = Some(r);
                            iorate_curve = false;
                        }
                        _ => {
                            notes.unsupported(&p.at, &t, "iorate other than max, curve or a number")
                        }
                    },
                },
                "curve" => match items(&p.value).iter().map(|x| x.parse::<f64>()).collect() {
                    Ok(c) => {
                        curve = Some(c);
                        exact(&mut m, p, "curve percentages");
                    }
                    Err(_) => notes.refuse(&p.at, &t, "curve takes percentages"),
                },
                "distribution" => match p.value.as_str() {
                    "exponential" => arrivals = Some(Arrivals::Poisson),
                    "uniform" => arrivals = Some(Arrivals::Uniform),
                    _ => notes.unsupported(
                        &p.at,
                        &t,
                        "arrival distributions other than exponential and uniform",
                    ),
                },
                "format" => match p.value.to_ascii_lowercase().as_str() {
                    "no" | "yes" | "(yes)" | "restart" => noted(
                        &mut m,
                        p,
                        "volbench fills each file set once before its first run",
                    ),
                    "only" => {
                        noted(
                            &mut m,
                            p,
                            "volbench fills each file set before measuring: no run of its own",
                        );
                        skip = true;
                    }
                    _ => notes.unsupported(&p.at, &t, "this format= value"),
                },
                "openflags" => super::flags::openflags(
                    notes,
                    &p.at,
                    &t,
                    &items(&p.value),
                    &mut openflag_direct,
                    &mut write_sync,
                ),
                "pause" if seconds(p).ok() == Some(0.0) => {
                    exact(&mut m, p, "the next run starts at once, as in volbench")
                }
                "pause" | "maxdata" | "foriorate" | "forcompratio" | "forwss" | "forhitarea" => {
                    notes.unsupported(&p.at, &t, "this run parameter")
                }
                _ => notes.refuse(
                    &p.at,
                    &t,
                    "not supported yet (no volbench equivalent of this rd parameter)",
                ),
            }
        }
        if skip {
            continue;
        }
        // One set of luns for the whole suite: volbench's runs share their targets.
        let sd_list = names.clone();
        match &used {
            None => used = Some((sd_list, rd.at.clone())),
            Some((u, at)) if *u != sd_list => notes.unsupported(
                &rd.at,
                &rd_opt,
                &format!("a different set of sds from the run at {at} (import them apart)"),
            ),
            _ => {}
        }
        let chosen_sds: Vec<&Sd> = sds.iter().filter(|s| names.contains(&s.name)).collect();
        let run_direct = openflag_direct || chosen_sds.iter().all(|s| s.direct);
        if chosen_sds.iter().any(|s| s.direct) != chosen_sds.iter().all(|s| s.direct) {
            notes.unsupported(&rd.at, &rd_opt, "o_direct on some sds only");
        }
        match direct {
            None => direct = Some(run_direct),
            Some(d) if d != run_direct => {
                notes.unsupported(&rd.at, &rd_opt, "o_direct in some runs only")
            }
            _ => {}
        }
        match interval {
            None => interval = Some(rd_interval),
            Some(x) if x != rd_interval => {
                notes.unsupported(&rd.at, &rd_opt, "a different interval per run")
            }
            _ => {}
        }
        let sd_cap = chosen_sds.iter().filter_map(|s| s.threads).min();
        let threads = threads.unwrap_or_else(|| {
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
        let total_sds = chosen_sds.len().max(1) as f64;
        let warmup_s = match warmup {
            Some(w) => w,
            None => {
                m.push(Mapping {
                    at: rd.at.clone(),
                    option: format!("{rd_opt} (no warmup=)"),
                    how: How::Exact(
                        "warmup = one interval, which vdbench leaves out by default".into(),
                    ),
                });
                rd_interval
            }
        };
        if iorate_curve && curve.is_none() {
            curve = Some(vec![10.0, 50.0, 70.0, 80.0, 90.0, 100.0]);
        }
        if let Some(r) = rate {
            m.push(Mapping {
                at: rd.at.clone(),
                option: format!("iorate={r}"),
                how: How::Exact(if local {
                    format!("rate = {r}, over all {} sds", chosen_sds.len())
                } else {
                    format!(
                        "rate per target per host: {r} across all {} sds",
                        chosen_sds.len()
                    )
                }),
            });
        }
        let seeks = fs.clone().unwrap_or_else(|| vec![seek.clone()]);
        let pcts = fr.clone().unwrap_or_else(|| vec![rdpct.to_string()]);
        let sizes: Vec<Option<String>> = match &fx {
            Some(v) => v.iter().cloned().map(Some).collect(),
            None => vec![None],
        };
        // Each point is a run: refused here, by name, rather than written
        // as a suite no run takes (bounds::MAX_RUNS, as for the flags).
        let points = [threads.len(), sizes.len(), pcts.len(), seeks.len()]
            .into_iter()
            .fold(1usize, usize::saturating_mul);
        if points > crate::units::bounds::MAX_RUNS {
            notes.refuse(
                &rd.at,
                &rd_opt,
                format!(
                    "its lists make {points} runs, more than {} in one job",
                    crate::units::bounds::MAX_RUNS
                ),
            );
            continue;
        }
        for t in &threads {
            for x in &sizes {
                for pc in &pcts {
                    for sk in &seeks {
                        let max = crate::units::bounds::MAX_THREADS;
                        let Some(mut th) = t.parse::<u64>().ok().filter(|t| (1..=max).contains(t))
                        else {
                            notes.refuse(
                                &rd.at,
                                &rd_opt,
                                format!("threads '{t}' is not a whole number in 1..{max}"),
                            );
                            continue;
                        };
                        if let Some(cap) = sd_cap
                            && th > cap
                        {
                            m.push(Mapping {
                                at: rd.at.clone(),
                                option: format!("threads={th}"),
                                how: How::Exact(format!("capped at the sd's threads={cap}")),
                            });
                            th = cap;
                        }
                        let Ok(pct) = pc.parse::<u8>() else {
                            notes.refuse(&rd.at, &rd_opt, format!("rdpct '{pc}' is not 0..100"));
                            continue;
                        };
                        let pct = pct.min(100);
                        let seek_pct = sk.parse::<u8>().ok().filter(|n| (1..100).contains(n));
                        let random = match sk.as_str() {
                            "random" | "100" => true,
                            "seq" | "sequential" | "0" | "eof" => false,
                            _ if seek_pct.is_some() => true,
                            other => {
                                notes.unsupported(
                                    &rd.at,
                                    &format!("forseekpct {other}"),
                                    "a partial seek percentage",
                                );
                                continue;
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
                        let run_bs = match x {
                            Some(s) => match xfersize(s) {
                                Ok(b) => b,
                                Err(e) => {
                                    notes.refuse(&rd.at, &format!("forxfersize {s}"), e);
                                    continue;
                                }
                            },
                            None => bs.clone(),
                        };
                        let mut notes_here = m.clone();
                        let mut io_limit = None;
                        if sk == "eof" {
                            let size = chosen_sds.iter().filter_map(|s| s.size).max();
                            io_limit = size;
                            notes_here.push(Mapping {
                                at: wd.at.clone(),
                                option: "seekpct=eof".into(),
                                how: How::Exact("one sequential pass to the end of each target: io_limit = its size".into()),
                            });
                        } else if !random && th > 1 {
                            notes_here.push(Mapping {
                                at: wd.at.clone(),
                                option: format!("seekpct=0 with threads={th}"),
                                how: How::Note("vdbench's threads share one sequential stream per sd; volbench's threads each stream through their own part of it".into()),
                            });
                        }
                        let mut name = rd.name.clone();
                        if threads.len() > 1 {
                            name.push_str(&format!("-{th}t"));
                        }
                        if let (Some(s), true) = (x, sizes.len() > 1) {
                            name.push_str(&format!("-{s}"));
                        }
                        if pcts.len() > 1 {
                            name.push_str(&format!("-{pct}r"));
                        }
                        if seeks.len() > 1 {
                            name.push_str(&format!("-{}", if random { "rand" } else { "seq" }));
                        }
                        let to = if fill.takes(sk, pct, &run_bs, wd, notes) {
                            &mut fill.runs
                        } else {
                            &mut runs
                        };
                        to.push(DraftRun {
                            name: run_name(&name),
                            rw,
                            read_pct: pct,
                            bs: run_bs,
                            threads: th,
                            iodepth: 1,
                            files: None,
                            rate: rate.map(|r| if local { r } else { r / total_sds }),
                            arrivals,
                            duration_s: elapsed,
                            warmup_s: if sk == "eof" { 0.0 } else { warmup_s },
                            io_limit,
                            curve: curve.clone(),
                            shape: seek_pct
                                .map(|n| ("seek_pct", n.to_string()))
                                .into_iter()
                                .chain(zones.as_ref().map(|z| ("distribution", format!("\"{z}\""))))
                                .collect(),
                            notes: notes_here,
                        });
                    }
                }
            }
        }
    }
    let fill_bs = fill.bs;
    fill.settle(&mut runs, &mut global);
    notes.check()?;
    let Some((used, _)) = used else {
        return Err(VbError::input(format!("{origin}: no rd= run definitions")));
    };
    let chosen: Vec<&Sd> = sds.iter().filter(|s| used.contains(&s.name)).collect();
    let sizes: BTreeSet<Option<u64>> = chosen.iter().map(|s| s.size).collect();
    if sizes.len() > 1 {
        notes.unsupported(origin, "sd= sizes", "luns of different sizes in one suite");
    }
    let size = sizes.into_iter().next().flatten();
    let target_of = |lun: &str| lun.to_string();
    for s in &chosen {
        if !s.lun.starts_with("/dev/") {
            global.push(Mapping {
                at: format!("sd={}", s.name),
                option: format!("lun={}", s.lun),
                how: How::Note(
                    "volbench writes only files it creates: its file set goes in a directory of this name".into(),
                ),
            });
            break;
        }
    }
    let mut draft_hosts: Vec<DraftHost> = Vec::new();
    let target;
    if hosts.is_empty() && chosen.iter().all(|s| s.host.is_none()) {
        match chosen.as_slice() {
            [one] => target = target_of(&one.lun),
            _ if local => {
                let luns: Vec<String> = chosen.iter().map(|s| target_of(&s.lun)).collect();
                let create = size.filter(|_| luns.iter().any(|l| !l.starts_with("/dev/")));
                let threads = runs.first().map_or(1, |r| r.threads);
                let mut m = Vec::new();
                target = super::super::target_list::list(&luns, create, threads, &mut m, notes)?.0;
                // vdbench's threads= is per sd (forthreads=32: 32 threads for
                // each SD), which is what a list's threads are per target.
                global.extend(m.into_iter().map(|x| Mapping {
                    how: How::Exact(format!(
                        "{} sds on this host as a list of targets run together; threads= per sd \
                         is threads per target",
                        luns.len()
                    )),
                    ..x
                }));
            }
            _ => {
                notes.unsupported(
                    origin,
                    "several sds on one host",
                    "several targets on one host run through agents: add hd=localhost,system=localhost and host= to each sd",
                );
                return Err(notes
                    .check()
                    .err()
                    .unwrap_or_else(|| VbError::input("refused")));
            }
        }
    } else {
        let mut names: Vec<String> = hosts.iter().map(|(n, _)| n.clone()).collect();
        for s in &chosen {
            if let Some(h) = &s.host
                && !names.contains(h)
            {
                names.push(h.clone());
            }
        }
        for n in &names {
            let ssh = hosts
                .iter()
                .find(|(h, _)| h == n)
                .map(|(_, s)| s.clone())
                .unwrap_or_else(|| n.clone());
            let targets: Vec<String> = chosen
                .iter()
                .filter(|s| s.host.as_deref().is_none_or(|h| h == n))
                .map(|s| target_of(&s.lun))
                .collect();
            if targets.is_empty() {
                continue;
            }
            for t in &targets {
                if t.contains([' ', '#', '{', '}', ',']) {
                    notes.unsupported(
                        origin,
                        &format!("lun={t}"),
                        "a lun path with spaces, '#', braces or commas in a hosts file",
                    );
                }
            }
            draft_hosts.push(DraftHost { ssh, targets });
        }
        target = draft_hosts
            .first()
            .and_then(|h| h.targets.first())
            .cloned()
            .unwrap_or_default();
    }
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
        direct: direct.unwrap_or(false),
        write_sync,
        data,
        engine: Some(crate::spec::EngineKind::Psync.name()),
        interval_s: interval,
        seed: None,
        hosts: draft_hosts,
        global: super::super::dedup(global),
        runs,
        tree: None,
    })
}
