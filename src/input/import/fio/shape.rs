//! fio's options for skew, syncs, think time and O_SYNC, onto volbench's
//! run shape (`spec::shape`) and write_sync; the rest of a job is
//! in `workload.rs`. Each function is one row's of `options.rs`.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use super::super::Notes;
use super::parse::{Opt, Read};
use crate::input::suite::write::value;
use crate::spec::shape::Distribution;
use crate::units::parse_duration;

fn count(v: &str) -> Option<u64> {
    v.parse::<u64>().ok().filter(|n| *n <= u32::MAX as u64)
}

/// `random_distribution=`: random, zipf, pareto or zoned offsets.
pub(super) fn random_distribution(opt: &Opt, r: &mut Read, notes: &mut Notes) {
    let v = opt.val().trim();
    let (at, text) = (opt.at.as_str(), opt.text());
    let (kind, arg) = v.split_once(':').unwrap_or((v, ""));
    let (dist, exact) = match kind {
        "random" => ("uniform".to_string(), true),
        "zipf" | "pareto" => (format!("{kind}:{arg}"), false),
        // fio's zones run from the start of the space, as volbench's.
        "zoned" => match fio_zones(arg) {
            Ok(hot) => (hot, true),
            Err(why) => return notes.refuse(at, &text, why),
        },
        _ => {
            return notes.unsupported(
                at,
                &text,
                &format!("the '{kind}' distribution; volbench has random, zipf, pareto and zoned"),
            );
        }
    };
    match Distribution::parse(&dist) {
        Err(e) => notes.refuse(at, &text, e.message),
        Ok(_) if exact => {
            r.say(opt, format!("distribution = {dist}"), true);
            r.run.distribution = value(dist);
        }
        Ok(_) => {
            r.say(
                opt,
                format!(
                    "distribution = {dist}, the same shares; volbench keeps the hottest blocks at the \
                     start of the space where fio scatters them"
                ),
                false,
            );
            r.run.distribution = value(dist);
        }
    }
}

/// `fsync=N`: an fsync every N writes.
pub(super) fn fsync(opt: &Opt, r: &mut Read, notes: &mut Notes) {
    sync_every(opt, r, notes, false)
}

/// `fdatasync=N`: an fdatasync every N writes.
pub(super) fn fdatasync(opt: &Opt, r: &mut Read, notes: &mut Notes) {
    sync_every(opt, r, notes, true)
}

fn sync_every(opt: &Opt, r: &mut Read, notes: &mut Notes, data: bool) {
    match count(opt.val().trim()) {
        Some(0) => r.say(opt, "fio's default: none", true),
        Some(n) => {
            r.run.fsync_every = value(n);
            if data {
                r.run.fdatasync = value(true);
            }
            let call = if data { "fdatasync" } else { "fsync" };
            r.say(
                opt,
                format!("{call} every {n} writes per thread (fsync_every)"),
                true,
            );
        }
        None => notes.refuse(&opt.at, &opt.text(), "must be a whole number of writes"),
    }
}

/// `end_fsync`: sync the files when the job ends.
pub(super) fn end_fsync(opt: &Opt, r: &mut Read, notes: &mut Notes) {
    match opt.val().trim() {
        "0" => r.say(opt, "fio's default: none", true),
        "" | "1" => {
            r.run.end_fsync = value(true);
            r.say(opt, "end_fsync = true", true);
        }
        _ => notes.refuse(&opt.at, &opt.text(), "must be 0 or 1"),
    }
}

/// `thinktime`: a pause after each I/O (fio's plain numbers are microseconds).
pub(super) fn thinktime(opt: &Opt, r: &mut Read, notes: &mut Notes) {
    let v = opt.val().trim();
    let d = match v.parse::<u64>() {
        Ok(us) => Ok(std::time::Duration::from_micros(us)),
        Err(_) => parse_duration(v),
    };
    match d {
        Ok(d) if d.is_zero() => r.say(opt, "fio's default: none", true),
        Ok(d) => {
            let t = format!("{}us", d.as_micros());
            r.run.think_time = value(t.as_str());
            r.say(opt, format!("think_time = {t} after each completion"), true);
        }
        Err(e) => notes.refuse(&opt.at, &opt.text(), e.message),
    }
}

/// `thinktime_blocks=1` is the only count volbench's think time has.
pub(super) fn thinktime_blocks(opt: &Opt, r: &mut Read, notes: &mut Notes) {
    if opt.val().trim() == "1" {
        r.say(opt, "think after every I/O", true);
    } else {
        notes.unsupported(
            &opt.at,
            &opt.text(),
            "think time other than after every I/O",
        );
    }
}

/// `sync=`: O_SYNC or O_DSYNC writes.
pub(super) fn sync(opt: &Opt, r: &mut Read, notes: &mut Notes) {
    let mode = match opt.val().trim() {
        "0" | "none" => None,
        "" | "1" | "sync" => Some("sync"),
        "dsync" => Some("dsync"),
        _ => return notes.refuse(&opt.at, &opt.text(), "must be 0, 1, none, sync or dsync"),
    };
    match mode {
        None => r.say(opt, "no O_SYNC", true),
        Some(m) => {
            r.write_sync = Some(m);
            r.say(
                opt,
                format!("write_sync = {m} (O_{})", m.to_uppercase()),
                true,
            );
        }
    }
}

/// fio's `zoned:` list as volbench's `hot:` list. fio gives the zones with
/// no size share what the others leave, split evenly in whole percents
/// (`20/` last = the rest of the space), so the same is done here.
fn fio_zones(arg: &str) -> std::result::Result<String, String> {
    if arg.contains(',') {
        return Err("not supported yet (different zones for reads and writes)".into());
    }
    let zones: Vec<(&str, &str)> = arg
        .split(':')
        .map(|z| z.split_once('/').unwrap_or((z, "")))
        .collect();
    let given = |s: &str| s.trim().parse::<u64>().ok().filter(|n| *n > 0);
    let sized: u64 = zones.iter().filter_map(|(_, s)| given(s)).sum();
    let missing = zones.iter().filter(|(_, s)| given(s).is_none()).count() as u64;
    if missing > 0 && sized >= 100 {
        return Err(format!(
            "zones with no size share get what the others leave, and they leave {}%",
            100u64.saturating_sub(sized)
        ));
    }
    let rest = match missing {
        0 => 0,
        m => (100 - sized) / m,
    };
    let parts: Vec<String> = zones
        .iter()
        .map(|(a, s)| format!("{}/{}", a.trim(), given(s).unwrap_or(rest)))
        .collect();
    Ok(format!("hot:{}", parts.join(",")))
}
