//! Reference lines across the plot: a limit given with --expect or one
//! inferred from the runs, drawn where the measured figures can be read
//! against it.

use std::fmt::Write;

use super::esc;
use super::frame::{LEFT, f1};
use super::scale::Scale;

/// A horizontal line at `value` on the y axis, labelled at its right end.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct RefLine {
    pub(crate) value: f64,
    pub(crate) label: String,
}

/// Not a palette colour: a limit must not read as one more series.
const LIMIT: &str = "#B00020";

pub(super) fn draw(out: &mut String, ys: &Scale, refs: &[RefLine], right: f64) {
    for r in refs.iter().filter(|r| r.value.is_finite() && r.value > 0.0) {
        let py = ys.px(r.value);
        let _ = write!(
            out,
            "<g class=\"limit\" data-value=\"{v}\"><line x1=\"{l}\" y1=\"{p}\" x2=\"{r}\" y2=\"{p}\" \
             stroke=\"{LIMIT}\" stroke-width=\"1.5\" stroke-dasharray=\"8 3 2 3\"/>\
             <text class=\"limitlabel\" x=\"{tx}\" y=\"{ty}\" text-anchor=\"end\" fill=\"{LIMIT}\">{t}</text></g>",
            v = f1(r.value),
            l = f1(LEFT),
            r = f1(right),
            p = f1(py),
            tx = f1(right - 4.0),
            ty = f1(py - 4.0),
            t = esc(&r.label),
        );
    }
}
