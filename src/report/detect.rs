//! Finds the charts a set of runs calls for from the runs themselves, not
//! from suite names: runs identical but for the read percentage form a mix
//! sweep; runs identical but for concurrency (threads, iodepth) or a rate
//! form an IOPS-vs-latency curve. Workloads are compared as JSON objects, so
//! fields added to the spec later (a rate, say) take part without changes here.

use serde_json::{Map, Value};

use super::Item;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SweepKind {
    /// Read and write throughput against read percentage.
    Mix,
    /// IOPS against latency: concurrency or rate varies.
    Curve,
}

/// One line of a sweep chart: item indices in axis order, from one source
/// when several sources repeat the same points (a comparison).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Line {
    pub(crate) source: Option<usize>,
    pub(crate) items: Vec<usize>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Sweep {
    pub(crate) kind: SweepKind,
    /// What varies, e.g. "read_pct", "threads", "threads, iodepth", "rate".
    pub(crate) axis: String,
    /// What the runs share, e.g. "random 8KiB, 4 threads x qd 8".
    pub(crate) label: String,
    pub(crate) lines: Vec<Line>,
}

/// A sweep needs this many distinct points on one line to be drawn as a
/// curve; two points are a comparison, not a curve.
pub(crate) const MIN_POINTS: usize = 3;

/// Keys never part of a run's identity: its name, how long it ran and how
/// the run was steered (a stop rule may sit on some points of a curve and
/// not on its first; a steady warm-up only changes when measuring starts).
const IGNORED: [&str; 6] = [
    "name",
    "warmup_s",
    "duration_s",
    "stop_rule",
    "steady",
    "discard",
];

fn workload_map(item: &Item) -> Map<String, Value> {
    match serde_json::to_value(&item.run.workload) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    }
}

fn is_rate_key(k: &str) -> bool {
    k.contains("rate")
}

/// The identity of a run with the swept keys taken out.
fn key_without(item: &Item, drop: &dyn Fn(&str) -> bool) -> (String, Vec<(String, Value)>) {
    split(workload_map(item), drop)
}

/// Splits a workload into its identity (as canonical JSON text: serde_json
/// maps keep keys sorted) and the swept keys with their values.
fn split(m: Map<String, Value>, drop: &dyn Fn(&str) -> bool) -> (String, Vec<(String, Value)>) {
    let mut rest = Map::new();
    let mut swept = Vec::new();
    for (k, v) in m {
        if IGNORED.contains(&k.as_str()) {
            continue;
        }
        if drop(&k) {
            swept.push((k, v));
        } else {
            rest.insert(k, v);
        }
    }
    (Value::Object(rest).to_string(), swept)
}

fn mix_key(item: &Item) -> (String, Vec<(String, Value)>) {
    let (k, swept) = key_without(item, &|k| k == "read_pct" || k == "rw");
    // randread, randrw and randwrite are one access pattern at three mixes.
    let access = if item.run.workload.rw.is_random() {
        "random"
    } else {
        "sequential"
    };
    (format!("{access}|{k}"), swept)
}

fn curve_key(item: &Item) -> (String, Vec<(String, Value)>) {
    key_without(item, &|k| {
        k == "threads" || k == "iodepth" || is_rate_key(k)
    })
}

/// Groups items by key in first-seen order.
fn group(items: &[Item], key: &dyn Fn(&Item) -> String) -> Vec<Vec<usize>> {
    let mut keys: Vec<String> = Vec::new();
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (i, it) in items.iter().enumerate() {
        let k = key(it);
        match keys.iter().position(|x| *x == k) {
            Some(g) => groups[g].push(i),
            None => {
                keys.push(k);
                groups.push(vec![i]);
            }
        }
    }
    groups
}

/// Splits a group into lines: one line, unless two members share an axis
/// value, in which case one line per source.
fn lines(items: &[Item], members: &[usize], axis: &dyn Fn(&Item) -> String) -> Vec<Line> {
    let mut seen = std::collections::HashSet::new();
    let repeats = members.iter().any(|&i| !seen.insert(axis(&items[i])));
    if !repeats {
        return vec![Line {
            source: None,
            items: members.to_vec(),
        }];
    }
    let mut out: Vec<Line> = Vec::new();
    for &i in members {
        let s = items[i].source;
        match out.iter_mut().find(|l| l.source == Some(s)) {
            Some(l) => l.items.push(i),
            None => out.push(Line {
                source: Some(s),
                items: vec![i],
            }),
        }
    }
    out
}

fn distinct(items: &[Item], line: &Line, axis: &dyn Fn(&Item) -> String) -> usize {
    let mut v: Vec<String> = line.items.iter().map(|&i| axis(&items[i])).collect();
    v.sort();
    v.dedup();
    v.len()
}

