//! `run --like PROFILE`: a production profile (`result::profile`) turned
//! into `run` flags, each derived value written down beside the figure it
//! came from. The flags a user gave win, so a profile can be bent ("the
//! same, but 64k") without editing it.

use crate::error::{Result, VbError};
use crate::input::args::RunArgs;
use crate::result::profile::sizes::{MixSize, SIZE_GROUP_RATIO, sectors};
use crate::result::profile::{DeviceSummary, Profile};
use crate::units::bounds::{MAX_PROFILE_FILE, MAX_RATE, MAX_THREADS, MIN_RATE};
use crate::units::trim;

/// --scale's bounds: a thousandfold either way covers any growth plan.
const MIN_SCALE: f64 = 0.01;
const MAX_SCALE: f64 = 1000.0;

fn scale(text: Option<&str>) -> Result<f64> {
    let Some(t) = text else { return Ok(1.0) };
    let n = t.trim().trim_end_matches(['x', 'X']);
    match n.parse::<f64>() {
        Ok(v) if (MIN_SCALE..=MAX_SCALE).contains(&v) => Ok(v),
        _ => Err(VbError::input(format!(
            "--scale {t}: a factor such as 2x or 1.5, {MIN_SCALE}..{MAX_SCALE}"
        ))),
    }
}

/// `a` with the flags `--like` derives filled in, and the lines that say
/// how; `a` itself when there is no --like.
pub(crate) fn resolve(a: &RunArgs) -> Result<(RunArgs, Vec<String>)> {
    let Some(path) = &a.like.like else {
        return Ok((a.clone(), Vec::new()));
    };
    let shown = path.display().to_string();
    let text = crate::input::file::read_text(path, "profile", MAX_PROFILE_FILE)?;
    let p = Profile::from_json(&text, &shown).map_err(VbError::input)?;
    derive(a, &p, &shown)
}

/// The derivation itself, on a profile already read.
pub(crate) fn derive(a: &RunArgs, p: &Profile, shown: &str) -> Result<(RunArgs, Vec<String>)> {
    let concurrency = match a.like.like_mode.as_deref() {
        None | Some("rate") => false,
        Some("concurrency") => true,
        Some(m) => {
            return Err(VbError::input(format!(
                "--like-mode {m}: rate or concurrency"
            )));
        }
    };
    let factor = scale(a.like.scale.as_deref())?;
    let d = p.device(a.like.like_device.as_deref()).ok_or_else(|| {
        VbError::input(match &a.like.like_device {
            Some(n) => format!(
                "--like-device {n}: not in {shown} (it has {})",
                p.devices.join(", ")
            ),
            None => format!("{shown} holds no block device to take a workload from"),
        })
    })?;
    if d.active_intervals == 0 || d.iops.mean <= 0.0 {
        return Err(VbError::input(format!(
            "{shown}: {} did no I/O during the capture: no workload to derive",
            d.name
        )));
    }
    let mut out = a.clone();
    let mut lines = vec![format!(
        "--like {shown}: device {} ({} s captured on {}, {} of {} intervals busy)",
        d.name,
        trim(p.duration_s, 1),
        p.host,
        d.active_intervals,
        p.intervals.len()
    )];
    let mut note = |flag: &str, given: bool, derived: String, from: String| {
        lines.push(if given {
            format!("  {flag}: given, kept (the profile says {derived}: {from})")
        } else {
            format!("  {flag} {derived}: {from}")
        });
        (!given).then_some(derived)
    };
    let read_pct = d.read_pct.mean.round().clamp(0.0, 100.0) as u64;
    let rw = match read_pct {
        100 => "randread",
        0 => "randwrite",
        _ => "randrw",
    };
    let why = "block counters do not tell random from sequential: random assumed".to_string();
    if let Some(v) = note("--rw", a.rw.is_some(), rw.into(), why) {
        out.rw = Some(v);
    }
    if rw == "randrw" {
        let from = format!("reads were {}% of requests", trim(d.read_pct.mean, 1));
        if let Some(v) = note(
            "--read-pct",
            a.read_pct.is_some(),
            read_pct.to_string(),
            from,
        ) {
            out.read_pct = Some(v);
        }
    }
    sizes(a, p, d, rw, &mut out, &mut note);
    let scaled = if factor == 1.0 {
        String::new()
    } else {
        format!(" x --scale {}", trim(factor, 2))
    };
    if concurrency {
        let n = (d.in_flight.mean * factor)
            .round()
            .clamp(1.0, MAX_THREADS as f64) as u64;
        let from = format!(
            "{} requests in flight on average{scaled}, one per thread (closed loop)",
            trim(d.in_flight.mean, 2)
        );
        if let Some(v) = note("--threads", a.common.threads.is_some(), n.to_string(), from) {
            out.common.threads = Some(v);
            out.common.iodepth = Some("1".into());
        }
    } else {
        let rate = (d.iops.mean * factor).clamp(MIN_RATE, MAX_RATE);
        let from = format!(
            "mean {} IOPS over the capture{scaled} (p95 {}, peak {}), open loop",
            trim(d.iops.mean, 0),
            trim(d.iops.p95, 0),
            trim(d.iops.peak, 0)
        );
        if let Some(v) = note("--rate", a.rate.is_some(), trim(rate, 2), from) {
            out.rate = Some(v);
        }
        // The rate asked must be reachable: Little's law says it needs
        // rate x latency in flight. One thread at iodepth 1 carried 430 of
        // 2,300 IOPS at 2.3 ms and the run was read as "saturated".
        let (n, from) = slots(rate, d);
        let given = a.common.threads.is_some() || a.common.iodepth.is_some();
        if let Some(v) = note("--threads", given, n.to_string(), from) {
            out.common.threads = Some(v);
            out.common.iodepth = Some("1".into());
        }
    }
    Ok((out, lines))
}

