//! Result tables in the papers' layouts. A table is a plain model (title,
//! header, rows, notes) built from a result alone, rendered for the
//! terminal, as Markdown and as CSV, so every output shows the same figures.

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{CellAlignment, Table};

use crate::output::{lat, thousands};
use crate::result::{ResultDoc, RunResult};
use crate::spec::TableKind;

#[derive(Debug, Clone, PartialEq)]
pub struct TableView {
    pub title: String,
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
    pub notes: Vec<String>,
}

/// The tables a result is shown with: its suite's layout, or one row per
/// run and operation for plain runs.
pub fn views(doc: &ResultDoc) -> Vec<TableView> {
    let runs: Vec<&RunResult> = doc.runs.iter().filter(|r| !r.workload.discard).collect();
    let mut out = match doc.spec.suite.as_ref().map(|s| s.table) {
        Some(TableKind::Patterns) => vec![patterns(&runs)],
        Some(TableKind::Mix) => mix(&runs),
        Some(TableKind::Curve) => curve(&runs),
        Some(TableKind::Threads) => vec![threads(&runs)],
        None => vec![per_op(&runs)],
    };
    let discarded: Vec<&str> = doc
        .runs
        .iter()
        .filter(|r| r.workload.discard)
        .map(|r| r.name.as_str())
        .collect();
    if let Some(first) = out.first_mut() {
        if !discarded.is_empty() {
            first.notes.insert(
                0,
                format!("warm-up run discarded: {}", discarded.join(", ")),
            );
        }
        if doc.interrupted {
            first
                .notes
                .push("interrupted: the figures cover the time measured before the stop".into());
        }
    }
    out
}

fn ops_of(run: &RunResult) -> Vec<(&'static str, &crate::result::OpTotals)> {
    let mut v = Vec::new();
    if run.workload.read_pct > 0 {
        v.push(("read", &run.totals.read));
    }
    if run.workload.read_pct < 100 {
        v.push(("write", &run.totals.write));
    }
    v
}

/// One row per run and operation type, with the latency percentiles.
pub fn per_op(runs: &[&RunResult]) -> TableView {
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    for run in runs {
        for (name, op) in ops_of(run) {
            rows.push(vec![
                run.name.clone(),
                name.to_string(),
                thousands(op.iops),
                format!("{:.1}", op.mib_s),
                lat(op.lat_us.mean),
                lat(op.lat_us.p50),
                lat(op.lat_us.p99),
                lat(op.lat_us.p99_9),
                lat(op.lat_us.max),
                format!(
                    "{:.0}%/{:.0}%",
                    run.totals.cpu.user_pct, run.totals.cpu.sys_pct
                ),
            ]);
        }
        notes.extend(run_notes(run));
    }
    TableView {
        title: "results".into(),
        header: [
            "run",
            "op",
            "IOPS",
            "MiB/s",
            "mean",
            "p50",
            "p99",
            "p99.9",
            "max",
            "cpu usr/sys",
        ]
        .map(String::from)
        .to_vec(),
        rows,
        notes,
    }
}

/// What a reader should know about one run: Little's law, rate, steady state.
fn run_notes(run: &RunResult) -> Vec<String> {
    let mut notes = Vec::new();
    let l = &run.littles_law;
    if l.iops_x_latency > 0.0 && run.rate.is_none() {
        notes.push(format!(
            "{}: {} I/Os in flight; IOPS x mean latency = {:.2} (Little's law)",
            run.name, l.concurrency, l.iops_x_latency
        ));
    }
    if let Some(r) = &run.rate {
        notes.push(format!(
            "{}: target {} IOPS, achieved {}{}",
            run.name,
            thousands(r.target_iops),
            thousands(r.achieved_iops),
            if r.reached {
                ""
            } else {
                " (target NOT reached: the storage is saturated)"
            }
        ));
    }
    if let Some(s) = &run.steady {
        notes.push(if s.reached {
            format!("{}: steady after {:.0}s of warm-up", run.name, s.after_s)
        } else {
            format!(
                "{}: NOT steady by the end of the {:.0}s warm-up cap",
                run.name, s.after_s
            )
        });
    }
    notes
}

