//! vdbench's keywords by kind of definition (`hd`, `sd`, `wd`, `rd`,
//! `fsd`, `fwd`, and the general parameters), gathered from each kind's
//! rows. vdbench takes any leading part of a keyword (`xf=` for
//! `xfersize=`, `th=` for `threads=`, `openflag=`) and a few second names
//! (`readpct=`); its own sample files use them. Each key is widened here to
//! its full name, per kind, so the rows judge one spelling.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use super::super::table::{Doc, docs};
use super::{data, defs, fs, fsd, rd, wd};

/// Every row of every kind, in the order vdbench tries a kind's keys where
/// that is known (the first one an abbreviation starts is taken): the
/// import guide's vdbench table is held against these.
pub(crate) fn tables() -> Vec<(&'static str, Vec<Doc>)> {
    vec![
        ("general", docs(data::GENERAL)),
        ("hd", docs(defs::HD)),
        ("sd", docs(defs::SD)),
        ("wd", docs(wd::WD)),
        ("rd", docs(rd::RD)),
        ("rd with fwd", docs(fs::RD_FS)),
        ("fsd", docs(fsd::FSD)),
        ("fwd", docs(fsd::FWD)),
    ]
}

/// The rows a key of a `kind` definition may name: an rd's over luns and
/// over a tree both. Gathered once: a parameter file may hold 100,000
/// definitions.
fn rows(kind: &str) -> &'static [Doc] {
    static BY_KIND: std::sync::OnceLock<Vec<(&'static str, Vec<Doc>)>> = std::sync::OnceLock::new();
    let all = BY_KIND.get_or_init(|| {
        let mut by_kind: Vec<(&'static str, Vec<Doc>)> = Vec::new();
        for (k, rows) in tables() {
            let k = if k == "rd with fwd" { "rd" } else { k };
            match by_kind.iter_mut().find(|(x, _)| *x == k) {
                Some((_, have)) => {
                    for r in rows {
                        if !have.iter().any(|o| o.name == r.name) {
                            have.push(r);
                        }
                    }
                }
                None => by_kind.push((k, rows)),
            }
        }
        by_kind
    });
    all.iter()
        .find(|(k, _)| *k == kind)
        .map_or(&[], |(_, rows)| rows.as_slice())
}

/// The full name vdbench reads `key` as in a definition of `kind`.
pub(crate) fn full(kind: &str, key: &str) -> String {
    // Names kept exactly: the links between definitions, and the general
    // parameters (vdbench widens only a definition's keys).
    if matches!(key, "sd" | "wd" | "rd" | "hd" | "fsd" | "fwd") || key.is_empty() {
        return key.to_string();
    }
    if kind == "general" {
        return key.to_string();
    }
    let rows = rows(kind);
    let names = |d: &Doc| std::iter::once(d.name).chain(d.aliases.iter().copied());
    if let Some(d) = rows.iter().find(|d| names(d).any(|n| n == key)) {
        return d.name.to_string();
    }
    let mut hits = rows.iter().filter(|d| names(d).any(|n| n.starts_with(key)));
    let first = hits.next();
    // vdbench tries its keywords in order; where that order is not known
    // here an ambiguous key stays as written rather than being guessed.
    let known_order = kind == "wd";
    match (first, hits.next()) {
        (Some(one), None) => one.name.to_string(),
        (Some(first), Some(_)) if known_order => first.name.to_string(),
        _ => key.to_string(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    #[test]
    fn abbreviations_and_second_names_widen_to_their_kinds_keyword() {
        assert_eq!(full("wd", "xf"), "xfersize");
        assert_eq!(full("wd", "readpct"), "rdpct");
        assert_eq!(full("wd", "se"), "seekpct");
        assert_eq!(full("rd", "th"), "threads");
        assert_eq!(full("rd", "el"), "elapsed");
        assert_eq!(full("rd", "fwdr"), "fwdrate");
        assert_eq!(full("sd", "openflag"), "openflags");
        assert_eq!(full("fsd", "sizes"), "size");
        // Ambiguous outside wd: kept as written, and refused by name.
        assert_eq!(full("rd", "for"), "for");
        // The links between definitions and general parameters stay.
        assert_eq!(full("rd", "sd"), "sd");
        assert_eq!(full("general", "comp"), "comp");
    }
}
