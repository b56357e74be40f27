//! The vdbench key table: one row per keyword of each kind of definition
//! (`hd`, `sd`, `wd`, `rd`, `fsd`, `fwd`): its full name, its second names,
//! and its rule (read by the kind's function, noted, or refused and why).
//! vdbench takes any leading part of a keyword (`xf=` for `xfersize=`,
//! `th=` for `threads=`, `openflag=`), and a few second names
//! (`readpct=`); its own sample files use them. Each key is widened to the
//! full name here, per kind, so the rest of the importer judges one
//! spelling. A new key is one row (and, when it maps, one arm and a test).
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use super::super::{Mapping, Notes};
use super::parse::{Param, noted};

/// What the importer does with a key.
pub(crate) enum Rule {
    /// Read by the function of its kind (`defs`, `map`, `fs`).
    Map,
    /// Mapped whatever its value, with this note for the user.
    Note(&'static str),
    /// Refused whatever its value: "not supported yet (why)".
    Refuse(&'static str),
}

pub(crate) struct Key {
    pub(crate) kind: &'static str,
    pub(crate) name: &'static str,
    /// Second names vdbench reads as this key (`readpct` for `rdpct`).
    pub(crate) also: &'static [&'static str],
    pub(crate) rule: Rule,
}

const fn key(kind: &'static str, name: &'static str, rule: Rule) -> Key {
    Key {
        kind,
        name,
        also: &[],
        rule,
    }
}

const fn alias(
    kind: &'static str,
    name: &'static str,
    also: &'static [&'static str],
    rule: Rule,
) -> Key {
    Key {
        kind,
        name,
        also,
        rule,
    }
}

const OWN_PROCESS: &str = "vdbench's own process layout; volbench runs one agent per host";
const SD_AREA: &str = "cache hit areas, ranges, offsets, journals and bus resets of an sd";
const WD_AREA: &str = "cache hits, ranges, strides and streams";
const RD_OTHER: &str = "this run parameter";
const WHOLE_FILE: &str = "volbench moves each file whole, in one pass, files picked at random";

