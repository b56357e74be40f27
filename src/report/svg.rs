//! Chart drawing: axes, scales, lines with marks, bars, legends, written as
//! inline SVG text. Drawn by hand rather than with a plotting crate because
//! the report must be one self-contained file with no scripts or fonts, the
//! output must be byte-for-byte deterministic for snapshot tests, and the
//! browser test counts marks by class, so every element is ours to name.

use std::fmt::Write;

use crate::output::fmt::{micros, number, trim};

/// Escapes text for HTML/SVG content and attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// Okabe-Ito colours: distinguishable with the common colour-vision
/// deficiencies. Yellow is left out: it vanishes on white paper.
pub const PALETTE: [&str; 7] = [
    "#0072B2", "#D55E00", "#009E73", "#E69F00", "#CC79A7", "#56B4E9", "#000000",
];
/// Reads and writes keep one colour each across every chart.
pub const READ: usize = 0;
pub const WRITE: usize = 1;

pub fn colour(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// How tick labels are written.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Fmt {
    /// Plain numbers with thousands separators, "k"/"M" past a million.
    Number,
    /// Microseconds shown as "250 µs", "1.5 ms", "2 s".
    Micros,
    /// Percent, e.g. read share.
    Percent,
    /// Seconds on a time axis.
    Seconds,
    /// Percentiles on a "nines" axis: the value is -log10(1 - p/100).
    Nines,
    /// Read percentage written as the papers do: 70 -> "70:30".
    Mix,
}

