//! fio's options of what a job does (pattern, block sizes, depth, engine,
//! time, rate, files and sizes, order), one function per row of
//! `options.rs`, each reading its value into the job's `Read`.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use super::super::Notes;
use super::parse::{Opt, Read, bool_opt};
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
fn bssplit_list(v: &str) -> std::result::Result<Vec<(u64, u32)>, String> {
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
pub(super) fn one_for_both(v: &str) -> Option<&str> {
    let mut parts = v.split(',').map(str::trim).filter(|p| !p.is_empty());
    let first = parts.next()?;
    if v.split(',').map(str::trim).all(|p| p == first) {
        Some(first)
    } else {
        None
    }
}

fn bad(opt: &Opt, notes: &mut Notes, why: impl Into<String>) {
    notes.refuse(&opt.at, &opt.text(), why);
}

/// `rw=`, with fio's offset modifier: `randread:8` seeks every 8th I/O
/// (sequential between), `read:4k` skips, `read:-4k` walks backwards.
pub(super) fn rw(opt: &Opt, r: &mut Read, notes: &mut Notes) {
    let v = opt.val().trim();
    let (p, suffix) = v.split_once(':').unwrap_or((v, ""));
    let Ok(p) = Pattern::parse(p) else {
        return bad(
            opt,
            notes,
            "not supported yet (volbench does read, write, randread, randwrite, rw, randrw)",
        );
    };
    let suffix = suffix.trim();
    if !suffix.is_empty() && !p.is_random() {
        let what = if suffix.starts_with('-') {
            "backwards sequential I/O (volbench's sequential streams go forward)"
        } else {
            "sequential I/O with holes between the blocks"
        };
        return notes.unsupported(&opt.at, &opt.text(), what);
    }
    if !suffix.is_empty() {
        match suffix.parse::<u64>() {
            Ok(n) if (1..=100).contains(&n) => r.rand_every = Some(n),
            _ => {
                return bad(
                    opt,
                    notes,
                    "a random pattern's modifier is the count of I/Os per random offset, 1..100",
                );
            }
        }
    }
    r.rw = p;
    r.say(opt, format!("rw = \"{}\"", p.name()), true);
}

/// `rw_sequencer=`: what an `rw=randread:N` modifier does.
pub(super) fn rw_sequencer(opt: &Opt, r: &mut Read, notes: &mut Notes) {
    match opt.val().trim() {
        "sequential" => r.say(
            opt,
            "fio's default: sequential I/Os between the seeks",
            true,
        ),
        _ => notes.unsupported(&opt.at, &opt.text(), "the same offset sent several times"),
    }
}

pub(super) fn rwmixread(opt: &Opt, r: &mut Read, notes: &mut Notes) {
    mix(opt, r, notes, true)
}

pub(super) fn rwmixwrite(opt: &Opt, r: &mut Read, notes: &mut Notes) {
    mix(opt, r, notes, false)
}

fn mix(opt: &Opt, r: &mut Read, notes: &mut Notes, reads: bool) {
    match opt.val().trim().parse::<u8>() {
        Ok(p) if p <= 100 => {
            let pct = if reads { p } else { 100 - p };
            r.read_pct = Some(pct);
            r.say(opt, format!("read_pct = {pct}"), true);
        }
        _ => bad(opt, notes, "must be a percentage 0..100"),
    }
}

/// fio's `a,b[,c]` per-direction form of `bs` and `bssplit`: reads, then
/// writes (the third, trims, volbench never issues); a value not followed
/// by a comma holds for the directions after it, so `8k` is both, `8k,` is
/// 8k reads and the default for writes, and `,8k` the other way round.
/// None for a side left empty.
fn read_write(v: &str) -> std::result::Result<(Option<&str>, Option<&str>), String> {
    let parts: Vec<&str> = v.split(',').map(str::trim).collect();
    fn side(t: &str) -> Option<&str> {
        (!t.is_empty()).then_some(t)
    }
    match parts.as_slice() {
        [a] => Ok((side(a), side(a))),
        [a, b] | [a, b, _] => Ok((side(a), side(b))),
        _ => Err("takes reads,writes[,trims]: three values at most".into()),
    }
}

/// Sets each direction's sizes from a per-direction value, `each` reading
/// one side; a side left empty takes `empty` for that direction. Writes
/// the same as reads leave `write_bs` unset (one mix for both).
fn sizes_per_direction(
    opt: &Opt,
    r: &mut Read,
    notes: &mut Notes,
    each: impl Fn(&str) -> std::result::Result<Vec<(u64, u32)>, String>,
    empty: impl Fn(&Read, bool) -> Vec<(u64, u32)>,
    what: &str,
) {
    let (reads, writes) = match read_write(opt.val()) {
        Ok(x) => x,
        Err(e) => return bad(opt, notes, e),
    };
    let side = |t: Option<&str>, write: bool| match t {
        Some(t) => each(t),
        None => Ok(empty(r, write)),
    };
    let (read, write) = match (side(reads, false), side(writes, true)) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => return bad(opt, notes, e),
    };
    if read == write {
        r.bs = read;
        r.write_bs = None;
        r.say(opt, what, true);
    } else {
        r.bs = read;
        r.write_bs = Some(write);
        r.say(
            opt,
            format!("{what}: reads' sizes, and writes' as write_bs"),
            true,
        );
    }
}

