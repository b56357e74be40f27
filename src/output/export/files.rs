//! The views of one result this layer builds: result.json, summary.csv,
//! tables.md and a CSV per table, in the papers' layouts. Each takes the
//! first source: `run --output` has exactly one.

use super::Export;
use crate::error::{Result, VbError};
use crate::output::source::Source;
use crate::output::{diagnosis, search, smb, summary_csv, table, tables, to_json};
use crate::result::ResultDoc;

fn first(sources: &[Source]) -> Result<&ResultDoc> {
    sources
        .first()
        .map(|s| &s.doc)
        .ok_or_else(|| VbError::run("no result to write"))
}

/// `result.json`: the result itself (`volbench.result/v1`).
pub(crate) struct ResultJson;

impl Export for ResultJson {
    fn name(&self) -> &'static str {
        "result.json"
    }
    fn render(&self, sources: &[Source]) -> Result<Vec<(String, String)>> {
        Ok(vec![("result.json".into(), to_json(first(sources)?)?)])
    }
}

/// `summary.csv`: one row per run and operation (docs/reference/summary-csv.md).
pub(crate) struct SummaryCsv;

impl Export for SummaryCsv {
    fn name(&self) -> &'static str {
        "summary.csv"
    }
    fn render(&self, sources: &[Source]) -> Result<Vec<(String, String)>> {
        Ok(vec![("summary.csv".into(), summary_csv(first(sources)?)?)])
    }
}

/// `tables.md`: the tables in the papers' layout, a latency search's steps
/// and the diagnosis.
pub(crate) struct TablesMd;

impl Export for TablesMd {
    fn name(&self) -> &'static str {
        "tables.md"
    }
    fn render(&self, sources: &[Source]) -> Result<Vec<(String, String)>> {
        let doc = first(sources)?;
        let mut md: Vec<String> = tables::views(doc)
            .iter()
            .map(table::Table::to_markdown)
            .collect();
        md.extend(search::tables(doc).iter().map(table::Table::to_markdown));
        md.extend(smb::tables(doc).iter().map(table::Table::to_markdown));
        md.extend(diagnosis::table(doc).map(|t| t.to_markdown()));
        Ok(vec![("tables.md".into(), md.join("\n"))])
    }
}

/// `table-N-title.csv`: each of those tables as CSV.
pub(crate) struct TableCsvs;

impl Export for TableCsvs {
    fn name(&self) -> &'static str {
        "table CSVs"
    }
    fn render(&self, sources: &[Source]) -> Result<Vec<(String, String)>> {
        let doc = first(sources)?;
        let mut views = tables::views(doc);
        views.extend(smb::tables(doc));
        let mut out = Vec::new();
        for (i, v) in views.iter().enumerate() {
            let csv = v
                .to_csv()
                .map_err(|e| VbError::run(format!("cannot format CSV: {e}")))?;
            out.push((
                format!("table-{}-{}.csv", i + 1, table::slug(&v.title)),
                csv,
            ));
        }
        Ok(out)
    }
}
