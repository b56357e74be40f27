//! Where a job's result goes when it ends: a directory of text files
//! (`--output`, written by `output::export`), the JSON on stdout
//! (`--json`), and the sinks, places that are not text files
//! (`output::sink`); and the views `report --format` writes.

use std::path::PathBuf;

#[derive(Debug, Clone, Default)]
pub(crate) struct OutputSpec {
    /// `--output DIR`: result.json, summary.csv, the tables, report.html.
    pub(crate) dir: Option<PathBuf>,
    /// `--json`: the result on stdout (the summary goes to stderr).
    pub(crate) json: bool,
    /// `--dry-run`: the plan shown, nothing run.
    pub(crate) dry_run: bool,
    /// `--live -` or `--live-csv -`: stdout carries the interval lines, so
    /// the table goes to stderr (a pipe into jq reads JSON lines only).
    pub(crate) live_on_stdout: bool,
    /// `-q`: nothing for a person but errors: no fill line, no findings, no
    /// paths; the tables only when they are the run's one record.
    pub(crate) quiet: bool,
    /// Where else the finished result goes, each opened before any I/O.
    pub(crate) sinks: Vec<SinkSpec>,
}

/// Whether an output path means stdout: `-`, or `/dev/stdout` as scripts
/// write it (a character device otherwise refused as an output file). The
/// one rule, for the flags' reading (`input`) and the writers (`output`).
pub(crate) fn is_stdout(path: &std::path::Path) -> bool {
    path.as_os_str() == "-" || path == std::path::Path::new("/dev/stdout")
}

/// The environment variable that names a store, as `--store` does.
pub(crate) const STORE_ENV: &str = "VOLBENCH_STORE";

/// A place a finished result goes that is not a text file, as its flag
/// named it; `cmd::finish` opens each one before any I/O.
#[derive(Debug, Clone)]
pub(crate) enum SinkSpec {
    /// `run --store [PATH|URL]` (or `$VOLBENCH_STORE`): the results store,
    /// `store::sink`. The flag's text; `Some("")` is the flag alone (the
    /// default store), `None` the variable's store.
    Store(Option<String>),
}

/// One view of a set of results (`report --format`): its name is the
/// flag's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum View {
    Html,
    Json,
    Csv,
    Md,
    FioJson,
    IntervalsCsv,
    LatencyBuckets,
}
