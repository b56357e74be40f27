//! A run entry's shape keys (distribution, seek_pct, streams, random_map, fsync_every,
//! fdatasync, end_fsync, think_time, cooldown, and `rate` as a bandwidth),
//! with `suite run`'s flags over them, parsed by `input::shape`.

use super::{Ctx, Overrides, P, Param, RunEntry};
use crate::error::Result;
use crate::spec::shape::{Shape, parse_bandwidth};

/// `rate = "100MiB/s"` (or `"100MiB"`): a bandwidth, not IOPS.
pub(super) fn is_bandwidth(v: &toml::Spanned<Param>) -> bool {
    matches!(v.get_ref(), Param::Str(s) if crate::spec::shape::bandwidth_size(s).is_some())
}

/// The shape keys a run entry sets (a run with ops refuses them).
pub(super) fn set_keys(e: &RunEntry) -> Vec<(&'static str, &P)> {
    own(e)
        .into_iter()
        .chain(
            [("rate", &e.rate)]
                .into_iter()
                .filter(|(_, v)| v.as_ref().is_some_and(is_bandwidth)),
        )
        .collect()
}

fn own(e: &RunEntry) -> [(&'static str, &P); 9] {
    [
        ("distribution", &e.distribution),
        ("seek_pct", &e.seek_pct),
        ("streams", &e.streams),
        ("random_map", &e.random_map),
        ("fsync_every", &e.fsync_every),
        ("fdatasync", &e.fdatasync),
        ("end_fsync", &e.end_fsync),
        ("think_time", &e.think_time),
        ("cooldown", &e.cooldown),
    ]
}

/// The run's shape: the flags' shape, each key the run sets itself
/// applied over it (a key sets its own fields only, so what a run leaves
/// out keeps the flag's value, or the default).
pub(super) fn shape(cx: &Ctx, e: &RunEntry, o: &Overrides) -> Result<Shape> {
    let mut shape = o.shape.clone();
    for (key, value) in own(e) {
        if let Some(v) = value {
            let text = v.get_ref().text();
            cx.with(
                key,
                Some(v),
                crate::input::shape::apply(&mut shape, key, &text),
            )?;
        }
    }
    if let Some(v) = &e.rate {
        if is_bandwidth(v) {
            shape.rate_bytes = cx.with(
                "rate",
                Some(v),
                parse_bandwidth("rate", &v.get_ref().text()),
            )?;
        }
    }
    Ok(shape)
}
