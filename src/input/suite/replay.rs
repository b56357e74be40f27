//! A run's `replay` table: the run replays a trace as `run --replay`
//! does (the same scan, checks and sizing, in `input::replay`), with fio's
//! replay options; the fio importer writes it for read_iolog and replay_*.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use super::{Ctx, Overrides, P, RunEntry, SuiteFile, line_of};
use crate::error::{Result, VbError};
use crate::spec::JobSpec;
use serde::Deserialize;

/// `replay = { file = "...", speed = "max", ... }` in a `[[run]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReplayEntry {
    /// The trace (relative to the current directory).
    file: String,
    /// A factor (2 = twice as fast) or "max" (fio replay_no_stall).
    speed: P,
    /// Offsets past the target wrap around it.
    wrap: Option<bool>,
    /// With --hosts: "share" or "whole", and whole's per-host offset.
    split: P,
    offset: P,
    /// fio's replay_scale, replay_align, replay_skip.
    scale: P,
    align: P,
    skip: P,
}

/// Makes `job`'s run the replay its entry states; a suite with a replay
/// run holds that run only.
pub(super) fn apply(
    cx: &Ctx<'_>,
    suite: &SuiteFile,
    o: &Overrides,
    job: &mut JobSpec,
) -> Result<()> {
    let Some((e, r)) = suite.runs.iter().find_map(|e| {
        let e = e.get_ref();
        e.replay.as_ref().map(|r| (e, r))
    }) else {
        return Ok(());
    };
    let at = |what: String| {
        VbError::input(format!(
            "{} line {}: replay: {what}",
            cx.origin,
            line_of(cx.text, r.span().start)
        ))
    };
    if suite.runs.len() != 1 {
        return Err(at(
            "a replay is the suite's only run (the trace says what to issue, when and where)"
                .into(),
        ));
    }
    if let Some(key) = other_key(e) {
        return Err(at(format!(
            "{key} does not go with replay: the trace says what to issue, when and where \
             (iodepth sets the requests in flight, speed the pace)"
        )));
    }
    let r: &ReplayEntry = r.get_ref();
    let text = |p: &P| p.as_ref().map(|v| v.get_ref().text());
    let speed = crate::input::replay::parse_speed(text(&r.speed).as_deref())
        .map_err(|err| at(err.message))?;
    let split = crate::input::replay::parse_split(
        text(&r.split).as_deref(),
        text(&r.offset).as_deref(),
        o.args.remote.is_multi_host(),
    )
    .map_err(|err| at(err.message))?;
    let map = crate::input::replay::parse_map(
        text(&r.scale).as_deref(),
        text(&r.align).as_deref(),
        text(&r.skip).as_deref(),
    )
    .map_err(|err| at(err.message))?;
    let d = &suite.defaults;
    let given = crate::input::replay::Given {
        path: std::path::Path::new(&r.file),
        speed,
        wrap: r.wrap.unwrap_or(false),
        split,
        map,
        sized: o.args.size.is_some() || d.size.is_some(),
        named: true,
        timed: e.duration.is_some() || o.args.duration.is_some() || d.duration.is_some(),
        multi_host: o.args.remote.is_multi_host(),
    };
    crate::input::replay::apply_given(&given, job)
}

/// The first key of a replay's run entry that would describe another
/// workload, refused by name rather than left unused.
fn other_key(e: &RunEntry) -> Option<&'static str> {
    let given: [(&'static str, &P); 27] = [
        ("rw", &e.rw),
        ("read_pct", &e.read_pct),
        ("bs", &e.bs),
        ("threads", &e.threads),
        ("files", &e.files),
        ("size", &e.size),
        ("rate", &e.rate),
        ("rate_iops", &e.rate_iops),
        ("latency_target", &e.latency_target),
        ("warmup", &e.warmup),
        ("io_limit", &e.io_limit),
        ("arrivals", &e.arrivals),
        ("steady", &e.steady),
        ("curve", &e.curve),
        ("until_gain_below", &e.until_gain_below),
        ("ops", &e.ops),
        ("distribution", &e.distribution),
        ("seek_pct", &e.seek_pct),
        ("random_map", &e.random_map),
        ("fsync_every", &e.fsync_every),
        ("fdatasync", &e.fdatasync),
        ("end_fsync", &e.end_fsync),
        ("think_time", &e.think_time),
        ("cooldown", &e.cooldown),
        ("search_steps", &e.search_steps),
        ("curve_stop_latency", &e.curve_stop_latency),
        ("depth", &e.depth),
    ];
    given
        .into_iter()
        .find_map(|(k, v)| v.is_some().then_some(k))
}