/// One block size, within volbench's bounds.
fn one_size(t: &str) -> std::result::Result<Vec<(u64, u32)>, String> {
    match parse_size(t) {
        Ok(b) if b > 0 && b <= bounds::MAX_BS => Ok(vec![(b, 1)]),
        Ok(_) => Err("block size outside 1..1g".into()),
        Err(e) => Err(e.message),
    }
}

/// `bs=`: fio's default for a direction left empty is 4 KiB.
pub(super) fn bs(opt: &Opt, r: &mut Read, notes: &mut Notes) {
    sizes_per_direction(opt, r, notes, one_size, |_, _| vec![(4096, 1)], "bs");
}

/// `bssplit=`: a direction left empty keeps the sizes it had (`bs`).
pub(super) fn bssplit(opt: &Opt, r: &mut Read, notes: &mut Notes) {
    sizes_per_direction(
        opt,
        r,
        notes,
        bssplit_list,
        |r, write| match (&r.write_bs, write) {
            (Some(w), true) => w.clone(),
            _ => r.bs.clone(),
        },
        "a weighted block-size mix",
    );
}

pub(super) fn blocksize_range(opt: &Opt, r: &mut Read, notes: &mut Notes) {
    let range = one_for_both(opt.val()).and_then(|x| x.split_once('-'));
    match range.map(|(a, b)| (parse_size(a), parse_size(b))) {
        Some((Ok(a), Ok(b))) if a == b && a > 0 && a <= bounds::MAX_BS => {
            r.bs = vec![(a, 1)];
            r.say(opt, "one block size", true);
        }
        _ => notes.unsupported(&opt.at, &opt.text(), "block sizes drawn from a range"),
    }
}

/// `blockalign=`: checked against the block size once every option is read.
pub(super) fn blockalign(opt: &Opt, r: &mut Read, notes: &mut Notes) {
    match one_for_both(opt.val()).map(parse_size) {
        Some(Ok(b)) if b > 0 && b <= bounds::MAX_BS => r.blockalign = Some((b, opt.clone())),
        Some(Ok(_)) => bad(opt, notes, "alignment outside 1..1g"),
        Some(Err(e)) => bad(opt, notes, e.message),
        None => notes.unsupported(&opt.at, &opt.text(), "different read and write alignments"),
    }
}

/// `offset=` and `offset_increment=` in bytes (0 allowed); where they
/// apply is the job's to say (`job::streams`), once its file is known.
fn start_bytes(opt: &Opt, notes: &mut Notes) -> Option<(u64, Opt)> {
    let v = opt.val().trim();
    if v.ends_with('%') {
        notes.unsupported(
            &opt.at,
            &opt.text(),
            "an offset as a share of the file (give it in bytes)",
        );
        return None;
    }
    match parse_size(v) {
        Ok(b) if b <= bounds::MAX_SIZE => Some((b, opt.clone())),
        Ok(_) => {
            bad(opt, notes, "must be 0..8p");
            None
        }
        Err(e) => {
            bad(opt, notes, e.message);
            None
        }
    }
}

pub(super) fn offset(opt: &Opt, r: &mut Read, notes: &mut Notes) {
    r.offset = start_bytes(opt, notes);
    if matches!(r.offset, Some((0, _))) {
        r.say(opt, "from the start", true);
    }
}

pub(super) fn offset_increment(opt: &Opt, r: &mut Read, notes: &mut Notes) {
    r.offset_increment = start_bytes(opt, notes);
    if matches!(r.offset_increment, Some((0, _))) {
        r.say(opt, "every job from the same offset", true);
    }
}

