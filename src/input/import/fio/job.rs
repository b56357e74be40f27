//! One fio job section: its options read by the table's rows
//! (`options.rs`), then what they mean together (where the I/O goes, the
//! working set, the depth, the rate, the order of the offsets, when it
//! stops), each a step of its own.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::collections::BTreeMap;

use super::super::secs_text;
use super::super::table::{self, Kind};
use super::super::{How, Mapping, Notes, PathMap, arrivals_value, bs_text, parent_dir, run_name};
use super::files::FileList;
use super::parse::{Job, Opt, Read, Section, Sources};
use crate::input::suite::RunEntry;
use crate::input::suite::write::{text_of, value};

/// The job's options by their own names (a later line replaced an earlier).
type Opts = BTreeMap<String, Opt>;

pub(super) fn job(
    s: &Section,
    o: &Opts,
    map: &PathMap,
    src: &Sources,
    notes: &mut Notes,
) -> Option<Job> {
    let before = notes.refused.len();
    let mut r = Read::default();
    for opt in o.values() {
        table::read(super::options::OPTIONS, opt, &mut r, notes, "fio option");
    }
    if notes.refused.len() > before {
        return None;
    }
    if r.replay.log.is_some() {
        if let (true, Some(opt)) = (r.engine == "nfs", o.get("ioengine")) {
            notes.unsupported(&opt.at, &opt.text(), "replaying a log over NFS");
            return None;
        }
        // Which options read into a job (a row that maps), for the replay
        // to refuse those that would shape another workload.
        let maps = |key: &str| super::options::find(key).is_some_and(|row| row.kind() == Kind::Map);
        return super::replay::job(s, o, r, map, notes, &maps);
    }
    if let Some(opt) = &r.replay.first {
        notes.refuse(
            &opt.at,
            &opt.text(),
            "without read_iolog there is no log to replay",
        );
        return None;
    }
    let name = o
        .get("name")
        .map(|n| n.val().to_string())
        .unwrap_or_else(|| s.name.clone());
    // One direction's job takes that direction's sizes (fio's bs=R,W on a
    // read-only job never writes).
    match r.rw.fixed_read_pct() {
        Some(0) => {
            if let Some(w) = r.write_bs.take() {
                r.bs = w;
            }
        }
        Some(_) => r.write_bs = None,
        None => {}
    }
    let place = place(s, o, &mut r, map, src, notes)?;
    let per_job = working_set(s, o, &mut r, &place, notes)?;
    depth(o, &mut r);
    rate(&mut r, notes)?;
    order(s, &mut r, notes)?;
    let (duration_s, io_limit) = limits(s, o, &mut r, per_job, &place, notes)?;
    let (set_size, step) = streams(s, &mut r, &place, per_job, notes)?;
    if notes.refused.len() > before {
        return None;
    }
    let read_pct = match r.rw.fixed_read_pct() {
        Some(p) => p,
        None => r.read_pct.unwrap_or(50),
    };
    let files = match &place.list {
        Some(l) => l.files,
        None if place.shared_file => 1,
        None => r.nrfiles,
    };
    // The keys the rows set, and what the job does; what a group adds up
    // (threads, rate, I/O) is set once the group is known (`merge`).
    let mut run = std::mem::replace(&mut r.run, RunEntry::named(""));
    run.set_name(&run_name(&name));
    run.rw = value(r.rw.name());
    // Caps on both directions make the mix (`rate::mix_from_caps`).
    if r.rw.is_mixed() && !r.mix_from_caps {
        run.read_pct = value(u64::from(read_pct));
    }
    run.bs = value(bs_text(&r.bs));
    if let Some(w) = &r.write_bs {
        run.write_bs = value(bs_text(w));
    }
    run.iodepth = value(r.iodepth);
    run.arrivals = r.arrivals.and_then(arrivals_value);
    run.duration = value(secs_text(duration_s));
    run.warmup = value(secs_text(r.warmup));
    Some(Job {
        name: name.clone(),
        at: s.at.clone(),
        stonewall: r.stonewall,
        wait_for: r.wait_for,
        numjobs: r.numjobs,
        run,
        said: r.mapped,
        threads: r.numjobs,
        rate: r.rate_iops.map(|x| x * r.numjobs as f64),
        io_limit,
        target: place.target,
        shared_file: place.shared_file,
        step,
        size: set_size,
        files,
        direct: r.direct,
        engine: r.engine,
        seed: r.seed,
        write_sync: r.write_sync,
        data: r.data,
        threads_total: place.list.is_some_and(|l| l.threads_total),
    })
}

/// Where a job's I/O goes.
struct Place {
    target: String,
    /// One file (or device) every clone shares, rather than one each.
    shared_file: bool,
    /// filename= naming several files.
    list: Option<FileList>,
}

