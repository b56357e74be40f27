//! `volbench compare`: matches runs across results (by name, else by an
//! identical workload), tabulates each metric with its ratio to the first
//! result, warns where the matched specs differ, and builds the comparison
//! page with the charts overlaid.

pub(crate) mod gate;
pub(crate) mod headroom;
pub(crate) mod meta;
mod model;

use serde_json::Value;

use super::charts::{self, CompareRow};
use super::detect::{self, SweepKind};
use super::html;
use super::page::{Page, Section};
use super::tables;
use super::{Item, Metric, Source, items};
use crate::output::fmt::{number, size as format_size};
use crate::output::table::Table;
use crate::result::{Op, engine_names};
pub(crate) use model::{Compared, Comparison, Match, ratio};

fn workload_value(item: &Item) -> serde_json::Map<String, Value> {
    let mut m = match serde_json::to_value(&item.run.workload) {
        Ok(Value::Object(m)) => m,
        _ => serde_json::Map::new(),
    };
    m.remove("name");
    m
}

/// "bs 8KiB vs 64KiB; threads 4 vs 16", or empty when the workloads agree.
fn spec_diff(a: &Item, b: &Item) -> String {
    let (wa, wb) = (workload_value(a), workload_value(b));
    let mut keys: Vec<&String> = wa.keys().chain(wb.keys()).collect();
    keys.sort();
    keys.dedup();
    let mut parts = Vec::new();
    for k in keys {
        let (va, vb) = (wa.get(k), wb.get(k));
        if va == vb {
            continue;
        }
        let show = |v: Option<&Value>, it: &Item| match (k.as_str(), v) {
            ("bs", _) => it.run.workload.bs_label(),
            (_, Some(v)) => v.to_string().trim_matches('"').to_string(),
            (_, None) => "(none)".to_string(),
        };
        parts.push(format!("{k} {} vs {}", show(va, a), show(vb, b)));
    }
    if a.run.engine != b.run.engine {
        parts.push(format!(
            "engine {} vs {}",
            engine_names(&a.run.engine),
            engine_names(&b.run.engine)
        ));
    }
    parts.join("; ")
}

fn target_diff(a: &Source, b: &Source) -> Vec<String> {
    let (ta, tb) = (&a.doc.spec.target, &b.doc.spec.target);
    let mut v = Vec::new();
    if ta.size != tb.size {
        v.push(format!(
            "working set {} vs {}",
            format_size(ta.size),
            format_size(tb.size)
        ));
    }
    if ta.files != tb.files {
        v.push(format!("files {} vs {}", ta.files, tb.files));
    }
    if ta.direct != tb.direct {
        let io = |d: bool| if d { "direct" } else { "buffered" };
        v.push(format!("I/O {} vs {}", io(ta.direct), io(tb.direct)));
    }
    v
}

pub fn match_runs(sources: &[Source], all: &[Item]) -> Comparison {
    let mut c = Comparison::default();
    if sources.is_empty() {
        return c;
    }
    let of = |s: usize| -> Vec<usize> { (0..all.len()).filter(|&i| all[i].source == s).collect() };
    let mut used = vec![false; all.len()];
    for &a in &of(0) {
        let mut m = Match {
            name: all[a].run.name.clone(),
            items: vec![Some(a)],
        };
        used[a] = true;
        for s in 1..sources.len() {
            let cands = of(s);
            let by_name = cands
                .iter()
                .copied()
                .find(|&i| !used[i] && all[i].run.name == all[a].run.name);
            let wa = workload_value(&all[a]);
            let by_spec = || {
                cands
                    .iter()
                    .copied()
                    .find(|&i| !used[i] && workload_value(&all[i]) == wa)
            };
            // One run on each side: they are what is compared, whatever
            // their names and specs (the differences are warned about).
            let only = || match (of(0).len(), cands.as_slice()) {
                (1, &[i]) if !used[i] => Some(i),
                _ => None,
            };
            let found = by_name.or_else(by_spec).or_else(only);
            match found {
                Some(i) => {
                    used[i] = true;
                    if all[i].run.name != all[a].run.name {
                        let how = if workload_value(&all[i]) == wa {
                            "by its workload"
                        } else {
                            "as the only run of each"
                        };
                        c.warnings.push(format!(
                            "{}: run '{}' matched to '{}' {how}",
                            sources[s].label, all[i].run.name, all[a].run.name
                        ));
                    }
                    let d = spec_diff(&all[a], &all[i]);
                    if !d.is_empty() {
                        c.warnings.push(format!(
                            "run '{}': specs differ between {} and {}: {d}",
                            all[a].run.name, sources[0].label, sources[s].label
                        ));
                    }
                }
                None => c.warnings.push(format!(
                    "run '{}' of {} has no counterpart in {}",
                    all[a].run.name, sources[0].label, sources[s].label
                )),
            }
            m.items.push(found);
        }
        c.matches.push(m);
    }
    for s in 1..sources.len() {
        for i in of(s) {
            if !used[i] {
                c.warnings.push(format!(
                    "run '{}' of {} has no counterpart in {}",
                    all[i].run.name, sources[s].label, sources[0].label
                ));
            }
        }
        for d in target_diff(&sources[0], &sources[s]) {
            c.warnings.push(format!(
                "targets differ between {} and {}: {d}",
                sources[0].label, sources[s].label
            ));
        }
    }
    c
}

