//! One fio job section's options, each mapped, noted or refused.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::collections::BTreeMap;

use super::super::{DraftRun, Mapping, Notes, PathMap, parent_dir, run_name};
use super::noted::Known;
use super::parse::{Job, Opt, Section, Sources, bool_opt};
use crate::spec::{Arrivals, Pattern};
use crate::units::{bounds, parse_duration, parse_size};

fn fio_seconds(v: &str) -> std::result::Result<f64, String> {
    // fio's plain numbers are seconds; its suffixes are those volbench reads.
    parse_duration(v)
        .map(|d| d.as_secs_f64())
        .map_err(|e| e.message)
}

/// fio's `bssplit`: `4k/10:64k/50:32k/40`; entries without a share split
/// what is left equally.
fn bssplit(v: &str) -> std::result::Result<Vec<(u64, u32)>, String> {
    let mut given: Vec<(u64, Option<u64>)> = Vec::new();
    for part in v.split(':').filter(|p| !p.trim().is_empty()) {
        let (s, p) = match part.split_once('/') {
            Some((s, p)) if !p.trim().is_empty() => (s, Some(p)),
            Some((s, _)) => (s, None),
            None => (part, None),
        };
        let bytes = parse_size(s).map_err(|e| e.message)?;
        if bytes == 0 || bytes > bounds::MAX_BS {
            return Err(format!("block size {s} is outside 1..1g"));
        }
        let pct = match p {
            Some(p) => Some(
                p.trim()
                    .parse::<u64>()
                    .ok()
                    .filter(|p| *p <= 100)
                    .ok_or_else(|| format!("'{p}' is not a percentage 0..100"))?,
            ),
            None => None,
        };
        if given.len() >= bounds::MAX_BS_MIX {
            return Err(format!("more than {} entries", bounds::MAX_BS_MIX));
        }
        given.push((bytes, pct));
    }
    let stated: u64 = given.iter().filter_map(|(_, p)| *p).sum();
    let open = given.iter().filter(|(_, p)| p.is_none()).count() as u64;
    if stated > 100 || (open == 0 && stated != 100) {
        return Err(format!("the shares add up to {stated}%, not 100%"));
    }
    // Weights in hundredths of a percent keep an equal split of the rest exact enough.
    let rest = (100 - stated) * 100;
    let out: Vec<(u64, u32)> = given
        .into_iter()
        .map(|(b, p)| {
            let w = match p {
                Some(p) => p * 100,
                None => rest / open.max(1),
            };
            (b, w as u32)
        })
        .filter(|(_, w)| *w > 0)
        .collect();
    if out.is_empty() {
        return Err("no block size has a share".into());
    }
    Ok(out)
}

/// One value for reads and writes alike: fio's `a,b` forms must agree.
fn one_for_both(v: &str) -> Option<&str> {
    let mut parts = v.split(',').map(str::trim).filter(|p| !p.is_empty());
    let first = parts.next()?;
    if v.split(',').map(str::trim).all(|p| p == first) {
        Some(first)
    } else {
        None
    }
}