/// One row per run with reads and writes side by side (six patterns).
pub fn patterns(runs: &[&RunResult]) -> TableView {
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    for run in runs {
        let mut row = vec![run.name.clone()];
        for (present, op) in [
            (run.workload.read_pct > 0, &run.totals.read),
            (run.workload.read_pct < 100, &run.totals.write),
        ] {
            if present {
                row.extend([
                    thousands(op.iops),
                    format!("{:.1}", op.mib_s),
                    lat(op.lat_us.mean),
                    lat(op.lat_us.p99),
                ]);
            } else {
                row.extend(std::iter::repeat_n("-".to_string(), 4));
            }
        }
        rows.push(row);
        notes.extend(
            run_notes(run)
                .into_iter()
                .filter(|n| !n.contains("Little's law")),
        );
    }
    TableView {
        title: "patterns".into(),
        header: [
            "pattern",
            "read IOPS",
            "read MiB/s",
            "read mean",
            "read p99",
            "write IOPS",
            "write MiB/s",
            "write mean",
            "write p99",
        ]
        .map(String::from)
        .to_vec(),
        rows,
        notes,
    }
}

/// The papers' mix tables: per block size and access kind, a "Read" and a
/// "Write" row with one column per read/write mix; IOPS for random I/O,
/// MiB/s for sequential.
pub fn mix(runs: &[&RunResult]) -> Vec<TableView> {
    let mut groups: Vec<(String, Vec<&RunResult>)> = Vec::new();
    for run in runs {
        let w = &run.workload;
        let key = format!(
            "{} {}, {} threads x iodepth {}",
            w.bs_label(),
            if w.rw.is_random() {
                "random"
            } else {
                "sequential"
            },
            w.threads,
            w.iodepth
        );
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(run),
            None => groups.push((key, vec![run])),
        }
    }
    groups
        .into_iter()
        .map(|(key, runs)| {
            let random = runs[0].workload.rw.is_random();
            let unit = if random { "IOPS" } else { "MiB/s" };
            let value = |op: &crate::result::OpTotals| {
                if random {
                    thousands(op.iops)
                } else {
                    format!("{:.1}", op.mib_s)
                }
            };
            let mut header = vec![String::new()];
            header.extend(
                runs.iter()
                    .map(|r| format!("{}/{}", r.workload.read_pct, 100 - r.workload.read_pct)),
            );
            let mut read = vec![format!("Read {unit}")];
            let mut write = vec![format!("Write {unit}")];
            for r in &runs {
                read.push(value(&r.totals.read));
                write.push(value(&r.totals.write));
            }
            TableView {
                title: format!("{key} ({unit}, by read/write mix)"),
                header,
                rows: vec![read, write],
                notes: vec![],
            }
        })
        .collect()
}

/// IOPS against latency, point by point, for every curve in the result.
pub fn curve(runs: &[&RunResult]) -> Vec<TableView> {
    let maxima: Vec<&RunResult> = runs
        .iter()
        .copied()
        .filter(|m| {
            runs.iter()
                .any(|r| r.workload.rate_pct.as_ref().is_some_and(|p| p.of == m.name))
        })
        .collect();
    maxima
        .into_iter()
        .map(|max| {
            let mut rows = vec![point_row("max", max)];
            for r in runs.iter().filter(|r| {
                r.workload
                    .rate_pct
                    .as_ref()
                    .is_some_and(|p| p.of == max.name)
            }) {
                let pct = r
                    .workload
                    .rate_pct
                    .as_ref()
                    .map(|p| p.percent)
                    .unwrap_or(0.0);
                rows.push(point_row(&format!("{pct}%"), r));
            }
            let notes = runs
                .iter()
                .filter(|r| r.rate.as_ref().is_some_and(|x| !x.reached))
                .map(|r| format!("{}: target rate not reached", r.name))
                .collect();
            TableView {
                title: format!(
                    "latency curve: {} {}",
                    max.workload.rw.name(),
                    max.workload.bs_label()
                ),
                header: [
                    "point",
                    "target IOPS",
                    "IOPS",
                    "MiB/s",
                    "mean",
                    "p99",
                    "service mean",
                ]
                .map(String::from)
                .to_vec(),
                rows,
                notes,
            }
        })
        .collect()
}

fn point_row(label: &str, r: &RunResult) -> Vec<String> {
    let (read, write) = (&r.totals.read, &r.totals.write);
    let ops = (read.ops + write.ops).max(1) as f64;
    let weigh = |a: f64, b: f64| (a * read.ops as f64 + b * write.ops as f64) / ops;
    let service = match (&read.service_lat_us, &write.service_lat_us) {
        (Some(a), Some(b)) => lat(weigh(a.mean, b.mean)),
        _ => lat(r.mean_latency_us()),
    };
    vec![
        label.to_string(),
        r.rate
            .as_ref()
            .map(|x| thousands(x.target_iops))
            .unwrap_or_else(|| "max".into()),
        thousands(r.total_iops()),
        format!("{:.1}", r.total_mib_s()),
        lat(r.mean_latency_us()),
        lat(weigh(read.lat_us.p99, write.lat_us.p99)),
        service,
    ]
}