/// A size as --bs takes it: `8k`, or bytes when not whole KiB.
fn size_text(bytes: u64) -> String {
    if bytes & 1023 == 0 {
        format!("{}k", bytes / 1024)
    } else {
        bytes.to_string()
    }
}

/// A mix as --bs takes it: `8k`, or `4k:984,1024k:16`.
fn mix_text(mix: &[MixSize]) -> String {
    match mix {
        [only] => size_text(only.bytes),
        _ => mix
            .iter()
            .map(|m| format!("{}:{}", size_text(m.bytes), m.weight))
            .collect::<Vec<_>>()
            .join(","),
    }
}

/// --bs, and --write-bs when writes differ from reads: each direction's
/// sizes as production made them (`Profile::size_mix`), or the mean when
/// the profile's intervals do not hold the device (an older capture).
fn sizes(
    a: &RunArgs,
    p: &Profile,
    d: &DeviceSummary,
    rw: &str,
    out: &mut RunArgs,
    note: &mut impl FnMut(&str, bool, String, String) -> Option<String>,
) {
    let mean = |kib: f64| {
        let kib = if kib > 0.0 { kib } else { d.request_kib.mean };
        vec![MixSize {
            bytes: sectors(kib),
            weight: 1,
        }]
    };
    let mix = |writes: bool, kib: f64| {
        let m = p.size_mix(&d.name, writes);
        if m.is_empty() { mean(kib) } else { m }
    };
    let (reads, writes) = match rw {
        "randread" => (mix(false, d.read_kib), Vec::new()),
        "randwrite" => (mix(true, d.write_kib), Vec::new()),
        _ => (mix(false, d.read_kib), mix(true, d.write_kib)),
    };
    let how = |m: &[MixSize], kib: f64| match m {
        [_] => format!("{} KiB", trim(kib, 1)),
        _ => format!(
            "{} KiB on average, in {} sizes (intervals whose means lie within {}% of each \
             other make one size, weighted by their requests)",
            trim(kib, 1),
            m.len(),
            trim((SIZE_GROUP_RATIO - 1.0) * 100.0, 0)
        ),
    };
    let given = a.bs.is_some();
    if writes.is_empty() || writes == reads {
        let from = format!(
            "mean request {} KiB (reads {}, writes {}; intervals within {}% of it)",
            trim(d.request_kib.mean, 2),
            how(&reads, d.read_kib),
            how(
                if writes.is_empty() { &reads } else { &writes },
                d.write_kib
            ),
            trim(d.request_kib_spread * 100.0, 0)
        );
        if let Some(v) = note("--bs", given, mix_text(&reads), from) {
            out.bs = Some(v);
        }
        return;
    }
    let from = format!("reads' requests {}", how(&reads, d.read_kib));
    if let Some(v) = note("--bs", given, mix_text(&reads), from) {
        out.bs = Some(v);
    }
    // A --bs given alone sizes every I/O ("the same, but 64k"): writes too.
    if given && a.write_bs.is_none() {
        return;
    }
    let from = format!("writes' requests {}", how(&writes, d.write_kib));
    if let Some(v) = note("--write-bs", a.write_bs.is_some(), mix_text(&writes), from) {
        out.write_bs = Some(v);
    }
}

