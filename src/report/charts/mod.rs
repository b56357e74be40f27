//! The report's charts, each built from runs: the read/write mix, IOPS
//! against latency, time series, latency percentiles, bars per pattern and
//! comparison bars. Every function returns finished SVG in a `Figure`.

pub(crate) mod interval_lat;
pub(crate) mod limit_lines;
pub(crate) mod meta;
pub(crate) mod transfer;

use serde::Serialize;

use super::detect::{Sweep, SweepKind};
use super::svg::{
    self, Axis, Bar, Category, Fmt, READ, Series, Shade, WRITE, bar_chart, line_chart,
};
use super::{Item, Metric, Source, concurrency, percentile_points};
use crate::output::fmt::{micros as fmt_micros, number as fmt_number, trim};
use crate::result::{Op, PhaseName};

/// A drawn chart and what it shows, for the page.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Figure {
    pub kind: &'static str,
    pub title: String,
    /// One sentence that tells how to read the chart.
    pub caption: String,
    /// Finished SVG markup (everything in it already escaped).
    pub svg: String,
}

fn op_colour(op: Op) -> usize {
    match op {
        Op::Read => READ,
        Op::Write => WRITE,
    }
}

/// A line's name in legends: the source when a sweep is overlaid across
/// several results, nothing otherwise.
fn line_prefix(sources: &[Source], source: Option<usize>) -> String {
    match source {
        Some(s) => format!("{}: ", sources[s].label),
        None => String::new(),
    }
}

/// Chart 1: read and write throughput against read percentage.
pub(crate) fn mix(sweep: &Sweep, items: &[Item], sources: &[Source]) -> Figure {
    // detect::sweeps keeps only sweeps with a line of MIN_POINTS runs.
    let first = items[sweep.lines[0].items[0]].run;
    let metric = Metric::of(first);
    let overlay = sweep.lines.len() > 1;
    let mut series = Vec::new();
    for (li, line) in sweep.lines.iter().enumerate() {
        for op in Op::ALL {
            let c = if overlay { li } else { op_colour(op) };
            let mut s = Series::new(
                format!(
                    "{}{op} {}",
                    line_prefix(sources, line.source),
                    metric.unit()
                ),
                c,
            );
            s.dashed = overlay && op == Op::Write;
            for &i in &line.items {
                let run = items[i].run;
                let pct = run.workload.read_pct;
                if run.does(op) {
                    let v = metric.get(run.totals.op(op));
                    s.push(
                        pct as f64,
                        v,
                        format!("{}: {op} {} {}", run.name, fmt_number(v), metric.unit()),
                    );
                }
            }
            series.push(s);
        }
    }
    let mut x = Axis::linear("read:write mix, % of operations", Fmt::Mix).fixed(0.0, 100.0);
    x.reverse = true;
    let y = Axis::linear(metric.unit(), Fmt::Number);
    let title = format!("Read/write mix: {}", sweep.label);
    Figure {
        kind: "mix",
        svg: line_chart("mix", &title, &x, &y, &series, &[], svg::FULL),
        caption: format!(
            "{} of reads and of writes at each read percentage (left: all reads, right: all writes).",
            metric.unit()
        ),
        title,
    }
}

/// Chart 2: IOPS against mean and p99 latency (the hockey stick).
/// The few characters drawn beside a curve's point: its concurrency
/// ("qd 8", "16 t", "4x8"), or on a rate curve the rate asked.
fn point_label(run: &crate::result::RunResult, by_rate: bool) -> String {
    if let (true, Some(r)) = (by_rate, run.workload.rate_iops) {
        return crate::output::fmt::number(r);
    }
    match (run.workload.threads, run.workload.iodepth) {
        (1, q) => format!("qd {q}"),
        (t, 1) => format!("{t} t"),
        (t, q) => format!("{t}x{q}"),
    }
}

