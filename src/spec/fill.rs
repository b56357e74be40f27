//! The fill: before the first run, volbench writes every file of a set it
//! creates sequentially to its end (vdbench's FillWrite, fio's layout), so
//! reads hit allocated blocks. Its transfer size is the one thing a user
//! sets about it (vdbench FillWrite xfersize=64k).
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use serde::{Deserialize, Serialize};

use crate::error::{Result, VbError};
use crate::units::bounds;

/// The fill's transfer size when the user gives none: large sequential
/// writes fill a set fastest, and 1 MiB is what every engine and device
/// takes whole.
pub(crate) const DEFAULT_BS: u64 = 1 << 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FillSpec {
    /// Bytes per fill write (the last write of a file may be shorter).
    pub(crate) bs: u64,
    /// Drop the target's cached pages before each buffered run, as fio's
    /// `invalidate=1` (its default): each run then starts from the device,
    /// not from what the fill or the run before left in memory.
    #[serde(default = "yes")]
    pub(crate) invalidate: bool,
    /// Threads writing the files (`--fill-threads`), each one file at a
    /// time; `None`: one per file, at most `DEFAULT_THREADS`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) threads: Option<u32>,
}

/// The fill's threads when the user gives none: one per file, at most
/// four, which keeps a device's queue busy without thrashing a disk's
/// heads between many sequential streams.
pub(crate) const DEFAULT_THREADS: u32 = 4;

impl FillSpec {
    /// The threads a fill of `files` files runs.
    pub(crate) fn threads_for(&self, files: u32) -> u32 {
        self.threads.unwrap_or(DEFAULT_THREADS).min(files).max(1)
    }
}

fn yes() -> bool {
    true
}

impl Default for FillSpec {
    fn default() -> Self {
        Self {
            bs: DEFAULT_BS,
            invalidate: true,
            threads: None,
        }
    }
}

impl FillSpec {
    pub(crate) fn is_default(&self) -> bool {
        *self == Self::default()
    }

    /// The bound, and whole sectors when the set is written with O_DIRECT
    /// (the target's own alignment is checked again before the fill).
    pub(crate) fn validate(&self, direct: bool) -> Result<()> {
        bounds::size(
            "--fill-bs",
            self.bs,
            bounds::MIN_FILL_BS,
            bounds::MAX_FILL_BS,
        )?;
        // Whole sectors even through the page cache: the data written
        // (and checked by --verify) is laid out in sectors.
        if self.bs % super::MIN_DIRECT_ALIGN != 0 {
            let why = if direct {
                "which direct I/O needs (use a multiple of 4k)"
            } else {
                "whole sectors, as the fill's data is laid out"
            };
            return Err(VbError::input(format!(
                "--fill-bs {} is not a multiple of {} bytes, {why}",
                self.bs,
                super::MIN_DIRECT_ALIGN
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    #[test]
    fn the_fill_size_is_bounded_and_sector_aligned_for_direct_io() {
        assert!(
            FillSpec {
                bs: 64 << 10,
                ..FillSpec::default()
            }
            .validate(true)
            .is_ok()
        );
        assert!(
            FillSpec {
                bs: 1536,
                ..FillSpec::default()
            }
            .validate(false)
            .is_ok()
        );
        let e = FillSpec {
            bs: 1000,
            ..FillSpec::default()
        }
        .validate(true)
        .unwrap_err();
        assert!(e.message.contains("multiple of 512"), "{e}");
        assert!(
            FillSpec {
                bs: 1000,
                ..FillSpec::default()
            }
            .validate(false)
            .is_err()
        );
        let e = FillSpec {
            bs: 128 << 20,
            ..FillSpec::default()
        }
        .validate(false)
        .unwrap_err();
        assert!(e.message.contains("64MiB"), "{e}");
        assert!(
            FillSpec {
                bs: 256,
                ..FillSpec::default()
            }
            .validate(false)
            .is_err()
        );
    }
}
