//! Where a job's result goes when it ends: a directory of text files
//! (`--output`, written by `output::export`), the JSON on stdout
//! (`--json`), and the sinks, places that are not text files
//! (`output::sink`); and the views `report --format` writes.

/// One view of a set of results (`report --format`): its name is the
/// flag's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    Html,
    Json,
    Csv,
    Md,
    FioJson,
    IntervalsCsv,
    LatencyBuckets,
}
