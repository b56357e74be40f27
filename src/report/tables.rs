//! The report's tables as plain data (header, rows), so one layout serves
//! the HTML page, Markdown and the terminal. Layouts follow the papers: a
//! row per run and operation; for mix sweeps one row "Read MiB/s", one row
//! "Write MiB/s" and a column per mix; for curves a row per point.

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{CellAlignment, Table as Tty};
use serde::Serialize;

use super::detect::{Sweep, SweepKind};
use super::svg::{fmt_micros, fmt_number};
use super::{Item, Metric, Source, combined_latency, concurrency, ops, run_label};
use crate::result::engine_names;
use crate::units::format_size;

#[derive(Debug, Clone, Serialize)]
pub struct Table {
    pub title: String,
    pub head: Vec<String>,
    pub rows: Vec<Vec<String>>,
    /// Per column: right-aligned numbers.
    pub numeric: Vec<bool>,
    /// Lines shown under the table (discarded warm-up runs, a knee...).
    pub notes: Vec<String>,
}

impl Table {
    fn new(title: impl Into<String>, head: &[&str], numeric_from: usize) -> Self {
        Self {
            title: title.into(),
            head: head.iter().map(|h| h.to_string()).collect(),
            rows: Vec::new(),
            numeric: (0..head.len()).map(|i| i >= numeric_from).collect(),
            notes: Vec::new(),
        }
    }

    /// One of the tables the suites print (`crate::output::tables`), so the page
    /// shows the papers' layouts exactly as the terminal does. A column is
    /// numeric when its cells are figures ("max" and "-" allowed).
    pub fn from_view(v: &crate::output::tables::TableView) -> Self {
        let numeric = (0..v.header.len())
            .map(|c| {
                let cells: Vec<&str> = v
                    .rows
                    .iter()
                    .filter_map(|r| r.get(c).map(String::as_str))
                    .collect();
                c > 0
                    && cells
                        .iter()
                        .any(|x| x.starts_with(|ch: char| ch.is_ascii_digit()))
                    && cells.iter().all(|x| {
                        x.starts_with(|ch: char| ch.is_ascii_digit() || ch == '-' || ch == '+')
                            || x.is_empty()
                            || *x == "max"
                    })
            })
            .collect();
        let mut title = v.title.clone();
        // The terminal's lower-case titles ("patterns") read as headings here.
        if let Some(first) = title.get(..1) {
            title = first.to_uppercase() + &title[1..];
        }
        Self {
            title,
            head: v.header.clone(),
            rows: v.rows.clone(),
            numeric,
            notes: v.notes.clone(),
        }
    }

    /// GitHub-flavoured Markdown. Pipes would split cells and angle
    /// brackets become HTML where Markdown is rendered (run names and paths
    /// come from users): both are escaped.
    pub fn to_markdown(&self) -> String {
        let cell = |s: &str| {
            s.replace('\\', "\\\\")
                .replace('|', "\\|")
                .replace('<', "&lt;")
                .replace('>', "&gt;")
                .replace('\n', " ")
        };
        let mut out = String::new();
        if !self.title.is_empty() {
            out.push_str(&format!("### {}\n\n", cell(&self.title)));
        }
        out.push_str(&format!(
            "| {} |\n",
            self.head
                .iter()
                .map(|h| cell(h))
                .collect::<Vec<_>>()
                .join(" | ")
        ));
        out.push_str(&format!(
            "|{}|\n",
            self.numeric
                .iter()
                .map(|&n| if n { "---:" } else { "---" })
                .collect::<Vec<_>>()
                .join("|")
        ));
        for r in &self.rows {
            out.push_str(&format!(
                "| {} |\n",
                r.iter().map(|c| cell(c)).collect::<Vec<_>>().join(" | ")
            ));
        }
        if !self.notes.is_empty() {
            out.push('\n');
            for n in &self.notes {
                out.push_str(&format!("{}\n", cell(n)));
            }
        }
        out
    }

    pub fn to_terminal(&self) -> String {
        let mut t = Tty::new();
        t.load_style(UTF8_FULL_CONDENSED);
        t.set_header(self.head.clone());
        for r in &self.rows {
            t.add_row(r.clone());
        }
        for (i, &n) in self.numeric.iter().enumerate() {
            if let (true, Some(c)) = (n, t.column_mut(i)) {
                c.set_cell_alignment(CellAlignment::Right);
            }
        }
        t.to_string()
    }
}