pub(crate) fn curve(sweep: &Sweep, items: &[Item], sources: &[Source]) -> Figure {
    let overlay = sweep.lines.len() > 1;
    let mut series = Vec::new();
    // On a rate curve the unthrottled maximum run is no point of the curve
    // (closed loop, no queueing before submission): it is drawn apart.
    let by_rate = sweep.axis.contains("rate");
    let limited = |run: &crate::result::RunResult| {
        run.workload.rate_iops.is_some() || run.workload.rate_pct.is_some() || run.rate.is_some()
    };
    let mut max_mean = Series::new("max run: mean", 6);
    let mut max_p99 = Series::new("max run: p99", 5);
    max_mean.line = false;
    max_p99.line = false;
    for (li, line) in sweep.lines.iter().enumerate() {
        let prefix = line_prefix(sources, line.source);
        let mut mean = Series::new(
            format!("{prefix}mean latency"),
            if overlay { li } else { 0 },
        );
        let mut p99 = Series::new(format!("{prefix}p99 latency"), if overlay { li } else { 1 });
        p99.dashed = true;
        // Rate-limited points also carry service time: where it stays flat
        // while latency from the intended start climbs, I/Os are queueing.
        let mut service = Series::new(
            format!("{prefix}mean service time"),
            if overlay { li } else { 2 },
        );
        service.dotted = true;
        for &i in &line.items {
            let run = items[i].run;
            let iops = run.total_iops();
            let l = run.latency();
            let (m, p) = (l.mean, l.p99);
            let at = format!(
                "{}{} ({}): {} IOPS",
                prefix,
                run.name,
                concurrency(run),
                fmt_number(iops)
            );
            if by_rate && !limited(run) {
                max_mean.push(iops, m, format!("{at}, mean {}", fmt_micros(m)));
                max_p99.push(iops, p, format!("{at}, p99 {}", fmt_micros(p)));
                continue;
            }
            mean.push(iops, m, format!("{at}, mean {}", fmt_micros(m)));
            // Each point of the curve names the concurrency that made it,
            // as the papers' curves are read ("the knee is at QD 16").
            mean.labels.push(point_label(run, by_rate));
            p99.push(iops, p, format!("{at}, p99 {}", fmt_micros(p)));
            if let Some(sv) = run.service_mean_us() {
                service.push(iops, sv, format!("{at}, mean service {}", fmt_micros(sv)));
            }
        }
        series.push(mean);
        series.push(p99);
        if !service.points.is_empty() {
            series.push(service);
        }
    }
    if !max_mean.points.is_empty() {
        series.push(max_mean);
        series.push(max_p99);
    }
    let x = Axis::linear("IOPS (reads + writes)", Fmt::Number);
    let y = Axis::auto(
        "latency",
        Fmt::Micros,
        series.iter().flat_map(|s| s.points.iter().map(|p| p.1)),
    );
    let title = format!("IOPS vs latency: {}", sweep.label);
    Figure {
        kind: "curve",
        svg: line_chart("curve", &title, &x, &y, &series, &[], svg::FULL),
        caption: if by_rate {
            "One point per rate-limited run. Latency counts from each I/O's intended start, \
             service time from its submission: where they part, I/Os queue. The max run (no \
             rate limit) stands apart."
                .to_string()
        } else {
            format!(
                "One point per run, {} varying; latency climbs steeply where the storage saturates.",
                sweep.axis
            )
        },
        title,
    }
}

/// The warm-up shaded on a time axis: from the start to its last interval.
pub(crate) fn warmup_shade(run: &crate::result::RunResult) -> Vec<Shade> {
    run.intervals
        .iter()
        .filter(|iv| iv.phase == PhaseName::Warmup)
        .map(|iv| iv.t_s)
        .reduce(f64::max)
        .map(|t| Shade {
            from: 0.0,
            to: t,
            label: "warm-up".into(),
        })
        .into_iter()
        .collect()
}

