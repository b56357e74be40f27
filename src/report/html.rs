//! The HTML page: a model (sections of figures and tables) rendered through
//! one minijinja template. The template engine escapes every string it
//! inserts; the SVG it is handed is escaped as it is drawn (`svg::esc`).

use minijinja::Environment;

use super::charts;
use super::charts::limit_lines::{self, Dim};
use super::charts::transfer;
use super::detect::{self, SweepKind};
pub(crate) use super::page::{Env, Group, Page, Section};
use super::tables;
use super::{Item, Source, items, run_label};
use crate::error::{Result, VbError};

const TEMPLATE: &str = include_str!("report.html");

pub fn render(page: &Page) -> Result<String> {
    let mut env = Environment::new();
    env.add_template("report.html", TEMPLATE)
        .map_err(|e| VbError::run(format!("report template: {e}")))?;
    let tpl = env
        .get_template("report.html")
        .map_err(|e| VbError::run(format!("report template: {e}")))?;
    tpl.render(minijinja::value::Serde(page))
        .map_err(|e| VbError::run(format!("cannot render the report: {e}")))
}

pub(crate) fn envs(sources: &[Source]) -> Vec<Env> {
    sources
        .iter()
        .map(|s| Env {
            label: s.label.clone(),
            table: tables::environment(s),
            spec: serde_json::to_string_pretty(&s.doc.spec).unwrap_or_default(),
        })
        .collect()
}

/// Problems a reader must see before the numbers.
pub(crate) fn warnings(sources: &[Source]) -> Vec<String> {
    let mut w = Vec::new();
    for s in sources {
        let d = &s.doc;
        if let Some(e) = &d.error {
            w.push(format!("{}: the run failed: {e}", s.label));
        }
        if d.interrupted {
            w.push(format!(
                "{}: interrupted; the figures cover the time measured before the stop",
                s.label
            ));
        }
        if d.runs.is_empty() {
            w.push(format!("{}: the result holds no runs", s.label));
        }
    }
    w
}

fn subtitle(sources: &[Source]) -> Vec<String> {
    sources
        .iter()
        .map(|s| {
            let d = &s.doc;
            let target = d
                .target
                .as_ref()
                .map(|t| {
                    let fs = t
                        .mount
                        .as_ref()
                        .map(|m| format!(" ({})", m.fs_type))
                        .unwrap_or_default();
                    format!("{}{fs}", t.path)
                })
                .unwrap_or_else(|| d.spec.target.path.display().to_string());
            let discarded = d.runs.iter().filter(|r| r.workload.discard).count();
            let runs = match discarded {
                0 => format!("{} run(s)", d.runs.len()),
                n => format!(
                    "{} run(s) and {n} discarded warm-up run(s)",
                    d.runs.len() - n
                ),
            };
            format!(
                "{}{runs} on {} against {}, started {}",
                if sources.len() > 1 {
                    format!("{}: ", s.label)
                } else {
                    String::new()
                },
                super::where_run(d),
                target,
                d.started
            )
        })
        .collect()
}