/// Per kind, in the order vdbench tries them where that is known (the
/// first one a key starts is taken).
pub(crate) const KEYS: &[Key] = &[
    key("hd", "system", Rule::Map),
    key("hd", "user", Rule::Map),
    key("hd", "shell", Rule::Map),
    key("hd", "jvms", Rule::Note(OWN_PROCESS)),
    key("hd", "vdbench", Rule::Note(OWN_PROCESS)),
    key("hd", "clients", Rule::Refuse("several clients per hd")),
    key("hd", "mount", Rule::Refuse("a mount command per host")),
    key("sd", "lun", Rule::Map),
    key("sd", "size", Rule::Map),
    key("sd", "threads", Rule::Map),
    key("sd", "openflags", Rule::Map),
    alias("sd", "host", &["hd"], Rule::Map),
    key("sd", "hitarea", Rule::Refuse(SD_AREA)),
    key("sd", "range", Rule::Refuse(SD_AREA)),
    key("sd", "offset", Rule::Refuse(SD_AREA)),
    key("sd", "align", Rule::Refuse(SD_AREA)),
    key("sd", "journal", Rule::Refuse(SD_AREA)),
    key("sd", "count", Rule::Refuse(SD_AREA)),
    key("sd", "streams", Rule::Refuse(SD_AREA)),
    key("sd", "resetbus", Rule::Refuse(SD_AREA)),
    key("sd", "resetlun", Rule::Refuse(SD_AREA)),
    key("wd", "skew", Rule::Map),
    key("wd", "xfersize", Rule::Map),
    alias("wd", "rdpct", &["readpct"], Rule::Map),
    alias("wd", "wrpct", &["writepct"], Rule::Map),
    key("wd", "range", Rule::Refuse(WD_AREA)),
    alias("wd", "seekpct", &["seek"], Rule::Map),
    key("wd", "priority", Rule::Refuse(WD_AREA)),
    key("wd", "iorate", Rule::Map),
    key("wd", "rhpct", Rule::Refuse(WD_AREA)),
    key("wd", "whpct", Rule::Refuse(WD_AREA)),
    alias(
        "wd",
        "host",
        &["hd"],
        Rule::Note("every host of the sd runs it"),
    ),
    key("wd", "generate", Rule::Refuse(WD_AREA)),
    key("wd", "openflags", Rule::Map),
    key("wd", "stride", Rule::Refuse(WD_AREA)),
    key("wd", "streams", Rule::Refuse(WD_AREA)),
    key("wd", "hotband", Rule::Map),
    key("wd", "sd", Rule::Map),
    key("rd", "elapsed", Rule::Map),
    key("rd", "warmup", Rule::Map),
    key("rd", "interval", Rule::Map),
    key("rd", "iorate", Rule::Map),
    key("rd", "curve", Rule::Map),
    key("rd", "stopcurve", Rule::Refuse(RD_OTHER)),
    key("rd", "distribution", Rule::Map),
    key("rd", "format", Rule::Map),
    key("rd", "openflags", Rule::Map),
    key("rd", "pause", Rule::Map),
    key("rd", "maxdata", Rule::Refuse(RD_OTHER)),
    key("rd", "threads", Rule::Map),
    key("rd", "forthreads", Rule::Map),
    alias("rd", "forxfersize", &["xfersize"], Rule::Map),
    alias("rd", "forrdpct", &["rdpct"], Rule::Map),
    alias("rd", "forseekpct", &["seekpct"], Rule::Map),
    key("rd", "foriorate", Rule::Map),
    key("rd", "forcompratio", Rule::Refuse(RD_OTHER)),
    key("rd", "forwss", Rule::Refuse(RD_OTHER)),
    key("rd", "forhitarea", Rule::Refuse(RD_OTHER)),
    key("rd", "fwdrate", Rule::Map),
    key("rd", "wd", Rule::Map),
    key("rd", "sd", Rule::Map),
    key("rd", "fwd", Rule::Map),
    key("fsd", "anchor", Rule::Map),
    key("fsd", "depth", Rule::Map),
    key("fsd", "width", Rule::Map),
    key("fsd", "files", Rule::Map),
    alias("fsd", "size", &["sizes"], Rule::Map),
    key("fsd", "shared", Rule::Map),
    key(
        "fsd",
        "distribution",
        Rule::Refuse("files in every directory rather than the lowest ones"),
    ),
    key(
        "fsd",
        "totalsize",
        Rule::Refuse("a tree bounded by total size"),
    ),
    key(
        "fsd",
        "workingsetsize",
        Rule::Refuse("a working set smaller than the tree"),
    ),
    key("fwd", "fsd", Rule::Map),
    key("fwd", "operation", Rule::Map),
    key("fwd", "threads", Rule::Map),
    key("fwd", "skew", Rule::Map),
    key("fwd", "xfersize", Rule::Note(WHOLE_FILE)),
    key("fwd", "fileio", Rule::Note(WHOLE_FILE)),
    key("fwd", "fileselect", Rule::Note(WHOLE_FILE)),
    alias(
        "fwd",
        "rdpct",
        &["readpct"],
        Rule::Refuse("reads and writes mixed within one fwd (give each its own fwd)"),
    ),
];

fn rows(kind: &str) -> impl Iterator<Item = &'static Key> + '_ {
    KEYS.iter().filter(move |k| k.kind == kind)
}

/// The full name vdbench reads `key` as in a definition of `kind`.
pub(crate) fn full(kind: &str, key: &str) -> String {
    // Names kept exactly: the links between definitions.
    if matches!(key, "sd" | "wd" | "rd" | "hd" | "fsd" | "fwd") || key.is_empty() {
        return key.to_string();
    }
    let names = |k: &'static Key| std::iter::once(k.name).chain(k.also.iter().copied());
    if let Some(k) = rows(kind).find(|k| names(k).any(|n| n == key)) {
        return k.name.to_string();
    }
    let mut hits = rows(kind).filter(|k| names(k).any(|n| n.starts_with(key)));
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

/// A key its kind's function does not read: noted or refused by its row,
/// or refused by name when vdbench's key is not in the table.
pub(super) fn judge(kind: &str, p: &Param, m: &mut Vec<Mapping>, notes: &mut Notes) {
    match rows(kind).find(|k| k.name == p.key).map(|k| &k.rule) {
        Some(Rule::Note(n)) => noted(m, p, n),
        Some(Rule::Refuse(why)) => notes.unsupported(&p.at, &p.text(), why),
        Some(Rule::Map) | None => notes.refuse(
            &p.at,
            &p.text(),
            format!("not supported yet (no volbench equivalent of this {kind} parameter)"),
        ),
    }
}