/// Chart 3: IOPS, MiB/s and mean latency per interval, warm-up shaded;
/// `limits` (IOPS, MiB/s) are drawn across their panels, with the total
/// of reads and writes beside a mixed run's lines (limits are totals).
pub(crate) fn timeseries(item: &Item, label: &str, limits: [&[svg::RefLine]; 2]) -> Vec<Figure> {
    let run = item.run;
    let shades = warmup_shade(run);
    let marks = run.intervals.len() <= 120;
    let panels: [(&str, &str, Fmt); 3] = [
        ("iops", "IOPS", Fmt::Number),
        ("mib_s", "MiB/s", Fmt::Number),
        ("lat", "mean latency", Fmt::Micros),
    ];
    let mut out = Vec::new();
    for (key, unit, fmt) in panels {
        let refs: &[svg::RefLine] = match key {
            "iops" => limits[0],
            "mib_s" => limits[1],
            _ => &[],
        };
        let mut series = Vec::new();
        if !refs.is_empty() && run.ops().len() == 2 {
            let mut s = Series::new("read + write", 6);
            s.marks = marks;
            for iv in &run.intervals {
                let v = match key {
                    "iops" => iv.read.iops + iv.write.iops,
                    _ => iv.read.mib_s + iv.write.mib_s,
                };
                s.push(
                    iv.t_s,
                    v,
                    format!(
                        "{}s ({}): total {} {unit}",
                        trim(iv.t_s, 1),
                        iv.phase,
                        fmt_number(v)
                    ),
                );
            }
            series.push(s);
        }
        for (op, _) in run.ops() {
            let mut s = Series::new(op.name(), op_colour(op));
            s.marks = marks;
            for iv in &run.intervals {
                let o = iv.op(op);
                let v = match key {
                    "iops" => o.iops,
                    "mib_s" => o.mib_s,
                    _ => o.lat_us_mean,
                };
                let shown = if fmt == Fmt::Micros {
                    fmt_micros(v)
                } else {
                    fmt_number(v)
                };
                s.push(
                    iv.t_s,
                    v,
                    format!("{}s ({}): {op} {shown} {}", trim(iv.t_s, 1), iv.phase, unit),
                );
            }
            series.push(s);
        }
        let x = Axis::linear("time since start, s", Fmt::Seconds);
        let y = Axis::linear(unit, fmt);
        // The group heading names the run; the hover title keeps it too.
        let _ = label;
        let title = format!("{unit} per interval");
        out.push(Figure {
            kind: "timeseries",
            svg: svg::line_chart_with_refs(
                "timeseries",
                &title,
                &x,
                &y,
                &series,
                &shades,
                refs,
                svg::SMALL,
            ),
            caption: String::new(),
            title,
        });
    }
    out
}

/// Chart 4: latency percentiles, p0 to p99.999 on a "nines" axis, log
/// latency. At most seven lines a chart (one colour each); writes dashed.
pub(crate) fn percentiles(items: &[(String, Item)]) -> Vec<Figure> {
    let mut all = Vec::new();
    for (k, (label, item)) in items.iter().enumerate() {
        for (op, _) in item.run.ops() {
            let pts = percentile_points(item.run, op);
            if pts.is_empty() {
                continue;
            }
            let mut s = Series::new(format!("{label} {op}"), k);
            s.dashed = op == Op::Write;
            for (p, v) in pts {
                let nines = -(1.0 - p / 100.0).log10();
                s.push(
                    nines,
                    v,
                    format!("{label} {op}: p{} = {}", trim(p, 3), fmt_micros(v)),
                );
            }
            all.push(s);
        }
    }
    // Colours restart in each chart; keep a run's read and write together.
    let mut charts: Vec<Vec<Series>> = Vec::new();
    let mut runs_in_chart = 0;
    let mut last_colour = usize::MAX;
    for mut s in all {
        if s.colour != last_colour {
            if charts.is_empty() || runs_in_chart == svg::PALETTE.len() {
                charts.push(Vec::new());
                runs_in_chart = 0;
            }
            runs_in_chart += 1;
            last_colour = s.colour;
        }
        s.colour = runs_in_chart - 1;
        if let Some(c) = charts.last_mut() {
            c.push(s);
        }
    }
    let n = charts.len();
    charts
        .into_iter()
        .enumerate()
        .map(|(i, series)| {
            let max_nines = series
                .iter()
                .flat_map(|s| s.points.iter().map(|p| p.0))
                .fold(2.0f64, f64::max)
                .ceil();
            let x = Axis::linear("percentile", Fmt::Nines).fixed(0.0, max_nines);
            let y = Axis::log("latency, log scale", Fmt::Micros);
            let title = if n > 1 {
                format!("Latency percentiles ({}/{n})", i + 1)
            } else {
                "Latency percentiles".to_string()
            };
            Figure {
                kind: "percentiles",
                svg: line_chart("percentiles", &title, &x, &y, &series, &[], svg::FULL),
                caption: "Latency below which each share of operations completed; each step \
                          right adds a nine (p90, p99, p99.9). Writes are dashed."
                    .into(),
                title,
            }
        })
        .collect()
}