pub(super) fn iodepth(opt: &Opt, r: &mut Read, notes: &mut Notes) {
    match opt.val().trim().parse::<u64>() {
        Ok(d) if (1..=bounds::MAX_IODEPTH).contains(&d) => {
            r.iodepth = d;
            r.say(opt, "iodepth", true);
        }
        _ => bad(opt, notes, format!("must be 1..{}", bounds::MAX_IODEPTH)),
    }
}

pub(super) fn numjobs(opt: &Opt, r: &mut Read, notes: &mut Notes) {
    match opt.val().trim().parse::<u64>() {
        Ok(n) if (1..=bounds::MAX_THREADS).contains(&n) => {
            r.numjobs = n;
            r.say(opt, "threads", true);
        }
        _ => bad(opt, notes, format!("must be 1..{}", bounds::MAX_THREADS)),
    }
}

/// `ioengine=`: the engine by what it does (fio's file engines are
/// metadata runs, read in `meta.rs` before this).
pub(super) fn ioengine(opt: &Opt, r: &mut Read, notes: &mut Notes) {
    let v = opt.val().trim();
    let (e, how, exact) = match v {
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
        "nfs" => (
            "nfs",
            "nfs: volbench's own NFS client at nfs_url's server and path, no mount; each thread \
             keeps iodepth calls in flight over its own connection, as each of fio's nfs jobs does; \
             neither client caches, so the run is direct",
            true,
        ),
        _ => {
            return notes.unsupported(
                &opt.at,
                &opt.text(),
                "volbench has psync, io_uring, null and nfs (with nfs_url), and filecreate, filestat and filedelete as metadata runs; not fio's directory engines",
            );
        }
    };
    r.engine = e;
    r.aio = matches!(v, "libaio" | "posixaio");
    r.say(opt, format!("engine = \"{how}\""), exact);
}

pub(super) fn direct(opt: &Opt, r: &mut Read, notes: &mut Notes) {
    buffered_or_direct(opt, r, notes, true)
}

pub(super) fn buffered(opt: &Opt, r: &mut Read, notes: &mut Notes) {
    buffered_or_direct(opt, r, notes, false)
}

fn buffered_or_direct(opt: &Opt, r: &mut Read, notes: &mut Notes, is_direct: bool) {
    match bool_opt(opt) {
        Some(b) => {
            r.direct = if is_direct { b } else { !b };
            r.say(opt, format!("direct = {}", r.direct), true);
        }
        None => bad(opt, notes, "must be 0 or 1"),
    }
}

pub(super) fn time_based(opt: &Opt, r: &mut Read, notes: &mut Notes) {
    match bool_opt(opt) {
        Some(b) => {
            r.time_based = b;
            let how = if b {
                "runs for its duration"
            } else {
                "fio's default: the job ends when its I/O is done (its io_limit)"
            };
            r.say(opt, how, true);
        }
        None => bad(opt, notes, "must be 0 or 1"),
    }
}

pub(super) fn runtime(opt: &Opt, r: &mut Read, notes: &mut Notes) {
    match fio_seconds(opt.val()) {
        Ok(sec) => {
            r.runtime = Some(sec);
            r.say(opt, "duration", true);
        }
        Err(e) => bad(opt, notes, e),
    }
}

pub(super) fn ramp_time(opt: &Opt, r: &mut Read, notes: &mut Notes) {
    match fio_seconds(opt.val()) {
        Ok(sec) => {
            r.warmup = sec;
            r.say(opt, "warmup (measured apart, left out of the totals)", true);
        }
        Err(e) => bad(opt, notes, e),
    }
}

/// `startdelay=`: fio's job waits before it starts, and its runtime
/// counts from then, so one delay for a whole run changes when it is
/// measured, not what; a range gives each thread its own start.
pub(super) fn startdelay(opt: &Opt, r: &mut Read, notes: &mut Notes) {
    let v = opt.val().trim();
    if v.contains('-') {
        return notes.unsupported(
            &opt.at,
            &opt.text(),
            "a random start delay per thread (volbench starts a run's threads together)",
        );
    }
    match fio_seconds(v) {
        Ok(0.0) => r.say(opt, "no delay", true),
        Ok(_) => r.say(
            opt,
            "volbench starts the run without the delay: fio's runtime counts from the \
             job's start, so the same I/O is measured, only sooner",
            false,
        ),
        Err(e) => bad(opt, notes, e),
    }
}

pub(super) fn rate_process(opt: &Opt, r: &mut Read, notes: &mut Notes) {
    let (a, name) = match opt.val().trim() {
        "linear" => (Arrivals::Uniform, "uniform"),
        "poisson" => (Arrivals::Poisson, "poisson"),
        _ => return bad(opt, notes, "must be linear or poisson"),
    };
    r.arrivals = Some(a);
    r.say(opt, format!("arrivals = \"{name}\""), true);
}