/// Where the I/O goes. volbench writes only files it created, so a named
/// file becomes volbench's own file in that directory.
fn place(
    s: &Section,
    o: &Opts,
    r: &mut Read,
    map: &PathMap,
    src: &Sources,
    notes: &mut Notes,
) -> Option<Place> {
    // fio's nfs engine names its files on the server, from nfs_url's path.
    let nfs = r.engine == "nfs";
    if nfs || r.nfs_url.is_some() {
        let (target, shared_file, list) = super::nfs::place(o, r, nfs, notes)?;
        return Some(Place {
            target,
            shared_file,
            list,
        });
    }
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
    let dir = match &r.directory {
        Some(d) => Some(resolved(&from_cwd(d), notes)?),
        None => None,
    };
    if let (Some(d), Some(opt)) = (&dir, o.get("directory")) {
        if let Some(why) = super::super::kernel_set_dir(d) {
            notes.refuse(&opt.at, &opt.text(), why);
            return None;
        }
    }
    let Some(f) = r.filename.clone() else {
        let (target, how) = match dir {
            Some(d) => (
                d,
                "the target directory; volbench's own files (volbench.N.dat) instead of fio's \
                 names, one per job and file"
                    .to_string(),
            ),
            None => (
                cwd.clone(),
                format!("fio works in its current directory: volbench's file set in {cwd}"),
            ),
        };
        match o.get("directory") {
            Some(opt) if target_at.is_some() => r.say(opt, how, false),
            _ => r.mapped.push(Mapping {
                at: s.at.clone(),
                option: format!("[{}] (no filename or directory)", s.name),
                how: How::Note(how),
            }),
        }
        return Some(Place {
            target,
            shared_file: false,
            list: None,
        });
    };
    let numjobs = r.numjobs;
    if let Some(list) = super::files::list(
        &f,
        o,
        dir.as_deref(),
        &from_cwd,
        &resolved,
        numjobs,
        &mut r.mapped,
        notes,
    )? {
        return Some(Place {
            target: list.target.clone(),
            shared_file: true,
            list: Some(list),
        });
    }
    let full = match &dir {
        Some(d) if !f.starts_with('/') => format!("{d}/{f}"),
        _ => from_cwd(&f),
    };
    let full = resolved(&full, notes)?;
    let opt = o.get("filename")?;
    if let Some(why) = super::super::kernel_target(&full) {
        notes.refuse(&opt.at, &opt.text(), why);
        return None;
    }
    let target = if super::super::names_device(&full) {
        let how = "the block device as the target (writing needs --allow-overwrite)";
        r.say(opt, how, true);
        full
    } else {
        let parent = parent_dir(&full);
        r.say(
            opt,
            format!(
                "volbench writes only files it creates: its own file (volbench.0.dat) in {parent}, shared by the jobs"
            ),
            false,
        );
        parent
    };
    Some(Place {
        target,
        shared_file: true,
        list: None,
    })
}

/// Where the job's clones stream over a shared file. fio's clones each
/// make their own pass from `offset + i x offset_increment` over `size`
/// bytes, and each direction of a mix keeps its own position: volbench's
/// `streams = each` walks the same offsets. The set is then as large as the
/// last clone's pass reaches (fio extends the file as far). Returns the
/// set's size and the step; a clone's own files start at 0 in volbench.
fn streams(
    s: &Section,
    r: &mut Read,
    place: &Place,
    per_job: Option<u64>,
    notes: &mut Notes,
) -> Option<(Option<u64>, u64)> {
    use crate::spec::streams::Streams;
    let offset = r.offset.as_ref().map_or(0, |(v, _)| *v);
    let step = r.offset_increment.as_ref().map_or(0, |(v, _)| *v);
    let given = r.offset.iter().chain(r.offset_increment.iter());
    let given: Vec<Opt> = given
        .filter(|(v, _)| *v > 0)
        .map(|(_, o)| o.clone())
        .collect();
    let shared = place.shared_file && place.list.is_none();
    if !shared || r.rw.is_random() {
        if let Some(opt) = given.first() {
            let why = if shared {
                "random offsets kept to a part of the file (volbench's roam the whole set)"
            } else {
                "an offset into each job's own files (volbench's files are walked from their start)"
            };
            notes.unsupported(&opt.at, &opt.text(), why);
            return None;
        }
        // fio's random clones each roam the whole file, as volbench's threads do.
        return Some((per_job, 0));
    }
    if r.numjobs <= 1 && given.is_empty() {
        return Some((per_job, 0));
    }
    let reach = step
        .checked_mul(r.numjobs.saturating_sub(1))
        .and_then(|x| x.checked_add(offset));
    let set = match (reach, per_job) {
        (Some(at), Some(p)) => match at
            .checked_add(p)
            .filter(|t| *t <= crate::units::bounds::MAX_SIZE)
        {
            Some(t) => Some(t),
            None => {
                let opt = given.first().or(r.offset.as_ref().map(|(_, o)| o))?;
                notes.unsupported(&opt.at, &opt.text(), "a file larger than 8p");
                return None;
            }
        },
        (Some(_), None) => None,
        (None, _) => {
            let opt = given.first()?;
            notes.unsupported(&opt.at, &opt.text(), "a file larger than 8p");
            return None;
        }
    };
    let how = Streams::Each { offset, step };
    r.run.streams = value(how.label());
    let whom = if r.numjobs > 1 {
        format!("each of the {} jobs", r.numjobs)
    } else {
        "the job".to_string()
    };
    let from = match (offset, step) {
        (0, 0) => "from the file's start".to_string(),
        (o, 0) => format!("from {}", crate::units::format_size(o)),
        (o, s) => format!(
            "from {} + i x {}",
            crate::units::format_size(o),
            crate::units::format_size(s)
        ),
    };
    let mut said = format!(
        "streams = \"{}\": {whom} makes its own pass over the file {from}, reads and writes each \
         on from their last offset, as fio's jobs do",
        how.label()
    );
    if let Some(t) = set {
        said.push_str(&format!("; the file is {}", crate::units::format_size(t)));
    }
    match given.first() {
        Some(opt) => {
            let opt = opt.clone();
            r.say(&opt, said, true);
        }
        None => r.mapped.push(Mapping {
            at: s.at.clone(),
            option: format!("numjobs={} on one file", r.numjobs),
            how: How::Exact(said),
        }),
    }
    Some((set, step))
}