pub fn fmt_value(v: f64, f: Fmt) -> String {
    match f {
        Fmt::Number => number(v),
        Fmt::Micros => micros(v),
        Fmt::Percent => format!("{}%", trim(v, 0)),
        Fmt::Seconds => format!("{}s", trim(v, 1)),
        Fmt::Nines => {
            let p = 100.0 * (1.0 - 10f64.powf(-v));
            format!("p{}", trim(p, 4))
        }
        Fmt::Mix => format!("{}:{}", trim(v, 0), trim(100.0 - v, 0)),
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ScaleKind {
    Linear,
    Log,
}

/// An axis: its title (with unit), scale and label format. `zero` makes a
/// linear axis start at 0, as throughput axes should.
#[derive(Clone, Debug)]
pub struct Axis {
    pub title: String,
    pub kind: ScaleKind,
    pub fmt: Fmt,
    pub zero: bool,
    /// Fixed range instead of one fitted to the data.
    pub range: Option<(f64, f64)>,
    /// High values on the left (the papers draw 100% read first).
    pub reverse: bool,
}

impl Axis {
    pub fn linear(title: &str, fmt: Fmt) -> Self {
        Self {
            title: title.into(),
            kind: ScaleKind::Linear,
            fmt,
            zero: true,
            range: None,
            reverse: false,
        }
    }

    pub fn log(title: &str, fmt: Fmt) -> Self {
        Self {
            kind: ScaleKind::Log,
            zero: false,
            ..Self::linear(title, fmt)
        }
    }

    /// Log scale when the positive values span more than a decade (p99 far
    /// above the mean would otherwise flatten the mean line onto the
    /// axis); linear from zero otherwise.
    pub fn auto(title: &str, fmt: Fmt, values: impl Iterator<Item = f64>) -> Self {
        let (lo, hi) = positive_range(values);
        if lo > 0.0 && hi / lo >= 20.0 {
            let mut a = Self::log(title, fmt);
            a.title = format!("{title}, log scale");
            a
        } else {
            Self::linear(title, fmt)
        }
    }

    pub fn fixed(mut self, lo: f64, hi: f64) -> Self {
        self.range = Some((lo, hi));
        self
    }
}

fn positive_range(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let mut lo = f64::INFINITY;
    let mut hi = 0.0f64;
    for v in values.filter(|v| v.is_finite() && *v > 0.0) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if hi == 0.0 { (0.0, 0.0) } else { (lo, hi) }
}

/// Data range mapped onto pixels.
#[derive(Clone, Debug)]
pub struct Scale {
    kind: ScaleKind,
    lo: f64,
    hi: f64,
    p0: f64,
    p1: f64,
    pub ticks: Vec<f64>,
}

impl Scale {
    pub fn fit(axis: &Axis, values: &[f64], p0: f64, p1: f64) -> Self {
        let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
        match axis.kind {
            ScaleKind::Linear => {
                let (mut lo, mut hi) = match axis.range {
                    Some(r) => r,
                    None => (
                        finite.iter().copied().fold(f64::INFINITY, f64::min),
                        finite.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                    ),
                };
                if !lo.is_finite() || !hi.is_finite() {
                    (lo, hi) = (0.0, 1.0);
                }
                if axis.zero && axis.range.is_none() {
                    lo = lo.min(0.0);
                }
                if hi <= lo {
                    hi = lo + if lo == 0.0 { 1.0 } else { lo.abs() * 0.1 };
                }
                let step = nice_step((hi - lo) / 5.0);
                if axis.range.is_none() {
                    lo = (lo / step).floor() * step;
                    hi = (hi / step).ceil() * step;
                }
                let mut ticks = Vec::new();
                let mut k = (lo / step).ceil() as i64;
                while (k as f64) * step <= hi + step * 1e-9 {
                    ticks.push(k as f64 * step);
                    k += 1;
                }
                Self {
                    kind: ScaleKind::Linear,
                    lo,
                    hi,
                    p0,
                    p1,
                    ticks,
                }
            }
            ScaleKind::Log => {
                let (mut lo, mut hi) = match axis.range {
                    Some(r) => r,
                    None => positive_range(finite.iter().copied()),
                };
                if lo <= 0.0 || hi <= 0.0 {
                    (lo, hi) = (1.0, 10.0);
                }
                let d0 = lo.log10().floor();
                let mut d1 = hi.log10().ceil();
                if d1 <= d0 {
                    d1 = d0 + 1.0;
                }
                let (lo, hi) = (10f64.powf(d0), 10f64.powf(d1));
                let decades = (d1 - d0) as i64;
                let mut ticks = Vec::new();
                for d in d0 as i64..=d1 as i64 {
                    let base = 10f64.powi(d as i32);
                    ticks.push(base);
                    // Few decades: label 2x and 5x too, so the axis is readable.
                    if decades <= 2 && d < d1 as i64 {
                        ticks.push(2.0 * base);
                        ticks.push(5.0 * base);
                    }
                }
                Self {
                    kind: ScaleKind::Log,
                    lo,
                    hi,
                    p0,
                    p1,
                    ticks,
                }
            }
        }
    }

    /// Pixel position of a value; log scales clamp non-positive values to
    /// the bottom of the axis.
    pub fn px(&self, v: f64) -> f64 {
        let f = match self.kind {
            ScaleKind::Linear => (v - self.lo) / (self.hi - self.lo),
            ScaleKind::Log => {
                let v = v.max(self.lo);
                (v.log10() - self.lo.log10()) / (self.hi.log10() - self.lo.log10())
            }
        };
        self.p0 + f * (self.p1 - self.p0)
    }
}

/// 1, 2 or 5 times a power of ten, at least `raw`.
fn nice_step(raw: f64) -> f64 {
    if raw <= 0.0 || !raw.is_finite() {
        return 1.0;
    }
    let p = 10f64.powf(raw.log10().floor());
    for m in [1.0, 2.0, 2.5, 5.0, 10.0] {
        if m * p >= raw {
            return m * p;
        }
    }
    10.0 * p
}

/// One line of points (x, y), optionally with a dot per point. `tips` are
/// hover texts per point (SVG `<title>`).
#[derive(Clone, Debug)]
pub struct Series {
    pub name: String,
    pub colour: usize,
    pub dashed: bool,
    /// Dotted: a third line style, for a third quantity of one colour.
    pub dotted: bool,
    /// Points joined by a line; false for points that stand alone.
    pub line: bool,
    pub marks: bool,
    pub points: Vec<(f64, f64)>,
    pub tips: Vec<String>,
}

impl Series {
    pub fn new(name: impl Into<String>, colour: usize) -> Self {
        Self {
            name: name.into(),
            colour,
            dashed: false,
            dotted: false,
            line: true,
            marks: true,
            points: Vec::new(),
            tips: Vec::new(),
        }
    }

    pub fn push(&mut self, x: f64, y: f64, tip: impl Into<String>) {
        self.points.push((x, y));
        self.tips.push(tip.into());
    }
}

/// A shaded span of the x axis with a label (the warm-up).
#[derive(Clone, Debug)]
pub struct Shade {
    pub from: f64,
    pub to: f64,
    pub label: String,
}

/// Drawing size: the SVG's width in user units (text is 12 units high, so
/// a narrower chart shows larger text at the same printed width) and the
/// plot area's height.
#[derive(Clone, Copy, Debug)]
pub struct Size {
    pub w: f64,
    pub plot_h: f64,
}

pub const FULL: Size = Size {
    w: 720.0,
    plot_h: 240.0,
};
pub const SMALL: Size = Size {
    w: 440.0,
    plot_h: 120.0,
};
const LEFT: f64 = 78.0;
// Room for the last x tick label, centred on the right edge.
const RIGHT: f64 = 30.0;
const TOP: f64 = 34.0;
const LEGEND_ROW: f64 = 18.0;

fn legend_rows(names: usize) -> usize {
    names.div_ceil(3)
}

fn f1(v: f64) -> String {
    trim(v, 1)
}

/// Opens the SVG with its title; `kind` names the chart for tests and CSS.
fn open(out: &mut String, kind: &str, title: &str, w: f64, height: f64) {
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

/// Legend below the plot, three entries a row.
/// Legend style of a series drawn as points without a line.
const POINTS_ONLY: &str = "points";

/// The stroke-dasharray attribute of a line style.
fn dash_attr(dashed: bool, dotted: bool) -> &'static str {
    if dotted {
        " stroke-dasharray=\"2 3\""
    } else if dashed {
        " stroke-dasharray=\"6 4\""
    } else {
        ""
    }
}

fn legend(out: &mut String, entries: &[(String, usize, &str)], w: f64, y0: f64) {
    let col = (w - LEFT - RIGHT) / 3.0;
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
                esc(&shorten(name, 34)),
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
            esc(&shorten(name, 34)),
        );
    }
    out.push_str("</g>");
}

