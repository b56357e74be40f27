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
    if expect.is_some() {
        doc.expect = expect;
    }
    doc.diagnosis = diagnosis::diagnose(&doc);
    doc
}

/// Writes and prints a result, and picks the exit code from how it ended.
/// The table is printed first: whatever happens to the files, the numbers
/// reach the user. If the output directory cannot be written after all,
/// the files go to a new private directory instead, and the user is told.
pub(crate) fn finish(doc: &ResultDoc, out_dir: Option<&OutputDir>, json: bool) -> Result<i32> {
    let summary = output::summary(doc);
    if json {
        eprintln!("{summary}");
        println!("{}", output::to_json(doc)?);
    } else {
        println!("{summary}");
    }
    let mut write_error = None;
    if let Some(dir) = out_dir {
        let exporters = report::export::exporters(None);
        let write =
            |dir: &OutputDir| exporters.write_dir(&report::own_source(doc, dir.path()), dir);
        let saved_in = match write(dir) {
            Ok(()) => Some(dir.path().to_path_buf()),
            Err(e) => {
                let fallback =
                    OutputDir::fallback().and_then(|f| write(&f).map(|_| f.path().to_path_buf()));
                match &fallback {
                    Ok(p) => eprintln!(
                        "volbench: error: {e}; the results were saved in {} instead",
                        p.display()
                    ),
                    Err(f) => eprintln!(
                        "volbench: error: {e}; saving them elsewhere failed too ({f}): \
                         the table above is all that is left"
                    ),
                }
                write_error = Some(e.exit_code());
                fallback.ok()
            }
        };
        if let Some(p) = saved_in {
            eprintln!("results: {}", p.join("result.json").display());
            eprintln!("report: {}", p.join("report.html").display());
        }
    }
    if let Some(e) = &doc.error {
        eprintln!("volbench: error: {e}");
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
