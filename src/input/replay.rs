//! `run --replay FILE`: the trace scanned whole (every request checked and
//! counted, streamed, before any I/O) and the run made from it: its one
//! run replays the trace, sized to the trace's span on a directory; flags
//! that would describe another workload are refused by name.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use crate::error::{Result, VbError};
use crate::input::args::RunArgs;
use crate::spec::replay::{ReplaySpec, ReplaySplit};
use crate::spec::{BlockSize, JobSpec, Pattern};
use crate::units::bounds;

/// Refuses, by name, the flags a replay would otherwise leave unused.
pub(crate) fn check_flags(a: &RunArgs) -> Result<()> {
    if a.replay.replay.is_none() {
        return Ok(());
    }
    let c = &a.common;
    let given: [(&str, bool); 17] = [
        ("--rw", a.rw.is_some()),
        ("--read-pct", a.read_pct.is_some()),
        ("--bs", a.bs.is_some()),
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

/// `--replay-split` and `--replay-offset`: how a trace is dealt to the
/// hosts; None without `--hosts`.
fn parse_split(a: &RunArgs) -> Result<Option<ReplaySplit>> {
    let r = &a.replay;
    if !a.common.remote.is_multi_host() {
        if r.replay_split.is_some() {
            return Err(VbError::input(
                "--replay-split deals a trace to hosts: give --hosts too",
            ));
        }
        return Ok(None);
    }
    let offset_ns = match &r.replay_offset {
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
    match (r.replay_split.as_deref(), offset_ns) {
        (Some("whole"), o) => Ok(Some(ReplaySplit::Whole {
            offset_ns: o.unwrap_or(0),
        })),
        (_, Some(_)) => Err(VbError::input(
            "--replay-offset staggers hosts that each replay the whole trace: \
             it goes with --replay-split whole",
        )),
        _ => Ok(Some(ReplaySplit::Share)),
    }
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

/// Makes `job`'s one run the replay of `--replay FILE`.
pub(crate) fn apply(a: &RunArgs, job: &mut JobSpec) -> Result<()> {
    let Some(path) = &a.replay.replay else {
        return Ok(());
    };
    let speed = parse_speed(a.replay.replay_speed.as_deref())?;
    let split = parse_split(a)?;
    let (format, summary) = crate::io::replay::scan(path)?;
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
    run.warmup_s = 0.0;
    if a.common.duration.is_none() {
        // The replay ends with its last request; this is only the cap.
        run.duration_s = bounds::MAX_DURATION.as_secs_f64();
    }
    if a.name.is_none() {
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
    if a.common.size.is_some() && summary.span_bytes > job.target.size && !a.replay.replay_wrap {
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
    if a.common.size.is_none() && !a.common.remote.is_multi_host() {
        past_existing(&job.target.path, &summary, path, a.replay.replay_wrap)?;
    }
    if a.common.size.is_none() {
        // A directory gets a set just large enough for the trace (a file
        // or device is used whole, decided by the plan).
        job.target.size = summary.span_bytes.max(4096).div_ceil(4096) * 4096;
    }
    job.target.files = 1;
    run.replay = Some(ReplaySpec {
        path: path.clone(),
        format,
        speed,
        wrap: a.replay.replay_wrap,
        summary,
        split,
        part: None,
        text: None,
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
    use super::parse_speed;

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
