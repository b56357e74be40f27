//! `--expect` and `--expect-from`: what the storage should deliver, read
//! and worked out before any I/O (a catalogue entry, figures, or the peak
//! of a production profile); the finish records it and the diagnosis reads
//! it.

use crate::error::{Result, VbError};
use crate::input::args::CommonArgs;
use crate::input::catalogue::{self, size};
use crate::result::expect::Expectation;

/// `--expect` checked and worked out before any I/O.
pub(crate) fn expectation(c: &CommonArgs) -> Result<Option<Expectation>> {
    let from = match &c.expect_from {
        Some(p) => Some(std::sync::Arc::new((p.display().to_string(), profile(p)?))),
        None => None,
    };
    let mut e = stated(c)?;
    if from.is_some() {
        e.get_or_insert_with(Expectation::default).from = from;
    }
    Ok(e)
}

/// `--expect-from PROFILE`, read and checked: a profile with a production
/// peak to compare with.
fn profile(p: &std::path::Path) -> Result<crate::result::profile::Profile> {
    // Read as `run --like` reads one (not through `capture`, which would
    // close a circle of imports in this folder).
    if !p.is_file() {
        return Err(VbError::input(format!(
            "--expect-from {}: not a production profile (volbench capture -o writes one)",
            p.display()
        )));
    }
    let shown = p.display().to_string();
    let text = crate::input::file::read_text(p, "profile", crate::units::bounds::MAX_PROFILE_FILE)?;
    let profile = crate::result::profile::Profile::from_json(&text, &shown)
        .map_err(|e| VbError::input(format!("--expect-from {shown}: {e}")))?;
    if profile.device(None).is_none_or(|d| d.iops.peak <= 0.0) {
        return Err(VbError::input(format!(
            "--expect-from {}: the profile saw no block requests: there is no production peak \
             to compare with",
            p.display()
        )));
    }
    Ok(profile)
}

/// `--expect`: a catalogue entry or figures.
fn stated(c: &CommonArgs) -> Result<Option<Expectation>> {
    let Some(text) = &c.expect else {
        if c.catalogue.catalogue.is_some() {
            return Err(VbError::input(
                "--catalogue is only read for --expect; give --expect SERVICE[:QUOTA]",
            ));
        }
        return Ok(None);
    };
    let all = catalogue::load(c.catalogue.catalogue.as_deref())?;
    size::expectation(&all, text).map(Some)
}