/// The report over one or more results: all their runs together, so runs
/// from separate invocations (one per read percentage, say) still form a
/// sweep.
pub(crate) fn report_page(sources: &[Source]) -> Page {
    let all = items(sources);
    let sweeps = detect::sweeps(&all);
    let labelled: Vec<(String, Item)> =
        all.iter().map(|it| (run_label(sources, it), *it)).collect();
    let mut sections = Vec::new();

    let rated = all.iter().any(|it| {
        it.run.totals.read.service_lat_us.is_some() || it.run.totals.write.service_lat_us.is_some()
    });
    let mut results = Section::new(
        "results",
        "Results",
        if rated {
            "Measured phase only (warm-up excluded). Latency counts from submission to completion; \
             for rate-limited runs from each I/O's intended start, with service time (from \
             submission) beside it."
        } else {
            "Measured phase only (warm-up excluded). Latency counts from submission to completion."
        },
    );
    results.tables = tables::results(sources);
    sections.extend(super::sections::diagnosis::section(sources));
    sections.extend(super::sections::search::section(sources));
    sections.push(results);
    sections.extend(super::sections::hosts::section(sources));
    sections.extend(super::sections::host_scaling::section(sources));
    sections.extend(super::sections::targets::section(sources));
    sections.extend(super::sections::smb::section(sources));
    // Limits are drawn where one result is shown: two results' limits on
    // one chart would not say whose they are.
    let (lim_iops, lim_mib) = match sources {
        [one] => (
            limit_lines::limits(&one.doc, Dim::Iops),
            limit_lines::limits(&one.doc, Dim::MibS),
        ),
        _ => (Vec::new(), Vec::new()),
    };

    if all.len() >= 2 && !detect::sweeps_cover_all(&all, &sweeps) {
        sections.push(
            Section::new(
                "patterns",
                "Per pattern",
                "IOPS for small transfers, MiB/s for large ones, as the vendors' papers quote them.",
            )
            .figures(charts::pattern_bars(&labelled, [&lim_iops, &lim_mib])),
        );
    }

    for kind in [SweepKind::Mix, SweepKind::Curve] {
        let these: Vec<_> = sweeps.iter().filter(|s| s.kind == kind).cloned().collect();
        if these.is_empty() {
            continue;
        }
        let (id, heading, intro) = match kind {
            SweepKind::Mix => (
                "mix",
                "Read/write mix",
                "Runs identical but for the read percentage.",
            ),
            SweepKind::Curve => (
                "curve",
                "IOPS vs latency",
                "Runs identical but for concurrency or rate: where latency turns up, the storage is saturated.",
            ),
        };
        let mut sec = Section::new(id, heading, intro);
        for s in &these {
            sec.groups.push(Group {
                heading: String::new(),
                small: false,
                figures: charts::sweep_figures(std::slice::from_ref(s), &all, sources),
            });
        }
        sec.tables = tables::new_sweep_tables(&these, &all, sources);
        sections.push(sec);
    }

    let by_size = transfer::series(&all);
    if !by_size.is_empty() {
        let mut sec = Section::new(
            "transfer",
            "By transfer size",
            "Runs identical but for the block size, with the limits known for the result.",
        );
        for g in &by_size {
            sec.groups.push(Group {
                heading: String::new(),
                small: false,
                figures: transfer::figures(g, &all, sources),
            });
        }
        sections.push(sec);
    }

    if !all.is_empty() {
        sections.push(
            Section::new(
                "latency",
                "Latency distribution",
                "From the merged latency histograms of the measured phase.",
            )
            .figures(charts::percentiles(&labelled)),
        );
    }

    if let Some(mut t) = tables::every_run(sources, &all) {
        t.title.clear();
        let mut sec = Section::new(
            "runs",
            "Every run",
            "Each run and operation with its latency percentiles.",
        );
        sec.tables.push(t);
        sections.push(sec);
    }

    let mut ts = Section::new(
        "timeseries",
        "Time series",
        "Per interval; the shaded span is the warm-up, measured apart and left out of the totals.",
    );
    for (label, it) in &labelled {
        if it.run.intervals.is_empty() {
            continue;
        }
        ts.groups.push(Group {
            heading: label.clone(),
            small: true,
            figures: {
                let mut f = charts::timeseries(it, label, [&lim_iops, &lim_mib]);
                f.extend(super::charts::interval_lat::figure(it));
                f.extend(super::charts::meta::ops_per_interval(it));
                f
            },
        });
    }
    if !ts.groups.is_empty() {
        sections.push(ts);
    }

    let title = match sources {
        [one] => format!("volbench report: {}", one.label),
        _ => format!("volbench report: {} results", sources.len()),
    };
    Page {
        title,
        subtitle: subtitle(sources),
        version: env!("CARGO_PKG_VERSION").into(),
        warnings: warnings(sources),
        sections,
        envs: envs(sources),
    }
}

