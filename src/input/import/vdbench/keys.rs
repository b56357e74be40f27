//! vdbench's keyword abbreviations. vdbench takes any leading part of a
//! keyword (`xf=` for `xfersize=`, `th=` for `threads=`, `openflag=`), and a
//! few second names (`readpct=`); its own sample files use them. Each key is
//! widened to the full name here, per kind of definition, so the rest of the
//! importer judges one spelling.

/// Full keywords per kind, in the order vdbench tries them where that is
/// known (the first one the key starts is taken); a key that starts several
/// and names none exactly is left as written, then refused by name.
fn keywords(kind: &str) -> &'static [&'static str] {
    match kind {
        "hd" => &[
            "system", "user", "shell", "jvms", "vdbench", "clients", "mount",
        ],
        "sd" => &[
            "lun",
            "size",
            "threads",
            "openflags",
            "host",
            "hitarea",
            "range",
            "offset",
            "align",
            "journal",
            "count",
            "streams",
            "resetbus",
            "resetlun",
        ],
        "wd" => &[
            "skew",
            "xfersize",
            "readpct",
            "rdpct",
            "writepct",
            "wrpct",
            "range",
            "seekpct",
            "priority",
            "iorate",
            "rhpct",
            "whpct",
            "host",
            "generate",
            "openflags",
            "stride",
            "streams",
        ],
        "rd" => &[
            "elapsed",
            "warmup",
            "interval",
            "iorate",
            "curve",
            "stopcurve",
            "distribution",
            "format",
            "openflags",
            "pause",
            "maxdata",
            "threads",
            "forthreads",
            "xfersize",
            "forxfersize",
            "rdpct",
            "forrdpct",
            "seekpct",
            "forseekpct",
            "foriorate",
            "forcompratio",
            "forwss",
            "forhitarea",
        ],
        _ => &[],
    }
}

/// The full name vdbench reads `key` as in a definition of `kind`.
pub(crate) fn full(kind: &str, key: &str) -> String {
    // Names kept exactly: the links between definitions.
    if matches!(key, "sd" | "wd" | "rd" | "hd" | "fsd" | "fwd") || key.is_empty() {
        return key.to_string();
    }
    let list = keywords(kind);
    if list.contains(&key) {
        return second_name(kind, key).to_string();
    }
    let hits: Vec<&str> = list
        .iter()
        .copied()
        .filter(|k| k.starts_with(key))
        .collect();
    // vdbench tries its keywords in order; where that order is not known
    // here an ambiguous key stays as written rather than being guessed.
    let known_order = kind == "wd";
    match hits.as_slice() {
        [one] => second_name(kind, one).to_string(),
        [first, ..] if known_order => second_name(kind, first).to_string(),
        _ => key.to_string(),
    }
}

/// vdbench's second names for one setting: in an rd, `threads=`,
/// `xfersize=`, `rdpct=` and `seekpct=` are its for-loops.
fn second_name<'a>(kind: &str, key: &'a str) -> &'a str {
    match (kind, key) {
        ("wd", "readpct") => "rdpct",
        ("wd", "writepct") => "wrpct",
        ("rd", "xfersize") => "forxfersize",
        ("rd", "rdpct") => "forrdpct",
        ("rd", "seekpct") => "forseekpct",
        _ => key,
    }
}
