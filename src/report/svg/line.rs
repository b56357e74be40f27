//! Line charts: series of points joined by lines, with a mark per point,
//! and shaded spans of the x axis.

use std::fmt::Write;

use super::frame::*;
use super::refs::RefLine;
use super::scale::{Axis, Scale};
use super::{Size, colour, esc};

/// One line of points (x, y), optionally with a dot per point. `tips` are
/// hover texts per point (SVG `<title>`).
#[derive(Clone, Debug)]
pub(crate) struct Series {
    pub(crate) name: String,
    pub(crate) colour: usize,
    pub(crate) dashed: bool,
    /// Dotted: a third line style, for a third quantity of one colour.
    pub(crate) dotted: bool,
    /// Points joined by a line; false for points that stand alone.
    pub(crate) line: bool,
    pub(crate) marks: bool,
    pub(crate) points: Vec<(f64, f64)>,
    pub(crate) tips: Vec<String>,
    /// Short texts drawn beside the points (a curve's queue depth), by
    /// point index; empty for none.
    pub(crate) labels: Vec<String>,
}

impl Series {
    pub(crate) fn new(name: impl Into<String>, colour: usize) -> Self {
        Self {
            name: name.into(),
            colour,
            dashed: false,
            dotted: false,
            line: true,
            marks: true,
            points: Vec::new(),
            tips: Vec::new(),
            labels: Vec::new(),
        }
    }

    pub(crate) fn push(&mut self, x: f64, y: f64, tip: impl Into<String>) {
        self.points.push((x, y));
        self.tips.push(tip.into());
    }
}

/// A shaded span of the x axis with a label (the warm-up).
#[derive(Clone, Debug)]
pub(crate) struct Shade {
    pub(crate) from: f64,
    pub(crate) to: f64,
    pub(crate) label: String,
}

/// A line chart. Each point of a series with `marks` is a `circle.mark`;
/// lines are `path.series` whose vertices are the points, in order.
pub(crate) fn line_chart(
    kind: &str,
    title: &str,
    x: &Axis,
    y: &Axis,
    series: &[Series],
    shades: &[Shade],
    size: Size,
) -> String {
    line_chart_with_refs(kind, title, x, y, series, shades, &[], size)
}

/// A line chart with reference lines (limits) across it; the y axis
/// stretches to show them.
#[allow(clippy::too_many_arguments)]
pub(crate) fn line_chart_with_refs(
    kind: &str,
    title: &str,
    x: &Axis,
    y: &Axis,
    series: &[Series],
    shades: &[Shade],
    refs: &[RefLine],
    size: Size,
) -> String {
    let Size { w, plot_h } = size;
    let xs_all: Vec<f64> = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .chain(shades.iter().flat_map(|s| [s.from, s.to]))
        .collect();
    let ys_all: Vec<f64> = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .chain(refs.iter().map(|r| r.value))
        .collect();
    let plot_bottom = TOP + plot_h;
    let xs = if x.reverse {
        Scale::fit(x, &xs_all, w - RIGHT, LEFT)
    } else {
        Scale::fit(x, &xs_all, LEFT, w - RIGHT)
    };
    let ys = Scale::fit(y, &ys_all, plot_bottom, TOP);
    let rows = legend_rows(series.len());
    let height = plot_bottom + 46.0 + rows as f64 * LEGEND_ROW;
    let mut out = String::new();
    open(&mut out, kind, title, w, height);
    for s in shades {
        let (a, b) = (xs.px(s.from), xs.px(s.to));
        let _ = write!(
            out,
            "<rect class=\"shade\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>\
             <text class=\"shadelabel\" x=\"{}\" y=\"{}\">{}</text>",
            f1(a.min(b)),
            f1(TOP),
            f1((b - a).abs()),
            f1(plot_h),
            f1(a.min(b) + 4.0),
            f1(TOP + 12.0),
            esc(&s.label)
        );
    }
    axes(&mut out, &xs, &ys, x, y, w, plot_bottom);
    super::refs::draw(&mut out, &ys, refs, w - RIGHT);
    for s in series {
        let c = colour(s.colour);
        let dash = dash_attr(s.dashed, s.dotted);
        let mut d = String::new();
        for (i, &(px, py)) in s.points.iter().enumerate() {
            let _ = write!(
                d,
                "{}{} {}",
                if i == 0 { "M" } else { " L" },
                f1(xs.px(px)),
                f1(ys.px(py))
            );
        }
        let _ = write!(
            out,
            "<g class=\"series-group\" data-series=\"{}\">",
            esc(&s.name)
        );
        if s.line && !s.points.is_empty() {
            let _ = write!(
                out,
                "<path class=\"series\" data-n=\"{}\" d=\"{d}\" stroke=\"{c}\"{dash}/>",
                s.points.len()
            );
        }
        if s.marks {
            for (i, &(px, py)) in s.points.iter().enumerate() {
                let tip = s.tips.get(i).map(String::as_str).unwrap_or("");
                let _ = write!(
                    out,
                    "<circle class=\"mark\" cx=\"{}\" cy=\"{}\" r=\"3.5\" fill=\"{c}\"><title>{}</title></circle>",
                    f1(xs.px(px)),
                    f1(ys.px(py)),
                    esc(tip)
                );
                if let Some(l) = s.labels.get(i).filter(|l| !l.is_empty()) {
                    let _ = write!(
                        out,
                        "<text class=\"ptlabel\" x=\"{}\" y=\"{}\">{}</text>",
                        f1(xs.px(px) + 5.0),
                        f1(ys.px(py) - 5.0),
                        esc(l)
                    );
                }
            }
        }
        out.push_str("</g>");
    }
    let entries: Vec<_> = series
        .iter()
        .map(|s| {
            let style = if s.line {
                dash_attr(s.dashed, s.dotted)
            } else {
                POINTS_ONLY
            };
            (s.name.clone(), s.colour, style)
        })
        .collect();
    legend(&mut out, &entries, w, plot_bottom + 58.0);
    out.push_str("</svg>");
    out
}