/// A row per run and operation type, like the terminal summary.
pub fn summary(sources: &[Source], items: &[Item]) -> Table {
    let mut t = Table::new(
        "Results",
        &[
            "run",
            "op",
            "pattern",
            "block",
            "read %",
            "threads x qd",
            "IOPS",
            "MiB/s",
            "mean",
            "p50",
            "p99",
            "p99.9",
            "max",
            "cpu usr/sys",
        ],
        6,
    );
    t.numeric[4] = true;
    for it in items {
        let run = it.run;
        for (op, o) in ops(run) {
            t.rows.push(vec![
                run_label(sources, it),
                op.into(),
                run.workload.rw.name().into(),
                run.workload.bs_label(),
                run.workload.read_pct.to_string(),
                concurrency(run),
                fmt_number(o.iops),
                format!("{:.1}", o.mib_s),
                fmt_micros(o.lat_us.mean),
                fmt_micros(o.lat_us.p50),
                fmt_micros(o.lat_us.p99),
                fmt_micros(o.lat_us.p99_9),
                fmt_micros(o.lat_us.max),
                format!(
                    "{:.0}% / {:.0}%",
                    run.totals.cpu.user_pct, run.totals.cpu.sys_pct
                ),
            ]);
        }
    }
    t
}

/// The papers' mix table: one row "Read MiB/s", one "Write MiB/s" (or
/// IOPS), one column per mix, e.g. 100/0, 75/25, ... 0/100.
pub fn mix(sweep: &Sweep, items: &[Item], sources: &[Source]) -> Table {
    // detect::sweeps keeps only sweeps with a line of MIN_POINTS runs.
    let first = items[sweep.lines[0].items[0]].run;
    let metric = Metric::of(first);
    // Columns: every read percentage in any line, 100 first.
    let mut pcts: Vec<u8> = sweep
        .lines
        .iter()
        .flat_map(|l| l.items.iter().map(|&i| items[i].run.workload.read_pct))
        .collect();
    pcts.sort_unstable_by(|a, b| b.cmp(a));
    pcts.dedup();
    let mut head = vec!["".to_string()];
    head.extend(pcts.iter().map(|p| format!("{p}/{}", 100 - p)));
    let mut t = Table {
        title: format!("Read/write mix: {}", sweep.label),
        numeric: (0..head.len()).map(|i| i > 0).collect(),
        head,
        rows: Vec::new(),
        notes: Vec::new(),
    };
    for line in &sweep.lines {
        let prefix = match line.source {
            Some(s) => format!("{}: ", sources[s].label),
            None => String::new(),
        };
        for op in ["Read", "Write"] {
            let mut row = vec![format!("{prefix}{op} {}", metric.unit())];
            for p in &pcts {
                let cell = line
                    .items
                    .iter()
                    .map(|&i| items[i].run)
                    .find(|r| r.workload.read_pct == *p)
                    .map(|r| {
                        let (has, o) = if op == "Read" {
                            (*p > 0, &r.totals.read)
                        } else {
                            (*p < 100, &r.totals.write)
                        };
                        if has {
                            fmt_number(metric.get(o))
                        } else {
                            "-".into()
                        }
                    })
                    .unwrap_or_default();
                row.push(cell);
            }
            t.rows.push(row);
        }
    }
    t
}

/// A row per point of a curve: concurrency, IOPS, latency, Little's law.
pub fn curve(sweep: &Sweep, items: &[Item], sources: &[Source]) -> Table {
    let mut t = Table::new(
        format!("IOPS vs latency: {} ({} varying)", sweep.label, sweep.axis),
        &[
            "run",
            "threads x qd",
            "IOPS",
            "MiB/s",
            "mean latency",
            "p99 latency",
            "in flight",
            "IOPS x mean latency",
        ],
        2,
    );
    for line in &sweep.lines {
        for &i in &line.items {
            let it = &items[i];
            let run = it.run;
            let (m, p99) = combined_latency(run, 99.0);
            t.rows.push(vec![
                run_label(sources, it),
                concurrency(run),
                fmt_number(run.total_iops()),
                format!("{:.1}", run.total_mib_s()),
                fmt_micros(m),
                fmt_micros(p99),
                run.littles_law.concurrency.to_string(),
                format!("{:.1}", run.littles_law.iops_x_latency),
            ]);
        }
    }
    t
}

