//! The report's own tables, in the shared `output::table::Table` model, so
//! one layout serves the HTML page, Markdown and the terminal, with the
//! figures formatted and defined as everywhere else. Layouts follow the papers: a
//! row per run and operation; for mix sweeps one row "Read MiB/s", one row
//! "Write MiB/s" and a column per mix; for curves a row per point.

use super::detect::{Sweep, SweepKind};
use super::{Item, Metric, Source, concurrency, run_label};
use crate::output::fmt::{cpu, in_flight, mib_s, micros, size, thousands};
use crate::output::table::Table;
use crate::result::{Op, engine_names};

/// A row per run and operation type, like the terminal summary.
pub(crate) fn summary(sources: &[Source], items: &[Item]) -> Table {
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
        for (op, o) in run.ops() {
            t.rows.push(vec![
                run_label(sources, it),
                op.name().into(),
                run.workload.rw.name().into(),
                run.workload.bs_label(),
                run.workload.read_pct.to_string(),
                concurrency(run),
                thousands(o.iops),
                mib_s(o.mib_s),
                micros(o.lat_us.mean),
                micros(o.lat_us.p50),
                micros(o.lat_us.p99),
                micros(o.lat_us.p99_9),
                micros(o.lat_us.max),
                cpu(&run.totals.cpu),
            ]);
        }
    }
    t
}

/// A mix cell as the terminal's mix table writes it: IOPS with thousands
/// separators, MiB/s with one decimal, so one figure reads the same in the
/// report, tables.md and the terminal.
fn metric_cell(metric: Metric, op: &crate::result::OpTotals) -> String {
    match metric {
        Metric::Iops => thousands(op.iops),
        Metric::MibS => mib_s(op.mib_s),
    }
}

