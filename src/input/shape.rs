//! Flags and suite keys -> `spec::shape::Shape`, one parser for both, so
//! `--seek-pct 30` and `seek_pct = 30` take the same text and bounds.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use crate::error::{Result, VbError};
use crate::input::args::shape::ShapeArgs;
use crate::spec::shape::{Distribution, Shape, SyncCall};
use crate::units::bounds;
use crate::units::{parse_count_in, parse_duration_in};

/// Sets one key (a suite key name, or a flag's without dashes) from its text.
pub(crate) fn apply(shape: &mut Shape, key: &str, text: &str) -> Result<()> {
    let flag = format!("--{}", key.replace('_', "-"));
    let yes = |t: &str| match t.trim() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(VbError::input(format!("{flag} must be true or false"))),
    };
    match key {
        "distribution" => shape.distribution = Distribution::parse(text)?,
        "seek_pct" => shape.seek_pct = Some(parse_count_in(&flag, text, 0, 100)? as u8),
        "fsync_every" => {
            shape.fsync_every =
                Some(parse_count_in(&flag, text, 1, bounds::MAX_FSYNC_EVERY)? as u32)
        }
        "fdatasync" => {
            shape.sync_call = if yes(text)? {
                SyncCall::Fdatasync
            } else {
                SyncCall::Fsync
            }
        }
        "end_fsync" => shape.end_fsync = yes(text)?,
        "random_map" => shape.random_map = yes(text)?,
        "streams" => shape.streams = crate::spec::streams::Streams::parse(text)?,
        "think_time" => {
            let d = parse_duration_in(
                &flag,
                text,
                std::time::Duration::ZERO,
                bounds::MAX_THINK_TIME,
            )?;
            shape.think_time_s = (!d.is_zero()).then_some(d.as_secs_f64());
        }
        "cooldown" => {
            let d =
                parse_duration_in(&flag, text, std::time::Duration::ZERO, bounds::MAX_COOLDOWN)?;
            shape.cooldown_s = (!d.is_zero()).then_some(d.as_secs_f64());
        }
        _ => return Err(VbError::input(format!("no shape key '{key}'"))),
    }
    Ok(())
}

/// The flags' values as (key, text), for `apply` (flags) or as overrides
/// of a suite's keys.
pub(crate) fn flag_texts(a: &ShapeArgs) -> Vec<(&'static str, String)> {
    let mut v = Vec::new();
    let mut text = |k: &'static str, t: &Option<String>| {
        if let Some(t) = t {
            v.push((k, t.clone()));
        }
    };
    text("distribution", &a.distribution);
    text("seek_pct", &a.seek_pct);
    text("streams", &a.streams);
    text("fsync_every", &a.fsync_every);
    text("think_time", &a.think_time);
    text("cooldown", &a.cooldown);
    if a.fdatasync {
        v.push(("fdatasync", "true".into()));
    }
    if a.end_fsync {
        v.push(("end_fsync", "true".into()));
    }
    if a.random_map {
        v.push(("random_map", "true".into()));
    }
    v
}

/// The shape the flags ask for.
pub(crate) fn from_flags(a: &ShapeArgs) -> Result<Shape> {
    let mut shape = Shape::default();
    for (k, t) in flag_texts(a) {
        apply(&mut shape, k, &t)?;
    }
    Ok(shape)
}
