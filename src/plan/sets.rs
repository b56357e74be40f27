//! How `--dry-run` shows the file sets of a job whose runs use several
//! (`files`, `size` per suite run): each set, where it lives, what its fill
//! writes, and which set each run works on.

use std::fmt::Write as _;

use crate::io::target::TargetKind;
use crate::spec::layout::SetLayout;
use crate::spec::{JobSpec, RunSpec};
use crate::units::format_size;

/// The one layout of a job whose runs all use the same set (the target's
/// own when no run sets its files or size).
pub(super) fn single(job: &JobSpec) -> SetLayout {
    match job.layouts().as_slice() {
        [l] => *l,
        _ => SetLayout {
            files: job.target.files,
            size: job.target.size,
        },
    }
}

/// The working set as the target line gives it.
pub(super) fn working_set(job: &JobSpec) -> String {
    if job.layouts().len() > 1 {
        "per set (below)".into()
    } else {
        format_size(single(job).size)
    }
}

/// The sets' lines, when there are several.
pub(super) fn describe(job: &JobSpec, kind: TargetKind) -> String {
    let layouts = job.layouts();
    let mut out = String::new();
    if layouts.len() < 2 || kind != TargetKind::Directory {
        return out;
    }
    let mut total = 0u64;
    for (i, l) in layouts.iter().enumerate() {
        total = total.saturating_add(l.fill_bytes());
        let _ = writeln!(
            out,
            "{}{}/: {} (a fill of {} unless already filled)",
            if i == 0 { "sets:     " } else { "          " },
            job.subset_name(l),
            l.label(),
            format_size(l.fill_bytes())
        );
    }
    let _ = writeln!(
        out,
        "          {} in all, side by side; free space is checked for every set before the first fill",
        format_size(total)
    );
    out
}

/// `  [set 1 x 128GiB]` after a run that uses one of several sets.
pub(super) fn run_label(job: &JobSpec, run: &RunSpec) -> String {
    if run.meta.is_some() || job.layouts().len() < 2 {
        return String::new();
    }
    format!("  [set {}]", job.layout_of(run).label())
}