/// Every run and operation with its percentiles, for results whose own
/// tables (a suite's layout) leave them out; None when those tables are
/// already one row per run and operation.
pub fn every_run(sources: &[Source], items: &[Item]) -> Option<Table> {
    if !sources.iter().any(|s| s.doc.spec.suite.is_some()) {
        return None;
    }
    let mut t = summary(sources, items);
    t.title = "Every run and operation".into();
    Some(t)
}

/// The Results section: each result's tables as the suites print them
/// (the papers' layouts; one row per run and operation for plain runs).
pub fn results(sources: &[Source]) -> Vec<Table> {
    let mut out = Vec::new();
    for s in sources {
        for v in crate::output::tables::views(&s.doc) {
            let mut t = Table::from_view(&v);
            if sources.len() > 1 {
                t.title = format!("{}: {}", s.label, t.title);
            }
            out.push(t);
        }
    }
    out
}

/// A suite whose own table already lays out this sweep (its mix table or
/// its curve) makes a second table redundant.
fn suite_shows(sweep: &Sweep, items: &[Item], sources: &[Source]) -> bool {
    use crate::spec::TableKind;
    sweep.lines.iter().flat_map(|l| &l.items).all(|&i| {
        let kind = sources[items[i].source]
            .doc
            .spec
            .suite
            .as_ref()
            .map(|s| s.table);
        matches!(
            (sweep.kind, kind),
            (SweepKind::Mix, Some(TableKind::Mix))
                | (
                    SweepKind::Curve,
                    Some(TableKind::Curve | TableKind::Threads)
                )
        )
    })
}

/// Tables of the sweeps a suite's own tables do not already show.
pub fn new_sweep_tables(sweeps: &[Sweep], items: &[Item], sources: &[Source]) -> Vec<Table> {
    let rest: Vec<Sweep> = sweeps
        .iter()
        .filter(|s| !suite_shows(s, items, sources))
        .cloned()
        .collect();
    sweep_tables(&rest, items, sources)
}

pub fn sweep_tables(sweeps: &[Sweep], items: &[Item], sources: &[Source]) -> Vec<Table> {
    sweeps
        .iter()
        .map(|s| match s.kind {
            SweepKind::Mix => mix(s, items, sources),
            SweepKind::Curve => curve(s, items, sources),
        })
        .collect()
}

/// What was measured where, with what: enough to reproduce the run.
pub fn environment(src: &Source) -> Table {
    let d = &src.doc;
    let mut t = Table::new(format!("Environment: {}", src.label), &["", ""], 9);
    let mut kv = |k: &str, v: String| t.rows.push(vec![k.to_string(), v]);
    kv("result", src.path.display().to_string());
    kv("started", d.started.clone());
    kv("tool", format!("{} {}", d.tool.name, d.tool.version));
    kv("host", d.host.hostname.clone());
    kv("kernel", d.host.kernel.clone());
    kv("CPUs", d.host.cpus.to_string());
    kv("memory", format_size(d.host.memory_bytes));
    match &d.target {
        Some(tg) => {
            kv("target", format!("{} ({})", tg.path, tg.kind));
            kv(
                "file set",
                format!(
                    "{} file(s) of {}, I/O alignment {} bytes",
                    tg.files,
                    format_size(tg.file_size),
                    tg.align
                ),
            );
            if let Some(m) = &tg.mount {
                kv(
                    "file system",
                    format!("{} from {} on {}", m.fs_type, m.source, m.mount_point),
                );
                let key = m.key_options();
                if !key.is_empty() {
                    kv("key mount options", key.join(", "));
                }
                kv("mount options", m.options.clone());
            } else {
                kv("file system", "not recorded".into());
            }
        }
        None => kv("target", d.spec.target.path.display().to_string()),
    }
    kv(
        "I/O",
        format!(
            "{}, engine {}, interval {}s, seed {}",
            if d.spec.target.direct {
                "direct (O_DIRECT)"
            } else {
                "buffered (page cache)"
            },
            d.spec.engine.name(),
            d.spec.interval_s,
            d.spec.seed
        ),
    );
    let engines: Vec<String> = {
        let mut v: Vec<String> = d.runs.iter().map(|r| engine_names(&r.engine)).collect();
        v.dedup();
        v
    };
    if !engines.is_empty() {
        kv("engine used", engines.join(", "));
    }
    if d.interrupted {
        kv(
            "interrupted",
            "yes: figures cover the time before the stop".into(),
        );
    }
    if let Some(e) = &d.error {
        kv("error", e.clone());
    }
    for n in &d.notes {
        kv("note", n.clone());
    }
    t
}
