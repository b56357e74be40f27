//! A suite run entry with `ops`: a tree of small files and the operations
//! on it, handed to `input::meta` (block-I/O keys are refused here).

use std::time::Duration;

use toml::Spanned;

use super::{Ctx, Overrides, P, Param, RunEntry, shape};
use crate::error::{Result, VbError};
use crate::spec::{Arrivals, RunSpec};
use crate::units::bounds;
use crate::units::parse_duration_in;

/// A run entry with `ops`: the tree's phases or mix (see `input::meta`).
/// Its own `warmup` and `duration` apply; for phases the suite-wide ones
/// do not (a phase covers the tree once; its duration is only a cap).
pub(super) fn tree_entry(
    cx: &Ctx,
    e: &RunEntry,
    ops: &Spanned<Param>,
    name: &str,
    threads: &[u64],
    arrivals: Arrivals,
    o: &Overrides,
) -> Result<Vec<RunSpec>> {
    let block = [
        ("rw", &e.rw),
        ("read_pct", &e.read_pct),
        ("bs", &e.bs),
        ("write_bs", &e.write_bs),
        ("iodepth", &e.iodepth),
        ("files", &e.files),
        ("size", &e.size),
        ("io_limit", &e.io_limit),
        ("curve", &e.curve),
        ("until_gain_below", &e.until_gain_below),
        ("rate_iops", &e.rate_iops),
        ("rate_bw", &e.rate_bw),
        ("latency_target", &e.latency_target),
        ("search_steps", &e.search_steps),
        ("search_precision", &e.search_precision),
    ];
    let shaped = shape::set_keys(e);
    if let Some((key, Some(v))) = block.iter().chain(&shaped).find(|(_, v)| v.is_some()) {
        return Err(cx.err(
            v,
            key,
            VbError::input(format!("{key} is for block I/O, not for a run with ops")),
        ));
    }
    let text = |p: &P| p.as_ref().map(|v| v.get_ref().text());
    let flag = |key: &str, p: &P| -> Result<bool> {
        match p {
            None => Ok(false),
            Some(v) => match v.get_ref() {
                Param::Bool(b) => Ok(*b),
                _ => Err(cx.err(v, key, VbError::input("must be true or false"))),
            },
        }
    };
    let (depth, width, fpd, size) = (
        text(&e.depth),
        text(&e.width),
        text(&e.files_per_dir),
        text(&e.file_size),
    );
    let tree = crate::input::meta::TreeText {
        ops: &ops.get_ref().text(),
        depth: depth.as_deref(),
        width: width.as_deref(),
        files_per_dir: fpd.as_deref(),
        file_size: size.as_deref(),
        shared_dirs: flag("shared_dirs", &e.shared_dirs)?,
        drop_caches: flag("drop_caches", &e.drop_caches)?,
        direct: flag("direct", &e.direct)?,
        keep_complete: flag("keep_complete", &e.keep_complete)?,
    };
    let [threads] = threads else {
        return Err(cx.err(
            ops,
            "threads",
            VbError::input("a run with ops takes one thread count"),
        ));
    };
    // A tree's rate is operations per second, one number (as --rate with
    // --ops); it was once dropped here without a word.
    let rate_iops = match &e.rate {
        None => None,
        Some(v) => {
            let rs = cx.with(
                "rate",
                Some(v),
                crate::input::sweep::parse_numbers("rate", &v.get_ref().text()),
            )?;
            match rs.as_slice() {
                [one] => Some(cx.with(
                    "rate",
                    Some(v),
                    bounds::number("rate", *one, bounds::MIN_RATE, bounds::MAX_RATE),
                )?),
                _ => {
                    return Err(cx.err(
                        v,
                        "rate",
                        VbError::input("a run with ops takes one rate, in operations per second"),
                    ));
                }
            }
        }
    };
    let base = RunSpec {
        threads: u32::try_from(*threads).unwrap_or(1),
        rate_iops,
        arrivals,
        ..RunSpec::default()
    };
    let secs = |key: &str, own: &P, over: Option<f64>, lo, hi| -> Result<Option<f64>> {
        cx.value(key, (own, over, &None), |t| {
            parse_duration_in(key, t, lo, hi).map(|d| d.as_secs_f64())
        })
    };
    // The command line's --warmup / --duration are for timed runs.
    let whole_tree = !ops.get_ref().text().contains(':');
    let (warmup_over, duration_over) = if whole_tree {
        (None, None)
    } else {
        (o.warmup_s, o.duration_s)
    };
    let timing = crate::input::meta::Timing {
        warmup_s: secs(
            "warmup",
            &e.warmup,
            warmup_over,
            Duration::ZERO,
            bounds::MAX_WARMUP,
        )?,
        duration_s: secs(
            "duration",
            &e.duration,
            duration_over,
            bounds::MIN_DURATION,
            bounds::MAX_DURATION,
        )?,
        steady: flag("steady", &e.steady)? || (o.steady && !whole_tree),
    };
    crate::input::meta::tree_runs(Some(name), &base, &tree, timing)
        .map_err(|err| cx.err(ops, "ops", err))
}
