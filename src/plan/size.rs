//! The working set of a target, decided once for every road: the size the
//! user gave (`--size`, a suite's `size`), else an existing file or block
//! device whole, else the directory default the job already carries. The
//! front ends never look at the target for it; each target is sized here
//! when it is planned: a local target, each of a list, and each host's own
//! targets in its agent.

use crate::error::Result;
use crate::io::target::TargetKind;
use crate::spec::JobSpec;

/// Sizes `spec`'s target: with no size from the user, an existing file or
/// device is used whole.
pub(crate) fn decide(spec: &mut JobSpec, size_given: bool) -> Result<()> {
    if size_given {
        return Ok(());
    }
    let insp = super::meta::inspect(spec)?;
    if let (TargetKind::File | TargetKind::BlockDevice, Some(n)) = (insp.kind, insp.existing_size) {
        spec.target.size = n;
    }
    Ok(())
}
