//! The one finish of every run, here or on many hosts: the expectation
//! (`--expect`, read at input) recorded, the diagnosis, the terminal
//! summary, the output files, the sinks, and the exit code.

use crate::error::{Result, exit};
use crate::output;
use crate::output::file::OutputDir;
use crate::output::sink::{Sink, Sinks};
use crate::report;
use crate::result::ResultDoc;
use crate::result::diagnosis;
use crate::result::expect::Expectation;
use crate::spec::output::{OutputSpec, SinkSpec};

/// The expectation recorded and the diagnosis made, and the result held to
/// what its readers read back, before it is written and shown.
pub(crate) fn annotate(mut doc: ResultDoc, expect: Option<Expectation>) -> ResultDoc {
    let from = expect.as_ref().and_then(|e| e.from.clone());
    if expect.as_ref().is_some_and(|e| !e.given.is_empty()) {
        doc.expect = expect;
    }
    doc.diagnosis = diagnosis::diagnose(&doc);
    if let Some(from) = from {
        headroom(&mut doc, &from.0, &from.1);
    }
    // Last, so the note it may add is counted: what is written can be
    // read back by report, compare and store import, however many hosts
    // sent however long a record (a few KiB of room for the stdout copy's
    // newline and the file writer's).
    crate::result::thin::fit(&mut doc, output::MAX_RESULT_BYTES - (64 << 10));
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
/// The files are written first, then the table printed: a stdout that
/// fails (a closed pipe, a full disk) cannot cost the files. If the output
/// directory cannot be written after all, the files go to a new private
/// directory instead, and the user is told.
/// Then each sink gets the result (`output::sink`): result.json is on
/// disk before any of them is tried.
pub(crate) fn finish(doc: &ResultDoc, to: &Outputs) -> Result<i32> {
    // The files first: whatever becomes of stdout (a reader that went
    // away, a full disk, a pipe nobody reads), the results are on disk
    // before a byte of the table is printed.
    let mut write_error = None;
    let mut saved = None;
    let mut written = None;
    if let Some(dir) = to.dir.as_deref() {
        let (at, error) = write_files(doc, dir);
        write_error = error;
        written = at;
    }
    if to.quiet {
        // `-q`: the tables alone, and only where nothing else keeps the
        // result (no --output, no --json).
        if to.dir.is_none() && !to.json {
            let text = output::tables_only(doc);
            if to.live_on_stdout {
                crate::console::errln!("{text}");
            } else {
                crate::console::outln!("{text}");
            }
        }
    } else if to.json || to.live_on_stdout {
        // stdout carries data (the result, or the interval lines a reader
        // such as jq parses): the table is for a person, on stderr.
        crate::console::errln!("{}", output::summary(doc));
    } else {
        crate::console::outln!("{}", output::summary(doc));
    }
    if to.json {
        crate::console::outln!("{}", output::to_json(doc)?);
    }
    if let Some(p) = written {
        if !to.quiet {
            crate::console::errln!("results: {}", p.join("result.json").display());
            crate::console::errln!("report: {}", p.join("report.html").display());
        }
        saved = Some(p.join("result.json"));
    }
    let failed = to.sinks.put(doc);
    if !failed.is_empty() && saved.is_none() {
        // A result a sink did not take, and no result.json written: saved
        // in a new private directory, so it is never lost.
        match OutputDir::fallback().and_then(|f| write_dir(doc, &f).map(|_| f)) {
            Ok(f) => saved = Some(f.path().join("result.json")),
            Err(e) => crate::console::errln!("volbench: error: saving the result failed too ({e})"),
        }
    }
    let kept = match &saved {
        Some(p) => format!("the result is in {}", p.display()),
        None => "the table above is all that is left".to_string(),
    };
    for (name, e) in &failed {
        crate::console::errln!("volbench: error: {name}: {e}; {kept}");
    }
    let sink_error = failed.first().map(|(_, e)| e.exit_code());
    if let Some(e) = &doc.error {
        crate::console::errln!("volbench: error: {e}");
        return Ok(doc
            .error_code
            .unwrap_or_else(|| crate::error::failed_run_code(e)));
    }
    if let Some(code) = write_error.or(sink_error) {
        return Ok(code);
    }
    Ok(if doc.interrupted {
        exit::INTERRUPTED
    } else {
        exit::OK
    })
}

/// Every view into `dir`.
fn write_dir(doc: &ResultDoc, dir: &OutputDir) -> Result<()> {
    report::export::exporters(None).write_dir(&report::own_source(doc, dir.path()), dir)
}

/// The output files in `dir`; if it cannot be written after all, in a new
/// private directory instead, the user told. Where they went, and the
/// error that kept them from `dir`.
fn write_files(doc: &ResultDoc, dir: &OutputDir) -> (Option<std::path::PathBuf>, Option<i32>) {
    let Err(e) = write_dir(doc, dir) else {
        return (Some(dir.path().to_path_buf()), None);
    };
    let fallback =
        OutputDir::fallback().and_then(|f| write_dir(doc, &f).map(|_| f.path().to_path_buf()));
    match &fallback {
        Ok(p) => crate::console::errln!(
            "volbench: error: {e}; the results were saved in {} instead",
            p.display()
        ),
        Err(f) => crate::console::errln!(
            "volbench: error: {e}; saving them elsewhere failed too ({f}): \
             the table is all that is left"
        ),
    }
    (fallback.ok(), Some(e.exit_code()))
}

/// Where a job's result goes, opened before any I/O: the output
/// directory, stdout as JSON, the sinks.
#[derive(Clone, Default)]
pub(crate) struct Outputs {
    pub(crate) dir: Option<std::sync::Arc<OutputDir>>,
    pub(crate) json: bool,
    /// `--live -` or `--live-csv -`: stdout carries the interval lines, so
    /// the table goes to stderr.
    pub(crate) live_on_stdout: bool,
    /// `-q`: nothing for a person but errors.
    pub(crate) quiet: bool,
    pub(crate) sinks: Sinks,
}

impl Outputs {
    /// Each place `spec` names, opened or checked now.
    pub(crate) fn open(spec: &OutputSpec) -> Result<Self> {
        Ok(Outputs {
            dir: spec
                .dir
                .as_deref()
                .map(OutputDir::open)
                .transpose()?
                .map(std::sync::Arc::new),
            json: spec.json,
            live_on_stdout: spec.live_on_stdout,
            quiet: spec.quiet,
            sinks: Sinks::new(spec.sinks.iter().map(open_sink).collect::<Result<_>>()?),
        })
    }
}

/// The sink a spec names, reached and checked now (before any I/O). Each
/// kind of sink is an arm here, at the top, since a sink may live in any
/// layer above `output` (the results store does).
fn open_sink(spec: &SinkSpec) -> Result<std::sync::Arc<dyn Sink>> {
    match spec {
        SinkSpec::Store(flag) => crate::store::sink::open(flag.as_deref()),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
pub(crate) mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::output::sink::testing::{Kept, kept};

    /// Where a test's result goes: `dir`, and `sinks`.
    pub(crate) fn outputs(dir: &std::path::Path, sinks: &[Arc<Kept>]) -> Outputs {
        let mut s = Sinks::default();
        for k in sinks {
            s.push(k.clone());
        }
        Outputs {
            dir: Some(Arc::new(OutputDir::open(dir).unwrap())),
            json: false,
            live_on_stdout: false,
            quiet: false,
            sinks: s,
        }
    }

    #[test]
    fn every_sink_gets_the_finished_result_after_result_json_is_written() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("out");
        let (a, b) = (kept(false, &dir), kept(false, &dir));
        let doc = annotate(crate::report::fixtures::six_patterns(), None);
        let code = finish(&doc, &outputs(&dir, &[a.clone(), b.clone()])).unwrap();
        assert_eq!(code, exit::OK);
        for k in [a, b] {
            let seen = k.seen.lock().unwrap();
            assert_eq!(seen.len(), 1, "each sink once");
            assert!(seen[0].1, "result.json was on disk before the sink ran");
            assert_eq!(seen[0].0, doc.runs[0].name);
        }
    }

    #[test]
    fn a_failing_sink_costs_its_exit_code_not_the_result_or_the_next_sink() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("out");
        let (bad, good) = (kept(true, &dir), kept(false, &dir));
        let doc = annotate(crate::report::fixtures::six_patterns(), None);
        let code = finish(&doc, &outputs(&dir, &[bad.clone(), good.clone()])).unwrap();
        assert_eq!(code, exit::TARGET, "the sink's error is the exit code");
        assert!(dir.join("result.json").is_file(), "result.json kept");
        assert_eq!(
            good.seen.lock().unwrap().len(),
            1,
            "the next sink still ran"
        );
        // A run that failed says so first: its code wins over the sink's.
        let mut failed = doc.clone();
        failed.error = Some("I/O error on the target".into());
        let tmp2 = tempfile::tempdir().unwrap();
        let dir2 = tmp2.path().join("out");
        let code = finish(&failed, &outputs(&dir2, &[kept(true, &dir2)])).unwrap();
        assert_eq!(
            code,
            crate::error::failed_run_code("I/O error on the target")
        );
    }

    #[test]
    fn a_failure_ends_with_its_kinds_code_and_the_first_failure_is_kept() {
        use crate::error::VbError;
        let tmp = tempfile::tempdir().unwrap();
        let base = annotate(crate::report::fixtures::six_patterns(), None);
        let cases = [
            // A refusal found as the run opened its set: 3, as at a fill.
            (
                VbError::refused("refusing to write a: another user owns it"),
                exit::REFUSED,
            ),
            (
                VbError::input("a 1 MiB I/O is larger than the server takes"),
                exit::BAD_INPUT,
            ),
            // A run's failure: its words say (a full disk is the target's).
            (
                VbError::run("write failed: No space left on device (os error 28)"),
                exit::TARGET,
            ),
            (VbError::run("I/O error on the target"), exit::RUN_FAILED),
        ];
        for (k, (e, want)) in cases.into_iter().enumerate() {
            let mut doc = base.clone();
            doc.fail(&e);
            // A later failure changes neither the words nor the code.
            doc.fail(&VbError::input("later"));
            assert_eq!(doc.error.as_deref(), Some(e.message.as_str()));
            let dir = tmp.path().join(format!("out{k}"));
            assert_eq!(finish(&doc, &outputs(&dir, &[])).unwrap(), want, "{e}");
            // Read back, the words alone say what they can: a run's code.
            let back: ResultDoc =
                serde_json::from_slice(&std::fs::read(dir.join("result.json")).unwrap()).unwrap();
            assert_eq!(back.error_code, None, "the code is not written");
        }
    }
}
