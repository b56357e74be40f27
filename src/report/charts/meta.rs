//! A metadata mix's time series per operation: each operation's ops/s per
//! interval, a line each, so a mix shows how its stat, open, create...
//! rates move over time and not only the look/change classes.

use super::super::Item;
use super::super::svg::{self, Axis, Fmt, Series, line_chart};
use super::Figure;
use crate::output::fmt::{number, trim};
use crate::spec::meta::ALL_OPS;

/// None for block I/O and for runs of one operation (its class line in
/// the IOPS chart is already that operation).
pub(crate) fn ops_per_interval(item: &Item) -> Option<Figure> {
    let run = item.run;
    let present: Vec<_> = ALL_OPS
        .into_iter()
        .filter(|op| {
            run.intervals
                .iter()
                .any(|iv| iv.meta_ops.iter().any(|o| o.op == *op))
        })
        .collect();
    if present.len() < 2 {
        return None;
    }
    let marks = run.intervals.len() <= 120;
    let mut series = Vec::new();
    for (k, op) in present.iter().enumerate() {
        let mut s = Series::new(op.name(), k);
        s.marks = marks;
        for iv in &run.intervals {
            let v = iv
                .meta_ops
                .iter()
                .find(|o| o.op == *op)
                .map_or(0.0, |o| o.iops);
            s.push(
                iv.t_s,
                v,
                format!(
                    "{}s ({}): {op} {} ops/s",
                    trim(iv.t_s, 1),
                    iv.phase,
                    number(v)
                ),
            );
        }
        series.push(s);
    }
    let shades = super::warmup_shade(run);
    let x = Axis::linear("time since start, s", Fmt::Seconds);
    let y = Axis::linear("ops/s", Fmt::Number);
    let title = "ops/s per interval, per operation".to_string();
    Some(Figure {
        kind: "timeseries",
        svg: line_chart("timeseries", &title, &x, &y, &series, &shades, svg::SMALL),
        caption: String::new(),
        title,
    })
}
