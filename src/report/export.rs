//! The report's other views, for `volbench report --format`: Markdown
//! tables, CSV rows (summary.csv's columns plus the source) and JSON; and
//! `exporters`, the list of `output::export::Export` views a command writes
//! (this layer adds the HTML report and these to the output layer's own).

use serde::Serialize;

use super::detect::{self, SweepKind};
use super::{Source, items, tables};
use crate::error::{Result, VbError};
use crate::output;
use crate::output::export::{Export, Exporters};
use crate::spec::output::View;

/// The views a command writes: `None` for `run --output DIR` (result.json,
/// summary.csv, the tables, then report.html), `Some(format)` for the one
/// `report --format` asks for.
pub(crate) fn exporters(format: Option<View>) -> Exporters {
    let Some(format) = format else {
        let mut all = Exporters::output_dir();
        all.push(Box::new(Report(View::Html)));
        return all;
    };
    let mut one = Exporters::default();
    one.push(Box::new(Report(format)));
    one
}

/// One of `report --format`'s views, as one file.
pub(crate) struct Report(pub(crate) View);

impl Export for Report {
    fn name(&self) -> &'static str {
        match self.0 {
            View::Html => "report.html",
            View::Json => "report.json",
            View::Csv => "report.csv",
            View::Md => "report.md",
            View::FioJson => "fio.json",
            View::IntervalsCsv => "intervals.csv",
            View::LatencyBuckets => "latency-buckets.csv",
        }
    }

    fn render(&self, sources: &[Source]) -> Result<Vec<(String, String)>> {
        let text = match self.0 {
            View::Html => super::html::report_html(sources)?,
            View::Json => json(sources)? + "\n",
            View::Csv => csv(sources)?,
            View::Md => markdown(sources),
            View::FioJson => super::fio_json::fio_json(sources)? + "\n",
            View::IntervalsCsv => super::intervals_csv::intervals_csv(sources)?,
            View::LatencyBuckets => super::buckets_csv::buckets_csv(sources)?,
        };
        Ok(vec![(self.name().to_string(), text)])
    }
}

/// The tables of the report in Markdown, then each source's environment.
pub fn markdown(sources: &[Source]) -> String {
    let all = items(sources);
    let sweeps = detect::sweeps(&all);
    let mut out = String::from("## volbench results\n");
    for t in tables::results(sources)
        .into_iter()
        .chain(tables::new_sweep_tables(&sweeps, &all, sources))
        .chain(tables::every_run(sources, &all))
    {
        out.push('\n');
        out.push_str(&t.to_markdown());
    }
    for s in sources
        .iter()
        .filter(|s| super::sections::targets::has_targets(&s.doc))
    {
        let mut t = super::sections::targets::table(&s.doc);
        if sources.len() > 1 {
            t.title = format!("Per target: {}", s.label);
        }
        out.push('\n');
        out.push_str(&t.to_markdown());
    }
    for s in sources
        .iter()
        .filter(|s| !crate::result::diagnosis::scaling::series(&s.doc).is_empty())
    {
        let mut t = super::sections::host_scaling::table(&s.doc);
        if sources.len() > 1 {
            t.title = format!("Host counts: {}", s.label);
        }
        out.push('\n');
        out.push_str(&t.to_markdown());
    }
    for t in super::sections::smb::section(sources).map_or_else(Vec::new, |s| s.tables) {
        out.push('\n');
        out.push_str(&t.to_markdown());
    }
    for s in sources {
        out.push('\n');
        out.push_str(&tables::environment(s).to_markdown());
    }
    out
}

/// summary.csv's columns for every source, with a last column `source`
/// naming the result each row came from.
pub fn csv(sources: &[Source]) -> Result<String> {
    let mut out = String::new();
    // Then each target of a multi-host run, its source "label host:path".
    let targets: Vec<(String, crate::result::ResultDoc)> = sources
        .iter()
        .flat_map(|s| {
            super::sections::targets::csv_docs(&s.doc)
                .into_iter()
                .map(move |(t, d)| (format!("{} {t}", s.label), d))
        })
        .collect();
    let all = sources
        .iter()
        .map(|s| (s.label.clone(), &s.doc))
        .chain(targets.iter().map(|(l, d)| (l.clone(), d)));
    for (i, (label, doc)) in all.enumerate() {
        let text = output::summary_csv(doc)?;
        for (n, line) in text.lines().enumerate() {
            if n == 0 {
                if i == 0 {
                    out.push_str(line);
                    out.push_str(",source\n");
                }
                continue;
            }
            out.push_str(line);
            out.push(',');
            out.push_str(&csv_field(&label));
            out.push('\n');
        }
    }
    Ok(out)
}