/// `filename=`: resolved with `directory=` once every option is read.
pub(super) fn filename(opt: &Opt, r: &mut Read, _: &mut Notes) {
    r.filename = Some(opt.val().to_string());
}

pub(super) fn directory(opt: &Opt, r: &mut Read, notes: &mut Notes) {
    let v = opt.val();
    if v.contains(':') && !v.contains('\\') {
        notes.unsupported(&opt.at, &opt.text(), "several directories");
    } else {
        r.directory = Some(v.to_string());
    }
}

pub(super) fn nrfiles(opt: &Opt, r: &mut Read, notes: &mut Notes) {
    match opt.val().trim().parse::<u64>() {
        Ok(n) if (1..=bounds::MAX_FILES).contains(&n) => {
            r.nrfiles = n;
            r.say(opt, "files", true);
        }
        _ => bad(opt, notes, format!("must be 1..{}", bounds::MAX_FILES)),
    }
}

/// A byte count for size=, filesize= and io_size=.
fn bytes(opt: &Opt, notes: &mut Notes) -> Option<u64> {
    let v = opt.val();
    if v.trim().ends_with('%') || v.contains('-') {
        notes.unsupported(&opt.at, &opt.text(), "sizes as a percentage or a range");
        return None;
    }
    match parse_size(v) {
        Ok(b) if b > 0 && b <= bounds::MAX_SIZE => Some(b),
        Ok(_) => {
            bad(opt, notes, "must be 1..8p");
            None
        }
        Err(e) => {
            bad(opt, notes, e.message);
            None
        }
    }
}

pub(super) fn size(opt: &Opt, r: &mut Read, notes: &mut Notes) {
    if let Some(b) = bytes(opt, notes) {
        r.size = Some(b);
        r.say(opt, "size (the working set)", true);
    }
}

pub(super) fn filesize(opt: &Opt, r: &mut Read, notes: &mut Notes) {
    if let Some(b) = bytes(opt, notes) {
        r.filesize = Some(b);
        r.say(opt, "size (the working set)", true);
    }
}

pub(super) fn io_size(opt: &Opt, r: &mut Read, notes: &mut Notes) {
    if let Some(b) = bytes(opt, notes) {
        r.io_size = Some(b);
        r.say(opt, "io_limit (times numjobs)", true);
    }
}

/// `number_ios=`: a job stops after this many I/Os, as bytes once the
/// block size is known.
pub(super) fn number_ios(opt: &Opt, r: &mut Read, notes: &mut Notes) {
    match opt.val().trim().parse::<u64>() {
        Ok(0) => r.say(opt, "fio's default: no count", true),
        Ok(n) if n <= bounds::MAX_SIZE => r.number_ios = Some((n, opt.clone())),
        _ => bad(opt, notes, "must be a whole number of I/Os"),
    }
}

pub(super) fn randseed(opt: &Opt, r: &mut Read, notes: &mut Notes) {
    match opt.val().trim().parse::<u64>() {
        Ok(n) => {
            r.seed = Some(n);
            r.say(opt, "seed", true);
        }
        Err(_) => bad(opt, notes, "must be a whole number"),
    }
}

/// `norandommap`: offsets drawn independently (volbench's own default).
pub(super) fn norandommap(opt: &Opt, r: &mut Read, notes: &mut Notes) {
    match bool_opt(opt) {
        Some(b) => {
            r.norandommap = b;
            let how = if b {
                "random offsets drawn independently, blocks revisited within a pass"
            } else {
                "fio's random map: every block once per pass"
            };
            r.say(opt, how, true);
        }
        None => bad(opt, notes, "must be 0 or 1"),
    }
}

pub(super) fn stonewall(opt: &Opt, r: &mut Read, _: &mut Notes) {
    r.stonewall = bool_opt(opt).unwrap_or(true);
    r.say(opt, "a new run, after the runs before it", true);
}

pub(super) fn wait_for(opt: &Opt, r: &mut Read, _: &mut Notes) {
    r.wait_for = Some(opt.val().to_string());
    r.say(opt, "a new run, after the runs before it", true);
}

pub(super) fn name(opt: &Opt, r: &mut Read, _: &mut Notes) {
    r.say(opt, "the run's name", true);
}

pub(super) fn description(opt: &Opt, r: &mut Read, _: &mut Notes) {
    r.say(opt, "kept here only", true);
}