/// The working set of one job over its files; None inside Some for a
/// whole device or existing files.
fn working_set(
    s: &Section,
    o: &Opts,
    r: &mut Read,
    place: &Place,
    notes: &mut Notes,
) -> Option<Option<u64>> {
    let per_job = match (r.size, r.filesize) {
        // Existing files or devices are used whole (files.rs notes a size).
        _ if place.list.as_ref().is_some_and(|l| l.whole) => None,
        (Some(sz), Some(f)) if sz != f.saturating_mul(r.nrfiles) => {
            let opt = o.get("filesize")?;
            notes.unsupported(
                &opt.at,
                &opt.text(),
                "a filesize that is not size / nrfiles",
            );
            return None;
        }
        (Some(sz), _) => Some(sz),
        (None, Some(f)) => Some(f.saturating_mul(r.nrfiles)),
        (None, None) if super::super::names_device(&place.target) => None,
        // The null engine does no I/O: a size only counts its I/O.
        (None, None) if r.engine == "null" => None,
        (None, None) => {
            notes.refuse(
                &s.at,
                &format!("[{}]", s.name),
                "no size= or filesize=: fio needs one to lay out files, and so does volbench",
            );
            return None;
        }
    };
    if let Some(p) = per_job {
        if r.nrfiles > 1 && p % r.nrfiles != 0 {
            r.mapped.push(Mapping {
                at: s.at.clone(),
                option: format!("nrfiles={}", r.nrfiles),
                how: How::Note("files of equal size, the working set split evenly".into()),
            });
        }
    }
    Some(per_job)
}

/// fio's synchronous engines, and buffered libaio, keep one I/O in flight.
fn depth(o: &Opts, r: &mut Read) {
    if r.iodepth <= 1 {
        return;
    }
    let how = if r.engine == "psync" {
        "fio's synchronous engines keep one I/O in flight per job: iodepth = 1"
    } else if r.aio && !r.direct {
        // Linux's AIO runs a buffered request to its end inside io_submit, so
        // fio's libaio keeps one in flight; io_uring would really keep them all.
        "buffered (direct=0) libaio completes one request at a time in the kernel, \
         so fio measures one in flight per job: iodepth = 1"
    } else {
        return;
    };
    if let Some(opt) = o.get("iodepth") {
        r.mapped.push(opt.mapping(how, false));
    }
    r.iodepth = 1;
}

/// fio's rates (`rate.rs`: each direction's cap as fio sets it) and the
/// latency target.
fn rate(r: &mut Read, notes: &mut Notes) -> Option<()> {
    super::rate::resolve(r, notes)?;
    super::rate::latency(r);
    Some(())
}

