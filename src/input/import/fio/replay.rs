//! fio's read_iolog and replay_* options: a job that replays a log becomes
//! a suite run with a `replay` table (`input::suite::replay`), as `run
//! --replay` would replay it. fio takes the I/O from the log, so the
//! options that would describe another workload are noted as fio ignores
//! them, or refused when fio would still apply them and volbench cannot.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::collections::BTreeMap;
use std::path::Path;

use super::super::{How, Mapping, Notes, PathMap, run_name, secs_text};
use super::parse::{Job, Opt, Read, Section, bool_opt};
use crate::input::suite::replay::ReplayEntry;
use crate::input::suite::write::value;
use crate::input::suite::{Defaults, RunEntry};

fn bad(opt: &Opt, notes: &mut Notes, why: impl Into<String>) {
    notes.refuse(&opt.at, &opt.text(), why);
}

fn seen(opt: &Opt, r: &mut Read) {
    if r.replay.first.is_none() {
        r.replay.first = Some(opt.clone());
    }
}

pub(super) fn read_iolog(opt: &Opt, r: &mut Read, notes: &mut Notes) {
    let v = opt.val().trim();
    if v.is_empty() || v == "-" || v.contains(':') {
        return bad(
            opt,
            notes,
            "one log file a job (not stdin, a socket or fio's per-clone ':' list)",
        );
    }
    r.replay.log = Some(opt.clone());
    r.say(
        opt,
        "replay = { file = ... }: the run replays this log",
        true,
    );
}

pub(super) fn replay_no_stall(opt: &Opt, r: &mut Read, notes: &mut Notes) {
    seen(opt, r);
    match bool_opt(opt) {
        Some(true) => {
            r.replay.speed = Some("max".into());
            r.say(opt, "speed = \"max\": as fast as the depth allows", true);
        }
        Some(false) => r.say(opt, "the log's timing kept", true),
        None => bad(opt, notes, "must be 0 or 1"),
    }
}

/// fio's percent of the recorded rate: 200 is twice as fast.
pub(super) fn replay_time_scale(opt: &Opt, r: &mut Read, notes: &mut Notes) {
    seen(opt, r);
    let lo = (crate::units::bounds::MIN_REPLAY_SPEED * 100.0).ceil() as u64;
    let hi = (crate::units::bounds::MAX_REPLAY_SPEED * 100.0) as u64;
    match opt.val().trim().parse::<u64>() {
        Ok(p) if (lo..=hi).contains(&p) => {
            if r.replay.speed.is_none() {
                r.replay.speed = Some(format!("{}", p as f64 / 100.0));
            }
            r.say(
                opt,
                "speed: the percent of the recorded rate as a factor",
                true,
            );
        }
        _ => bad(opt, notes, format!("must be a whole percent, {lo}..{hi}")),
    }
}

pub(super) fn replay_redirect(opt: &Opt, r: &mut Read, notes: &mut Notes) {
    seen(opt, r);
    if opt.val().trim().is_empty() {
        return bad(opt, notes, "names no device or file");
    }
    r.replay.redirect = Some(opt.clone());
    r.say(opt, "the target the log is replayed onto", true);
}

/// replay_scale, replay_align and replay_skip: checked here by the suite's
/// own parser, so an import never writes a key its suite refuses.
fn mapped(opt: &Opt, r: &mut Read, notes: &mut Notes, key: &str) -> Option<String> {
    seen(opt, r);
    let v = opt.val().trim().to_string();
    let (scale, align, skip) = match key {
        "scale" => (Some(v.as_str()), None, None),
        "align" => (None, Some(v.as_str()), None),
        _ => (None, None, Some(v.as_str())),
    };
    match crate::input::replay::parse_map(scale, align, skip) {
        Ok(_) => {
            r.say(opt, format!("replay {key}"), true);
            Some(v)
        }
        Err(e) => {
            bad(opt, notes, e.message);
            None
        }
    }
}

pub(super) fn replay_scale(opt: &Opt, r: &mut Read, notes: &mut Notes) {
    r.replay.scale = mapped(opt, r, notes, "scale");
}

pub(super) fn replay_align(opt: &Opt, r: &mut Read, notes: &mut Notes) {
    r.replay.align = mapped(opt, r, notes, "align");
}

pub(super) fn replay_skip(opt: &Opt, r: &mut Read, notes: &mut Notes) {
    r.replay.skip = mapped(opt, r, notes, "skip");
}