fn csv_field(s: &str) -> String {
    let s = &*output::table::csv_cell(s);
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

#[derive(Serialize)]
struct JsonReport<'a> {
    schema: &'static str,
    sources: Vec<JsonSource<'a>>,
    sweeps: Vec<JsonSweep>,
}

#[derive(Serialize)]
struct JsonSource<'a> {
    label: &'a str,
    path: String,
    result: &'a crate::result::ResultDoc,
}

#[derive(Serialize)]
struct JsonSweep {
    kind: &'static str,
    axis: String,
    label: String,
    /// Per line: the source label when lines are per source, and run names in axis order.
    lines: Vec<JsonLine>,
}

#[derive(Serialize)]
struct JsonLine {
    source: Option<String>,
    runs: Vec<String>,
}

/// The loaded results as they are, plus the sweeps the report found in them.
pub fn json(sources: &[Source]) -> Result<String> {
    let all = items(sources);
    let sweeps = detect::sweeps(&all)
        .into_iter()
        .map(|s| JsonSweep {
            kind: match s.kind {
                SweepKind::Mix => "mix",
                SweepKind::Curve => "curve",
            },
            axis: s.axis,
            label: s.label,
            lines: s
                .lines
                .iter()
                .map(|l| JsonLine {
                    source: l.source.map(|i| sources[i].label.clone()),
                    runs: l.items.iter().map(|&i| all[i].run.name.clone()).collect(),
                })
                .collect(),
        })
        .collect();
    let doc = JsonReport {
        schema: "volbench.report/v1",
        sources: sources
            .iter()
            .map(|s| JsonSource {
                label: &s.label,
                path: s.path.display().to_string(),
                result: &s.doc,
            })
            .collect(),
        sweeps,
    };
    serde_json::to_string_pretty(&doc).map_err(|e| VbError::run(format!("cannot encode: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{fixtures, label_sources};

    fn one(doc: crate::result::ResultDoc) -> Vec<Source> {
        let mut s = vec![Source {
            label: String::new(),
            path: "/r/mix, 1".into(),
            doc,
        }];
        label_sources(&mut s);
        s
    }

    #[test]
    fn markdown_has_the_papers_mix_table() {
        let md = markdown(&one(fixtures::mix_sweep()));
        assert!(
            md.contains("|  | 100/0 | 75/25 | 50/50 | 25/75 | 0/100 |"),
            "{md}"
        );
        assert!(
            md.contains("| Read MiB/s | 4250.0 | 2660.2 | 1421.9 | 535.2 | - |"),
            "{md}"
        );
        assert!(
            md.contains("| Write MiB/s | - | 886.7 | 1421.9 | 1605.5 | 1437.5 |"),
            "{md}"
        );
        assert!(md.contains("nconnect=16"));
    }

    #[test]
    fn markdown_cells_cannot_break_the_table_or_inject_html() {
        let mut d = fixtures::six_patterns();
        d.runs[0].name = "a|b<script>".into();
        let md = markdown(&one(d));
        assert!(md.contains("| a\\|b&lt;script&gt; |"), "{md}");
    }

    #[test]
    fn csv_adds_the_source_column() {
        let text = csv(&one(fixtures::six_patterns())).unwrap();
        let mut r = ::csv::Reader::from_reader(text.as_bytes());
        let head = r.headers().unwrap().clone();
        assert_eq!(head.get(0), Some("run"));
        assert_eq!(head.iter().next_back(), Some("source"));
        let rows: Vec<_> = r.records().map(|x| x.unwrap()).collect();
        assert_eq!(rows.len(), 8);
        assert_eq!(rows[0].iter().next_back(), Some("mix, 1"));
    }

    #[test]
    fn csv_marks_a_discarded_warm_up_run() {
        let mut doc = fixtures::six_patterns();
        doc.runs[0].workload.discard = true;
        let text = csv(&one(doc)).unwrap();
        let mut r = ::csv::Reader::from_reader(text.as_bytes());
        let head = r.headers().unwrap().clone();
        let col = head.iter().position(|h| h == "discarded").unwrap();
        let marks: Vec<(String, String)> = r
            .records()
            .map(|x| x.unwrap())
            .map(|x| (x[0].to_string(), x[col].to_string()))
            .collect();
        let first = marks[0].0.clone();
        for (run, mark) in &marks {
            assert_eq!(mark == "true", *run == first, "{run}: {mark}");
        }
    }

    #[test]
    fn json_lists_the_sweeps() {
        let v: serde_json::Value =
            serde_json::from_str(&json(&one(fixtures::mix_sweep())).unwrap()).unwrap();
        assert_eq!(v["schema"], "volbench.report/v1");
        assert_eq!(v["sweeps"][0]["kind"], "mix");
        assert_eq!(
            v["sweeps"][0]["lines"][0]["runs"].as_array().unwrap().len(),
            5
        );
        assert_eq!(v["sources"][0]["result"]["schema"], "volbench.result/v1");
    }
}