pub(crate) fn sweeps(items: &[Item]) -> Vec<Sweep> {
    let mut out = Vec::new();
    // Mix sweeps.
    let mix_axis = |it: &Item| it.run.workload.read_pct.to_string();
    for members in group(items, &|it| mix_key(it).0) {
        let mut ls = lines(items, &members, &mix_axis);
        if !ls
            .iter()
            .any(|l| distinct(items, l, &mix_axis) >= MIN_POINTS)
        {
            continue;
        }
        ls.retain(|l| l.items.len() >= 2);
        for l in &mut ls {
            // Papers' order: 100% read first, 0% last.
            l.items
                .sort_by_key(|&i| std::cmp::Reverse(items[i].run.workload.read_pct));
        }
        let w = &items[members[0]].run.workload;
        let access = if w.rw.is_random() {
            "random"
        } else {
            "sequential"
        };
        out.push(Sweep {
            kind: SweepKind::Mix,
            axis: "read_pct".into(),
            label: format!(
                "{access} {}, {} threads x qd {}",
                w.bs_label(),
                w.threads,
                w.iodepth
            ),
            lines: ls,
        });
    }
    // Curves.
    let curve_axis = |it: &Item| {
        let swept = curve_key(it).1;
        Value::Array(swept.into_iter().map(|(_, v)| v).collect()).to_string()
    };
    for members in group(items, &|it| curve_key(it).0) {
        let mut ls = lines(items, &members, &curve_axis);
        if !ls
            .iter()
            .any(|l| distinct(items, l, &curve_axis) >= MIN_POINTS)
        {
            continue;
        }
        ls.retain(|l| l.items.len() >= 2);
        // Which keys vary across the group: that is the axis.
        let mut varying: Vec<String> = Vec::new();
        let first = curve_key(&items[members[0]]).1;
        for &i in &members[1..] {
            for (k, v) in curve_key(&items[i]).1 {
                let same = first.iter().any(|(fk, fv)| *fk == k && *fv == v);
                if !same && !varying.contains(&k) {
                    varying.push(k);
                }
            }
        }
        varying.sort();
        let by_rate = varying.iter().any(|k| is_rate_key(k));
        // Say "rate" once, however many keys hold it (rate_iops, rate_pct).
        let mut axis: Vec<String> = varying
            .iter()
            .filter(|k| !is_rate_key(k))
            .cloned()
            .collect();
        if by_rate {
            axis.push("rate".into());
        }
        for l in &mut ls {
            if by_rate {
                // Rate-limited points: the achieved rate orders them (the
                // unlimited maximum run comes last, whatever it is called).
                l.items.sort_by(|&a, &b| {
                    items[a]
                        .run
                        .total_iops()
                        .total_cmp(&items[b].run.total_iops())
                });
            } else {
                l.items.sort_by_key(|&i| {
                    let w = &items[i].run.workload;
                    (u64::from(w.threads) * u64::from(w.iodepth), w.threads)
                });
            }
        }
        let w = &items[members[0]].run.workload;
        let mix = if w.rw.is_mixed() {
            format!(" {}% read", w.read_pct)
        } else {
            String::new()
        };
        let fixed = if by_rate {
            format!(", {} threads x qd {}", w.threads, w.iodepth)
        } else {
            String::new()
        };
        out.push(Sweep {
            kind: SweepKind::Curve,
            axis: axis.join(", "),
            label: format!("{}{mix} {}{fixed}", w.rw.name(), w.bs_label()),
            lines: ls,
        });
    }
    out
}

/// Points a sweep needs for its chart to tell the whole story; smaller
/// sweeps (the three mixes of six-patterns) still get bars per run.
pub(crate) const FULL_SWEEP: usize = 4;

