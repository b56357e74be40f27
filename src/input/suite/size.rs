//! A run entry's own working set (`size = "128G"`, or a list swept like
//! any other value: `size = ["2G", "128G"]`), bounded like `--size`.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use super::{Ctx, P};
use crate::error::{Result, VbError};
use crate::units::bounds::{self, MAX_SWEEP_POINTS};
use crate::units::parse_size_in;

/// A run's sizes (its own `size`, or an included file's default), or
/// None when it takes the suite's.
pub(super) fn sizes(cx: &Ctx, size: &P) -> Result<Option<Vec<u64>>> {
    let Some(v) = size else {
        return Ok(None);
    };
    cx.with("size", Some(v), parse_sizes(&v.get_ref().text()))
        .map(Some)
}

/// `2G,128G` -> bytes, each within `--size`'s bound.
fn parse_sizes(text: &str) -> Result<Vec<u64>> {
    let mut out = Vec::new();
    for part in text.split(',') {
        let part = part.trim();
        if part.is_empty() {
            return Err(VbError::input(format!("size '{text}' has an empty entry")));
        }
        if part.contains(':') {
            return Err(VbError::input(format!(
                "size '{part}': sizes are listed, not given as a range (size = [\"2G\", \"128G\"])"
            )));
        }
        if out.len() >= MAX_SWEEP_POINTS {
            return Err(VbError::input(format!(
                "size '{text}' has more than {MAX_SWEEP_POINTS} points"
            )));
        }
        out.push(parse_size_in("size", part, 1, bounds::MAX_SIZE)?);
    }
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_listed_and_bounded_like_the_size_flag() {
        assert_eq!(parse_sizes("2G, 128G").unwrap(), vec![2 << 30, 128 << 30]);
        for (text, says) in [
            ("0", "size 0B is outside 1B..8PiB"),
            ("9P", "outside 1B..8PiB"),
            ("1G:4G", "not given as a range"),
            ("1G,,2G", "empty entry"),
            ("lots", "size"),
        ] {
            let e = parse_sizes(text).unwrap_err();
            assert!(e.message.contains(says), "{text}: {e}");
        }
    }
}
