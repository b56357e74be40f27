//! fio's per-direction rates (`rate_iops=r,w`, `rate=r,w`), its latency
//! target (`latency_target`, `latency_percentile`, `latency_window`,
//! `latency_run`) and its steady state (`ss`, `ss_dur`, `ss_ramp`): the rows'
//! functions, then what the job makes of them once every option is read.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use super::super::Notes;
use super::parse::{Opt, Read};
use crate::input::suite::write::value;
use crate::units::{bounds, parse_duration, parse_size, trim};

/// fio's `a,b`: `a` for both directions, `a,b` each, `a,` reads only,
/// `,b` writes only.
fn per_direction<T: Copy>(
    v: &str,
    one: impl Fn(&str) -> Result<T, String>,
) -> Result<(Option<T>, Option<T>), String> {
    let parts: Vec<&str> = v.split(',').map(str::trim).collect();
    let side = |t: &str| -> Result<Option<T>, String> {
        if t.is_empty() {
            Ok(None)
        } else {
            one(t).map(Some)
        }
    };
    match parts.as_slice() {
        [a] => {
            let a = side(a)?;
            Ok((a, a))
        }
        [a, b] => Ok((side(a)?, side(b)?)),
        _ => Err("takes reads,writes (two values at most: volbench has no trim rate)".into()),
    }
}

fn positive_rate(t: &str) -> Result<f64, String> {
    t.parse::<f64>()
        .ok()
        .filter(|x| *x > 0.0 && x.is_finite())
        .ok_or_else(|| format!("'{t}' must be a positive number"))
}

fn positive_size(t: &str) -> Result<u64, String> {
    match parse_size(t) {
        Ok(b) if b > 0 => Ok(b),
        Ok(_) => Err(format!("'{t}' must be positive")),
        Err(e) => Err(e.message),
    }
}

/// `rate_iops=`: one value is the job's rate (each direction of a mixed
/// job is held to it, as fio does); two differing ones cap each direction.
pub(super) fn rate_iops(opt: &Opt, r: &mut Read, notes: &mut Notes) {
    match per_direction(opt.val(), positive_rate) {
        Ok((Some(a), Some(b))) if a == b => {
            r.rate_iops = Some(a);
            r.rate_opt = Some(opt.clone());
            r.say(opt, "rate (IOPS, times numjobs)", true);
        }
        Ok((None, None)) => notes.refuse(&opt.at, &opt.text(), "gives no rate"),
        Ok((a, b)) => r.rate_dirs = Some((a, b, opt.clone())),
        Err(e) => notes.refuse(&opt.at, &opt.text(), e),
    }
}

/// `rate=` in bytes per second: as `rate_iops`, turned into IOPS over the
/// job's block size once it is known.
pub(super) fn rate(opt: &Opt, r: &mut Read, notes: &mut Notes) {
    match per_direction(opt.val(), positive_size) {
        Ok((Some(a), Some(b))) if a == b => r.rate_bw = Some((a, opt.clone())),
        Ok((None, None)) => notes.refuse(&opt.at, &opt.text(), "gives no rate"),
        Ok((a, b)) => r.rate_bw_dirs = Some((a, b, opt.clone())),
        Err(e) => notes.refuse(&opt.at, &opt.text(), e),
    }
}

/// Per-direction rates onto the run, once the pattern, block size and
/// numjobs are known: a mixed job's caps become `rate_iops = "R,W"`
/// (across its threads); a one-direction job takes its own direction's.
/// A single rate on a mixed job caps each direction at it, as fio does.
/// None when the rates were refused.
pub(super) fn resolve(r: &mut Read, notes: &mut Notes) -> Option<()> {
    if let Some((a, b, opt)) = r.rate_bw_dirs.take() {
        let [(bs, _)] = r.bs.as_slice() else {
            notes.unsupported(
                &opt.at,
                &opt.text(),
                "separate read and write bandwidths with several block sizes (volbench caps \
                 each direction in IOPS)",
            );
            return None;
        };
        let bs = *bs as f64;
        r.rate_dirs = Some((a.map(|x| x as f64 / bs), b.map(|x| x as f64 / bs), opt));
    }
    let single = match (r.rw.is_mixed() && r.rate_dirs.is_none(), r.rate_iops) {
        (true, Some(x)) => r.rate_opt.clone().map(|opt| (x, opt)),
        _ => None,
    };
    if let Some((x, opt)) = single {
        r.rate_iops = None;
        // Said again below as what it becomes.
        r.mapped.retain(|m| m.at != opt.at);
        r.rate_dirs = Some((Some(x), Some(x), opt));
    }
    let Some((a, b, opt)) = r.rate_dirs.take() else {
        return Some(());
    };
    let n = r.numjobs as f64;
    if r.rw.is_mixed() {
        let show = |v: Option<f64>| v.map(|x| trim(x * n, 3)).unwrap_or_default();
        let text = format!("{},{}", show(a), show(b));
        r.say(
            &opt,
            format!("rate_iops = \"{text}\" (reads, writes per second across the job's threads)"),
            true,
        );
        r.run.rate_iops = value(text);
        return Some(());
    }
    let reads = r.rw.fixed_read_pct() == Some(100);
    let (own, what) = if reads { (a, "reads") } else { (b, "writes") };
    match own {
        Some(x) => {
            r.rate_iops = Some(x);
            r.say(
                &opt,
                format!("rate = {} IOPS per job (the job {what})", trim(x, 3)),
                true,
            );
        }
        None => r.say(
            &opt,
            format!("no rate: the job only {what}, which it leaves uncapped"),
            true,
        ),
    }
    Some(())
}

