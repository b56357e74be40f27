//! Result tables in the papers' layouts, built from a result alone as the
//! shared `Table` model, so the terminal, tables.md, the table CSVs and the
//! HTML report show the same figures.

use crate::output::fmt::{cpu, in_flight, mib_s, micros, thousands};
use crate::output::table::Table;
use crate::result::{Op, OpTotals, ResultDoc, RunResult};
use crate::spec::TableKind;

/// The tables a result is shown with: its suite's layout, or one row per
/// run and operation for plain runs; then the per-target table.
pub(crate) fn views(doc: &ResultDoc) -> Vec<Table> {
    let mut out = run_views(doc);
    let runs: Vec<&RunResult> = doc.runs.iter().filter(|r| !r.workload.discard).collect();
    out.extend(crate::output::target_table::per_target(&runs));
    out
}

/// [`views`] without the per-target table (the report gives it a section
/// of its own, with its chart).
pub(crate) fn run_views(doc: &ResultDoc) -> Vec<Table> {
    let runs: Vec<&RunResult> = doc.runs.iter().filter(|r| !r.workload.discard).collect();
    let mut out = match doc.spec.suite.as_ref().map(|s| s.table) {
        Some(TableKind::Patterns) => vec![patterns(&runs)],
        Some(TableKind::Mix) => mix(&runs),
        Some(TableKind::Curve) => curve(&runs),
        Some(TableKind::Threads) => vec![threads(&runs)],
        Some(TableKind::Ops) | None => vec![per_op(&runs)],
        Some(TableKind::SmallFiles) => {
            vec![
                crate::output::small_files::passes(doc, &runs),
                per_op(&runs),
            ]
        }
    };
    let discarded: Vec<&str> = doc
        .runs
        .iter()
        .filter(|r| r.workload.discard)
        .map(|r| r.name.as_str())
        .collect();
    let about = ran_on(doc);
    for t in &mut out {
        t.about = about.clone();
    }
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

/// What the runs ran on, as the papers title their tables: the host count
/// and the operating system ("1 host, Debian GNU/Linux 12 (bookworm)",
/// "8 hosts: 6 Ubuntu 22.04.3 LTS, 2 Rocky Linux 9.2"); a host that did
/// not name its OS is named by its kernel.
pub(crate) fn ran_on(doc: &ResultDoc) -> String {
    let name = |h: &crate::result::HostInfo| {
        if !h.os.is_empty() {
            h.os.clone()
        } else if !h.kernel.is_empty() {
            format!("kernel {}", h.kernel)
        } else {
            "an unnamed OS".into()
        }
    };
    let names: Vec<String> = match &doc.cluster {
        Some(c) => c
            .hosts
            .iter()
            .map(|h| h.host.as_ref().map_or_else(|| "an unnamed OS".into(), name))
            .collect(),
        None => vec![name(&doc.host)],
    };
    let mut counted: Vec<(String, usize)> = Vec::new();
    for n in &names {
        match counted.iter_mut().find(|(m, _)| m == n) {
            Some((_, k)) => *k += 1,
            None => counted.push((n.clone(), 1)),
        }
    }
    let hosts = match names.len() {
        1 => "1 host".to_string(),
        n => format!("{} hosts", thousands(n as f64)),
    };
    match counted.as_slice() {
        [(os, _)] => format!("{hosts}, {os}"),
        _ => {
            counted.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            // A title, not a list: the three commonest, then how many more.
            let shown: Vec<String> = counted
                .iter()
                .take(3)
                .map(|(os, k)| format!("{k} {os}"))
                .collect();
            let more = counted.len().saturating_sub(3);
            let tail = if more > 0 {
                format!(", {more} more")
            } else {
                String::new()
            };
            format!("{hosts}: {}{tail}", shown.join(", "))
        }
    }
}

/// One row per run and operation type, with the latency percentiles.
pub(crate) fn per_op(runs: &[&RunResult]) -> Table {
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    for run in runs {
        for (op, t) in run.op_rows() {
            rows.push(vec![
                run.name.clone(),
                op.to_string(),
                thousands(t.iops),
                mib_s(t.mib_s),
                micros(t.lat_us.mean),
                micros(t.lat_us.p50),
                micros(t.lat_us.p99),
                micros(t.lat_us.p99_9),
                micros(t.lat_us.max),
                cpu(&run.totals.cpu),
            ]);
        }
        notes.extend(run_notes(run));
    }
    // Metadata runs count operations, not I/Os.
    let rate = if !runs.is_empty() && runs.iter().all(|r| !r.meta_ops.is_empty()) {
        "ops/s"
    } else {
        "IOPS"
    };
    table(
        "Results",
        &[
            "run",
            "op",
            rate,
            "MiB/s",
            "mean",
            "p50",
            "p99",
            "p99.9",
            "max",
            "cpu usr/sys",
        ],
        2,
        rows,
        notes,
    )
}

/// A table whose columns from `numeric_from` on are figures.
fn table(
    title: impl Into<String>,
    head: &[&str],
    numeric_from: usize,
    rows: Vec<Vec<String>>,
    notes: Vec<String>,
) -> Table {
    let mut t = Table::new(title, head, numeric_from);
    t.rows = rows;
    t.notes = notes;
    t
}

/// What a reader should know about one run: Little's law, rate, steady state.
fn run_notes(run: &RunResult) -> Vec<String> {
    let mut notes = Vec::new();
    for s in &run.stalls {
        notes.push(s.line(&run.name));
    }
    let l = &run.littles_law;
    if l.iops_x_latency > 0.0 && run.rate.is_none() {
        notes.push(format!(
            "{}: {} I/Os in flight; IOPS x mean latency = {} (Little's law)",
            run.name,
            l.concurrency,
            in_flight(l.iops_x_latency)
        ));
    }
    if let Some(r) = &run.rate {
        notes.push(format!(
            "{}: target {} IOPS, achieved {}{}",
            run.name,
            thousands(r.target_iops),
            thousands(r.achieved_iops),
            if r.reached {
                String::new()
            } else {
                // What held it, the client asked first: never "the storage
                // is saturated" for a run that could not carry the rate.
                let limit = crate::result::diagnosis::verdict::alone(run, r.target_iops);
                format!(" (target NOT reached: {})", limit.short())
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
pub(crate) fn patterns(runs: &[&RunResult]) -> Table {
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    for run in runs {
        let mut row = vec![run.name.clone()];
        for op in Op::ALL {
            if run.does(op) {
                let t = run.totals.op(op);
                row.extend([
                    thousands(t.iops),
                    mib_s(t.mib_s),
                    micros(t.lat_us.mean),
                    micros(t.lat_us.p99),
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
    table(
        "Patterns",
        &[
            "pattern",
            "read IOPS",
            "read MiB/s",
            "read mean",
            "read p99",
            "write IOPS",
            "write MiB/s",
            "write mean",
            "write p99",
        ],
        1,
        rows,
        notes,
    )
}

/// The papers' mix tables: per block size and access kind, a "Read" and a
/// "Write" row with one column per read/write mix; IOPS for random I/O,
/// MiB/s for sequential.
pub(crate) fn mix(runs: &[&RunResult]) -> Vec<Table> {
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
            let value = |op: &OpTotals| {
                if random {
                    thousands(op.iops)
                } else {
                    mib_s(op.mib_s)
                }
            };
            let mut head = vec![String::new()];
            head.extend(
                runs.iter()
                    .map(|r| format!("{}/{}", r.workload.read_pct, 100 - r.workload.read_pct)),
            );
            let rows = Op::ALL
                .into_iter()
                .map(|op| {
                    let mut row = vec![format!("{} {unit}", op.title())];
                    row.extend(runs.iter().map(|r| value(r.totals.op(op))));
                    row
                })
                .collect();
            Table {
                title: format!("{key} ({unit}, by read/write mix)"),
                about: String::new(),
                numeric: (0..head.len()).map(|i| i > 0).collect(),
                head,
                rows,
                notes: vec![],
            }
        })
        .collect()
}

/// IOPS against latency, point by point, for every curve in the result.
pub(crate) fn curve(runs: &[&RunResult]) -> Vec<Table> {
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
            table(
                format!(
                    "Latency curve: {} {}",
                    max.workload.rw.name(),
                    max.workload.bs_label()
                ),
                &[
                    "point",
                    "target IOPS",
                    "IOPS",
                    "MiB/s",
                    "mean",
                    "p99",
                    "service mean",
                ],
                1,
                rows,
                notes,
            )
        })
        .collect()
}

fn point_row(label: &str, r: &RunResult) -> Vec<String> {
    let l = r.latency();
    // An unthrottled point records no service time: there, service time
    // and latency are the same thing.
    let service = r.service_mean_us().unwrap_or(l.mean);
    vec![
        label.to_string(),
        r.rate
            .as_ref()
            .map(|x| thousands(x.target_iops))
            .unwrap_or_else(|| "max".into()),
        thousands(r.total_iops()),
        mib_s(r.total_mib_s()),
        micros(l.mean),
        micros(l.p99),
        micros(service),
    ]
}

/// Concurrency against IOPS and latency, the gain of each step, and the
/// knee: the last step that still gained.
pub(crate) fn threads(runs: &[&RunResult]) -> Table {
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
        let l = r.latency();
        rows.push(vec![
            r.workload.threads.to_string(),
            r.workload.iodepth.to_string(),
            r.littles_law.concurrency.to_string(),
            thousands(r.total_iops()),
            mib_s(r.total_mib_s()),
            micros(l.mean),
            micros(l.p99),
            gain.map(|g| format!("{g:+.1}%"))
                .unwrap_or_else(|| "-".into()),
            in_flight(r.littles_law.iops_x_latency),
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
            micros(k.mean_latency_us())
        ));
        let best = runs.iter().map(|r| r.total_iops()).fold(0.0, f64::max);
        let predicted = best * first.mean_latency_us() / 1e6;
        notes.push(format!(
            "Little's law: the best IOPS ({}) at the lowest-concurrency latency ({}) needs {} I/Os in flight",
            thousands(best),
            micros(first.mean_latency_us()),
            in_flight(predicted)
        ));
    }
    table(
        "Thread sweep",
        &[
            "threads",
            "iodepth",
            "in flight",
            "IOPS",
            "MiB/s",
            "mean",
            "p99",
            "gain",
            "IOPS x latency",
        ],
        1,
        rows,
        notes,
    )
}
