//! `volbench report --trend`: the HTML report of a result (or of the
//! target's newest stored run) with, first, the trend of each of its
//! workloads on its target over the runs the store keeps.

use std::path::PathBuf;

use crate::error::{Result, VbError, exit};
use crate::input::args::{ReportArgs, ReportFormat};
use crate::output::source::{Source, label_sources};
use crate::report;
use crate::store::{Location, Store, query, rows};

const DEFAULT_OUTPUT: &str = "volbench-trend.html";

pub(crate) fn cmd_trend(a: &ReportArgs) -> Result<i32> {
    if a.format != ReportFormat::Html {
        return Err(VbError::input(
            "--trend draws into the HTML report: leave --format out (or give html)",
        ));
    }
    let out = a
        .output
        .clone()
        .unwrap_or_else(|| PathBuf::from(DEFAULT_OUTPUT));
    crate::output::file::check_file(&out)?;
    let since = a.trend.since.as_deref().map(query::since).transpose()?;
    let flag = a.store.store.as_deref();
    let mut store = Store::open(&Location::for_reading(flag)?, false)?;
    let sources = if a.dirs.is_empty() {
        let id = store.latest(a.trend.target.as_deref(), None)?;
        let mut s = vec![Source {
            label: String::new(),
            path: format!("{}{id}", crate::store::refs::PREFIX).into(),
            doc: store.result(id)?,
        }];
        label_sources(&mut s);
        s
    } else {
        crate::store::refs::load(&a.dirs, flag)?
    };
    let first = &sources[0].doc;
    let target = a
        .trend
        .target
        .clone()
        .unwrap_or_else(|| rows::target_of(first));
    let workloads: Vec<String> = match &a.trend.workload {
        Some(w) => vec![w.clone()],
        None => {
            let mut names: Vec<String> = Vec::new();
            for r in first.runs.iter().filter(|r| !r.workload.discard) {
                if !names.contains(&r.name) {
                    names.push(r.name.clone());
                }
            }
            names
        }
    };
    let mut page = report::html::report_page(&sources);
    let mut drawn = 0;
    for w in &workloads {
        if let Some(s) = report::sections::trend::section(&mut store, &target, w, since)? {
            page.sections.insert(drawn, s);
            drawn += 1;
        }
    }
    if drawn == 0 {
        return Err(VbError::input(format!(
            "--trend: {} keeps no run of {} on target {target}",
            store.shown(),
            workloads.join(", ")
        )));
    }
    page.title = format!("Trend on {target}");
    let html = report::html::render(&page)?;
    if crate::output::file::is_stdout(&out) {
        crate::console::out!("{html}");
    } else {
        crate::output::file::write_file(&out, html.as_bytes())?;
        crate::console::errln!("report: {}", out.display());
    }
    Ok(exit::OK)
}
