//! The file set a block-I/O run works on: how many files and how large the
//! working set, the target's unless the run sets its own (`files`, `size`
//! in a suite run: the SMB paper's ten 2 GiB files against one 128 GiB
//! file). Each distinct layout is its own set, prepared and filled once.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use serde::{Deserialize, Serialize};

use super::{JobSpec, RunSpec};
use crate::units::format_size;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct SetLayout {
    pub(crate) files: u32,
    /// The working set over all files, in bytes, as the user gave it.
    pub(crate) size: u64,
}

impl SetLayout {
    /// Each file's size: whole 4 KiB pages, as the file set makes them.
    pub(crate) fn file_size(&self) -> u64 {
        self.size / u64::from(self.files.max(1)) / 4096 * 4096
    }

    /// The bytes a fill writes: every file to its end.
    pub(crate) fn fill_bytes(&self) -> u64 {
        self.file_size().saturating_mul(u64::from(self.files))
    }

    /// `10 x 2GiB`.
    pub(crate) fn label(&self) -> String {
        format!("{} x {}", self.files, format_size(self.file_size()))
    }
}

/// A byte count as a name part that no other count shares: the largest
/// binary unit that divides it exactly (`128GiB`, `3145732KiB`), unlike
/// `format_size`, which rounds.
pub(crate) fn exact_size_label(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut whole = bytes;
    let mut unit = 0;
    while unit + 1 < UNITS.len() && whole >= 1024 && whole % 1024 == 0 {
        whole /= 1024;
        unit += 1;
    }
    format!("{whole}{}", UNITS.get(unit).copied().unwrap_or("B"))
}

impl JobSpec {
    /// The file set `run` works on.
    pub(crate) fn layout_of(&self, run: &RunSpec) -> SetLayout {
        SetLayout {
            files: run.files.unwrap_or(self.target.files),
            size: run.size.unwrap_or(self.target.size),
        }
    }

    /// Every distinct file set the block-I/O runs use, in the order the
    /// runs first need them; empty for a job of metadata runs only.
    pub(crate) fn layouts(&self) -> Vec<SetLayout> {
        let mut out: Vec<SetLayout> = Vec::new();
        for r in self.runs.iter().filter(|r| r.meta.is_none()) {
            let l = self.layout_of(r);
            if !out.contains(&l) {
                out.push(l);
            }
        }
        out
    }

    /// Where a set lives when the runs use several: a subdirectory of the
    /// target. Sets of the target's own size keep the `files-N` name they
    /// always had (so sets made before per-run sizes are reused); another
    /// size is named exactly, so two sizes never share a directory.
    pub(crate) fn subset_name(&self, l: &SetLayout) -> String {
        if l.size == self.target.size {
            format!("files-{}", l.files)
        } else {
            format!("files-{}-size-{}", l.files, exact_size_label(l.size))
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    #[test]
    fn a_layout_names_its_files_and_the_bytes_its_fill_writes() {
        let l = SetLayout {
            files: 10,
            size: 20 << 30,
        };
        assert_eq!((l.file_size(), l.fill_bytes()), (2 << 30, 20 << 30));
        assert_eq!(l.label(), "10 x 2GiB");
        // Pages only: 3 files of 10000 bytes' share keep 8 KiB each.
        let odd = SetLayout {
            files: 3,
            size: 30_000,
        };
        assert_eq!((odd.file_size(), odd.fill_bytes()), (8192, 24576));
    }

    #[test]
    fn exact_labels_never_round_two_sizes_together() {
        assert_eq!(exact_size_label(128 << 30), "128GiB");
        assert_eq!(exact_size_label((3 << 30) + 4096), "3145732KiB");
        assert_eq!(exact_size_label(1000), "1000B");
        assert_ne!(
            exact_size_label((1 << 30) + (1 << 20)),
            exact_size_label((1 << 30) + (1 << 21))
        );
    }
}