/// Long names are cut for legends and category labels; the full text stays
/// in the tables and hover titles.
pub fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

/// Horizontal grid lines at the y ticks and their labels; leaves the
/// "ticks" group open for the caller's x labels.
fn y_grid_and_ticks(out: &mut String, ys: &Scale, y: &Axis, right: f64) {
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

fn axes(out: &mut String, xs: &Scale, ys: &Scale, x: &Axis, y: &Axis, w: f64, plot_bottom: f64) {
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

/// A line chart. Each point of a series with `marks` is a `circle.mark`;
/// lines are `path.series` whose vertices are the points, in order.
pub fn line_chart(
    kind: &str,
    title: &str,
    x: &Axis,
    y: &Axis,
    series: &[Series],
    shades: &[Shade],
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

/// One bar: its value, hover text and an optional label drawn above it
/// (a ratio such as "2.30x").
#[derive(Clone, Debug)]
pub struct Bar {
    pub value: f64,
    pub tip: String,
    pub label: Option<String>,
}

/// A category on the x axis with one slot per bar series; `None` leaves the
/// slot empty (no write bar for a pure read run).
#[derive(Clone, Debug)]
pub struct Category {
    pub name: String,
    pub bars: Vec<Option<Bar>>,
}

/// Grouped bars: categories along x, one bar per series inside each. Every
/// bar is a `rect.bar`.
pub fn bar_chart(
    kind: &str,
    title: &str,
    y: &Axis,
    series: &[(String, usize)],
    cats: &[Category],
    size: Size,
) -> String {
    let Size { w, plot_h } = size;
    let vals: Vec<f64> = cats
        .iter()
        .flat_map(|c| c.bars.iter().flatten().map(|b| b.value))
        .collect();
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
            if let Some(l) = &bar.label {
                let _ = write!(
                    out,
                    "<text class=\"barlabel\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
                    f1(bx + (bw - 2.0) / 2.0),
                    f1(top.min(base) - 4.0),
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

fn split_label(s: &str, max: usize) -> (String, String) {
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
    fn escapes_markup() {
        assert_eq!(
            esc("<script>\"a\" & 'b'</script>"),
            "&lt;script&gt;&quot;a&quot; &amp; &#39;b&#39;&lt;/script&gt;"
        );
    }

    #[test]
    fn linear_ticks_are_round() {
        let s = Scale::fit(&Axis::linear("x", Fmt::Number), &[3.0, 4321.0], 0.0, 100.0);
        assert_eq!(s.ticks, vec![0.0, 1000.0, 2000.0, 3000.0, 4000.0, 5000.0]);
        assert_eq!(s.px(0.0), 0.0);
        assert_eq!(s.px(5000.0), 100.0);
    }

    #[test]
    fn log_scale_covers_whole_decades() {
        let s = Scale::fit(&Axis::log("y", Fmt::Micros), &[35.0, 4200.0], 100.0, 0.0);
        assert_eq!(s.ticks, vec![10.0, 100.0, 1000.0, 10000.0]);
        assert_eq!(s.px(10.0), 100.0);
        assert_eq!(s.px(10000.0), 0.0);
        let a = Axis::auto("lat", Fmt::Micros, [50.0, 20000.0].into_iter());
        assert_eq!(a.kind, ScaleKind::Log);
        let a = Axis::auto("lat", Fmt::Micros, [50.0, 500.0].into_iter());
        assert_eq!(a.kind, ScaleKind::Linear);
    }

    #[test]
    fn labels_read_well() {
        assert_eq!(fmt_value(250.0, Fmt::Micros), "250 µs");
        assert_eq!(fmt_value(126397.0, Fmt::Number), "126,397");
        assert_eq!(fmt_value(2.0, Fmt::Nines), "p99");
        assert_eq!(fmt_value(3.0, Fmt::Nines), "p99.9");
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
