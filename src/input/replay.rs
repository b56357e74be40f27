//! `run --replay FILE`: the trace scanned whole (every request checked and
//! counted, streamed, before any I/O) and the run made from it: its one
//! run replays the trace, sized to the trace's span on a directory; flags
//! that would describe another workload are refused by name.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use crate::error::{Result, VbError};
use crate::input::args::RunArgs;
use crate::spec::replay::{ReplayMap, ReplaySpec, ReplaySplit};
use crate::spec::{BlockSize, JobSpec, Pattern};
use crate::units::bounds;

/// Refuses, by name, the flags a replay would otherwise leave unused.
pub(crate) fn check_flags(a: &RunArgs) -> Result<()> {
    if a.replay.replay.is_none() {
        return Ok(());
    }
    let c = &a.common;
    let given: [(&str, bool); 18] = [
        ("--rw", a.rw.is_some()),
        ("--read-pct", a.read_pct.is_some()),
        ("--bs", a.bs.is_some()),
        ("--write-bs", a.write_bs.is_some()),
        ("--io-limit", a.io_limit.is_some()),
        ("--rate", a.rate.is_some()),
        ("--rate-iops", a.rates.rate_iops.is_some()),
        ("--latency-target", a.rates.latency_target.is_some()),
        ("--ops", a.meta.ops.is_some()),
        ("--like", a.like.like.is_some()),
        ("--threads", c.threads.is_some()),
        ("--files", c.files.is_some()),
        ("--warmup", c.warmup.is_some()),
        ("--steady", c.steady),
        ("--arrivals", c.arrivals.is_some()),
        ("--host-counts", c.remote.counts.host_counts.is_some()),
        (
            "a data flag (--verify, --compress, --dedup, --journal)",
            !crate::input::args::data::data_spec(&c.data)?.is_default(),
        ),
        (
            "a shape flag",
            !crate::input::shape::flag_texts(&c.shape).is_empty(),
        ),
    ];
    for (flag, on) in given {
        if on {
            return Err(VbError::input(format!(
                "{flag} does not go with --replay: the trace says what to issue, when and where \
                 (--iodepth sets the requests in flight, --replay-speed the pace)"
            )));
        }
    }
    Ok(())
}

/// `--replay-split` and `--replay-offset` (or a suite's `split` and
/// `offset`): how a trace is dealt to the hosts; None on one host.
pub(crate) fn parse_split(
    split: Option<&str>,
    offset: Option<&str>,
    multi_host: bool,
) -> Result<Option<ReplaySplit>> {
    if !multi_host {
        if split.is_some() {
            return Err(VbError::input(
                "--replay-split deals a trace to hosts: give --hosts too",
            ));
        }
        return Ok(None);
    }
    let offset_ns = match offset {
        None => None,
        Some(t) => Some(
            crate::units::parse_duration_in(
                "--replay-offset",
                t,
                std::time::Duration::ZERO,
                bounds::MAX_REPLAY_OFFSET,
            )?
            .as_nanos() as u64,
        ),
    };
    match (split, offset_ns) {
        (Some("whole"), o) => Ok(Some(ReplaySplit::Whole {
            offset_ns: o.unwrap_or(0),
        })),
        (Some(other), _) if other != "share" => Err(VbError::input(format!(
            "--replay-split '{}' is neither share nor whole",
            bounds::one_line(other)
        ))),
        (_, Some(_)) => Err(VbError::input(
            "--replay-offset staggers hosts that each replay the whole trace: \
             it goes with --replay-split whole",
        )),
        _ => Ok(Some(ReplaySplit::Share)),
    }
}

/// A suite's replay `scale`, `align` and `skip` (fio's replay_scale,
/// replay_align and replay_skip): `skip` is a comma list of read, write,
/// sync (flush) and trim (discard), as fio names them.
pub(crate) fn parse_map(
    scale: Option<&str>,
    align: Option<&str>,
    skip: Option<&str>,
) -> Result<ReplayMap> {
    let mut m = ReplayMap::default();
    if let Some(t) = scale {
        m.scale = crate::units::parse_count_in("scale", t, 1, bounds::MAX_REPLAY_SCALE)?;
    }
    if let Some(t) = align {
        let a = crate::units::parse_size_in("align", t, 1, bounds::MAX_REPLAY_ALIGN)?;
        if !a.is_power_of_two() {
            return Err(VbError::input(format!(
                "align {a} is not a power of two (offsets are rounded down to a multiple of it)"
            )));
        }
        m.align = a;
    }
    for w in skip.unwrap_or_default().split(',').map(str::trim) {
        m.skip |= match w {
            "" => 0,
            "read" => ReplayMap::SKIP_READ,
            "write" => ReplayMap::SKIP_WRITE,
            "sync" | "flush" => ReplayMap::SKIP_FLUSH,
            "trim" | "discard" => ReplayMap::SKIP_DISCARD,
            other => {
                return Err(VbError::input(format!(
                    "skip '{}' is none of read, write, sync, trim",
                    bounds::one_line(other)
                )));
            }
        };
    }
    Ok(m)
}

