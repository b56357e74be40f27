//! TOML text for a rendered suite: a quoted string, a number as a person
//! writes it, and the comment that says how an option was mapped. A leaf
//! both the suite and the tree renderer use.

use std::fmt::Write;

use super::super::{How, Mapping};
use crate::units::bounds;

pub(super) fn quote(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

pub(super) fn comment(out: &mut String, m: &Mapping) {
    let how = match &m.how {
        How::Exact(h) => h.clone(),
        How::Note(h) => format!("NOTE: {h}"),
    };
    let _ = writeln!(
        out,
        "# {}",
        bounds::one_line(&format!("{}: {} -> {how}", m.at, m.option))
    );
}

pub(super) fn num(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}
