//! Where a sequential run's threads stream over the set. volbench's own
//! default splits the set: each thread walks its contiguous share, so the
//! threads together cover it once (elbencho's way). fio's jobs on one
//! shared file each make their own pass instead: job i starts at
//! `offset + i x offset_increment` and walks `size` bytes, so four jobs with
//! no increment read the same blocks four times. An imported fio job
//! measures what fio measured only if volbench walks the set as fio does.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use serde::{Deserialize, Serialize};

use crate::error::{Result, VbError};
use crate::units::bounds::MAX_SIZE;
use crate::units::{format_size, parse_size};

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", tag = "kind")]
pub(crate) enum Streams {
    /// Each thread a contiguous share of the set.
    #[default]
    Split,
    /// Each thread its own pass: thread t walks from `offset + t x step`
    /// for as long as the last thread's pass fits in the set (fio's
    /// `offset`, `offset_increment` and per-job `size` on a shared file).
    Each {
        #[serde(default)]
        offset: u64,
        #[serde(default)]
        step: u64,
    },
}

impl Streams {
    pub(crate) fn is_split(&self) -> bool {
        *self == Self::Split
    }

    /// `split`, `each`, `each:OFFSET` or `each:OFFSET,STEP` (sizes as
    /// `--size` takes them: `each:0,1GiB`).
    pub(crate) fn parse(text: &str) -> Result<Self> {
        let t = text.trim();
        let bad = || {
            VbError::input(format!(
                "--streams '{}' is not split, each, each:OFFSET or each:OFFSET,STEP \
                 (each:0,1GiB: thread t starts at t x 1GiB)",
                crate::error::clip(t)
            ))
        };
        let (kind, arg) = t.split_once(':').unwrap_or((t, ""));
        let s = match (kind.to_ascii_lowercase().as_str(), arg.is_empty()) {
            ("split", true) => Self::Split,
            ("each", true) => Self::Each { offset: 0, step: 0 },
            ("each", false) => {
                let (off, step) = arg.split_once(',').unwrap_or((arg, "0"));
                let size = |what: &str, s: &str| -> Result<u64> {
                    parse_size(s.trim())
                        .map_err(|e| VbError::input(format!("--streams {t}: {what}: {e}")))
                };
                Self::Each {
                    offset: size("the offset", off)?,
                    step: size("the step", step)?,
                }
            }
            _ => return Err(bad()),
        };
        s.validate()?;
        Ok(s)
    }

    /// The offset and the step within their bound (the largest set).
    pub(crate) fn validate(&self) -> Result<()> {
        if let Self::Each { offset, step } = *self {
            for (what, v) in [("offset", offset), ("step", step)] {
                if v > MAX_SIZE {
                    return Err(VbError::input(format!(
                        "--streams: the {what} {v} is over {} (the largest set)",
                        format_size(MAX_SIZE)
                    )));
                }
            }
        }
        Ok(())
    }

    /// A part of the set other than all of it (which random offsets
    /// cannot keep to yet).
    pub(crate) fn confines(&self) -> bool {
        matches!(*self, Self::Each { offset, step } if offset != 0 || step != 0)
    }

    /// Thread `worker` of `workers`' stream over a set of `total` bytes,
    /// `[start, end)`, both multiples of `align`; None when a pass from
    /// the last thread's start would leave the set (the caller says so).
    pub(crate) fn region(
        &self,
        total: u64,
        align: u64,
        worker: u32,
        workers: u32,
    ) -> Option<(u64, u64)> {
        let align = align.max(1);
        let usable = total / align * align;
        match *self {
            Self::Split => {
                let per = (total / workers.max(1) as u64) / align * align;
                let start = per * worker as u64;
                let end = if worker + 1 >= workers {
                    usable
                } else {
                    start + per
                };
                Some((start, end))
            }
            Self::Each { offset, step } => {
                let last_start =
                    offset.checked_add(step.checked_mul(workers.saturating_sub(1) as u64)?)?;
                let len = usable.checked_sub(last_start)? / align * align;
                let start = (offset.checked_add(step.checked_mul(worker as u64)?)?) / align * align;
                Some((start, start.checked_add(len)?.min(usable)))
            }
        }
    }

    /// What `--dry-run` and the import notes say.
    pub(crate) fn label(&self) -> String {
        match *self {
            Self::Split => "split".into(),
            Self::Each { offset: 0, step: 0 } => "each".into(),
            Self::Each { offset, step: 0 } => format!("each:{}", format_size(offset)),
            Self::Each { offset, step } => {
                format!("each:{},{}", format_size(offset), format_size(step))
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    const M: u64 = 1 << 20;

    #[test]
    fn split_gives_each_thread_its_share_and_the_last_the_rest() {
        let s = Streams::Split;
        let per = (10 * M / 3) / 4096 * 4096;
        assert_eq!(s.region(10 * M, 4096, 0, 3), Some((0, per)));
        assert_eq!(s.region(10 * M, 4096, 1, 3), Some((per, 2 * per)));
        assert_eq!(s.region(10 * M, 4096, 2, 3).map(|r| r.1), Some(10 * M));
    }

    #[test]
    fn each_thread_walks_the_whole_set_without_a_step() {
        let s = Streams::parse("each").unwrap();
        for w in 0..4 {
            assert_eq!(s.region(8 * M, 4096, w, 4), Some((0, 8 * M)));
        }
    }

    #[test]
    fn a_step_spaces_the_starts_and_every_pass_is_as_long_as_the_last_fits() {
        // fio: offset=1M, offset_increment=2M, size=3M per job, 3 jobs:
        // the file is 1 + 2 x 2 + 3 = 8M, and job i walks [1+2i, 4+2i).
        let s = Streams::parse("each:1MiB,2MiB").unwrap();
        assert_eq!(s.region(8 * M, 4096, 0, 3), Some((M, 4 * M)));
        assert_eq!(s.region(8 * M, 4096, 2, 3), Some((5 * M, 8 * M)));
        assert_eq!(s.region(4 * M, 4096, 2, 3), None, "starts past the end");
    }

    #[test]
    fn the_text_round_trips_and_bad_text_is_one_line() {
        for t in ["split", "each", "each:4MiB", "each:0,1GiB"] {
            let s = Streams::parse(t).unwrap();
            assert_eq!(Streams::parse(&s.label()).unwrap(), s, "{t}");
        }
        for t in ["", "both", "each:x", "each:1,2,3", "split:4k", "each:1e30"] {
            let e = Streams::parse(t).unwrap_err().to_string();
            assert!(e.contains("--streams") && !e.contains('\n'), "{t}: {e}");
        }
        assert!(Streams::parse("each:9PiB").is_err(), "over the largest set");
        assert!(!Streams::parse("each").unwrap().confines());
        assert!(Streams::parse("each:0,4k").unwrap().confines());
    }
}
