//! The one finish of every run, here or on many hosts: the expectation
//! (`--expect`) checked before any I/O and recorded after it, the
//! diagnosis, the terminal summary, the output files, and the exit code.

use crate::error::{Result, VbError, exit};
use crate::input::args::CommonArgs;
use crate::input::catalogue::{self, size};
use crate::output;
use crate::output::file::OutputDir;
use crate::report;
use crate::result::ResultDoc;
use crate::result::diagnosis;
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

/// The expectation recorded and the diagnosis made, before the result is
/// written and shown.
pub(crate) fn annotate(mut doc: ResultDoc, expect: Option<Expectation>) -> ResultDoc {
    let from = expect.as_ref().and_then(|e| e.from.clone());
    if expect.as_ref().is_some_and(|e| !e.given.is_empty()) {
        doc.expect = expect;
    }
    doc.diagnosis = diagnosis::diagnose(&doc);
    if let Some(from) = from {
        headroom(&mut doc, &from.0, &from.1);
    }
    doc
}

/// `--expect-from`: the headroom `compare PROFILE RESULT` states, over
/// this result, said at the end of the run and kept in the result (its
/// lines are notes, so the report shows them too).
fn headroom(doc: &mut ResultDoc, shown: &str, profile: &crate::result::profile::Profile) {
    match report::compare::headroom::headroom(profile, doc, "this run", None) {
        Ok(h) => {
            for line in h.lines() {
                crate::console::errln!("headroom: {line}");
                doc.notes.push(format!("headroom over {shown}: {line}"));
            }
            doc.headroom = serde_json::to_value(&h).ok();
        }
        Err(e) => {
            crate::console::errln!("headroom: none stated over {shown}: {e}");
            doc.notes
                .push(format!("no headroom stated over {shown}: {e}"));
        }
    }
}

/// Writes and prints a result, and picks the exit code from how it ended.
/// The files are written first: whatever becomes of stdout (a reader that
/// went away, a full disk, a pipe nobody reads), the results are on disk
/// before a byte of the table is printed. If the output directory cannot
/// be written after all, the files go to a new private directory instead,
/// and the user is told (the table is then the other copy).
pub(crate) fn finish(doc: &ResultDoc, out_dir: Option<&OutputDir>, json: bool) -> Result<i32> {
    let mut write_error = None;
    let mut saved_in = None;
    let mut lost = None;
    if let Some(dir) = out_dir {
        let exporters = report::export::exporters(None);
        let write =
            |dir: &OutputDir| exporters.write_dir(&report::own_source(doc, dir.path()), dir);
        saved_in = match write(dir) {
            Ok(()) => Some(dir.path().to_path_buf()),
            Err(e) => {
                let fallback =
                    OutputDir::fallback().and_then(|f| write(&f).map(|_| f.path().to_path_buf()));
                match &fallback {
                    Ok(p) => crate::console::errln!(
                        "volbench: error: {e}; the results were saved in {} instead",
                        p.display()
                    ),
                    Err(f) => {
                        lost = Some(format!(
                            "volbench: error: {e}; saving them elsewhere failed too ({f}): \
                             the table above is all that is left"
                        ))
                    }
                }
                write_error = Some(e.exit_code());
                fallback.ok()
            }
        };
    }
    let summary = output::summary(doc);
    if json {
        crate::console::errln!("{summary}");
        crate::console::outln!("{}", output::to_json(doc)?);
    } else {
        crate::console::outln!("{summary}");
    }
    if let Some(l) = lost {
        crate::console::errln!("{l}");
    }
    if let Some(p) = saved_in {
        crate::console::errln!("results: {}", p.join("result.json").display());
        crate::console::errln!("report: {}", p.join("report.html").display());
    }
    if let Some(e) = &doc.error {
        crate::console::errln!("volbench: error: {e}");
        return Ok(crate::error::failed_run_code(e));
    }
    if let Some(code) = write_error {
        return Ok(code);
    }
    Ok(if doc.interrupted {
        exit::INTERRUPTED
    } else {
        exit::OK
    })
}