/// `--replay-speed`: a factor, or `max`.
pub(crate) fn parse_speed(text: Option<&str>) -> Result<Option<f64>> {
    let Some(t) = text else {
        return Ok(Some(1.0));
    };
    let t = t.trim();
    if t.eq_ignore_ascii_case("max") {
        return Ok(None);
    }
    let v = t.trim_end_matches('x').parse::<f64>().map_err(|_| {
        VbError::input(format!(
            "--replay-speed '{t}' is not a number or 'max' ({}..{})",
            bounds::MIN_REPLAY_SPEED,
            bounds::MAX_REPLAY_SPEED
        ))
    })?;
    bounds::number(
        "--replay-speed",
        v,
        bounds::MIN_REPLAY_SPEED,
        bounds::MAX_REPLAY_SPEED,
    )
    .map(Some)
}

/// A replay as the command line or a suite states it.
pub(crate) struct Given<'a> {
    pub(crate) path: &'a std::path::Path,
    /// Times divided by this; None: as fast as the depth allows.
    pub(crate) speed: Option<f64>,
    pub(crate) wrap: bool,
    pub(crate) split: Option<ReplaySplit>,
    pub(crate) map: ReplayMap,
    /// The target's size was stated (--size, a suite's size).
    pub(crate) sized: bool,
    /// The run was named (--name); else it is named after the trace.
    pub(crate) named: bool,
    /// A duration was stated: the replay stops there if not done before.
    pub(crate) timed: bool,
    /// A depth was stated (--iodepth, a suite's iodepth): else a timed
    /// replay takes the depth its trace's timing needs.
    pub(crate) depth_given: bool,
    pub(crate) multi_host: bool,
}

/// Makes `job`'s one run the replay of `--replay FILE`.
pub(crate) fn apply(a: &RunArgs, job: &mut JobSpec) -> Result<()> {
    let Some(path) = &a.replay.replay else {
        return Ok(());
    };
    let multi_host = a.common.remote.is_multi_host();
    let given = Given {
        path,
        speed: parse_speed(a.replay.replay_speed.as_deref())?,
        wrap: a.replay.replay_wrap,
        split: parse_split(
            a.replay.replay_split.as_deref(),
            a.replay.replay_offset.as_deref(),
            multi_host,
        )?,
        map: ReplayMap::default(),
        sized: a.common.size.is_some(),
        named: a.name.is_some(),
        timed: a.common.duration.is_some(),
        depth_given: a.common.iodepth.is_some(),
        multi_host,
    };
    apply_given(&given, job)
}

/// Makes `job`'s one run the replay `g` states: the trace scanned whole
/// (as `g.map` changes it), the run and the target sized from it.
pub(crate) fn apply_given(g: &Given<'_>, job: &mut JobSpec) -> Result<()> {
    let path = g.path;
    let (speed, split) = (g.speed, g.split);
    let (format, summary) = crate::io::replay::scan_mapped(path, g.map)?;
    if job.target.direct && summary.align < 512 {
        return Err(VbError::input(format!(
            "--replay {}: requests not on 512-byte boundaries cannot be issued with direct I/O; \
             add --buffered to replay them through the page cache",
            path.display()
        )));
    }
    let [run] = job.runs.as_mut_slice() else {
        return Err(VbError::input("--replay makes one run: give no lists"));
    };
    let rw_ops = summary.reads + summary.writes;
    // Writes and discards change the target: the run counts as writing, so
    // a device needs --allow-overwrite and a file set is checked as ours.
    let changes = summary.writes + summary.discards > 0;
    let read_pct = match (summary.reads * 100).checked_div(rw_ops) {
        None if changes => 0,
        Some(p) if changes => (p as u8).min(99),
        _ => 100,
    };
    run.rw = if read_pct == 100 {
        Pattern::Randread
    } else {
        Pattern::Randrw
    };
    run.read_pct = read_pct;
    // Each in-flight request owns a buffer of the largest one.
    run.bs = vec![BlockSize {
        bytes: summary.max_bytes.max(4096).div_ceil(4096) * 4096,
        weight: 1,
    }];
    run.threads = 1;
    // A recorded depth holds at any pace; without one, timing gives it.
    let depth_from_trace = !g.depth_given && (speed.is_some() || summary.recorded_in_flight > 0);
    if depth_from_trace {
        run.iodepth = summary.depth_for(speed) as u32;
    }
    run.warmup_s = 0.0;
    if !g.timed {
        // The replay ends with its last request; this is only the cap.
        run.duration_s = bounds::MAX_DURATION.as_secs_f64();
    }
    if !g.named {
        run.name = format!(
            "replay-{}",
            path.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        );
        run.name = run
            .name
            .chars()
            .filter(|c| !c.is_control())
            .take(bounds::MAX_NAME_CHARS)
            .collect();
    }
    if g.sized && summary.span_bytes > job.target.size && !g.wrap {
        // Known here for --size; a file or device's own size is held
        // against the trace when the run is set up, still before any I/O.
        return Err(VbError::input(format!(
            "--replay {}: the trace reaches {} but --size is {}; --replay-wrap wraps offsets \
             around it, or give a larger target",
            path.display(),
            crate::units::format_size(summary.span_bytes),
            crate::units::format_size(job.target.size)
        )));
    }
    if !g.sized && !g.multi_host {
        past_existing(&job.target.path, &summary, path, g.wrap)?;
    }
    if !g.sized {
        // A directory gets a set just large enough for the trace (a file
        // or device is used whole, decided by the plan).
        job.target.size = summary.span_bytes.max(4096).div_ceil(4096) * 4096;
    }
    job.target.files = 1;
    run.replay = Some(ReplaySpec {
        path: path.to_path_buf(),
        format,
        speed,
        wrap: g.wrap,
        summary,
        split,
        part: None,
        text: None,
        map: g.map,
        depth_from_trace,
    });
    Ok(())
}