pub(super) fn ops_of_match(m: &Match, all: &[Item]) -> Vec<Op> {
    Op::ALL
        .into_iter()
        .filter(|&op| m.items.iter().flatten().any(|&i| all[i].run.does(op)))
        .collect()
}

/// Run | op | metric | first | second | second/first | ...
pub fn table(c: &Comparison, sources: &[Source], all: &[Item]) -> Table {
    let mut head = vec!["run".to_string(), "op".into(), "metric".into()];
    for (i, s) in sources.iter().enumerate() {
        head.push(s.label.clone());
        if i > 0 {
            head.push(format!("{} / {}", s.label, sources[0].label));
        }
    }
    let mut t = Table {
        title: "Comparison".into(),
        numeric: (0..head.len()).map(|i| i >= 3).collect(),
        about: String::new(),
        head,
        rows: Vec::new(),
        notes: Vec::new(),
    };
    for m in &c.matches {
        for op in ops_of_match(m, all) {
            for metric in Compared::ALL {
                let vals: Vec<Option<f64>> = m
                    .items
                    .iter()
                    .map(|i| i.and_then(|i| metric.of(all[i].run, op)))
                    .collect();
                let show = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |v| metric.show(v));
                let mut row = vec![m.name.clone(), op.to_string(), metric.label().to_string()];
                for (i, v) in vals.iter().enumerate() {
                    row.push(show(*v));
                    if i > 0 {
                        row.push(ratio(*v, vals[0]));
                    }
                }
                t.rows.push(row);
            }
        }
    }
    t
}

/// Each match's headline figure (IOPS or MiB/s, as the papers quote it)
/// per op, for the comparison bars.
pub(crate) fn headline_rows(c: &Comparison, all: &[Item]) -> Vec<CompareRow> {
    let mut rows = Vec::new();
    for m in &c.matches {
        let Some(first) = m.items.iter().flatten().next() else {
            continue;
        };
        let metric = Metric::of(all[*first].run);
        for op in ops_of_match(m, all) {
            rows.push(CompareRow {
                name: format!("{} {op}", m.name),
                metric,
                values: m
                    .items
                    .iter()
                    .map(|i| i.and_then(|i| Compared::headline(metric).of(all[i].run, op)))
                    .collect(),
            });
        }
    }
    rows
}

/// Lines such as "8k-random-read read IOPS 126,000 → 290,000, 2.30x".
pub fn headlines(c: &Comparison, all: &[Item]) -> Vec<String> {
    headline_rows(c, all)
        .iter()
        .map(|r| {
            let show = |v: Option<f64>| v.map(number).unwrap_or_else(|| "-".into());
            let mut line = format!("{} {} {}", r.name, r.metric.unit(), show(r.values[0]));
            for v in &r.values[1..] {
                line.push_str(&format!(" → {}, {}", show(*v), ratio(*v, r.values[0])));
            }
            line
        })
        .collect()
}