/// Concurrency against IOPS and latency, the gain of each step, and the
/// knee: the last step that still gained.
pub fn threads(runs: &[&RunResult]) -> TableView {
    let mut rows = Vec::new();
    let mut prev: Option<&RunResult> = None;
    let mut knee: Option<&RunResult> = None;
    let threshold = runs
        .iter()
        .find_map(|r| r.workload.stop_rule.as_ref().and_then(|s| s.gain_below_pct))
        .unwrap_or(5.0);
    for r in runs {
        let gain =
            prev.map(|p| (r.total_iops() / p.total_iops().max(f64::MIN_POSITIVE) - 1.0) * 100.0);
        if gain.is_none_or(|g| g >= threshold) {
            knee = Some(r);
        }
        rows.push(vec![
            r.workload.threads.to_string(),
            r.workload.iodepth.to_string(),
            r.littles_law.concurrency.to_string(),
            thousands(r.total_iops()),
            format!("{:.1}", r.total_mib_s()),
            lat(r.mean_latency_us()),
            lat(r.totals.read.lat_us.p99.max(r.totals.write.lat_us.p99)),
            gain.map(|g| format!("{g:+.1}%"))
                .unwrap_or_else(|| "-".into()),
            format!("{:.2}", r.littles_law.iops_x_latency),
        ]);
        prev = Some(r);
    }
    let mut notes = Vec::new();
    if let (Some(k), Some(first)) = (knee, runs.first()) {
        notes.push(format!(
            "knee: {} I/Os in flight ({} threads x iodepth {}): {} IOPS at {} mean latency",
            k.littles_law.concurrency,
            k.workload.threads,
            k.workload.iodepth,
            thousands(k.total_iops()),
            lat(k.mean_latency_us())
        ));
        let best = runs.iter().map(|r| r.total_iops()).fold(0.0, f64::max);
        let predicted = best * first.mean_latency_us() / 1e6;
        notes.push(format!(
            "Little's law: the best IOPS ({}) at the lowest-concurrency latency ({}) needs {:.1} I/Os in flight",
            thousands(best),
            lat(first.mean_latency_us()),
            predicted
        ));
    }
    TableView {
        title: "thread sweep".into(),
        header: [
            "threads",
            "iodepth",
            "in flight",
            "IOPS",
            "MiB/s",
            "mean",
            "p99",
            "gain",
            "IOPS x latency",
        ]
        .map(String::from)
        .to_vec(),
        rows,
        notes,
    }
}

pub fn render_terminal(v: &TableView) -> String {
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED);
    t.set_header(v.header.clone());
    for r in &v.rows {
        t.add_row(r.clone());
    }
    for i in 1..v.header.len() {
        if let Some(col) = t.column_mut(i) {
            col.set_cell_alignment(CellAlignment::Right);
        }
    }
    let mut out = String::new();
    if v.title != "results" && v.title != "patterns" {
        out.push_str(&v.title);
        out.push('\n');
    }
    out.push_str(&t.to_string());
    for n in &v.notes {
        out.push('\n');
        out.push_str(n);
    }
    out
}

fn md_cell(s: &str) -> String {
    s.replace('|', "\\|")
}

pub fn render_markdown(v: &TableView) -> String {
    let mut out = format!("### {}\n\n", md_cell(&v.title));
    out.push_str(&format!(
        "| {} |\n",
        v.header
            .iter()
            .map(|h| md_cell(h))
            .collect::<Vec<_>>()
            .join(" | ")
    ));
    out.push_str(&format!(
        "|{}\n",
        v.header
            .iter()
            .enumerate()
            .map(|(i, _)| if i == 0 { "---|" } else { "---:|" })
            .collect::<String>()
    ));
    for r in &v.rows {
        out.push_str(&format!(
            "| {} |\n",
            r.iter().map(|c| md_cell(c)).collect::<Vec<_>>().join(" | ")
        ));
    }
    if !v.notes.is_empty() {
        out.push('\n');
        for n in &v.notes {
            out.push_str(&format!("- {}\n", md_cell(n)));
        }
    }
    out
}

pub fn render_csv(v: &TableView) -> Result<String, String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(&v.header).map_err(|e| e.to_string())?;
    for r in &v.rows {
        w.write_record(r).map_err(|e| e.to_string())?;
    }
    let bytes = w.into_inner().map_err(|e| e.to_string())?;
    String::from_utf8(bytes).map_err(|e| e.to_string())
}

/// A file-name-safe form of a table title.
pub fn slug(title: &str) -> String {
    let mut s: String = title
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    while s.contains("--") {
        s = s.replace("--", "-");
    }
    s.trim_matches('-').chars().take(60).collect()
}