/// Chart 5: one group of bars per run (read and write), split into an IOPS
/// chart for small transfers and a MiB/s chart for large ones, with the
/// limits (IOPS, MiB/s) drawn across.
pub(crate) fn pattern_bars(items: &[(String, Item)], limits: [&[svg::RefLine]; 2]) -> Vec<Figure> {
    let mut out = Vec::new();
    for metric in [Metric::Iops, Metric::MibS] {
        let cats: Vec<Category> = items
            .iter()
            .filter(|(_, it)| Metric::of(it.run) == metric)
            .map(|(label, it)| {
                let run = it.run;
                let bar = |op: Op| {
                    let t = run.totals.op(op);
                    run.does(op).then(|| Bar {
                        value: metric.get(t),
                        tip: format!(
                            "{label}: {op} {} {}, mean {}",
                            fmt_number(metric.get(t)),
                            metric.unit(),
                            fmt_micros(t.lat_us.mean)
                        ),
                        label: None,
                    })
                };
                Category {
                    name: label.clone(),
                    bars: Op::ALL.into_iter().map(bar).collect(),
                }
            })
            .collect();
        if cats.is_empty() {
            continue;
        }
        let title = match metric {
            Metric::Iops => "IOPS per pattern (small transfers)".to_string(),
            Metric::MibS => "MiB/s per pattern (large transfers)".to_string(),
        };
        let y = Axis::linear(metric.unit(), Fmt::Number);
        let series = Op::ALL.map(|op| (op.name().to_string(), op_colour(op)));
        out.push(Figure {
            kind: "bars",
            svg: svg::bar_chart_with_refs(
                "bars",
                &title,
                &y,
                &series,
                &cats,
                match metric {
                    Metric::Iops => limits[0],
                    Metric::MibS => limits[1],
                },
                svg::FULL,
            ),
            caption: "Reads and writes of each run; a 50/50 run has both.".into(),
            title,
        });
    }
    out
}

/// One compared quantity: a name ("8k-random-read read") and the value in
/// each source (None where the run is missing).
#[derive(Debug, Clone)]
pub(crate) struct CompareRow {
    pub(crate) name: String,
    pub(crate) metric: Metric,
    pub(crate) values: Vec<Option<f64>>,
}

/// Chart 6: bars per source for each matched run and op, each labelled with
/// its ratio to the first source.
pub(crate) fn comparison_bars(rows: &[CompareRow], sources: &[Source]) -> Vec<Figure> {
    let mut out = Vec::new();
    for metric in [Metric::Iops, Metric::MibS] {
        let cats: Vec<Category> = rows
            .iter()
            .filter(|r| r.metric == metric)
            .map(|r| {
                let base = r.values.first().copied().flatten();
                Category {
                    name: r.name.clone(),
                    bars: r
                        .values
                        .iter()
                        .enumerate()
                        .map(|(si, v)| {
                            v.map(|v| Bar {
                                value: v,
                                tip: format!(
                                    "{} {}: {} {}",
                                    sources[si].label,
                                    r.name,
                                    fmt_number(v),
                                    metric.unit()
                                ),
                                label: match base {
                                    Some(b) if si > 0 && b > 0.0 => Some(format!("{:.2}x", v / b)),
                                    _ => None,
                                },
                            })
                        })
                        .collect(),
                }
            })
            .collect();
        if cats.is_empty() {
            continue;
        }
        let series: Vec<(String, usize)> = sources
            .iter()
            .enumerate()
            .map(|(i, s)| (s.label.clone(), i))
            .collect();
        let title = format!("{} compared", metric.unit());
        let y = Axis::linear(metric.unit(), Fmt::Number);
        out.push(Figure {
            kind: "compare",
            svg: bar_chart("compare", &title, &y, &series, &cats, svg::FULL),
            caption: format!(
                "Each run in each result; the label over a bar is its ratio to {}.",
                sources
                    .first()
                    .map(|s| s.label.as_str())
                    .unwrap_or("the first")
            ),
            title,
        });
    }
    out
}

