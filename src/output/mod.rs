//! Views of a result: the terminal summary, summary.csv, result.json;
//! `export/` writes every post-run view, `live/` the ones made while a run goes.

pub(crate) mod diagnosis;
pub mod export;
pub mod file;
pub mod fmt;
pub mod live;
pub mod profile;
pub(crate) mod protocol;
pub mod search;
pub mod sink;
pub mod small_files;
pub(crate) mod smb;
pub mod source;
pub mod table;
pub(crate) mod tables;
pub(crate) mod target_table;

use crate::error::{Result, VbError};
use crate::result::{PhaseName, ResultDoc, engine_names};
pub use source::{MAX_RESULT_BYTES, read_result};

const CSV_HEADER: [&str; 31] = [
    "run",
    "op",
    "rw",
    "bs",
    "read_pct",
    "threads",
    "iodepth",
    "engine",
    "duration_s",
    "ops",
    "bytes",
    "iops",
    "mib_s",
    "lat_us_mean",
    "lat_us_min",
    "lat_us_max",
    "lat_us_stddev",
    "lat_us_p50",
    "lat_us_p90",
    "lat_us_p99",
    "lat_us_p99_9",
    "lat_us_p99_99",
    "cpu_user_pct",
    "cpu_sys_pct",
    // The run as a whole, reads and writes together (the same on each of
    // its rows): the figures the tables show for a mixed run.
    "run_iops",
    "run_mib_s",
    "run_lat_us_mean",
    "run_lat_us_p50",
    "run_lat_us_p99",
    "run_lat_us_p99_9",
    "discarded",
];

/// summary.csv: one row per run and operation type, stable column names
/// (documented in `docs/reference/summary-csv.md`). New columns are only
/// ever added at the end.
pub(crate) fn summary_csv(doc: &ResultDoc) -> Result<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let err = |e: csv::Error| VbError::run(format!("cannot format CSV: {e}"));
    w.write_record(CSV_HEADER).map_err(err)?;
    for run in &doc.runs {
        let measured = run
            .phases
            .iter()
            .find(|p| p.name == PhaseName::Measure)
            .map(|p| p.duration_s)
            .unwrap_or(0.0);
        let all = run.latency();
        let f = |v: f64| format!("{v:.3}");
        // A metadata run: `rw` is meta, `bs` the file size, a row per operation.
        let (rw, bs) = match &run.workload.meta {
            Some(m) => ("meta".to_string(), m.size_label()),
            None => (run.workload.rw.name().to_string(), run.workload.bs_label()),
        };
        for (name, op) in run.op_rows() {
            let l = &op.lat_us;
            let record = [
                run.name.clone(),
                name.into(),
                rw.clone(),
                bs.clone(),
                run.workload.read_pct.to_string(),
                run.workload.threads.to_string(),
                run.workload.iodepth.to_string(),
                engine_names(&run.engine),
                f(measured),
                op.ops.to_string(),
                op.bytes.to_string(),
                f(op.iops),
                f(op.mib_s),
                f(l.mean),
                f(l.min),
                f(l.max),
                f(l.stddev),
                f(l.p50),
                f(l.p90),
                f(l.p99),
                f(l.p99_9),
                f(l.p99_99),
                f(run.totals.cpu.user_pct),
                f(run.totals.cpu.sys_pct),
                f(run.total_iops()),
                f(run.total_mib_s()),
                f(all.mean),
                f(all.p50),
                f(all.p99),
                f(all.p99_9),
                // A suite's warm-up run: recorded, left out of the tables.
                run.workload.discard.to_string(),
            ];
            w.write_record(record.iter().map(|c| table::csv_cell(c).into_owned()))
                .map_err(err)?;
        }
    }
    csv_text(w)
}

/// The text a CSV writer into memory holds, once flushed.
pub(crate) fn csv_text(w: csv::Writer<Vec<u8>>) -> Result<String> {
    let bytes = w
        .into_inner()
        .map_err(|e| VbError::run(format!("cannot format CSV: {e}")))?;
    String::from_utf8(bytes).map_err(|e| VbError::run(e.to_string()))
}

pub(crate) fn to_json(doc: &ResultDoc) -> Result<String> {
    serde_json::to_string_pretty(doc)
        .map_err(|e| VbError::run(format!("cannot encode the result: {e}")))
}

/// The result's tables alone, without the fill line or the findings
/// (`-q` when the tables are the run's one record).
pub(crate) fn tables_only(doc: &ResultDoc) -> String {
    let parts: Vec<String> = tables::views(doc)
        .iter()
        .map(table::Table::to_terminal)
        .collect();
    fmt::terminal(&parts.join("\n\n")).into_owned()
}

/// The terminal summary: every table of the result.
pub fn summary(doc: &ResultDoc) -> String {
    let mut parts: Vec<String> = tables::views(doc)
        .iter()
        .map(table::Table::to_terminal)
        .collect();
    // The fill is a phase of its own, before every table's runs.
    if !doc.fill.is_empty() {
        let lines: Vec<String> = doc.fill.iter().map(|f| f.line()).collect();
        parts.insert(0, lines.join("\n"));
    }
    // Said before the figures it qualifies.
    if let Some(t) = &doc.target {
        if let Some(m) = &t.memory {
            parts.insert(
                0,
                format!(
                    "memory: {} is this host's memory ({m}), not storage",
                    crate::units::bounds::one_line(&t.path)
                ),
            );
        }
    }
    // What an NFS client saw, under the tables: reconnects first.
    let seen: Vec<String> = doc.runs.iter().flat_map(protocol::lines).collect();
    if !seen.is_empty() {
        parts.push(seen.join("\n"));
    }
    // The report's per-host table (a spread past a few dozen hosts).
    parts.extend(target_table::per_host(doc).map(|t| t.to_terminal()));
    parts.extend(search::tables(doc).iter().map(table::Table::to_terminal));
    let findings = diagnosis::lines(doc);
    if !findings.is_empty() {
        parts.push(findings);
    }
    // Run names, paths and the expectation's basis come from users.
    fmt::terminal(&parts.join("\n\n")).into_owned()
}