/// True when every item belongs to a sweep of `FULL_SWEEP` points or more:
/// the sweep charts say it all, and bars per run would repeat them.
pub(crate) fn sweeps_cover_all(items: &[Item], sweeps: &[Sweep]) -> bool {
    let mut covered = vec![false; items.len()];
    for s in sweeps {
        for l in &s.lines {
            if l.items.len() >= FULL_SWEEP {
                for &i in &l.items {
                    covered[i] = true;
                }
            }
        }
    }
    covered.iter().all(|&c| c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures::{self, RunFixture};
    use crate::report::{Source, items, label_sources};
    use crate::spec::Pattern;

    fn src(doc: crate::result::ResultDoc, path: &str) -> Source {
        Source {
            label: String::new(),
            path: path.into(),
            doc,
        }
    }

    fn names(s: &Sweep, it: &[Item]) -> Vec<Vec<String>> {
        s.lines
            .iter()
            .map(|l| l.items.iter().map(|&i| it[i].run.name.clone()).collect())
            .collect()
    }

    #[test]
    fn mix_sweep_is_found_in_papers_order() {
        let s = [src(fixtures::mix_sweep(), "/r/mix")];
        let it = items(&s);
        let sw = sweeps(&it);
        assert_eq!(sw.len(), 1);
        assert_eq!(sw[0].kind, SweepKind::Mix);
        assert_eq!(
            names(&sw[0], &it),
            [[
                "64k-seq-100r",
                "64k-seq-75r",
                "64k-seq-50r",
                "64k-seq-25r",
                "64k-seq-0r"
            ]]
        );
        assert!(sweeps_cover_all(&it, &sw));
    }

    #[test]
    fn thread_sweep_is_a_curve() {
        let s = [src(fixtures::thread_curve(), "/r/c")];
        let it = items(&s);
        let sw = sweeps(&it);
        assert_eq!(sw.len(), 1);
        assert_eq!(sw[0].kind, SweepKind::Curve);
        assert_eq!(sw[0].axis, "threads");
        assert_eq!(sw[0].lines[0].items.len(), 6);
    }

    #[test]
    fn six_patterns_are_two_small_mixes_and_not_one_sweep() {
        let s = [src(fixtures::six_patterns(), "/r/six")];
        let it = items(&s);
        let sw = sweeps(&it);
        assert_eq!(sw.len(), 2);
        assert!(sw.iter().all(|s| s.kind == SweepKind::Mix));
        assert!(!sweeps_cover_all(&it, &sw));
    }

    #[test]
    fn a_latency_curve_is_found_by_its_rate_and_skips_the_warmup_run() {
        let s = [src(fixtures::latency_curve(), "/r/lc")];
        let it = items(&s);
        assert_eq!(it.len(), 7, "the discarded warm-up run is left out");
        let sw = sweeps(&it);
        assert_eq!(sw.len(), 1);
        assert_eq!(sw[0].kind, SweepKind::Curve);
        assert_eq!(sw[0].axis, "rate");
        // Ordered by achieved rate (the maximum ties with 100%; the chart
        // draws it apart).
        assert_eq!(
            names(&sw[0], &it),
            [[
                "curve-10pct",
                "curve-50pct",
                "curve-70pct",
                "curve-80pct",
                "curve-90pct",
                "curve-max",
                "curve-100pct"
            ]]
        );
        assert!(sweeps_cover_all(&it, &sw));
    }

    #[test]
    fn full_sweeps_need_no_bars() {
        // Two 11-point mixes (the mix-sweep suite) vs two 3-point mixes (six patterns).
        let mut runs = Vec::new();
        for (bs, rnd) in [(4u64 << 10, true), (64 << 10, false)] {
            for p in (0..=100u8).step_by(10) {
                let rw = match (rnd, p) {
                    (true, 100) => Pattern::Randread,
                    (true, 0) => Pattern::Randwrite,
                    (true, _) => Pattern::Randrw,
                    (false, 100) => Pattern::Read,
                    (false, 0) => Pattern::Write,
                    (false, _) => Pattern::Rw,
                };
                runs.push(RunFixture::new(&format!("{bs}-{p}"), rw, p, bs));
            }
        }
        let s = [src(fixtures::doc("h", &runs), "/r/m")];
        let it = items(&s);
        let sw = sweeps(&it);
        assert_eq!(sw.len(), 2);
        assert!(sweeps_cover_all(&it, &sw));
    }

    #[test]
    fn two_points_are_no_curve() {
        let d = fixtures::doc(
            "h",
            &[
                RunFixture::new("a", Pattern::Randread, 100, 4096).conc(1, 1),
                RunFixture::new("b", Pattern::Randread, 100, 4096).conc(2, 1),
            ],
        );
        let s = [src(d, "/r/x")];
        assert!(sweeps(&items(&s)).is_empty());
    }

    #[test]
    fn same_sweep_in_two_results_gives_a_line_each() {
        let mut s = vec![
            src(fixtures::mix_sweep(), "/r/a"),
            src(fixtures::mix_sweep(), "/r/b"),
        ];
        label_sources(&mut s);
        let it = items(&s);
        let sw = sweeps(&it);
        assert_eq!(sw.len(), 1);
        assert_eq!(sw[0].lines.len(), 2);
        assert_eq!(sw[0].lines[1].source, Some(1));
    }

    #[test]
    fn runs_split_over_results_still_form_a_sweep() {
        // One `volbench run` per read percentage, reported together.
        let docs = fixtures::mix_sweep();
        let mut s: Vec<Source> = docs
            .runs
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let mut d = docs.clone();
                d.runs = vec![r.clone()];
                src(d, &format!("/r/{i}"))
            })
            .collect();
        label_sources(&mut s);
        let it = items(&s);
        let sw = sweeps(&it);
        assert_eq!(sw.len(), 1);
        assert_eq!(sw[0].lines.len(), 1);
        assert_eq!(sw[0].lines[0].items.len(), 5);
    }

    #[test]
    fn a_rate_field_counts_as_a_curve_axis() {
        // Fields the spec may gain later (a rate) are swept keys, not identity.
        let mut m = Map::new();
        m.insert("threads".into(), Value::from(4));
        m.insert("bs".into(), Value::from(4096));
        m.insert("rate_iops".into(), Value::from(1000));
        m.insert("name".into(), Value::from("x"));
        let (key, swept) = split(m, &|k| k == "threads" || k == "iodepth" || is_rate_key(k));
        assert_eq!(key, r#"{"bs":4096}"#);
        assert_eq!(
            swept.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>(),
            ["rate_iops", "threads"]
        );
    }
}
