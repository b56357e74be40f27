//! The small-files suite's table (the Azure disk article): the same bytes
//! moved as many small files and as one large file, their MiB/s side by
//! side, then what a benchmark of the same volume measures. A pass is the
//! runs whose names share everything up to their last `-` (the suite's
//! `small` tree gives `small-create` and `small-read`; `large-write` and
//! `large-read` make the other pass), so the grouping lives in the suite.

use crate::output::fmt::{mib_s, size, thousands, trim};
use crate::output::table::Table;
use crate::result::{ResultDoc, RunResult};

/// One pass: its runs' figures, write and read apart.
struct Pass<'a> {
    name: &'a str,
    first: &'a RunResult,
    write: Option<f64>,
    read: Option<f64>,
}

fn stem(name: &str) -> &str {
    name.rsplit_once('-').map_or(name, |(s, _)| s)
}

fn shape(doc: &ResultDoc, r: &RunResult) -> (String, String, String, &'static str) {
    let w = &r.workload;
    match &w.meta {
        Some(m) => (
            thousands(m.total_files() as f64),
            m.size_label(),
            w.threads.to_string(),
            if m.direct { "direct" } else { "buffered" },
        ),
        None => {
            let files = w.files.unwrap_or(doc.spec.target.files).max(1);
            let direct = doc.spec.target.direct && !w.buffered;
            (
                thousands(f64::from(files)),
                size(doc.spec.target.size / u64::from(files)),
                format!("{} x depth {}", w.threads, w.iodepth),
                if direct { "direct" } else { "buffered" },
            )
        }
    }
}

pub(crate) fn passes(doc: &ResultDoc, runs: &[&RunResult]) -> Table {
    let mut passes: Vec<Pass> = Vec::new();
    for r in runs {
        let name = stem(&r.name);
        let i = match passes.iter().position(|p| p.name == name) {
            Some(i) => i,
            None => {
                passes.push(Pass {
                    name,
                    first: r,
                    write: None,
                    read: None,
                });
                passes.len() - 1
            }
        };
        let p = &mut passes[i];
        let t = &r.totals;
        if p.write.is_none() && t.write.bytes > 0 {
            p.write = Some(t.write.mib_s);
        }
        if p.read.is_none() && t.read.bytes > 0 {
            p.read = Some(t.read.mib_s);
        }
    }
    let mut t = Table::new(
        "The same bytes as many small files and as one large file",
        &[
            "pass",
            "files",
            "each",
            "threads",
            "I/O",
            "write MiB/s",
            "read MiB/s",
        ],
        5,
    );
    let show = |v: Option<f64>| v.map_or_else(|| "-".to_string(), mib_s);
    for p in &passes {
        let (files, each, threads, io) = shape(doc, p.first);
        t.rows.push(vec![
            p.name.to_string(),
            files,
            each,
            threads,
            io.to_string(),
            show(p.write),
            show(p.read),
        ]);
    }
    // The article's point in one line per pass: how much faster than the first.
    if let Some((base, rest)) = passes.split_first() {
        for p in rest {
            let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
                (Some(a), Some(b)) if b > 0.0 => Some(a / b),
                _ => None,
            };
            let parts: Vec<String> = [
                ("write", ratio(p.write, base.write)),
                ("read", ratio(p.read, base.read)),
            ]
            .iter()
            .filter_map(|(what, r)| r.map(|r| format!("{what} {}x", trim(r, 1))))
            .collect();
            if !parts.is_empty() {
                t.notes.push(format!(
                    "{} against {}: {}",
                    p.name,
                    base.name,
                    parts.join(", ")
                ));
            }
        }
    }
    t.notes.push(
        "a file copy measures the files' count and the copy program as much as the storage: \
         benchmark the volume with many threads and direct I/O (the last pass)"
            .into(),
    );
    t
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::stem;

    #[test]
    fn passes_are_names_up_to_the_last_dash() {
        assert_eq!(stem("small-create"), "small");
        assert_eq!(stem("one-large-read"), "one-large");
        assert_eq!(stem("direct"), "direct");
    }
}
