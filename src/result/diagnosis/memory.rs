//! A target that is the host's memory (tmpfs, ramfs, zram, brd): its
//! figures are RAM's and the CPU's, whatever the storage would do.

use super::{Confidence, Finding, Kind};
use crate::result::ResultDoc;

/// The target is memory: said once, for the whole result. The limit
/// finders stay quiet on such a result (`limits::closed_loop`), so its
/// level is never called a cap of the storage as well.
pub(super) fn memory_target(doc: &ResultDoc) -> Vec<Finding> {
    let Some(t) = &doc.target else {
        return Vec::new();
    };
    let Some(m) = &t.memory else {
        return Vec::new();
    };
    vec![Finding::new(
        Kind::MemoryTarget,
        Confidence::High,
        format!(
            "{} is this host's memory ({m}), not storage: the figures are RAM and CPU speed \
             and say nothing about a disk or a share; run on the volume you mean to measure",
            crate::units::bounds::one_line(&t.path)
        ),
    )]
}

/// Whether a result's target is memory, for the finders that read a level
/// as the storage's.
pub(super) fn is_memory(doc: &ResultDoc) -> bool {
    doc.target.as_ref().is_some_and(|t| t.memory.is_some())
}