/// The papers' mix table: one row "Read MiB/s", one "Write MiB/s" (or
/// IOPS), one column per mix, e.g. 100/0, 75/25, ... 0/100.
pub(crate) fn mix(sweep: &Sweep, items: &[Item], sources: &[Source]) -> Table {
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
        about: String::new(),
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
        for op in Op::ALL {
            let mut row = vec![format!("{prefix}{} {}", op.title(), metric.unit())];
            for p in &pcts {
                let cell = line
                    .items
                    .iter()
                    .map(|&i| items[i].run)
                    .find(|r| r.workload.read_pct == *p)
                    .map(|r| {
                        if r.does(op) {
                            metric_cell(metric, r.totals.op(op))
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
pub(crate) fn curve(sweep: &Sweep, items: &[Item], sources: &[Source]) -> Table {
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
            let l = run.latency();
            t.rows.push(vec![
                run_label(sources, it),
                concurrency(run),
                thousands(run.total_iops()),
                mib_s(run.total_mib_s()),
                micros(l.mean),
                micros(l.p99),
                run.littles_law.concurrency.to_string(),
                in_flight(run.littles_law.iops_x_latency),
            ]);
        }
    }
    t
}

/// Every run and operation with its percentiles, for results whose own
/// tables (a suite's layout) leave them out; None when those tables are
/// already one row per run and operation.
pub(crate) fn every_run(sources: &[Source], items: &[Item]) -> Option<Table> {
    if !sources.iter().any(|s| s.doc.spec.suite.is_some()) {
        return None;
    }
    let mut t = summary(sources, items);
    t.title = "Every run and operation".into();
    Some(t)
}

/// The Results section: each result's tables as the suites print them
/// (the papers' layouts; one row per run and operation for plain runs).
pub(crate) fn results(sources: &[Source]) -> Vec<Table> {
    let mut out = Vec::new();
    for s in sources {
        for mut t in crate::output::tables::run_views(&s.doc) {
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
pub(crate) fn new_sweep_tables(sweeps: &[Sweep], items: &[Item], sources: &[Source]) -> Vec<Table> {
    let rest: Vec<Sweep> = sweeps
        .iter()
        .filter(|s| !suite_shows(s, items, sources))
        .cloned()
        .collect();
    sweep_tables(&rest, items, sources)
}

pub(crate) fn sweep_tables(sweeps: &[Sweep], items: &[Item], sources: &[Source]) -> Vec<Table> {
    sweeps
        .iter()
        .map(|s| match s.kind {
            SweepKind::Mix => mix(s, items, sources),
            SweepKind::Curve => curve(s, items, sources),
        })
        .collect()
}

/// What was measured where, with what: enough to reproduce the run.
pub(crate) fn environment(src: &Source) -> Table {
    let d = &src.doc;
    let mut t = Table::new(format!("Environment: {}", src.label), &["", ""], 9);
    let mut kv = |k: &str, v: String| t.rows.push(vec![k.to_string(), v]);
    kv("result", src.path.display().to_string());
    kv("started", d.started.clone());
    kv("tool", format!("{} {}", d.tool.name, d.tool.version));
    match &d.cluster {
        Some(c) if !c.hosts.is_empty() => {
            kv("hosts", super::where_run(d));
            kv("coordinator", d.host.hostname.clone());
        }
        _ => kv("host", d.host.hostname.clone()),
    }
    kv("kernel", d.host.kernel.clone());
    kv("CPUs", d.host.cpus.to_string());
    if !d.host.machine.is_empty() {
        kv("machine", d.host.machine.clone());
    }
    if let Some(v) = &d.host.vm_size {
        kv("VM size", v.clone());
    }
    let p = &d.host.platform;
    let said: Vec<String> = [
        p.cloud.clone(),
        p.region.as_ref().map(|r| format!("region {r}")),
    ]
    .into_iter()
    .flatten()
    .collect();
    if !said.is_empty() {
        kv("platform", said.join(", "));
    }
    for (k, v) in d.host.net.rows() {
        kv(k, v);
    }
    kv("memory", size(d.host.memory_bytes));
    match &d.target {
        Some(tg) => {
            kv("target", format!("{} ({})", tg.path, tg.kind));
            kv(
                "file set",
                format!(
                    "{} file(s) of {}, I/O alignment {} bytes",
                    tg.files,
                    size(tg.file_size),
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
            if let Some(b) = tg.blocks.describe() {
                kv("block sizes", b);
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
    for f in &d.fill {
        kv("fill", f.line());
    }
    for n in &d.notes {
        kv("note", n.clone());
    }
    t
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::report::detect::sweeps;
    use crate::report::{fixtures, items, label_sources};

    #[test]
    fn the_report_writes_iops_and_mib_s_as_the_terminal_does() {
        // The null engine on a fast host passes 10 million IOPS, where a
        // short form ("12.5M") would read differently from the terminal.
        let mut fast = fixtures::six_patterns();
        fast.runs[0].totals.read.iops = 12_500_000.0;
        for doc in [
            fast,
            fixtures::mix_sweep(),
            fixtures::six_patterns(),
            fixtures::latency_curve(),
        ] {
            // The terminal's per-operation table: run, op, IOPS, MiB/s...
            let terminal = crate::output::tables::per_op(&doc.runs.iter().collect::<Vec<_>>());
            let mut s = vec![Source {
                label: String::new(),
                path: "r".into(),
                doc,
            }];
            label_sources(&mut s);
            let its = items(&s);
            let report = summary(&s, &its);
            assert!(!report.rows.is_empty());
            for row in &report.rows {
                let same = terminal
                    .rows
                    .iter()
                    .find(|r| r[0] == row[0] && r[1] == row[1])
                    .unwrap();
                assert_eq!((&row[6], &row[7]), (&same[2], &same[3]), "{row:?}");
            }
            for t in sweep_tables(&sweeps(&its), &its, &s) {
                for (c, _) in t.head.iter().enumerate().filter(|(_, h)| *h == "IOPS") {
                    for row in &t.rows {
                        assert!(!row[c].ends_with('M'), "{}: {}", t.title, row[c]);
                    }
                }
                // Mix rows: MiB/s with one decimal, IOPS with separators.
                for row in &t.rows {
                    for cell in row.iter().skip(1).filter(|c| *c != "-") {
                        if row[0].ends_with(" MiB/s") {
                            assert!(cell.contains('.') && !cell.contains(','), "{cell}");
                        } else if row[0].ends_with(" IOPS") {
                            assert!(!cell.contains('.') && !cell.ends_with('M'), "{cell}");
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
/// The run tables' titles live in `output::tables`; tested here, where
/// the report fixtures are (output sits below report).
mod ran_on_tests {
    use crate::output::tables::{ran_on, views};
    use crate::report::fixtures::{RunFixture, doc};
    use crate::spec::Pattern;

    #[test]
    fn titles_say_how_many_hosts_and_which_os() {
        let mut d = doc("h", &[RunFixture::new("r", Pattern::Randread, 100, 4096)]);
        d.host.os = "Ubuntu 22.04.3 LTS".into();
        assert_eq!(ran_on(&d), "1 host, Ubuntu 22.04.3 LTS");
        d.host.os.clear();
        d.host.kernel = "6.1.0-18-amd64".into();
        assert_eq!(ran_on(&d), "1 host, kernel 6.1.0-18-amd64");
        let tables = views(&d);
        assert!(
            tables[0]
                .to_terminal()
                .starts_with("Results (1 host, kernel 6.1.0-18-amd64)\n"),
            "{}",
            tables[0].to_terminal()
        );
    }
}
