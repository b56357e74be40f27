//! fio's options for skew, syncs, think time and O_SYNC, onto volbench's
//! run shape (`spec::shape`) and write_sync; the rest of a job is
//! `fio_job.rs`. Each option is mapped, noted or refused by name.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use super::super::{How, Mapping, Notes};
use super::parse::Opt;
use crate::spec::shape::Distribution;
use crate::units::parse_duration;

/// What a job's options add to its run: suite keys with their TOML values.
#[derive(Debug, Default)]
pub(super) struct Extra {
    pub(super) shape: Vec<(&'static str, String)>,
    pub(super) write_sync: Option<&'static str>,
    /// Suite [defaults] data keys (`fio_data.rs`).
    pub(super) data: Vec<(&'static str, String)>,
}

fn quoted(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// How one fio option was mapped: exactly, or with a note printed.
pub(super) fn mapping(opt: &Opt, how: String, exact: bool) -> Mapping {
    Mapping {
        at: opt.at.clone(),
        option: opt.text(),
        how: if exact {
            How::Exact(how)
        } else {
            How::Note(how)
        },
    }
}

/// True when `key` is one of these options (mapped, noted or refused here).
pub(super) fn map(
    key: &str,
    opt: &Opt,
    extra: &mut Extra,
    mapped: &mut Vec<Mapping>,
    notes: &mut Notes,
) -> bool {
    let v = opt.val().trim();
    let (at, text) = (opt.at.as_str(), opt.text());
    let mut say = |how: String, exact: bool| mapped.push(mapping(opt, how, exact));
    let count = |v: &str| v.parse::<u64>().ok().filter(|n| *n <= u32::MAX as u64);
    match key {
        "random_distribution" => {
            let (kind, arg) = v.split_once(':').unwrap_or((v, ""));
            let (dist, exact) = match kind {
                "random" => ("uniform".to_string(), true),
                "zipf" | "pareto" => (format!("{kind}:{arg}"), false),
                // fio's zones run from the start of the space, as volbench's.
                "zoned" => match fio_zones(arg) {
                    Ok(hot) => (hot, true),
                    Err(why) => {
                        notes.refuse(at, &text, why);
                        return true;
                    }
                },
                _ => {
                    notes.unsupported(
                        at,
                        &text,
                        &format!(
                            "the '{kind}' distribution; volbench has random, zipf, pareto and zoned"
                        ),
                    );
                    return true;
                }
            };
            match Distribution::parse(&dist) {
                Err(e) => notes.refuse(at, &text, e.message),
                Ok(_) if exact => {
                    say(format!("distribution = {dist}"), true);
                    extra.shape.push(("distribution", quoted(&dist)));
                }
                Ok(_) => {
                    say(
                        format!(
                            "distribution = {dist}, the same shares; volbench keeps the hottest blocks at the \
                             start of the space where fio scatters them"
                        ),
                        false,
                    );
                    extra.shape.push(("distribution", quoted(&dist)));
                }
            }
        }
        "fsync" | "fdatasync" => match count(v) {
            Some(0) => say("fio's default: none".into(), true),
            Some(n) => {
                extra.shape.push(("fsync_every", n.to_string()));
                if key == "fdatasync" {
                    extra.shape.push(("fdatasync", "true".into()));
                }
                say(
                    format!("{key} every {n} writes per thread (fsync_every)"),
                    true,
                );
            }
            None => notes.refuse(at, &text, "must be a whole number of writes"),
        },
        "end_fsync" => match v {
            "0" => say("fio's default: none".into(), true),
            "" | "1" => {
                extra.shape.push(("end_fsync", "true".into()));
                say("end_fsync = true".into(), true);
            }
            _ => notes.refuse(at, &text, "must be 0 or 1"),
        },
        "thinktime" => {
            // fio's plain numbers here are microseconds.
            let d = match v.parse::<u64>() {
                Ok(us) => Ok(std::time::Duration::from_micros(us)),
                Err(_) => parse_duration(v),
            };
            match d {
                Ok(d) if d.is_zero() => say("fio's default: none".into(), true),
                Ok(d) => {
                    let t = format!("{}us", d.as_micros());
                    extra.shape.push(("think_time", quoted(&t)));
                    say(format!("think_time = {t} after each completion"), true);
                }
                Err(e) => notes.refuse(at, &text, e.message),
            }
        }
        "thinktime_blocks" if v == "1" => say("think after every I/O".into(), true),
        "thinktime_blocks" | "thinktime_spin" | "thinktime_blocks_type" | "thinktime_iotime" => {
            notes.unsupported(at, &text, "think time other than after every I/O")
        }
        "sync" => {
            let mode = match v {
                "0" | "none" => None,
                "" | "1" | "sync" => Some("sync"),
                "dsync" => Some("dsync"),
                _ => {
                    notes.refuse(at, &text, "must be 0, 1, none, sync or dsync");
                    return true;
                }
            };
            match mode {
                None => say("no O_SYNC".into(), true),
                Some(m) => {
                    extra.write_sync = Some(m);
                    say(format!("write_sync = {m} (O_{})", m.to_uppercase()), true);
                }
            }
        }
        _ => return false,
    }
    true
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
