//! Chart drawing: axes, scales, lines with marks, bars, legends, written as
//! inline SVG text. Drawn by hand rather than with a plotting crate because
//! the report must be one self-contained file with no scripts or fonts, the
//! output must be byte-for-byte deterministic for snapshot tests, and the
//! browser test counts marks by class, so every element is ours to name.
//!
//! This file holds what charts share beyond drawing (escaping, colours,
//! number labels, sizes); `scale` fits axes, `frame` draws margins, legend,
//! grid and axes, and `line` and `bar` the two kinds of chart.

mod bar;
mod frame;
mod line;
mod refs;
mod scale;

pub(crate) use bar::{Bar, Category, bar_chart, bar_chart_with_refs};
pub(crate) use line::{Series, Shade, line_chart, line_chart_with_refs};
pub(crate) use refs::RefLine;
pub(crate) use scale::Axis;

use crate::output::fmt::{micros, number, trim};

/// Escapes text for HTML/SVG content and attribute values.
pub(crate) fn esc(s: &str) -> String {
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
pub(crate) const PALETTE: [&str; 7] = [
    "#0072B2", "#D55E00", "#009E73", "#E69F00", "#CC79A7", "#56B4E9", "#000000",
];
/// Reads and writes keep one colour each across every chart.
pub(crate) const READ: usize = 0;
pub(crate) const WRITE: usize = 1;

pub(crate) fn colour(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// How tick labels are written.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Fmt {
    /// Plain numbers with thousands separators, "k"/"M" past a million.
    Number,
    /// Microseconds shown as "250 µs", "1.5 ms", "2 s".
    Micros,
    /// Seconds on a time axis.
    Seconds,
    /// Percentiles on a "nines" axis: the value is -log10(1 - p/100).
    Nines,
    /// Read percentage written as the papers do: 70 -> "70:30".
    Mix,
    /// A size given as its base-2 logarithm: 12 -> "4 KiB".
    Log2Size,
    /// A time as seconds since 1970, shown as "11-28 14:05" (UTC).
    Date,
}

pub(crate) fn fmt_value(v: f64, f: Fmt) -> String {
    match f {
        Fmt::Number => number(v),
        Fmt::Micros => micros(v),
        // Ticks are 1, 2, 2.5 or 5 times a power of ten: three decimals
        // show 0.25 s and 0.025 s as they are (one read 0.25 as "0.2s").
        Fmt::Seconds => format!("{}s", trim(v, 3)),
        Fmt::Nines => {
            let p = 100.0 * (1.0 - 10f64.powf(-v));
            format!("p{}", trim(p, 4))
        }
        Fmt::Mix => format!("{}:{}", trim(v, 0), trim(100.0 - v, 0)),
        // Only whole powers are labelled: a tick between them names no size.
        Fmt::Log2Size if v.fract() == 0.0 && (0.0..63.0).contains(&v) => {
            crate::units::format_size(1u64 << v as u32)
        }
        Fmt::Log2Size => String::new(),
        Fmt::Date if (0.0..1e11).contains(&v) => {
            let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(v as u64);
            let text = humantime::format_rfc3339_seconds(t).to_string();
            text.get(5..16).unwrap_or_default().replace('T', " ")
        }
        Fmt::Date => String::new(),
    }
}

/// Long names are cut for legends and category labels; the full text stays
/// in the tables and hover titles.
pub(crate) fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

/// Drawing size: the SVG's width in user units (text is 12 units high, so
/// a narrower chart shows larger text at the same printed width) and the
/// plot area's height.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Size {
    pub(crate) w: f64,
    pub(crate) plot_h: f64,
}

pub(crate) const FULL: Size = Size {
    w: 720.0,
    plot_h: 240.0,
};
pub(crate) const SMALL: Size = Size {
    w: 440.0,
    plot_h: 120.0,
};

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
    fn legend_names_stay_in_their_column_and_keep_their_whole_name_as_a_title() {
        let long = "a-long-run-name-as-compare-draws-two-results-side-by-side";
        for size in [FULL, SMALL] {
            let entries = vec![
                (long.to_string(), 0, ""),
                ("short".to_string(), 1, ""),
                (long.to_string(), 2, frame::POINTS_ONLY),
            ];
            let mut out = String::new();
            frame::legend(&mut out, &entries, size.w, 100.0);
            let col = (size.w - frame::LEFT - frame::RIGHT) / 3.0;
            let fit = frame::legend_chars(size.w);
            assert!(28.0 + fit as f64 * 7.0 <= col, "{fit} characters in {col}");
            assert_eq!(out.matches(&format!("<title>{long}</title>")).count(), 2);
            assert!(
                !out.contains(&format!("</title>{long}</text>")),
                "cut: {out}"
            );
            let cut = shorten(long, fit);
            assert!(out.contains(&format!("</title>{cut}</text>")), "{out}");
            assert!(out.contains(">short</text>"), "{out}");
        }
    }

    #[test]
    fn labels_read_well() {
        assert_eq!(fmt_value(250.0, Fmt::Micros), "250 µs");
        assert_eq!(fmt_value(126397.0, Fmt::Number), "126,397");
        assert_eq!(fmt_value(2.0, Fmt::Nines), "p99");
        assert_eq!(fmt_value(3.0, Fmt::Nines), "p99.9");
        assert_eq!(fmt_value(0.25, Fmt::Seconds), "0.25s");
        assert_eq!(fmt_value(0.025, Fmt::Seconds), "0.025s");
        assert_eq!(fmt_value(120.0, Fmt::Seconds), "120s");
    }
}
