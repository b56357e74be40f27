//! `volbench history`: the runs kept in the store, newest first, filtered
//! by target, suite and time; each with its first workload's figures as
//! stored (IOPS, MiB/s, p99 from the merged histogram).

use crate::error::{Result, VbError, exit};
use crate::input::args::results::HistoryArgs;
use crate::output::fmt::{mib_s, micros, number};
use crate::output::table::Table;
use crate::store::query::{Filter, HistoryRow, since};
use crate::store::{Location, Store};
use crate::units::bounds::MAX_HISTORY_LIMIT;

const DEFAULT_LIMIT: u64 = 50;

pub(crate) fn cmd_history(a: &HistoryArgs) -> Result<i32> {
    let limit = match &a.limit {
        None => DEFAULT_LIMIT,
        Some(t) => t
            .trim()
            .parse::<u64>()
            .ok()
            .filter(|n| (1..=MAX_HISTORY_LIMIT).contains(n))
            .ok_or_else(|| {
                VbError::input(format!(
                    "--limit '{}' is not a whole number in 1..{MAX_HISTORY_LIMIT}",
                    crate::units::bounds::one_line(t)
                ))
            })?,
    };
    let filter = Filter {
        target: a.target.clone().unwrap_or_default(),
        suite: a.suite.clone(),
        since_s: a.since.as_deref().map(since).transpose()?,
        limit,
    };
    let mut store = Store::open(&Location::for_reading(a.store.store.as_deref())?, false)?;
    let rows = store.history(&filter)?;
    if a.json {
        let v = serde_json::json!({
            "schema": "volbench.history/v1",
            "store": store.shown(),
            "runs": rows,
        });
        let text = serde_json::to_string_pretty(&v)
            .map_err(|e| VbError::run(format!("writing the history as JSON: {e}")))?;
        crate::console::outln!("{text}");
        return Ok(exit::OK);
    }
    if rows.is_empty() {
        crate::console::errln!("history: no run in {} matches", store.shown());
        return Ok(exit::OK);
    }
    crate::console::outln!("{}", table(&rows, &store.shown()).to_terminal());
    Ok(exit::OK)
}

fn table(rows: &[HistoryRow], shown: &str) -> Table {
    let mut t = Table::new(
        format!("Runs in {shown}, newest first"),
        &[
            "id", "started", "target", "suite", "run", "hosts", "IOPS", "MiB/s", "p99", "notes",
        ],
        5,
    );
    for r in rows {
        let mut notes = Vec::new();
        if r.baseline {
            notes.push("baseline".to_string());
        }
        if r.interrupted {
            notes.push("interrupted".into());
        }
        if r.error.is_some() {
            notes.push("failed".into());
        }
        if r.findings > 0 {
            notes.push(format!("{} findings", r.findings));
        }
        if r.workloads > 1 {
            notes.push(format!("{} runs", r.workloads));
        }
        if r.source != "run" {
            notes.push(format!("from {}", r.source));
        }
        let opt = |v: Option<f64>, f: fn(f64) -> String| v.map_or_else(|| "-".into(), f);
        t.rows.push(vec![
            r.id.to_string(),
            r.started
                .chars()
                .take(19)
                .collect::<String>()
                .replace('T', " "),
            r.target.clone(),
            if r.suite.is_empty() {
                "-".into()
            } else {
                r.suite.clone()
            },
            r.headline.clone(),
            r.hosts.to_string(),
            opt(r.iops, number),
            opt(r.mib_s, mib_s),
            opt(r.p99_us, micros),
            notes.join(", "),
        ]);
    }
    t
}
