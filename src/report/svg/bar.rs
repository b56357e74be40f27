//! Bar charts: categories along x, one bar per series in each, with an
//! optional label above a bar.

use std::fmt::Write;

use super::frame::*;
use super::refs::RefLine;
use super::scale::{Axis, Scale, ScaleKind};
use super::{Fmt, Size, colour, esc};

/// One bar: its value, hover text and an optional label drawn above it
/// (a ratio such as "2.30x").
#[derive(Clone, Debug)]
pub(crate) struct Bar {
    pub(crate) value: f64,
    pub(crate) tip: String,
    pub(crate) label: Option<String>,
}

/// A category on the x axis with one slot per bar series; `None` leaves the
/// slot empty (no write bar for a pure read run).
#[derive(Clone, Debug)]
pub(crate) struct Category {
    pub(crate) name: String,
    pub(crate) bars: Vec<Option<Bar>>,
}

/// Grouped bars: categories along x, one bar per series inside each. Every
/// bar is a `rect.bar`.
pub(crate) fn bar_chart(
    kind: &str,
    title: &str,
    y: &Axis,
    series: &[(String, usize)],
    cats: &[Category],
    size: Size,
) -> String {
    bar_chart_with_refs(kind, title, y, series, cats, &[], size)
}

/// Grouped bars with reference lines (limits) across them; the y axis
/// stretches to show them.
pub(crate) fn bar_chart_with_refs(
    kind: &str,
    title: &str,
    y: &Axis,
    series: &[(String, usize)],
    cats: &[Category],
    refs: &[RefLine],
    size: Size,
) -> String {
    let Size { w, plot_h } = size;
    let vals: Vec<f64> = cats
        .iter()
        .flat_map(|c| c.bars.iter().flatten().map(|b| b.value))
        .chain(refs.iter().map(|r| r.value))
        .collect();
    // Headroom above the tallest bar for its value and label, so neither
    // runs into the title.
    let labelled = cats
        .iter()
        .flat_map(|c| c.bars.iter().flatten())
        .any(|b| b.label.is_some());
    let peak = vals
        .iter()
        .copied()
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max);
    let mut vals = vals;
    if y.kind == ScaleKind::Linear && y.range.is_none() && peak > 0.0 {
        vals.push(peak * if labelled { 1.25 } else { 1.12 });
    }
    let plot_bottom = TOP + plot_h;
    let ys = Scale::fit(y, &vals, plot_bottom, TOP);
    // Category labels may need two lines; room is kept for them.
    let height = plot_bottom + 58.0 + legend_rows(series.len()) as f64 * LEGEND_ROW;
    let mut out = String::new();
    open(&mut out, kind, title, w, height);
    let right = w - RIGHT;
    y_grid_and_ticks(&mut out, &ys, y, right);
    out.push_str("</g>");
    let n = cats.len().max(1) as f64;
    let slot = (right - LEFT) / n;
    let nb = series.len().max(1) as f64;
    let bw = (slot * 0.8 / nb).min(48.0);
    // Bars grow from zero (linear axes start there) or from the bottom of a log axis.
    let base = if y.kind == ScaleKind::Log {
        plot_bottom
    } else {
        ys.px(0.0)
    };
    let label_chars = ((slot / 6.5) as usize).max(6);
    for (ci, cat) in cats.iter().enumerate() {
        let cx = LEFT + slot * (ci as f64 + 0.5);
        // Bars present are centred in their slot: a pure-write run shows
        // one bar in the middle, not a gap where the read bar would be.
        let present = cat.bars.iter().filter(|b| b.is_some()).count() as f64;
        let x0 = cx - bw * present / 2.0;
        let mut k = 0.0;
        for (si, bar) in cat.bars.iter().enumerate() {
            let Some(bar) = bar else { continue };
            let bx = x0 + k * bw;
            k += 1.0;
            let top = ys.px(bar.value);
            let c = series.get(si).map(|s| s.1).unwrap_or(si);
            let _ = write!(
                out,
                "<rect class=\"bar\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"><title>{}</title></rect>",
                f1(bx),
                f1(top.min(base)),
                f1(bw - 2.0),
                f1((base - top).abs()),
                colour(c),
                esc(&bar.tip)
            );
            // Each bar says its value where it fits (a reader should not
            // need the hover or the table); a label such as a ratio sits
            // above it.
            let mut above = top.min(base) - 4.0;
            if bw >= MIN_VALUE_WIDTH {
                let _ = write!(
                    out,
                    "<text class=\"barvalue\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
                    f1(bx + (bw - 2.0) / 2.0),
                    f1(above),
                    esc(&compact(bar.value, y.fmt))
                );
                above -= 12.0;
            }
            if let Some(l) = &bar.label {
                let _ = write!(
                    out,
                    "<text class=\"barlabel\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
                    f1(bx + (bw - 2.0) / 2.0),
                    f1(above),
                    esc(l)
                );
            }
        }
        // Category names wrap at '-' or ' ' onto two lines when too long.
        let (l1, l2) = split_label(&cat.name, label_chars);
        let _ = write!(
            out,
            "<text class=\"catlabel\" x=\"{}\" y=\"{}\" text-anchor=\"middle\"><title>{}</title>{}",
            f1(cx),
            f1(plot_bottom + 16.0),
            esc(&cat.name),
            esc(&l1)
        );
        if !l2.is_empty() {
            let _ = write!(
                out,
                "<tspan x=\"{}\" dy=\"14\">{}</tspan>",
                f1(cx),
                esc(&l2)
            );
        }
        out.push_str("</text>");
    }
    super::refs::draw(&mut out, &ys, refs, right);
    let _ = write!(
        out,
        "<line class=\"axis\" x1=\"{l}\" y1=\"{b}\" x2=\"{r}\" y2=\"{b}\"/>\
         <line class=\"axis\" x1=\"{l}\" y1=\"{t}\" x2=\"{l}\" y2=\"{b}\"/>\
         <text class=\"atitle\" transform=\"translate(16 {cy}) rotate(-90)\" text-anchor=\"middle\">{yt}</text>",
        l = f1(LEFT),
        r = f1(right),
        t = f1(TOP),
        b = f1(plot_bottom),
        cy = f1((TOP + plot_bottom) / 2.0),
        yt = esc(&y.title),
    );
    let entries: Vec<_> = series.iter().map(|(n, c)| (n.clone(), *c, "")).collect();
    legend(&mut out, &entries, w, plot_bottom + 52.0);
    out.push_str("</svg>");
    out
}

