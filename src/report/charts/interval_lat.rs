//! p50 and p99 latency per interval, each from that interval's own
//! latency histogram (`stats::live_hist`): what the mean-latency panel
//! hides, a tail that comes and goes while the mean holds still.

use super::super::Item;
use super::super::svg::{self, Axis, Fmt, READ, Series, WRITE, line_chart};
use super::Figure;
use crate::output::fmt::micros;
use crate::output::fmt::trim;
use crate::result::Op;

/// The panel, or None for a run whose intervals carry no histograms
/// (older results, metadata runs).
pub(crate) fn figure(item: &Item) -> Option<Figure> {
    let run = item.run;
    let marks = run.intervals.len() <= 120;
    let mut series = Vec::new();
    for (op, _) in run.ops() {
        let colour = match op {
            Op::Read => READ,
            Op::Write => WRITE,
        };
        for (p, dashed) in [(50.0, false), (99.0, true)] {
            let mut s = Series::new(format!("{op} p{}", trim(p, 0)), colour);
            s.dashed = dashed;
            s.marks = marks;
            for iv in &run.intervals {
                if let Some(v) = iv.op(op).lat_percentile_us(p) {
                    s.push(
                        iv.t_s,
                        v,
                        format!(
                            "{}s ({}): {op} p{} {}",
                            trim(iv.t_s, 1),
                            iv.phase,
                            trim(p, 0),
                            micros(v)
                        ),
                    );
                }
            }
            if !s.points.is_empty() {
                series.push(s);
            }
        }
    }
    if series.is_empty() {
        return None;
    }
    let shades = super::warmup_shade(run);
    let x = Axis::linear("time since start, s", Fmt::Seconds);
    let y = Axis::auto(
        "latency",
        Fmt::Micros,
        series.iter().flat_map(|s| s.points.iter().map(|p| p.1)),
    );
    let title = "p50 and p99 latency per interval".to_string();
    Some(Figure {
        kind: "interval-percentiles",
        svg: line_chart(
            "interval-percentiles",
            &title,
            &x,
            &y,
            &series,
            &shades,
            svg::SMALL,
        ),
        caption: String::new(),
        title,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::snapshot::{one, snapshot};
    use crate::report::{fixtures, items};

    #[test]
    fn p50_and_p99_per_interval_from_each_intervals_histogram() {
        let s = one(fixtures::thread_curve(), "/r/curve");
        let all = items(&s);
        let f = figure(&all[0]).unwrap();
        // Five intervals, a p50 and a p99 line.
        assert_eq!(f.svg.matches("data-n=\"5\"").count(), 2);
        assert!(f.svg.contains("class=\"shade\""));
        // The fixture puts 4.5% of I/Os at 3x the mean: p99 is there.
        let iv = &all[0].run.intervals[2];
        let (p50, p99) = (
            iv.read.lat_percentile_us(50.0).unwrap(),
            iv.read.lat_percentile_us(99.0).unwrap(),
        );
        let mean = iv.read.lat_us_mean;
        assert!(
            (p50 / (0.8579 * mean) - 1.0).abs() < 0.035,
            "{p50} vs {mean}"
        );
        assert!((p99 / (3.0 * mean) - 1.0).abs() < 0.035, "{p99} vs {mean}");
        snapshot("interval-percentiles.svg", &f.svg);
    }

    #[test]
    fn intervals_without_histograms_draw_nothing() {
        let mut d = fixtures::thread_curve();
        for iv in &mut d.runs[0].intervals {
            iv.read.lat_hist.clear();
        }
        let s = one(d, "/r/old");
        assert!(figure(&items(&s)[0]).is_none());
    }
}
