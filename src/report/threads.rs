//! `volbench report --per-thread`: each I/O thread's figures per run, as
//! diskspd's `-L` prints them per thread and target, from result.json's
//! `runs[].threads[]` (each thread's own histogram, taken before the
//! merge), with the run's totals beneath: the threads add up to them.

use crate::output::fmt::{mib_s, micros, number, thousands};
use crate::output::table::Table;
use crate::result::{OpTotals, RunResult};

use super::Source;

const HEAD: [&str; 12] = [
    "thread", "host", "target", "op", "ops", "MiB", "IOPS", "MiB/s", "mean", "p50", "p99", "max",
];

/// One table per run of every source.
pub(crate) fn tables(sources: &[Source]) -> Vec<Table> {
    let mut out = Vec::new();
    for s in sources {
        for run in &s.doc.runs {
            let title = if sources.len() > 1 {
                format!("{} ({}): per thread", run.name, s.label)
            } else {
                format!("{}: per thread", run.name)
            };
            out.push(table(title, run));
        }
    }
    out
}

fn table(title: String, run: &RunResult) -> Table {
    let hosts = run.threads.iter().any(|t| t.host.is_some());
    let targets = run.threads.iter().any(|t| t.target.is_some());
    let mut t = Table::new(title, &HEAD, 4);
    let row = |who: [String; 3], op: &str, o: &OpTotals| -> Vec<String> {
        let [thread, host, target] = who;
        vec![
            thread,
            host,
            target,
            op.to_string(),
            thousands(o.ops as f64),
            mib_s(o.bytes as f64 / 1048576.0),
            number(o.iops),
            mib_s(o.mib_s),
            micros(o.lat_us.mean),
            micros(o.lat_us.p50),
            micros(o.lat_us.p99),
            micros(o.lat_us.max),
        ]
    };
    let ops = |read: &OpTotals, write: &OpTotals| {
        [("read", read.clone()), ("write", write.clone())]
            .into_iter()
            .filter(|(_, o)| o.ops > 0)
            .collect::<Vec<_>>()
    };
    for th in &run.threads {
        for (op, o) in ops(&th.read, &th.write) {
            let who = [
                th.thread.to_string(),
                th.host.clone().unwrap_or_default(),
                th.target.map(|x| x.to_string()).unwrap_or_default(),
            ];
            t.rows.push(row(who, op, &o));
        }
    }
    for (op, o) in ops(&run.totals.read, &run.totals.write) {
        t.rows
            .push(row(["total".into(), String::new(), String::new()], op, &o));
    }
    // Columns no thread fills (one host, one target) are left out.
    let keep: Vec<bool> = (0..HEAD.len())
        .map(|i| (i != 1 || hosts) && (i != 2 || targets))
        .collect();
    t.head = columns(&t.head, &keep);
    t.rows = t.rows.iter().map(|r| columns(r, &keep)).collect();
    t.numeric = columns(&t.numeric, &keep);
    if run.threads.is_empty() && run.threads_left_out == 0 {
        t.notes.push(if run.workload.meta.is_some() {
            "a metadata run: its figures are per operation (ops), not per thread".to_string()
        } else {
            "no per-thread figures: a result written before volbench kept them, or a run \
             known only from its intervals"
                .to_string()
        });
    } else if run.threads_left_out > 0 {
        t.notes.push(format!(
            "{} of {} threads shown (at most {} are kept; the totals count them all)",
            run.threads.len(),
            run.threads.len() + run.threads_left_out as usize,
            crate::result::threads::MAX_KEPT_THREADS
        ));
    } else {
        t.notes.push(format!(
            "{} threads; their operations and bytes add up to the totals",
            run.threads.len()
        ));
    }
    t
}

fn columns<T: Clone>(v: &[T], keep: &[bool]) -> Vec<T> {
    v.iter()
        .zip(keep)
        .filter(|(_, k)| **k)
        .map(|(c, _)| c.clone())
        .collect()
}
