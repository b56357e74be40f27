//! `report --trend`: one workload on one target over time, from the store.
//! IOPS and p99 per operation of each stored run, oldest first, as the
//! store kept them (p99 from each run's merged histogram); a run whose
//! conditions (the workload as run, the engine, the environment that
//! `compare` lists) differ from the newest run's is drawn apart and its
//! differences named, so a jump that a change of nconnect or kernel
//! explains is not read as the storage's.

use super::super::charts::Figure;
use super::super::page::Section;
use super::super::svg::{self, Axis, Fmt, READ, Series, WRITE, line_chart};
use crate::output::fmt::{micros, number};
use crate::output::table::Table;
use crate::store::Store;
use crate::store::query::TrendPoint;

/// The colour of the runs whose conditions differ.
const DIFFERS: usize = 3;

/// The trend of `workload` on `target` since `since_s`; None when the
/// store holds no run of it.
pub(crate) fn section(
    store: &mut Store,
    target: &str,
    workload: &str,
    since_s: Option<f64>,
) -> crate::error::Result<Option<Section>> {
    let points: Vec<TrendPoint> = store
        .trend(target, workload)?
        .into_iter()
        .filter(|p| since_s.is_none_or(|s| p.t_s >= s))
        .collect();
    let Some(newest) = points.last().cloned() else {
        return Ok(None);
    };
    let differs: Vec<Vec<String>> = points.iter().map(|p| p.differs_from(&newest)).collect();
    let mut s = Section::new(
        &format!("trend-{}", slug(workload)),
        &format!("Trend: {workload} on {target}"),
        &format!(
            "{} stored runs of {workload} on {target}, oldest first (store:ID names each). \
             Runs whose conditions differ from the newest run's are drawn apart and listed \
             with what differs.",
            points.len()
        ),
    );
    s = s.figures(vec![
        chart(&points, &differs, workload, true),
        chart(&points, &differs, workload, false),
    ]);
    s.tables.push(table(&points, &differs));
    Ok(Some(s))
}

fn slug(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

fn chart(points: &[TrendPoint], differs: &[Vec<String>], workload: &str, iops: bool) -> Figure {
    let figure = |o: &(String, f64, f64)| if iops { o.1 } else { o.2 };
    let (what, fmt) = if iops {
        ("IOPS", Fmt::Number)
    } else {
        ("p99 latency", Fmt::Micros)
    };
    let mut series = Vec::new();
    let mut marked = Series::new("conditions differ", DIFFERS);
    marked.line = false;
    for (op, colour) in [("read", READ), ("write", WRITE)] {
        let mut s = Series::new(format!("{op} {what}"), colour);
        for (p, d) in points.iter().zip(differs) {
            let Some(o) = p.ops.iter().find(|o| o.0 == op) else {
                continue;
            };
            let v = figure(o);
            let shown = if iops { number(v) } else { micros(v) };
            let tip = format!("store:{} {}: {op} {shown}", p.id, p.started);
            s.push(p.t_s, v, tip.clone());
            if !d.is_empty() {
                marked.push(p.t_s, v, format!("{tip}; differs: {}", d.join("; ")));
            }
        }
        if !s.points.is_empty() {
            series.push(s);
        }
    }
    if !marked.points.is_empty() {
        series.push(marked);
    }
    let ys = series.iter().flat_map(|s| s.points.iter().map(|p| p.1));
    let y = if iops {
        Axis::linear(what, fmt)
    } else {
        Axis::auto(what, fmt, ys)
    };
    let mut x = Axis::linear("started (UTC)", Fmt::Date);
    x.zero = false;
    let title = format!("{workload}: {what} over time");
    Figure {
        kind: "trend",
        title: title.clone(),
        caption: format!(
            "Each stored run of {workload}, oldest on the left; a ring marks a run whose \
             conditions differ from the newest's."
        ),
        svg: line_chart("trend", &title, &x, &y, &series, &[], svg::FULL),
    }
}

fn table(points: &[TrendPoint], differs: &[Vec<String>]) -> Table {
    let mut t = Table::new(
        "Stored runs",
        &[
            "run",
            "started",
            "read IOPS",
            "write IOPS",
            "read p99",
            "write p99",
            "conditions that differ from the newest run",
        ],
        2,
    );
    // The last column is text: left-aligned.
    if let Some(last) = t.numeric.last_mut() {
        *last = false;
    }
    for (p, d) in points.iter().zip(differs) {
        let op = |name: &str, f: fn(&(String, f64, f64)) -> String| {
            p.ops
                .iter()
                .find(|o| o.0 == name)
                .map_or_else(|| "-".into(), f)
        };
        t.rows.push(vec![
            format!("store:{}", p.id),
            p.started.clone(),
            op("read", |o| number(o.1)),
            op("write", |o| number(o.1)),
            op("read", |o| micros(o.2)),
            op("write", |o| micros(o.2)),
            {
                let mut said = d.clone();
                if p.interrupted {
                    said.insert(0, "interrupted".into());
                }
                if said.is_empty() {
                    "-".into()
                } else {
                    said.join("; ")
                }
            },
        ]);
    }
    t
}