/// A trace that reaches past an existing file or device is bad input,
/// refused here before any I/O rather than found when the run is set up
/// (a directory's file set is sized to the trace; hosts' targets are
/// theirs to check).
fn past_existing(
    target: &std::path::Path,
    s: &crate::spec::replay::TraceSummary,
    trace: &std::path::Path,
    wrap: bool,
) -> Result<()> {
    let Ok(i) = crate::io::target::inspect(target) else {
        // What is wrong with the target is said where it is opened.
        return Ok(());
    };
    let Some(size) = i.existing_size else {
        return Ok(());
    };
    if s.max_bytes > size {
        return Err(VbError::input(format!(
            "--replay {}: a request of {} is larger than the whole target ({})",
            trace.display(),
            crate::units::format_size(s.max_bytes),
            crate::units::format_size(size)
        )));
    }
    if wrap || s.span_bytes <= size {
        return Ok(());
    }
    Err(VbError::input(format!(
        "--replay {}: the trace reaches {} but {} {} holds {}; --replay-wrap wraps offsets \
         around it, or give a larger target",
        trace.display(),
        crate::units::format_size(s.span_bytes),
        i.kind.name(),
        crate::units::bounds::one_line(&target.display().to_string()),
        crate::units::format_size(size)
    )))
}

#[cfg(test)]
mod tests {
    use super::{ReplayMap, parse_map, parse_speed};

    #[test]
    fn replay_map_reads_fios_scale_align_and_skip() {
        let m = parse_map(Some("8"), Some("4k"), Some("write, trim")).ok();
        assert_eq!(
            m,
            Some(ReplayMap {
                scale: 8,
                align: 4096,
                skip: ReplayMap::SKIP_WRITE | ReplayMap::SKIP_DISCARD,
            })
        );
        // fio: the offset scaled down first, then aligned down.
        let m = m.unwrap_or_default();
        assert_eq!(m.offset(8 * 4096 * 3 + 8 * 100), 3 * 4096);
        for (scale, align, skip, named) in [
            (Some("0"), None, None, "scale"),
            (None, Some("3000"), None, "align"),
            (None, None, Some("reads"), "skip"),
        ] {
            let e = parse_map(scale, align, skip).err().map(|e| e.to_string());
            assert!(e.as_deref().is_some_and(|e| e.contains(named)), "{e:?}");
        }
    }

    #[test]
    fn replay_speed_is_a_bounded_factor_or_max() {
        assert_eq!(parse_speed(None).ok(), Some(Some(1.0)));
        assert_eq!(parse_speed(Some("2")).ok(), Some(Some(2.0)));
        assert_eq!(parse_speed(Some("0.5x")).ok(), Some(Some(0.5)));
        assert_eq!(parse_speed(Some("max")).ok(), Some(None));
        for bad in ["0", "-1", "1001", "nan", "inf", "fast"] {
            let e = parse_speed(Some(bad)).err().map(|e| e.to_string());
            assert!(
                e.as_deref().is_some_and(|e| e.contains("--replay-speed")),
                "{bad}: {e:?}"
            );
        }
    }
}
