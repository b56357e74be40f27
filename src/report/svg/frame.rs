//! What every chart shares: the SVG's opening, the plot margins, the legend
//! below the plot, the y grid with its tick labels, and the axes.

use std::fmt::Write;

use super::scale::{Axis, Scale};
use super::{colour, esc, fmt_value, shorten, trim};

pub(super) const LEFT: f64 = 78.0;
// Room for the last x tick label, centred on the right edge.
pub(super) const RIGHT: f64 = 30.0;
pub(super) const TOP: f64 = 34.0;
pub(super) const LEGEND_ROW: f64 = 18.0;

pub(super) fn legend_rows(names: usize) -> usize {
    names.div_ceil(3)
}

pub(super) fn f1(v: f64) -> String {
    trim(v, 1)
}

/// Opens the SVG with its title; `kind` names the chart for tests and CSS.
pub(super) fn open(out: &mut String, kind: &str, title: &str, w: f64, height: f64) {
    let _ = write!(
        out,
        "<svg class=\"chart\" data-kind=\"{kind}\" viewBox=\"0 0 {w} {h}\" role=\"img\" \
         aria-label=\"{t}\"><title>{t}</title>\
         <text class=\"ctitle\" x=\"{x}\" y=\"20\">{t}</text>",
        kind = esc(kind),
        w = f1(w),
        h = f1(height),
        t = esc(title),
        x = f1(LEFT),
    );
}

/// Legend style of a series drawn as points without a line.
pub(super) const POINTS_ONLY: &str = "points";

/// The stroke-dasharray attribute of a line style.
pub(super) fn dash_attr(dashed: bool, dotted: bool) -> &'static str {
    if dotted {
        " stroke-dasharray=\"2 3\""
    } else if dashed {
        " stroke-dasharray=\"6 4\""
    } else {
        ""
    }
}

/// The widest a 12-unit character of the legend is drawn, in user units
/// (digits and most letters are narrower; a name of wide letters still
/// keeps out of the next column).
const LEGEND_CHAR_W: f64 = 7.0;

/// The most characters a legend name keeps in a column of a chart `w`
/// wide (after its 28-unit swatch and a gap); the whole name is its
/// hover title.
pub(super) fn legend_chars(w: f64) -> usize {
    let col = (w - LEFT - RIGHT) / 3.0;
    (((col - 28.0 - 6.0) / LEGEND_CHAR_W).floor() as usize).max(6)
}

/// Legend below the plot, three entries a row, each name cut to its
/// column (compare's long names ran into the next one).
pub(super) fn legend(out: &mut String, entries: &[(String, usize, &str)], w: f64, y0: f64) {
    let col = (w - LEFT - RIGHT) / 3.0;
    let fit = legend_chars(w);
    let label = |name: &str| {
        let cut = shorten(name, fit);
        if cut == name {
            esc(name)
        } else {
            format!("<title>{}</title>{}", esc(name), esc(&cut))
        }
    };
    out.push_str("<g class=\"legend\">");
    for (i, (name, c, dash)) in entries.iter().enumerate() {
        let x = LEFT + (i % 3) as f64 * col;
        let y = y0 + (i / 3) as f64 * LEGEND_ROW;
        if *dash == POINTS_ONLY {
            let _ = write!(
                out,
                "<circle cx=\"{}\" cy=\"{}\" r=\"4\" fill=\"{}\"/><text x=\"{}\" y=\"{}\">{}</text>",
                f1(x + 11.0),
                f1(y - 4.0),
                colour(*c),
                f1(x + 28.0),
                f1(y),
                label(name),
            );
            continue;
        }
        let _ = write!(
            out,
            "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"2.5\"{dash}/>\
             <text x=\"{}\" y=\"{}\">{}</text>",
            f1(x),
            f1(y - 4.0),
            f1(x + 22.0),
            f1(y - 4.0),
            colour(*c),
            f1(x + 28.0),
            f1(y),
            label(name),
        );
    }
    out.push_str("</g>");
}

/// Horizontal grid lines at the y ticks and their labels; leaves the
/// "ticks" group open for the caller's x labels.
pub(super) fn y_grid_and_ticks(out: &mut String, ys: &Scale, y: &Axis, right: f64) {
    out.push_str("<g class=\"grid\">");
    for &t in &ys.ticks {
        let _ = write!(
            out,
            "<line x1=\"{}\" y1=\"{p}\" x2=\"{}\" y2=\"{p}\"/>",
            f1(LEFT),
            f1(right),
            p = f1(ys.px(t))
        );
    }
    out.push_str("</g><g class=\"ticks\">");
    for &t in &ys.ticks {
        let _ = write!(
            out,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
            f1(LEFT - 6.0),
            f1(ys.px(t) + 4.0),
            esc(&fmt_value(t, y.fmt))
        );
    }
}

pub(super) fn axes(
    out: &mut String,
    xs: &Scale,
    ys: &Scale,
    x: &Axis,
    y: &Axis,
    w: f64,
    plot_bottom: f64,
) {
    let right = w - RIGHT;
    y_grid_and_ticks(out, ys, y, right);
    for &t in &xs.ticks {
        let px = xs.px(t);
        let _ = write!(
            out,
            "<line x1=\"{p}\" y1=\"{}\" x2=\"{p}\" y2=\"{}\" class=\"tick\"/>\
             <text x=\"{p}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            f1(plot_bottom),
            f1(plot_bottom + 4.0),
            f1(plot_bottom + 17.0),
            esc(&fmt_value(t, x.fmt)),
            p = f1(px)
        );
    }
    out.push_str("</g>");
    let _ = write!(
        out,
        "<line class=\"axis\" x1=\"{l}\" y1=\"{b}\" x2=\"{r}\" y2=\"{b}\"/>\
         <line class=\"axis\" x1=\"{l}\" y1=\"{t}\" x2=\"{l}\" y2=\"{b}\"/>\
         <text class=\"atitle\" x=\"{cx}\" y=\"{xb}\" text-anchor=\"middle\">{xt}</text>\
         <text class=\"atitle\" transform=\"translate(16 {cy}) rotate(-90)\" text-anchor=\"middle\">{yt}</text>",
        l = f1(LEFT),
        r = f1(right),
        t = f1(TOP),
        b = f1(plot_bottom),
        cx = f1((LEFT + right) / 2.0),
        xb = f1(plot_bottom + 34.0),
        cy = f1((TOP + plot_bottom) / 2.0),
        xt = esc(&x.title),
        yt = esc(&y.title),
    );
}