/// Slots kept per I/O the rate needs in flight at the profile's latency:
/// an open loop's arrivals bunch (Poisson), and a burst that finds every
/// slot busy waits outside the storage, so twice the mean.
const SLOT_MARGIN: f64 = 2.0;

/// The I/Os in flight a rate needs at the profile's latency (Little's law,
/// at the p95 await over the intervals so the slower ones fit too), with a
/// margin, and never fewer than production kept in flight (its p95); the
/// line that says how.
fn slots(rate: f64, d: &DeviceSummary) -> (u64, String) {
    let await_ms = d.await_ms.p95.max(d.await_ms.mean);
    let need = rate * await_ms / 1000.0;
    let n = (need * SLOT_MARGIN)
        .ceil()
        .max(d.in_flight.p95.ceil())
        .clamp(1.0, MAX_THREADS as f64) as u64;
    let from = format!(
        "{} IOPS x {} ms await (p95) = {} in flight (Little's law), x{} so the open loop's \
         bursts find a free slot; production kept {} in flight (p95); iodepth 1",
        trim(rate, 0),
        trim(await_ms, 2),
        trim(need, 2),
        trim(SLOT_MARGIN, 0),
        trim(d.in_flight.p95, 1)
    );
    (n, from)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::args::{Cli, Command};
    use crate::result::profile::{DeviceSummary, Figure};
    use clap::Parser;

    fn run_args(extra: &[&str]) -> RunArgs {
        let mut argv = vec![
            "volbench",
            "run",
            "--target",
            "/dev/null",
            "--like",
            "p.json",
        ];
        argv.extend_from_slice(extra);
        match Cli::parse_from(argv).command {
            Command::Run(a) => a,
            _ => unreachable!(),
        }
    }

    fn fig(mean: f64) -> Figure {
        Figure {
            mean,
            p95: mean * 1.1,
            peak: mean * 1.3,
        }
    }

    fn profile() -> Profile {
        Profile {
            devices: vec!["sdb".into(), "sdc".into()],
            intervals: vec![Default::default(); 10],
            summary: vec![
                DeviceSummary {
                    name: "sdb".into(),
                    active_intervals: 10,
                    iops: fig(2300.0),
                    read_pct: fig(69.8),
                    request_kib: fig(8.02),
                    in_flight: fig(7.4),
                    await_ms: fig(2.0),
                    ..Default::default()
                },
                DeviceSummary {
                    name: "sdc".into(),
                    iops: fig(0.0),
                    ..Default::default()
                },
            ],
            ..Default::default()
        }
    }

    #[test]
    fn mix_size_and_rate_from_the_busiest_device() {
        let (a, lines) = derive(&run_args(&[]), &profile(), "p.json").unwrap();
        assert_eq!(a.rw.as_deref(), Some("randrw"));
        assert_eq!(a.read_pct.as_deref(), Some("70"));
        assert_eq!(a.bs.as_deref(), Some("8k"));
        assert_eq!(a.rate.as_deref(), Some("2300"));
        // 2,300 IOPS at 2.2 ms (p95 await) is 5.06 in flight: 11 slots.
        assert_eq!(a.common.threads.as_deref(), Some("11"));
        assert_eq!(a.common.iodepth.as_deref(), Some("1"));
        assert!(lines[0].contains("device sdb"), "{lines:?}");
        assert!(
            lines
                .iter()
                .any(|l| l.contains("--threads 11: 2300 IOPS x 2.2 ms await (p95)")),
            "{lines:?}"
        );
        assert!(
            lines
                .iter()
                .any(|l| l.contains("--rate 2300: mean 2300 IOPS")),
            "{lines:?}"
        );
    }

    #[test]
    fn scale_concurrency_and_given_flags() {
        let a = run_args(&["--like-mode", "concurrency", "--scale", "2x", "--bs", "64k"]);
        let (a, lines) = derive(&a, &profile(), "p.json").unwrap();
        assert_eq!(a.common.threads.as_deref(), Some("15"), "7.4 x 2 in flight");
        assert_eq!(a.rate, None, "closed loop");
        assert_eq!(a.bs.as_deref(), Some("64k"), "the user's --bs wins");
        assert!(
            lines.iter().any(|l| l.contains("--bs: given, kept")),
            "{lines:?}"
        );
    }

    /// Production's reads of 8 KiB and writes of 128 KiB, interval by
    /// interval, as capture records them.
    fn split_profile() -> Profile {
        let mut p = profile();
        p.summary[0].read_kib = 8.0;
        p.summary[0].write_kib = 127.9;
        p.intervals = (0..10)
            .map(|k| crate::result::profile::ProfileInterval {
                duration_s: 1.0,
                devices: vec![crate::result::profile::DeviceSample {
                    name: "sdb".into(),
                    read_iops: 1600.0,
                    read_kib: 8.0,
                    write_iops: 700.0,
                    write_kib: 127.0 + (k % 3) as f64,
                    ..Default::default()
                }],
                ..Default::default()
            })
            .collect();
        p
    }

    #[test]
    fn reads_and_writes_keep_their_own_sizes() {
        let (a, lines) = derive(&run_args(&[]), &split_profile(), "p.json").unwrap();
        assert_eq!(a.bs.as_deref(), Some("8k"));
        assert_eq!(a.write_bs.as_deref(), Some("128k"));
        assert!(
            lines
                .iter()
                .any(|l| l.contains("--write-bs 128k: writes' requests 127.9 KiB")),
            "{lines:?}"
        );
        // A --bs given alone sizes both directions; --write-bs alone keeps
        // the reads' derived size.
        let (a, _) = derive(&run_args(&["--bs", "64k"]), &split_profile(), "p.json").unwrap();
        assert_eq!(
            (a.bs.as_deref(), a.write_bs.as_deref()),
            (Some("64k"), None)
        );
        let (a, lines) =
            derive(&run_args(&["--write-bs", "1m"]), &split_profile(), "p.json").unwrap();
        assert_eq!(
            (a.bs.as_deref(), a.write_bs.as_deref()),
            (Some("8k"), Some("1m"))
        );
        assert!(
            lines.iter().any(|l| l.contains("--write-bs: given, kept")),
            "{lines:?}"
        );
        // A read-only production has no writes to size.
        let mut p = split_profile();
        p.summary[0].read_pct = fig(100.0);
        let (a, _) = derive(&run_args(&[]), &p, "p.json").unwrap();
        assert_eq!((a.bs.as_deref(), a.write_bs.as_deref()), (Some("8k"), None));
    }

    #[test]
    fn what_cannot_be_derived_is_named() {
        let p = profile();
        for (extra, says) in [
            (&["--like-device", "sdz"][..], "not in p.json"),
            (&["--like-device", "sdc"][..], "did no I/O"),
            (&["--scale", "0"][..], "--scale 0"),
            (&["--scale", "lots"][..], "--scale lots"),
            (&["--like-mode", "fast"][..], "rate or concurrency"),
        ] {
            let e = derive(&run_args(extra), &p, "p.json").unwrap_err();
            assert!(e.message.contains(says), "{extra:?}: {}", e.message);
        }
    }

    #[test]
    fn the_rate_gets_the_slots_littles_law_needs_unless_given() {
        // A slow device: 2,300 IOPS at 20 ms (p95 22) needs 50.6 in flight.
        let mut p = profile();
        p.summary[0].await_ms = fig(20.0);
        let (a, _) = derive(&run_args(&[]), &p, "p.json").unwrap();
        assert_eq!(a.common.threads.as_deref(), Some("102"));
        // Production's own depth is the floor: 7.4 x 1.1 = 8.1 -> 9.
        p.summary[0].await_ms = fig(0.1);
        let (a, _) = derive(&run_args(&[]), &p, "p.json").unwrap();
        assert_eq!(a.common.threads.as_deref(), Some("9"));
        // The user's --iodepth wins, and the line says what was derived.
        let (a, lines) = derive(&run_args(&["--iodepth", "8"]), &profile(), "p.json").unwrap();
        assert_eq!(a.common.threads, None);
        assert_eq!(a.common.iodepth.as_deref(), Some("8"));
        assert!(
            lines.iter().any(|l| l.contains("--threads: given, kept")),
            "{lines:?}"
        );
    }
}
