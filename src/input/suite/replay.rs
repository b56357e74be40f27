//! A run's `replay` table: the run replays a trace as `run --replay`
//! does (the same scan, checks and sizing, in `input::replay`), with fio's
//! replay options; the fio importer writes it for read_iolog and replay_*.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use super::{Ctx, Overrides, P, RunEntry, SuiteFile, line_of};
use crate::error::{Result, VbError};
use crate::spec::JobSpec;
use serde::{Deserialize, Serialize};

/// `replay = { file = "...", speed = "max", ... }` in a `[[run]]`.
#[derive(Debug, Default, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReplayEntry {
    /// The trace (relative to the current directory).
    pub(crate) file: String,
    /// A factor (2 = twice as fast) or "max" (fio replay_no_stall).
    pub(crate) speed: P,
    /// Offsets past the target wrap around it.
    pub(crate) wrap: Option<bool>,
    /// With --hosts: "share" or "whole", and whole's per-host offset.
    pub(crate) split: P,
    pub(crate) offset: P,
    /// fio's replay_scale, replay_align, replay_skip.
    pub(crate) scale: P,
    pub(crate) align: P,
    pub(crate) skip: P,
}

/// Makes `job`'s run the replay its entry states; a suite with a replay
/// run holds that run only (`runs`: its run entries, its includes' too).
pub(super) fn apply(
    cx: &Ctx<'_>,
    suite: &SuiteFile,
    runs: usize,
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
    if runs != 1 {
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
        o.multi_host,
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
        sized: o.size.is_some() || d.size.is_some(),
        named: true,
        timed: e.duration.is_some() || o.duration_s.is_some() || d.duration.is_some(),
        depth_given: e.iodepth.is_some() || o.iodepth.is_some() || d.iodepth.is_some(),
        multi_host: o.multi_host,
    };
    crate::input::replay::apply_given(&given, job)
}

/// The first key of a replay's run entry that would describe another
/// workload, refused by name rather than left unused.
fn other_key(e: &RunEntry) -> Option<&'static str> {
    // Every field is named, none left to `..`: a key added to RunEntry does
    // not compile until it is placed here, taken by a replay or refused.
    let RunEntry {
        // What a replay takes: the run's name, the requests in flight,
        // how long, and how the files are opened.
        name: _,
        iodepth: _,
        duration: _,
        direct: _,
        drop_caches: _,
        replay: _,
        rw,
        read_pct,
        bs,
        write_bs,
        threads,
        files,
        size,
        rate,
        rate_iops,
        rate_bw,
        latency_target,
        search_steps,
        search_precision,
        warmup,
        io_limit,
        arrivals,
        steady,
        curve,
        curve_stop_latency,
        until_gain_below,
        ops,
        depth,
        width,
        files_per_dir,
        file_size,
        shared_dirs,
        keep_complete,
        distribution,
        seek_pct,
        streams,
        random_map,
        fsync_every,
        fdatasync,
        end_fsync,
        think_time,
        cooldown,
    } = e;
    let given: [(&'static str, &P); 36] = [
        ("rw", rw),
        ("read_pct", read_pct),
        ("bs", bs),
        ("write_bs", write_bs),
        ("threads", threads),
        ("files", files),
        ("size", size),
        ("rate", rate),
        ("rate_iops", rate_iops),
        ("rate_bw", rate_bw),
        ("latency_target", latency_target),
        ("search_steps", search_steps),
        ("search_precision", search_precision),
        ("warmup", warmup),
        ("io_limit", io_limit),
        ("arrivals", arrivals),
        ("steady", steady),
        ("curve", curve),
        ("curve_stop_latency", curve_stop_latency),
        ("until_gain_below", until_gain_below),
        ("ops", ops),
        ("depth", depth),
        ("width", width),
        ("files_per_dir", files_per_dir),
        ("file_size", file_size),
        ("shared_dirs", shared_dirs),
        ("keep_complete", keep_complete),
        ("distribution", distribution),
        ("seek_pct", seek_pct),
        ("streams", streams),
        ("random_map", random_map),
        ("fsync_every", fsync_every),
        ("fdatasync", fdatasync),
        ("end_fsync", end_fsync),
        ("think_time", think_time),
        ("cooldown", cooldown),
    ];
    given
        .into_iter()
        .find_map(|(k, v)| v.is_some().then_some(k))
}
