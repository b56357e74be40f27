//! fio's per-direction rates (`rate_iops=r,w`, `rate=r,w`), its latency
//! target (`latency_target`, `latency_percentile`, `latency_window`,
//! `latency_run`) and its steady state (`ss`, `ss_dur`, `ss_ramp`): the rows'
//! functions, then what the job makes of them once every option is read.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use super::super::{How, Notes, size_text};
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

/// `rate_iops=`: one value for both directions, or each its own; what
/// they become is decided with the block sizes (`resolve`).
pub(super) fn rate_iops(opt: &Opt, r: &mut Read, notes: &mut Notes) {
    match per_direction(opt.val(), positive_rate) {
        Ok((Some(a), Some(b))) if a == b => {
            r.rate_iops = Some(a);
            r.rate_opt = Some(opt.clone());
        }
        Ok((None, None)) => notes.refuse(&opt.at, &opt.text(), "gives no rate"),
        Ok((a, b)) => r.rate_dirs = Some((a, b, opt.clone())),
        Err(e) => notes.refuse(&opt.at, &opt.text(), e),
    }
}

/// `rate=` in bytes per second: as `rate_iops`, made a cap per direction
/// once the block sizes are known (`resolve`).
pub(super) fn rate(opt: &Opt, r: &mut Read, notes: &mut Notes) {
    match per_direction(opt.val(), positive_size) {
        Ok((Some(a), Some(b))) if a == b => r.rate_bw = Some((a, opt.clone())),
        Ok((None, None)) => notes.refuse(&opt.at, &opt.text(), "gives no rate"),
        Ok((a, b)) => r.rate_bw_dirs = Some((a, b, opt.clone())),
        Err(e) => notes.refuse(&opt.at, &opt.text(), e),
    }
}

/// The job's rates onto the run, once the pattern, block sizes and numjobs
/// are known, as fio sets them (init.c's `setup_rate`): each direction's
/// cap is `rate=` in bytes a second when given, else `rate_iops=` times the
/// job's smallest block size, so over one block size a cap is exact IOPS
/// and over a `bssplit` mix it is bytes. fio holds each direction of a
/// mixed job at its own cap (it issues the other direction while one is
/// ahead of its schedule): both capped, the mix follows the caps,
/// `rate_iops = "R,W"` or `rate_bw = "R,W"` across the job's threads, and
/// the run takes no read_pct; one capped, refused, as fio then runs the
/// other uncapped beside it. A one-direction job takes its own direction's
/// cap. None when the rates were refused.
pub(super) fn resolve(r: &mut Read, notes: &mut Notes) -> Option<()> {
    let (bw_r, bw_w, bw_opt) = match (r.rate_bw.take(), r.rate_bw_dirs.take()) {
        (Some((b, o)), _) => (Some(b), Some(b), Some(o)),
        (None, Some((a, b, o))) => (a, b, Some(o)),
        (None, None) => (None, None, None),
    };
    let (io_r, io_w, io_opt) = match (r.rate_iops.take(), r.rate_dirs.take()) {
        (Some(x), _) => (Some(x), Some(x), r.rate_opt.take()),
        (None, Some((a, b, o))) => (a, b, Some(o)),
        (None, None) => (None, None, None),
    };
    let Some(opt) = bw_opt.clone().or(io_opt.clone()) else {
        return Some(());
    };
    // Said again below, as what they become together.
    for o in [&bw_opt, &io_opt].into_iter().flatten() {
        r.mapped.retain(|m| m.at != o.at);
    }
    // fio keeps each direction's smallest size (min_bs[ddir]): with
    // bs=R,W a direction's rate_iops is IOPS of its own size.
    let writes = r.write_bs.clone().unwrap_or_else(|| r.bs.clone());
    let min_of = |sizes: &[(u64, u32)]| sizes.iter().map(|b| b.0).min().unwrap_or(4096) as f64;
    let (min_r, min_w) = (min_of(&r.bs), min_of(&writes));
    let one_bs = r.bs.len() == 1 && writes.len() == 1;
    let cap =
        |bw: Option<u64>, io: Option<f64>, min: f64| bw.map(|b| b as f64).or(io.map(|i| i * min));
    let (read, write) = (cap(bw_r, io_r, min_r), cap(bw_w, io_w, min_w));
    let min_bs = min_r.min(min_w);
    let mut from = String::new();
    if bw_opt.is_some() && io_opt.is_some() {
        from.push_str("; rate= wins over rate_iops= in a direction both cap, as in fio");
    } else if io_opt.is_some() && !one_bs {
        from.push_str(&format!(
            "; fio caps a job of several block sizes at rate_iops x its smallest ({}) in bytes",
            size_text(min_bs as u64)
        ));
    }
    let n = r.numjobs as f64;
    if r.rw.is_mixed() {
        let (Some(read), Some(write)) = (read, write) else {
            return one_sided(&opt, notes);
        };
        if one_bs {
            let text = format!(
                "{},{}",
                trim(read / min_r * n, 3),
                trim(write / min_w * n, 3)
            );
            r.say(
                &opt,
                format!(
                    "rate_iops = \"{text}\" (reads, writes per second across the job's threads; \
                     the mix follows the caps{from})"
                ),
                true,
            );
            r.run.rate_iops = value(text);
        } else {
            let across = |x: f64| format!("{}/s", size_text((x * n).round() as u64));
            let text = format!("{},{}", across(read), across(write));
            r.say(
                &opt,
                format!(
                    "rate_bw = \"{text}\" (read, write bandwidth across the job's threads; the \
                     mix follows the caps{from})"
                ),
                true,
            );
            r.run.rate_bw = value(text);
        }
        mix_from_caps(r);
        return Some(());
    }
    let reads = r.rw.fixed_read_pct() == Some(100);
    let (own, what, min) = if reads {
        (read, "reads", min_r)
    } else {
        (write, "writes", min_w)
    };
    match own {
        Some(x) if one_bs => {
            r.rate_iops = Some(x / min);
            r.say(
                &opt,
                format!(
                    "rate = {} IOPS per job (the job {what}{from})",
                    trim(x / min, 3)
                ),
                true,
            );
        }
        Some(x) => {
            let text = format!("{}/s", size_text((x * n).round() as u64));
            r.say(
                &opt,
                format!("rate = \"{text}\" across the job's threads (the job {what}{from})"),
                true,
            );
            r.run.rate = value(text);
        }
        None => r.say(
            &opt,
            format!("no rate: the job only {what}, which it leaves uncapped"),
            true,
        ),
    }
    Some(())
}

/// A mixed job with one direction capped: fio issues the other whenever
/// the capped one is ahead of its schedule, so it runs uncapped beside it;
/// volbench paces a run's reads and writes together.
fn one_sided(opt: &Opt, notes: &mut Notes) -> Option<()> {
    notes.unsupported(
        &opt.at,
        &opt.text(),
        "a cap on one direction of a mixed job (fio runs the other uncapped beside it; volbench \
         paces reads and writes together: cap both, or neither)",
    );
    None
}

/// Both directions capped: fio holds each at its cap and rwmixread only
/// picks the direction while neither is ahead, so the caps make the mix.
fn mix_from_caps(r: &mut Read) {
    r.mix_from_caps = true;
    for m in &mut r.mapped {
        if m.option.starts_with("rwmixread") || m.option.starts_with("rwmixwrite") {
            m.how = How::Note(
                "the caps make the mix: fio holds each direction at its rate cap (rwmix picks \
                 the direction only while both are behind: at saturation fio runs this mix, \
                 volbench the caps' ratio)"
                    .into(),
            );
        }
    }
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