pub fn page(sources: &[Source]) -> Page {
    let all = items(sources);
    let c = match_runs(sources, &all);
    let mut sections = Vec::new();
    if let Some(t) = super::sections::conditions::differing(sources) {
        let mut sec = Section::new(
            "conditions",
            "Conditions differ",
            "The results ran under different conditions; the ratios below include their effect.",
        );
        sec.tables.push(t);
        sections.push(sec);
    }
    let mut cmp = Section::new(
        "comparison",
        "Comparison",
        "Each run of the first result beside its counterpart in the others; ratios are to the first.",
    );
    cmp = cmp.figures(charts::comparison_bars(&headline_rows(&c, &all), sources));
    cmp.tables.push(table(&c, sources, &all));
    cmp.tables.extend(meta::table(&c, sources, &all));
    sections.push(cmp);
    sections.extend(super::sections::host_scaling::compare_section(sources));

    let sweeps = detect::sweeps(&all);
    for kind in [SweepKind::Mix, SweepKind::Curve] {
        let these: Vec<_> = sweeps.iter().filter(|s| s.kind == kind).cloned().collect();
        if these.is_empty() {
            continue;
        }
        let (id, heading) = match kind {
            SweepKind::Mix => ("mix", "Read/write mix, overlaid"),
            SweepKind::Curve => ("curve", "IOPS vs latency, overlaid"),
        };
        let mut sec = Section::new(id, heading, "One line per result.")
            .figures(charts::sweep_figures(&these, &all, sources));
        sec.tables = tables::sweep_tables(&these, &all, sources);
        sections.push(sec);
    }

    // Percentiles of matched runs side by side: A's run, then B's, ...
    let mut labelled = Vec::new();
    for m in &c.matches {
        for &i in m.items.iter().flatten() {
            labelled.push((
                format!("{}: {}", sources[all[i].source].label, all[i].run.name),
                all[i],
            ));
        }
    }
    if !labelled.is_empty() {
        sections.push(
            Section::new(
                "latency",
                "Latency distribution",
                "Matched runs next to each other, one colour per result and run.",
            )
            .figures(charts::percentiles(&labelled)),
        );
    }
    let mut results = Section::new("results", "All results", "");
    results.tables.push(tables::summary(sources, &all));
    sections.push(results);

    let mut warnings = html::warnings(sources);
    warnings.extend(c.warnings.iter().cloned());
    Page {
        title: format!(
            "volbench comparison: {}",
            sources
                .iter()
                .map(|s| s.label.as_str())
                .collect::<Vec<_>>()
                .join(" vs ")
        ),
        subtitle: sources
            .iter()
            .map(|s| {
                format!(
                    "{}: {} run(s) on {}, started {}",
                    s.label,
                    s.doc.runs.len(),
                    super::where_run(&s.doc),
                    s.doc.started
                )
            })
            .collect(),
        version: env!("CARGO_PKG_VERSION").into(),
        warnings,
        sections,
        envs: html::envs(sources),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures::{self, RunFixture};
    use crate::report::label_sources;
    use crate::spec::Pattern;

    fn two(a: crate::result::ResultDoc, b: crate::result::ResultDoc) -> Vec<Source> {
        let mut s = vec![
            Source {
                label: String::new(),
                path: "/r/without".into(),
                doc: a,
            },
            Source {
                label: String::new(),
                path: "/r/nconnect".into(),
                doc: b,
            },
        ];
        label_sources(&mut s);
        s
    }

    #[test]
    fn ratios_to_the_first_result() {
        // Seed 002's nconnect figures: 64 KiB sequential read ~1,520 -> 3,500 MiB/s.
        let mk = |mib: f64| {
            fixtures::doc(
                "vm",
                &[
                    RunFixture::new("64k-seq-read", Pattern::Read, 100, 64 << 10)
                        .perf(mib * 16.0, 500.0),
                ],
            )
        };
        let s = two(mk(1520.0), mk(3500.0));
        let all = items(&s);
        let c = match_runs(&s, &all);
        assert!(c.warnings.is_empty(), "{:?}", c.warnings);
        assert_eq!(
            headlines(&c, &all),
            ["64k-seq-read read MiB/s 1,520 → 3,500, 2.30x"]
        );
        let t = table(&c, &s, &all);
        assert_eq!(t.head[3..], ["without", "nconnect", "nconnect / without"]);
        let mib = t.rows.iter().find(|r| r[2] == "MiB/s").unwrap();
        assert_eq!(mib[3..], ["1,520", "3,500", "2.30x"]);
    }

    #[test]
    fn differing_specs_and_missing_runs_are_warned_about() {
        let a = fixtures::six_patterns();
        let mut b = fixtures::six_patterns();
        b.runs[0].workload.bs[0].bytes = 4096;
        b.runs.remove(5);
        b.spec.target.direct = false;
        let s = two(a, b);
        let all = items(&s);
        let c = match_runs(&s, &all);
        let w = c.warnings.join("\n");
        assert!(
            w.contains("run '8k-random-read': specs differ") && w.contains("bs 8KiB vs 4KiB"),
            "{w}"
        );
        assert!(
            w.contains("run '64k-seq-50-50' of without has no counterpart in nconnect"),
            "{w}"
        );
        assert!(w.contains("I/O direct vs buffered"), "{w}");
        assert_eq!(c.matches.len(), 6);
        assert_eq!(c.matches[5].items[1], None);
    }

    #[test]
    fn runs_renamed_are_matched_by_workload() {
        let a = fixtures::six_patterns();
        let mut b = fixtures::six_patterns();
        b.runs[2].name = "rnd-mix".into();
        let s = two(a, b);
        let all = items(&s);
        let c = match_runs(&s, &all);
        assert_eq!(c.matches[2].items, [Some(2), Some(8)]);
        assert!(c.warnings[0].contains("matched to '8k-random-50-50' by its workload"));
    }

    #[test]
    fn comparison_page_overlays_and_labels_ratios() {
        let s = two(fixtures::mix_sweep(), fixtures::mix_sweep());
        let html = crate::report::html::render(&page(&s)).unwrap();
        assert!(html.contains("data-kind=\"compare\""));
        assert!(html.contains(">1.00x<"));
        // The sweep is drawn once with a line per result.
        assert!(html.contains("without: read MiB/s") && html.contains("nconnect: read MiB/s"));
    }
}