/// Bars narrower than this (px) leave their value to the hover text.
const MIN_VALUE_WIDTH: f64 = 20.0;

/// A bar's value in at most five characters: 126k, 1.5M, 250 µs.
fn compact(v: f64, f: Fmt) -> String {
    let a = v.abs();
    match f {
        Fmt::Number if a >= 9_999_500.0 => format!("{:.0}M", v / 1e6),
        Fmt::Number if a >= 999_950.0 => format!("{:.1}M", v / 1e6),
        Fmt::Number if a >= 9_999.5 => format!("{:.0}k", v / 1e3),
        Fmt::Number if a >= 1_000.0 => format!("{:.1}k", v / 1e3),
        _ => super::fmt_value(v, f),
    }
}

pub(super) fn split_label(s: &str, max: usize) -> (String, String) {
    if s.chars().count() <= max {
        return (s.to_string(), String::new());
    }
    let chars: Vec<char> = s.chars().collect();
    let cut = chars[..max.min(chars.len())]
        .iter()
        .rposition(|c| *c == '-' || *c == ' ' || *c == '_' || *c == '/')
        .map(|i| i + 1)
        .unwrap_or(max);
    let first: String = chars[..cut].iter().collect();
    let rest: Vec<char> = chars[cut..].to_vec();
    // Runs of one sweep share their start and differ at the end
    // ("4k-random-90r"): a second line too long keeps its end.
    let second: String = if rest.len() > max {
        std::iter::once('…')
            .chain(rest[rest.len() + 1 - max..].iter().copied())
            .collect()
    } else {
        rest.iter().collect()
    };
    (first, second)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_category_labels_split_in_two() {
        assert_eq!(
            split_label("8k-random-50-50", 10),
            ("8k-random-".into(), "50-50".into())
        );
        assert_eq!(
            split_label("4k-random-90r-long-name", 8),
            ("4k-".into(), "…ng-name".into())
        );
    }
}