#[allow(clippy::too_many_lines)]
pub(super) fn job(
    s: &Section,
    o: &BTreeMap<String, Opt>,
    map: &PathMap,
    src: &Sources,
    notes: &mut Notes,
) -> Option<Job> {
    let before = notes.refused.len();
    let mut mapped: Vec<Mapping> = Vec::new();
    let note = |m: &mut Vec<Mapping>, o: &Opt, how: String, exact: bool| {
        m.push(Mapping {
            at: o.at.clone(),
            option: o.text(),
            how: if exact {
                super::super::How::Exact(how)
            } else {
                super::super::How::Note(how)
            },
        })
    };
    let name = o
        .get("name")
        .map(|n| n.val().to_string())
        .unwrap_or_else(|| s.name.clone());
    let mut rw = Pattern::Read;
    let mut read_pct: Option<u8> = None;
    let mut bs: Vec<(u64, u32)> = vec![(4096, 1)];
    let mut iodepth = 1u64;
    let mut numjobs = 1u64;
    let mut engine = "psync";
    let mut aio = false;
    let mut direct = false;
    let mut time_based = false;
    let mut runtime: Option<f64> = None;
    let mut warmup = 0.0;
    let mut rate_iops: Option<f64> = None;
    let mut rate_bw: Option<(u64, Opt)> = None;
    let mut arrivals = None;
    let mut filename: Option<String> = None;
    let mut directory: Option<String> = None;
    let mut nrfiles = 1u64;
    let mut size: Option<u64> = None;
    let mut filesize: Option<u64> = None;
    let mut io_size: Option<u64> = None;
    let mut seed = None;
    let mut stonewall = false;
    let mut wait_for = None;
    let mut extra = super::shape::Extra::default();
    for (key, opt) in o {
        if super::shape::map(key, opt, &mut extra, &mut mapped, notes)
            || super::data::map(key, opt, &mut extra, &mut mapped, notes)
        {
            continue;
        }
        let v = opt.val();
        let at = opt.at.as_str();
        let text = opt.text();
        let bad = |notes: &mut Notes, why: &str| notes.refuse(at, &text, why.to_string());
        match key.as_str() {
            "name" => note(&mut mapped, opt, "the run's name".into(), true),
            "description" => note(&mut mapped, opt, "kept here only".into(), true),
            "rw" => {
                let (p, suffix) = v.split_once(':').unwrap_or((v, ""));
                if !suffix.is_empty() {
                    notes.unsupported(at, &text, "rw=...:N skips between I/Os");
                    continue;
                }
                match Pattern::parse(p) {
                    Ok(p) => {
                        rw = p;
                        note(&mut mapped, opt, format!("rw = \"{}\"", p.name()), true);
                    }
                    Err(_) => bad(
                        notes,
                        "not supported yet (volbench does read, write, randread, randwrite, rw, randrw)",
                    ),
                }
            }
            "rwmixread" | "rwmixwrite" => match v.trim().parse::<u8>() {
                Ok(p) if p <= 100 => {
                    let r = if key == "rwmixread" { p } else { 100 - p };
                    read_pct = Some(r);
                    note(&mut mapped, opt, format!("read_pct = {r}"), true);
                }
                _ => bad(notes, "must be a percentage 0..100"),
            },
            "bs" => match one_for_both(v).map(parse_size) {
                Some(Ok(b)) if b > 0 && b <= bounds::MAX_BS => {
                    bs = vec![(b, 1)];
                    note(&mut mapped, opt, "bs".into(), true);
                }
                Some(Ok(_)) => bad(notes, "block size outside 1..1g"),
                Some(Err(e)) => bad(notes, &e.message),
                None => notes.unsupported(at, &text, "different read and write block sizes"),
            },
            "bssplit" => match one_for_both(v).map(bssplit) {
                Some(Ok(mix)) => {
                    bs = mix;
                    note(&mut mapped, opt, "a weighted block-size mix".into(), true);
                }
                Some(Err(e)) => bad(notes, &e),
                None => notes.unsupported(at, &text, "different read and write block-size splits"),
            },
            "blocksize_range" => {
                let r = one_for_both(v).and_then(|r| r.split_once('-'));
                match r.map(|(a, b)| (parse_size(a), parse_size(b))) {
                    Some((Ok(a), Ok(b))) if a == b && a > 0 && a <= bounds::MAX_BS => {
                        bs = vec![(a, 1)];
                        note(&mut mapped, opt, "one block size".into(), true);
                    }
                    _ => notes.unsupported(at, &text, "block sizes drawn from a range"),
                }
            }
            "iodepth" => match v.trim().parse::<u64>() {
                Ok(d) if (1..=bounds::MAX_IODEPTH).contains(&d) => {
                    iodepth = d;
                    note(&mut mapped, opt, "iodepth".into(), true);
                }
                _ => bad(notes, &format!("must be 1..{}", bounds::MAX_IODEPTH)),
            },
            "numjobs" => match v.trim().parse::<u64>() {
                Ok(n) if (1..=bounds::MAX_THREADS).contains(&n) => {
                    numjobs = n;
                    note(&mut mapped, opt, "threads".into(), true);
                }
                _ => bad(notes, &format!("must be 1..{}", bounds::MAX_THREADS)),
            },
            "ioengine" => {
                let (e, how, exact) = match v.trim() {
                    "psync" => ("psync", "psync", true),
                    "sync" | "pvsync" => (
                        "psync",
                        "psync (positioned reads and writes: the same I/O, one per thread)",
                        true,
                    ),
                    "io_uring" => ("io_uring", "io_uring", true),
                    "libaio" | "posixaio" => (
                        "io_uring",
                        "io_uring: volbench's asynchronous engine (with direct I/O at the same queue depth)",
                        false,
                    ),
                    "null" => ("null", "null", true),
                    _ => {
                        notes.unsupported(
                            at,
                            &text,
                            "volbench has psync, io_uring and null, and filecreate, filestat and filedelete as metadata runs; not fio's directory engines",
                        );
                        continue;
                    }
                };
                engine = e;
                aio = matches!(v.trim(), "libaio" | "posixaio");
                note(&mut mapped, opt, format!("engine = \"{how}\""), exact);
            }
            "direct" | "buffered" => match bool_opt(opt) {
                Some(b) => {
                    direct = if key == "direct" { b } else { !b };
                    note(&mut mapped, opt, format!("direct = {direct}"), true);
                }
                None => bad(notes, "must be 0 or 1"),
            },
            "time_based" => match bool_opt(opt) {
                Some(b) => {
                    time_based = b;
                    note(&mut mapped, opt, "runs for its duration".into(), true);
                }
                None => bad(notes, "must be 0 or 1"),
            },
            "runtime" | "ramp_time" => match fio_seconds(v) {
                Ok(sec) => {
                    if key == "runtime" {
                        runtime = Some(sec);
                        note(&mut mapped, opt, "duration".into(), true);
                    } else {
                        warmup = sec;
                        note(
                            &mut mapped,
                            opt,
                            "warmup (measured apart, left out of the totals)".into(),
                            true,
                        );
                    }
                }
                Err(e) => bad(notes, &e),
            },
            "startdelay" => match fio_seconds(v) {
                Ok(0.0) => note(&mut mapped, opt, "no delay".into(), true),
                _ => notes.unsupported(at, &text, "a delay before a job starts"),
            },
            "rate_iops" => match one_for_both(v).map(|x| x.parse::<f64>()) {
                Some(Ok(r)) if r > 0.0 && r.is_finite() => {
                    rate_iops = Some(r);
                    note(&mut mapped, opt, "rate (IOPS, times numjobs)".into(), true);
                }
                Some(_) => bad(notes, "must be a positive number"),
                None => notes.unsupported(at, &text, "separate read and write rates"),
            },
            "rate" => match one_for_both(v).map(parse_size) {
                Some(Ok(b)) if b > 0 => rate_bw = Some((b, opt.clone())),
                Some(Ok(_)) => bad(notes, "must be positive"),
                Some(Err(e)) => bad(notes, &e.message),
                None => notes.unsupported(at, &text, "separate read and write rates"),
            },
            "rate_process" => match v.trim() {
                "linear" => {
                    arrivals = Some(Arrivals::Uniform);
                    note(&mut mapped, opt, "arrivals = \"uniform\"".into(), true);
                }
                "poisson" => {
                    arrivals = Some(Arrivals::Poisson);
                    note(&mut mapped, opt, "arrivals = \"poisson\"".into(), true);
                }
                _ => bad(notes, "must be linear or poisson"),
            },
            "filename" => filename = Some(v.to_string()),
            "directory" => {
                if v.contains(':') && !v.contains('\\') {
                    notes.unsupported(at, &text, "several directories");
                } else {
                    directory = Some(v.to_string());
                }
            }
            "nrfiles" => match v.trim().parse::<u64>() {
                Ok(n) if (1..=bounds::MAX_FILES).contains(&n) => {
                    nrfiles = n;
                    note(&mut mapped, opt, "files".into(), true);
                }
                _ => bad(notes, &format!("must be 1..{}", bounds::MAX_FILES)),
            },
            "size" | "filesize" | "io_size" => {
                if v.trim().ends_with('%') || v.contains('-') {
                    notes.unsupported(at, &text, "sizes as a percentage or a range");
                    continue;
                }
                match parse_size(v) {
                    Ok(b) if b > 0 && b <= bounds::MAX_SIZE => {
                        match key.as_str() {
                            "size" => size = Some(b),
                            "filesize" => filesize = Some(b),
                            _ => io_size = Some(b),
                        }
                        let how = if key == "io_size" {
                            "io_limit (times numjobs)"
                        } else {
                            "size (the working set)"
                        };
                        note(&mut mapped, opt, how.into(), true);
                    }
                    Ok(_) => bad(notes, "must be 1..8p"),
                    Err(e) => bad(notes, &e.message),
                }
            }
            "randseed" => match v.trim().parse::<u64>() {
                Ok(n) => {
                    seed = Some(n);
                    note(&mut mapped, opt, "seed".into(), true);
                }
                Err(_) => bad(notes, "must be a whole number"),
            },
            "stonewall" | "wait_for_previous" => {
                stonewall = bool_opt(opt).unwrap_or(true);
                note(
                    &mut mapped,
                    opt,
                    "a new run, after the runs before it".into(),
                    true,
                );
            }
            "wait_for" => {
                wait_for = Some(v.to_string());
                note(
                    &mut mapped,
                    opt,
                    "a new run, after the runs before it".into(),
                    true,
                );
            }
            _ => match super::noted::known(key, v, opt) {
                Some(Known::Note(how, exact)) => note(&mut mapped, opt, how.into(), exact),
                Some(Known::Unsupported(why)) => notes.unsupported(at, &text, why),
                // A line of a file that is not a job file at all (`include
                // /etc/shadow`) is not echoed: only a line whose name is one
                // an option could have.
                None if !super::super::option_like(key) => notes.refuse(
                    at,
                    "this line",
                    "not a fio option (its text is not shown: is this a fio job file?)",
                ),
                None => notes.refuse(
                    at,
                    &text,
                    "not supported yet (volbench has no equivalent of this fio option)",
                ),
            },
        }
    }
    if notes.refused.len() > before {
        return None;
    }
    // Where the I/O goes. volbench writes only files it created, so a
    // named file becomes volbench's own file in that directory.
    let target_at = o.get("filename").or_else(|| o.get("directory"));
    let resolved = |raw: &str, notes: &mut Notes| -> Option<String> {
        match map.resolve(raw) {
            Ok((p, _)) => Some(p),
            Err(e) => {
                let (at, text) = target_at
                    .map(|t| (t.at.clone(), t.text()))
                    .unwrap_or((s.at.clone(), raw.to_string()));
                notes.refuse(&at, &text, e);
                None
            }
        }
    };
    // fio reads relative names from its current directory.
    let cwd = src.cwd.display().to_string();
    let from_cwd = |p: &str| -> String {
        let windows = p.contains('\\') || p.as_bytes().get(1) == Some(&b':') || p.starts_with('#');
        if p.starts_with('/') || windows {
            p.to_string()
        } else {
            format!("{}/{p}", cwd.trim_end_matches('/'))
        }
    };
    let dir = match &directory {
        Some(d) => Some(resolved(&from_cwd(d), notes)?),
        None => None,
    };
    if let (Some(d), Some(opt)) = (&dir, o.get("directory"))
        && let Some(why) = super::super::kernel_set_dir(d)
    {
        notes.refuse(&opt.at, &opt.text(), why);
        return None;
    }
    let list = match &filename {
        Some(f) => super::files::list(
            f,
            o,
            dir.as_deref(),
            &from_cwd,
            &resolved,
            numjobs,
            &mut mapped,
            notes,
        )?,
        None => None,
    };
    let (target, shared_file) = match &filename {
        _ if list.is_some() => (list.as_ref().map(|l| l.target.clone())?, true),
        Some(f) => {
            let full = match &dir {
                Some(d) if !f.starts_with('/') => format!("{d}/{f}"),
                _ => from_cwd(f),
            };
            let full = resolved(&full, notes)?;
            let opt = o.get("filename")?;
            if let Some(why) = super::super::kernel_target(&full) {
                notes.refuse(&opt.at, &opt.text(), why);
                return None;
            }
            if full.starts_with("/dev/") {
                note(
                    &mut mapped,
                    opt,
                    "the block device as the target (writing needs --allow-overwrite)".into(),
                    true,
                );
                (full, true)
            } else {
                let parent = parent_dir(&full);
                note(
                    &mut mapped,
                    opt,
                    format!(
                        "volbench writes only files it creates: its own file (volbench.0.dat) in {parent}, shared by the jobs"
                    ),
                    false,
                );
                (parent, true)
            }
        }
        None => match dir {
            Some(d) => {
                if let Some(opt) = o.get("directory") {
                    note(
                        &mut mapped,
                        opt,
                        "the target directory; volbench's own files (volbench.N.dat) instead of fio's names, one per job and file".into(),
                        false,
                    );
                }
                (d, false)
            }
            None => {
                mapped.push(Mapping {
                    at: s.at.clone(),
                    option: format!("[{}] (no filename or directory)", s.name),
                    how: super::super::How::Note(format!(
                        "fio works in its current directory: volbench's file set in {cwd}"
                    )),
                });
                (cwd, false)
            }
        },
    };
    // The working set of one job over its files.
    let per_job = match (size, filesize) {
        // Existing files or devices are used whole (fio_files notes a size).
        _ if list.as_ref().is_some_and(|l| l.whole) => None,
        (Some(s), Some(f)) if s != f.saturating_mul(nrfiles) => {
            let opt = o.get("filesize")?;
            notes.unsupported(
                &opt.at,
                &opt.text(),
                "a filesize that is not size / nrfiles",
            );
            return None;
        }
        (Some(s), _) => Some(s),
        (None, Some(f)) => Some(f.saturating_mul(nrfiles)),
        (None, None) if target.starts_with("/dev/") => None,
        (None, None) => {
            notes.refuse(
                &s.at,
                &format!("[{}]", s.name),
                "no size= or filesize=: fio needs one to lay out files, and so does volbench",
            );
            return None;
        }
    };
    if let Some(p) = per_job
        && nrfiles > 1
        && p % nrfiles != 0
    {
        mapped.push(Mapping {
            at: s.at.clone(),
            option: format!("nrfiles={nrfiles}"),
            how: super::super::How::Note(
                "files of equal size, the working set split evenly".into(),
            ),
        });
    }
    if engine == "psync" && iodepth > 1 {
        if let Some(opt) = o.get("iodepth") {
            note(
                &mut mapped,
                opt,
                "fio's synchronous engines keep one I/O in flight per job: iodepth = 1".into(),
                false,
            );
        }
        iodepth = 1;
    }
    if aio && !direct && iodepth > 1 {
        // Linux's AIO runs a buffered request to its end inside io_submit, so
        // fio's libaio keeps one in flight; io_uring would really keep them all.
        if let Some(opt) = o.get("iodepth") {
            let how = "buffered (direct=0) libaio completes one request at a time in the kernel, \
                       so fio measures one in flight per job: iodepth = 1";
            note(&mut mapped, opt, how.into(), false);
        }
        iodepth = 1;
    }
    let read_pct = match rw.fixed_read_pct() {
        Some(p) => p,
        None => read_pct.unwrap_or(50),
    };
    if let Some((b, opt)) = &rate_bw {
        match bs.as_slice() {
            [(one, _)] => {
                let r = *b as f64 / *one as f64;
                rate_iops = Some(r);
                note(
                    &mut mapped,
                    opt,
                    format!("rate = {r} IOPS per job (bytes/s over one block size)"),
                    true,
                );
            }
            _ => {
                let total = b.saturating_mul(numjobs);
                extra.shape.push(("rate", format!("\"{total}/s\"")));
                let how = format!("rate = {total} bytes/s across the job's threads");
                note(&mut mapped, opt, how, true);
            }
        }
    }
    if (rate_iops.is_some() || rate_bw.is_some()) && rw.is_mixed() {
        let opt = o.get("rate_iops").or_else(|| o.get("rate"))?;
        notes.unsupported(
            &opt.at,
            &opt.text(),
            "fio limits reads and writes each; a mixed job's rate per direction",
        );
        return None;
    }
    let total_size = per_job.map(|p| {
        if shared_file {
            p
        } else {
            p.saturating_mul(numjobs)
        }
    });
    let (duration_s, io_limit) = match (time_based, runtime) {
        (true, Some(r)) => (r, None),
        (true, None) => {
            let opt = o.get("time_based")?;
            notes.refuse(
                &opt.at,
                &opt.text(),
                "time_based without runtime runs until stopped; give runtime=",
            );
            return None;
        }
        (false, r) => {
            // Over whole files or devices, size= is still each job's I/O.
            let per = io_size
                .or(per_job)
                .or(size.filter(|_| list.as_ref().is_some_and(|l| l.whole)));
            let limit = per.map(|p| p.saturating_mul(numjobs));
            let Some(limit) = limit else {
                notes.refuse(
                    &s.at,
                    &format!("[{}]", s.name),
                    "neither time_based nor a size: give runtime= and time_based",
                );
                return None;
            };
            mapped.push(Mapping {
                at: s.at.clone(),
                option: format!("[{}] (not time_based)", s.name),
                how: super::super::How::Note(format!(
                    "stops after {} of I/O across its threads (fio counts per job){}",
                    crate::units::format_size(limit),
                    if r.is_some() {
                        ", or at runtime"
                    } else {
                        "; duration capped at 30 days"
                    }
                )),
            });
            (r.unwrap_or(30.0 * 86400.0), Some(limit))
        }
    };
    if notes.refused.len() > before {
        return None;
    }
    let files = match &list {
        Some(l) => l.files,
        None if shared_file => 1,
        None => nrfiles,
    };
    let _ = total_size;
    Some(Job {
        name: name.clone(),
        at: s.at.clone(),
        stonewall,
        wait_for,
        numjobs,
        run: DraftRun {
            name: run_name(&name),
            rw,
            read_pct,
            bs,
            threads: numjobs,
            iodepth,
            files: None,
            rate: rate_iops.map(|r| r * numjobs as f64),
            arrivals,
            duration_s,
            warmup_s: warmup,
            io_limit,
            curve: None,
            shape: extra.shape,
            notes: mapped,
        },
        target,
        shared_file,
        size: per_job,
        files,
        direct,
        engine,
        seed,
        write_sync: extra.write_sync,
        data: extra.data,
        threads_total: list.is_some_and(|l| l.threads_total),
    })
}