/// fio's latency options are microseconds without a unit.
fn fio_micros(v: &str) -> Result<f64, String> {
    let v = v.trim();
    let us = if !v.is_empty() && v.chars().all(|c| c.is_ascii_digit()) {
        v.parse::<f64>().map_err(|e| e.to_string())?
    } else {
        parse_duration(v).map_err(|e| e.message)?.as_secs_f64() * 1e6
    };
    let (lo, hi) = (
        bounds::MIN_LATENCY.as_secs_f64() * 1e6,
        bounds::MAX_LATENCY.as_secs_f64() * 1e6,
    );
    if us < lo || us > hi {
        return Err(format!("must be {}us..{}us", trim(lo, 3), trim(hi, 0)));
    }
    Ok(us)
}

pub(super) fn latency_target(opt: &Opt, r: &mut Read, notes: &mut Notes) {
    match fio_micros(opt.val()) {
        Ok(us) => r.latency_us = Some((us, opt.clone())),
        Err(e) => notes.refuse(&opt.at, &opt.text(), e),
    }
}

pub(super) fn latency_percentile(opt: &Opt, r: &mut Read, notes: &mut Notes) {
    match opt.val().trim().trim_end_matches('%').parse::<f64>() {
        Ok(p) if p > 0.0 && p <= 100.0 => r.latency_pct = Some((p, opt.clone())),
        _ => notes.refuse(
            &opt.at,
            &opt.text(),
            "must be a percentile above 0, at most 100",
        ),
    }
}

pub(super) fn latency_run(opt: &Opt, r: &mut Read, notes: &mut Notes) {
    match opt.val().trim() {
        "" | "0" => r.say(opt, "fio's default: find the load and report it", true),
        _ => notes.unsupported(
            &opt.at,
            &opt.text(),
            "fio keeps adjusting the depth while the job runs; volbench's search finds one \
             rate and reports it",
        ),
    }
}

/// The latency target onto the run: `latency_target = "pP=Tus"` (fio's
/// latency_percentile, 100 when absent, is the percentile held).
pub(super) fn latency(r: &mut Read) {
    let pct = r.latency_pct.take();
    let Some((us, opt)) = r.latency_us.take() else {
        if let Some((_, p)) = pct {
            r.say(&p, "no effect without latency_target (as in fio)", true);
        }
        return;
    };
    let p = pct.as_ref().map_or(100.0, |(p, _)| *p);
    let text = format!("p{}={}us", trim(p, 4), trim(us, 3));
    r.say(
        &opt,
        format!(
            "latency_target = \"{text}\": fio searches the queue depth, volbench the open-loop \
             rate at the job's depth (the highest load within the target either way)"
        ),
        false,
    );
    if let Some((_, popt)) = pct {
        r.say(
            &popt,
            format!("the percentile of latency_target = \"{text}\""),
            true,
        );
    }
    r.run.latency_target = value(text);
}

/// `ss=`: fio's IOPS band (`iops:10%`) onto volbench's steady warm-up;
/// the slope and bandwidth criteria have no equal.
pub(super) fn steady(opt: &Opt, r: &mut Read, notes: &mut Notes) {
    let v = opt.val().trim().to_ascii_lowercase();
    let (kind, _) = v.split_once(':').unwrap_or((v.as_str(), ""));
    if kind == "iops" {
        r.steady = Some(opt.clone());
        r.say(
            opt,
            "steady = true: volbench ends the warm-up once the last 5 intervals' IOPS are \
             within 10% of their mean, then measures for the runtime (fio ends the job there)",
            false,
        );
        r.run.steady = value(true);
    } else {
        notes.unsupported(
            &opt.at,
            &opt.text(),
            "volbench's steady state is IOPS within a band; bandwidth and slope criteria have no equal",
        );
    }
}