/// The order of random offsets: fio's random map (each block once per
/// pass, its default), `rw=randread:N`, and `blockalign`.
fn order(s: &Section, r: &mut Read, notes: &mut Notes) -> Option<()> {
    let one_bs = match (r.bs.as_slice(), r.write_bs.as_deref()) {
        ([(b, _)], None) => Some(*b),
        ([(b, _)], Some([(w, _)])) if w == b => Some(*b),
        _ => None,
    };
    if let Some((align, opt)) = r.blockalign.clone() {
        if Some(align) != one_bs || !r.rw.is_random() {
            notes.unsupported(
                &opt.at,
                &opt.text(),
                "offsets aligned to other than the one block size (volbench aligns random \
                 offsets to the block size)",
            );
            return None;
        }
        // fio: an alignment turns its random map off.
        r.norandommap = true;
        r.say(&opt, "volbench aligns offsets to the block size", true);
    }
    if let Some(n) = r.rand_every.filter(|n| *n > 1) {
        let pct = (100.0 / n as f64).round().max(1.0) as u8;
        r.run.seek_pct = value(u64::from(pct));
        r.mapped.push(Mapping {
            at: s.at.clone(),
            option: format!("rw=...:{n}"),
            how: How::Note(format!(
                "seek_pct = {pct}: one I/O in {n} seeks to a random offset, the rest follow on \
                 sequentially (volbench draws each seek with that chance, fio seeks every {n}th)"
            )),
        });
        return Some(());
    }
    if !r.rw.is_random() || r.norandommap || r.engine == "null" {
        return Some(());
    }
    let skewed = text_of(&r.run.distribution).is_some_and(|d| d != "uniform");
    let how = if one_bs.is_none() || skewed {
        How::Note(
            "volbench draws these offsets independently (its random map needs one block size \
             and uniform offsets); fio's random map visits each block once per pass"
                .into(),
        )
    } else {
        r.run.random_map = value(true);
        How::Exact(
            "random_map = true: fio's random map (its default), each block once per pass in a \
             random order, the cached pages of a buffered run dropped when a pass ends"
                .into(),
        )
    };
    r.mapped.push(Mapping {
        at: s.at.clone(),
        option: format!("[{}] (random map)", s.name),
        how,
    });
    Some(())
}

/// How long the job runs, or how much I/O it does.
fn limits(
    s: &Section,
    o: &Opts,
    r: &mut Read,
    per_job: Option<u64>,
    place: &Place,
    notes: &mut Notes,
) -> Option<(f64, Option<u64>)> {
    let whole = place.list.as_ref().is_some_and(|l| l.whole);
    let count = number_ios(r, notes)?;
    match (r.time_based, r.runtime) {
        (true, Some(t)) => {
            if let Some((_, opt)) = &r.number_ios {
                let how = "fio runs a time_based job for its runtime whatever its count of I/Os";
                r.mapped.push(opt.mapping(how, true));
            }
            Some((t, None))
        }
        (true, None) => {
            let opt = o.get("time_based")?;
            notes.refuse(
                &opt.at,
                &opt.text(),
                "time_based without runtime runs until stopped; give runtime=",
            );
            None
        }
        (false, t) => {
            // Over whole files or devices, size= is still each job's I/O.
            let per = r
                .io_size
                .or(per_job)
                .or(r.size.filter(|_| whole))
                .or(r.size.filter(|_| r.engine == "null"));
            let per = match (per, count) {
                (Some(p), Some(c)) => Some(p.min(c)),
                (p, c) => p.or(c),
            };
            let Some(limit) = per.map(|p| p.saturating_mul(r.numjobs)) else {
                notes.refuse(
                    &s.at,
                    &format!("[{}]", s.name),
                    "neither time_based nor a size: give runtime= and time_based",
                );
                return None;
            };
            r.mapped.push(Mapping {
                at: s.at.clone(),
                option: format!("[{}] (not time_based)", s.name),
                how: How::Note(format!(
                    "stops after {} of I/O across its threads (fio counts per job){}",
                    crate::units::format_size(limit),
                    if t.is_some() {
                        ", or at runtime"
                    } else {
                        "; duration capped at 30 days"
                    }
                )),
            });
            Some((t.unwrap_or(30.0 * 86400.0), Some(limit)))
        }
    }
}

/// `number_ios=N` as bytes per job: N I/Os of the one block size.
fn number_ios(r: &mut Read, notes: &mut Notes) -> Option<Option<u64>> {
    let Some((n, opt)) = r.number_ios.clone() else {
        return Some(None);
    };
    match (r.bs.as_slice(), r.write_bs.is_some()) {
        ([(b, _)], false) => {
            let bytes = n.saturating_mul(*b);
            if !r.time_based {
                let how = format!(
                    "io_limit: {n} I/Os of {} per job, whichever of that and the size comes first",
                    crate::units::format_size(*b)
                );
                r.say(&opt, how, true);
            }
            Some(Some(bytes))
        }
        _ => {
            notes.unsupported(
                &opt.at,
                &opt.text(),
                "a count of I/Os over several block sizes (volbench stops after a number of bytes)",
            );
            None
        }
    }
}