/// The sweep charts for a set of runs, in the order detected.
pub(crate) fn sweep_figures(sweeps: &[Sweep], items: &[Item], sources: &[Source]) -> Vec<Figure> {
    sweeps
        .iter()
        .map(|s| match s.kind {
            SweepKind::Mix => mix(s, items, sources),
            SweepKind::Curve => curve(s, items, sources),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::detect::sweeps;
    use crate::report::snapshot::snapshot;
    use crate::report::{fixtures, items, label_sources};

    fn sources(doc: crate::result::ResultDoc, path: &str) -> Vec<Source> {
        let mut s = vec![Source {
            label: String::new(),
            path: path.into(),
            doc,
        }];
        label_sources(&mut s);
        s
    }

    fn marks(svg: &str) -> usize {
        svg.matches("class=\"mark\"").count()
    }

    #[test]
    fn mix_chart_snapshot_and_marks() {
        let s = sources(fixtures::mix_sweep(), "/r/mix");
        let it = items(&s);
        let sw = sweeps(&it);
        let f = mix(&sw[0], &it, &s);
        // 100% and 0% have one op each, the three mixes two.
        assert_eq!(marks(&f.svg), 8);
        assert!(f.svg.contains(">100:0<") && f.svg.contains(">0:100<"));
        snapshot("mix.svg", &f.svg);
        // Deterministic: drawn twice, the same bytes.
        assert_eq!(f.svg, mix(&sw[0], &it, &s).svg);
    }

    #[test]
    fn curve_chart_snapshot_and_marks() {
        let s = sources(fixtures::thread_curve(), "/r/curve");
        let it = items(&s);
        let sw = sweeps(&it);
        let f = curve(&sw[0], &it, &s);
        assert_eq!(marks(&f.svg), 12, "mean and p99 per run");
        snapshot("curve.svg", &f.svg);
    }

    #[test]
    fn latency_curve_draws_service_time_and_the_maximum_apart() {
        let s = sources(fixtures::latency_curve(), "/r/lc");
        let it = items(&s);
        let sw = sweeps(&it);
        let f = curve(&sw[0], &it, &s);
        // Six rate points x (mean, p99, service) and the max run's two points.
        assert_eq!(marks(&f.svg), 6 * 3 + 2);
        assert_eq!(
            f.svg.matches("class=\"series\"").count(),
            3,
            "max run has no line"
        );
        assert!(f.svg.contains("data-n=\"6\""));
        assert!(f.svg.contains("max run: mean"));
        snapshot("latency-curve.svg", &f.svg);
    }

    #[test]
    fn pattern_bars_snapshot() {
        let s = sources(fixtures::six_patterns(), "/r/six");
        let it = items(&s);
        let l: Vec<(String, Item)> = it.iter().map(|i| (i.run.name.clone(), *i)).collect();
        let figs = pattern_bars(&l, [&[], &[]]);
        assert_eq!(figs.len(), 2, "an IOPS chart and a MiB/s chart");
        let bars: usize = figs
            .iter()
            .map(|f| f.svg.matches("class=\"bar\"").count())
            .sum();
        assert_eq!(bars, 8, "one bar per run and op");
        snapshot(
            "bars.svg",
            &figs.iter().map(|f| f.svg.as_str()).collect::<String>(),
        );
    }

    #[test]
    fn timeseries_has_a_vertex_per_interval_and_shades_the_warmup() {
        let s = sources(fixtures::thread_curve(), "/r/curve");
        let it = items(&s);
        let figs = timeseries(&it[0], "x", [&[], &[]]);
        assert_eq!(figs.len(), 3);
        for f in &figs {
            assert!(f.svg.contains("data-n=\"5\""), "{}", f.svg);
            assert!(f.svg.contains("class=\"shade\""));
        }
        snapshot("timeseries.svg", &figs[0].svg);
    }

    #[test]
    fn percentiles_split_beyond_the_palette() {
        let mut d = fixtures::thread_curve();
        let more = d.runs.clone();
        for (i, mut r) in more.into_iter().enumerate() {
            r.name = format!("extra-{i}");
            d.runs.push(r);
        }
        let s = sources(d, "/r/p");
        let it = items(&s);
        let l: Vec<(String, Item)> = it.iter().map(|i| (i.run.name.clone(), *i)).collect();
        let figs = percentiles(&l);
        assert_eq!(figs.len(), 2, "12 runs in charts of at most 7");
        let groups: usize = figs
            .iter()
            .map(|f| f.svg.matches("class=\"series-group\"").count())
            .sum();
        assert_eq!(groups, 12);
    }
}
