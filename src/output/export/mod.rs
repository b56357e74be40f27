//! The one plug-in point of every view written after a run: each view
//! implements `Export` (a name and its files, from the results alone), and
//! `Exporters` is the list a command asks for: `run --output DIR` writes
//! them all into the directory, `report --format F` writes the one asked.
//! Views built above this layer (the HTML report, `report --format`'s own)
//! implement the trait where they live and join the list there
//! (`report::export::exporters`).

mod files;

pub(crate) use files::{ResultJson, SummaryCsv, TableCsvs, TablesMd};

use crate::error::Result;
use crate::output::file::OutputDir;
use crate::output::source::Source;

/// One view of a set of results, written as one or more files.
pub(crate) trait Export {
    /// What it is, as `--format` and messages name it.
    fn name(&self) -> &'static str;
    /// Its files, `(file name, text)`, in the order they are written.
    fn render(&self, sources: &[Source]) -> Result<Vec<(String, String)>>;
}

/// The views a command writes, in order.
#[derive(Default)]
pub struct Exporters(Vec<Box<dyn Export>>);

impl Exporters {
    /// What `run --output DIR` writes that this layer can build:
    /// result.json first (whatever fails later, it is there), then
    /// summary.csv, tables.md and one CSV per table.
    pub fn output_dir() -> Self {
        Exporters(vec![
            Box::new(ResultJson),
            Box::new(SummaryCsv),
            Box::new(TablesMd),
            Box::new(TableCsvs),
        ])
    }

    pub(crate) fn push(&mut self, e: Box<dyn Export>) {
        self.0.push(e);
    }

    /// Every file of every view, rendered.
    pub(crate) fn render(&self, sources: &[Source]) -> Result<Vec<(String, String)>> {
        let mut out = Vec::new();
        for e in &self.0 {
            out.extend(e.render(sources)?);
        }
        Ok(out)
    }

    /// Writes each view's files into `dir` (checked and opened before the
    /// run: see `file::OutputDir`), each to a temporary name and renamed so
    /// a reader never sees half a file, one view after the other: a view
    /// that fails leaves the ones before it written.
    pub fn write_dir(&self, sources: &[Source], dir: &OutputDir) -> Result<()> {
        for e in &self.0 {
            for (name, text) in e.render(sources)? {
                dir.write(&name, &text)?;
            }
        }
        Ok(())
    }
}