pub fn report_html(sources: &[Source]) -> Result<String> {
    render(&report_page(sources))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{fixtures, label_sources};

    fn page_of(doc: crate::result::ResultDoc, path: &str) -> String {
        let mut s = vec![Source {
            label: String::new(),
            path: path.into(),
            doc,
        }];
        label_sources(&mut s);
        report_html(&s).unwrap()
    }

    #[test]
    fn a_multi_host_report_names_the_hosts_not_the_coordinator() {
        let doc = fixtures::multi_host(&[100.0, 200.0, 300.0]);
        let coordinator = doc.host.hostname.clone();
        let html = page_of(doc, "/r/fleet");
        assert!(
            html.contains("3 hosts (client-1, client-2, client-3), coordinated from"),
            "{}",
            &html[..html.len().min(3000)]
        );
        assert!(html.contains(&format!("coordinated from {coordinator}")));
    }

    #[test]
    fn a_finding_s_advice_wraps_instead_of_being_cut() {
        // The multi-host fixture's slow host gives a finding with prose.
        let mut doc = fixtures::multi_host(&[100.0, 1000.0, 1000.0]);
        doc.diagnosis = crate::result::diagnosis::diagnose(&doc);
        assert!(!doc.diagnosis.is_empty(), "the fixture gives no finding");
        let html = page_of(doc, "/r/fleet");
        let diag = &html[html.find("id=\"diagnosis\"").unwrap()..];
        let diag = &diag[..diag.find("</section>").unwrap()];
        assert!(diag.contains("<td class=\"text\">"), "{diag}");
    }

    #[test]
    fn user_and_host_strings_are_escaped() {
        let mut d = fixtures::six_patterns();
        let evil = "<script>alert(1)</script>";
        d.runs[0].name = evil.into();
        d.runs[0].workload.name = evil.into();
        d.host.hostname = "<img src=x onerror=alert(2)>".into();
        d.notes.push("a & b \"quoted\" <i>".into());
        if let Some(t) = d.target.as_mut() {
            t.path = "/mnt/\"><svg onload=alert(3)>".into();
        }
        let html = page_of(d, "/tmp/<b>dir</b>");
        assert!(!html.contains("<script"), "raw script tag in the page");
        assert!(!html.contains("<img"));
        assert!(!html.contains("<svg onload"));
        assert!(!html.contains("<b>dir"));
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(html.contains("&lt;img src=x onerror=alert(2)&gt;"));
    }

    #[test]
    fn the_page_fetches_nothing() {
        for d in [
            fixtures::six_patterns(),
            fixtures::mix_sweep(),
            fixtures::thread_curve(),
        ] {
            let html = page_of(d, "/r/x");
            assert!(!html.contains("http://") && !html.contains("https://"));
            for tag in ["<script", "<link", "<img", "<iframe", "@import", "url("] {
                assert!(!html.contains(tag), "found {tag}");
            }
        }
    }

    #[test]
    fn sections_follow_the_runs() {
        let six = page_of(fixtures::six_patterns(), "/r/six");
        assert!(six.contains("id=\"patterns\""));
        assert!(six.contains("data-kind=\"mix\""));
        assert!(!six.contains("data-kind=\"curve\""));
        assert!(
            six.contains("nconnect=16"),
            "mount options in the environment"
        );
        let curve = page_of(fixtures::thread_curve(), "/r/curve");
        assert!(curve.contains("data-kind=\"curve\""));
        assert!(
            !curve.contains("id=\"patterns\""),
            "one sweep needs no bars"
        );
        assert_eq!(
            curve
                .matches("<svg class=\"chart\" data-kind=\"timeseries\"")
                .count(),
            6 * 3
        );
        // Same input, same bytes.
        assert_eq!(curve, page_of(fixtures::thread_curve(), "/r/curve"));
    }

    #[test]
    fn a_result_without_runs_still_renders() {
        let mut d = fixtures::doc("h", &[]);
        d.error = Some("cannot open the target".into());
        let html = page_of(d, "/r/empty");
        assert!(html.contains("the result holds no runs"));
        assert!(!html.contains("<svg class=\"chart\""));
    }

    #[test]
    fn failures_are_shown_first() {
        let mut d = fixtures::mix_sweep();
        d.interrupted = true;
        d.error = Some("run '64k-seq-0r': I/O error".into());
        let html = page_of(d, "/r/x");
        assert!(html.contains("class=\"warn\""));
        assert!(html.contains("interrupted"));
    }
}