/// Options fio reads from the log instead when it replays one.
const FROM_LOG: &[&str] = &[
    "rw",
    "rwmixread",
    "rwmixwrite",
    "rw_sequencer",
    "bs",
    "bssplit",
    "blocksize_range",
    "blockalign",
    "filename",
    "directory",
    "nrfiles",
    "size",
    "filesize",
    "io_size",
    "number_ios",
    "randseed",
    "norandommap",
    "random_distribution",
];

/// Options that keep their meaning in a replay.
const KEPT: &[&str] = &[
    "name",
    "description",
    "iodepth",
    "ioengine",
    "direct",
    "buffered",
    "runtime",
    "stonewall",
    "wait_for",
    "read_iolog",
    "replay_no_stall",
    "replay_time_scale",
    "replay_redirect",
    "replay_align",
    "replay_scale",
    "replay_skip",
];

/// The job of a section with read_iolog: its one run replays the log
/// onto replay_redirect, else the file the log names.
pub(super) fn job(
    s: &Section,
    o: &BTreeMap<String, Opt>,
    mut r: Read,
    map: &PathMap,
    notes: &mut Notes,
    maps: &dyn Fn(&str) -> bool,
) -> Option<Job> {
    let log = r.replay.log.clone()?;
    let before = notes.refused.len();
    let from_log = "fio takes the I/O from the log when it replays one, and so does volbench";
    let mut notes_here: Vec<Mapping> = Vec::new();
    for (key, opt) in o {
        if FROM_LOG.contains(&key.as_str()) {
            notes_here.push(opt.mapping(from_log, false));
        } else if key == "numjobs" && opt.val().trim() != "1" {
            bad(
                opt,
                notes,
                "clones replaying one log at once: give one job a log",
            );
        } else if maps(key) && !KEPT.contains(&key.as_str()) {
            bad(
                opt,
                notes,
                "does not go with read_iolog: the log says what to issue and when",
            );
        }
    }
    let file = log.val().trim();
    let path = if Path::new(file).is_absolute() {
        Path::new(file).to_path_buf()
    } else {
        s.dir.join(file)
    };
    let named = match crate::io::replay::named_file(&path) {
        Ok((_, named)) => named,
        Err(e) => {
            bad(&log, notes, e.message);
            return None;
        }
    };
    let target = match (&r.replay.redirect, named) {
        (Some(opt), _) => match map.resolve(opt.val().trim()) {
            Ok((p, _)) if crate::io::backend::is_url(std::path::Path::new(&p)) => {
                let how =
                    "a replay goes onto an existing file or device; replay onto a mounted path";
                bad(opt, notes, super::super::url_map::existing_file(&p, how));
                return None;
            }
            Ok((p, _)) => p,
            Err(e) => {
                bad(opt, notes, e);
                return None;
            }
        },
        (None, Some(f)) => {
            notes_here.push(Mapping {
                at: log.at.clone(),
                option: log.text(),
                how: How::Note(format!(
                    "replayed onto the file the log names, {}, as fio does",
                    crate::units::bounds::one_line(&f)
                )),
            });
            f
        }
        (None, None) => {
            bad(
                &log,
                notes,
                "a blktrace log names its device by number: give replay_redirect",
            );
            return None;
        }
    };
    if notes.refused.len() > before {
        return None;
    }
    let name = o
        .get("name")
        .map(|n| n.val().to_string())
        .unwrap_or_else(|| s.name.clone());
    let mut mapped_notes = std::mem::take(&mut r.mapped);
    mapped_notes.retain(|m| {
        !notes_here
            .iter()
            .any(|n| n.option == m.option && n.at == m.at)
    });
    mapped_notes.extend(notes_here);
    let rp = std::mem::take(&mut r.replay);
    // The trace says what, when and where; the depth and a duration cap
    // are the run's own.
    let mut run = RunEntry::named(&run_name(&name));
    run.iodepth = value(r.iodepth);
    if let Some(t) = r.runtime {
        run.duration = value(secs_text(t));
    }
    run.replay = RunEntry::replay_of(ReplayEntry {
        file: path.display().to_string(),
        speed: rp.speed.and_then(value),
        scale: rp.scale.and_then(value),
        align: rp.align.and_then(value),
        skip: rp.skip.and_then(value),
        ..ReplayEntry::default()
    });
    Some(Job {
        name: name.clone(),
        at: s.at.clone(),
        stonewall: r.stonewall,
        wait_for: r.wait_for.clone(),
        numjobs: 1,
        run,
        said: mapped_notes,
        threads: 1,
        rate: None,
        io_limit: None,
        target,
        shared_file: true,
        step: 0,
        size: None,
        files: 1,
        direct: r.direct,
        engine: r.engine,
        seed: None,
        write_sync: None,
        data: Defaults::default(),
        threads_total: false,
    })
}
