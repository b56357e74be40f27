//! `volbench report`: a report or an export from result files alone.

use std::path::{Path, PathBuf};

use crate::error::{Result, VbError, exit};
use crate::input::args::{ReportArgs, ReportFormat};
use crate::output::file::OutputDir;
use crate::report;

/// Writes `text` to `path` as a regular file (see `outfile`), or to stdout
/// for `-` or no path.
pub(crate) fn emit(path: Option<&Path>, text: &str) -> Result<()> {
    match path {
        None => {
            crate::console::out!("{text}");
            Ok(())
        }
        Some(p) => crate::output::file::write_file(p, text.as_bytes()),
    }
}

/// `report --per-thread`: each run's threads as a table.
fn per_thread(a: &ReportArgs) -> Result<i32> {
    if let Some(o) = &a.output {
        crate::output::file::check_file(o)?;
    }
    let sources = crate::store::refs::load(&a.dirs, a.store.store.as_deref())?;
    let tables = report::threads::tables(&sources);
    let text = match a.format {
        ReportFormat::Html => tables.iter().map(|t| t.to_terminal() + "\n").collect(),
        ReportFormat::Md => tables.iter().map(|t| t.to_markdown() + "\n").collect(),
        ReportFormat::Csv => {
            let mut out = String::new();
            for t in &tables {
                out.push_str(&t.to_csv().map_err(VbError::run)?);
            }
            out
        }
        _ => {
            return Err(VbError::input(
                "--per-thread prints a table (terminal, --format md or csv); the figures \
                 themselves are result.json's runs[].threads[]",
            ));
        }
    };
    emit(a.output.as_deref(), &text)?;
    Ok(exit::OK)
}

pub(crate) fn cmd_report(a: &ReportArgs) -> Result<i32> {
    if a.trend.trend {
        if a.per_thread {
            return Err(VbError::input(
                "--per-thread shows one result's threads; --trend draws runs over time: give one",
            ));
        }
        return super::trend::cmd_trend(a);
    }
    if a.per_thread {
        return per_thread(a);
    }
    let profile = match a.dirs.as_slice() {
        [one] => super::capture::load_profile(one)?.map(|p| (one, p)),
        _ => None,
    };
    if let Some((one, p)) = profile {
        return super::capture::report_profile(a, one, &p);
    }
    // fio-plot reads a directory of one-run files (bench-fio's layout): a
    // directory given to -o gets one file per run.
    let fio_dir = match (a.format, &a.output) {
        (ReportFormat::FioJson, Some(o))
            if std::fs::symlink_metadata(o).is_ok_and(|m| m.is_dir()) =>
        {
            Some(o)
        }
        _ => None,
    };
    if let Some(o) = fio_dir {
        let dir = OutputDir::open(o)?;
        let sources = crate::store::refs::load(&a.dirs, a.store.store.as_deref())?;
        let files = report::fio_json::fio_json_per_run(&sources)?;
        for (name, text) in &files {
            dir.write(name, text)?;
        }
        crate::console::errln!("report: {} fio JSON files in {}", files.len(), o.display());
        return Ok(exit::OK);
    }
    if let Some(o) = &a.output {
        crate::output::file::check_file(o)?;
    }
    let sources = crate::store::refs::load(&a.dirs, a.store.store.as_deref())?;
    let text: String = report::export::exporters(Some(a.format.into()))
        .render(&sources)?
        .into_iter()
        .map(|(_, text)| text)
        .collect();
    let out: Option<PathBuf> = match (&a.output, a.format, a.dirs.as_slice()) {
        (Some(o), _, _) => Some(o.clone()),
        (None, ReportFormat::Html, [one]) if crate::store::refs::parse(one).is_some() => {
            return Err(VbError::input(format!(
                "{}: a report of a stored run is written where -o says (-o FILE, or -o - for \
                 stdout)",
                one.display()
            )));
        }
        (None, ReportFormat::Html, [one]) => Some(if one.is_dir() {
            one.join("report.html")
        } else {
            one.with_file_name("report.html")
        }),
        (None, ReportFormat::Html, _) => {
            return Err(VbError::input(
                "several results make one report: say where with -o FILE (or -o - for stdout)",
            ));
        }
        (None, _, _) => None,
    };
    emit(out.as_deref(), &text)?;
    if let Some(p) = out.filter(|p| !crate::output::file::is_stdout(p)) {
        crate::console::errln!("report: {}", p.display());
    }
    Ok(exit::OK)
}
