//! How `--dry-run` describes metadata runs: the tree and what each run does
//! to it, instead of a file set and block sizes.

use crate::spec::meta::MetaSpec;
use crate::spec::{JobSpec, RunSpec};
use crate::units::{format_duration, format_size};

/// The target's description when the job works on a tree.
pub(crate) fn tree(job: &JobSpec) -> Option<String> {
    let m = job.runs.iter().find_map(|r| r.meta.as_ref())?;
    let blocks = job.runs.iter().any(|r| r.meta.is_none());
    Some(format!(
        "directory; a tree of {} files of {} in {} leaf directories ({} levels of {}), created if not already there{}",
        m.total_files(),
        m.size_label(),
        m.leaves(),
        m.depth,
        m.width,
        if blocks {
            format!(
                "; beside it a file set of {} x {}",
                job.target.files,
                format_size(job.target.size / job.target.files.max(1) as u64 / 4096 * 4096)
            )
        } else {
            String::new()
        }
    ))
}

/// One metadata run's line, or None for block I/O.
pub(crate) fn run(s: &RunSpec) -> Option<String> {
    let m: &MetaSpec = s.meta.as_ref()?;
    let how = format!(
        "{} threads{}{}{}",
        s.threads,
        if m.shared_dirs {
            " in shared directories"
        } else {
            ""
        },
        if m.drop_caches {
            ", caches dropped first"
        } else {
            ""
        },
        match s.rate_iops {
            Some(r) => format!(", rate {r} ops/s"),
            None => String::new(),
        }
    );
    let secs = |x: f64| format_duration(std::time::Duration::from_secs_f64(x));
    Some(if m.whole_tree {
        let units = if m.ops.iter().all(|o| o.op.on_dirs()) {
            format!("{} leaf directories", m.leaves())
        } else {
            format!("{} files", m.total_files())
        };
        format!("{} once over all {units}, {how}", m.ops_label())
    } else {
        format!(
            "mix {}, {how}, warm-up {} + {}",
            m.ops_label(),
            secs(s.warmup_s),
            secs(s.duration_s)
        )
    })
}

/// The target as planning sees it. A host's part of a shared tree
/// (`ROOT/hostN`) may not exist yet, nor its ROOT: preparing makes both,
/// so ROOT's parent is what must exist now.
pub(crate) fn inspect(job: &JobSpec) -> crate::error::Result<crate::io::target::Inspection> {
    use crate::io::target::{self, Inspection, TargetKind};
    let path = &job.target.path;
    let part = job
        .runs
        .iter()
        .any(|r| r.meta.as_ref().is_some_and(|m| m.host_part));
    if part && !path.exists() {
        if let Some(root) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            let r = target::inspect(root)?;
            if r.kind != TargetKind::Directory {
                return Err(crate::error::VbError::refused(format!(
                    "refusing {}: a tree shared by many hosts needs a directory there",
                    root.display()
                )));
            }
            return Ok(Inspection {
                kind: TargetKind::Directory,
                path: path.clone(),
                existing_size: None,
            });
        }
    }
    target::inspect(path)
}
