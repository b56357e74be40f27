//! vdbench parameter files: general parameters, `hd=` hosts, `sd=`
//! storage, `wd=` workloads and `rd=` runs, each kind with its `default`
//! entry, `include=` followed. Every `rd` becomes one run per point of its
//! for-loops; the luns become each host's targets.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::{Imported, Notes, PathMap};
use crate::error::{Result, VbError};
use crate::units::{bounds, parse_duration, parse_size};

/// Include files nest at most this deep.
pub const MAX_INCLUDE_DEPTH: usize = 8;
/// Definitions of all kinds, over all files.
pub const MAX_DEFS: usize = 100_000;

#[derive(Debug, Clone)]
pub(crate) struct Param {
    pub(crate) key: String,
    pub(crate) value: String,
    pub(crate) at: String,
}

impl Param {
    pub(crate) fn text(&self) -> String {
        format!("{}={}", self.key, self.value)
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Def {
    pub(crate) kind: String,
    pub(crate) name: String,
    pub(crate) at: String,
    pub(crate) params: Vec<Param>,
}

impl Def {
    pub(crate) fn get(&self, key: &str) -> Option<&Param> {
        self.params.iter().rev().find(|p| p.key == key)
    }
}

pub struct Sources<'a> {
    pub read: &'a dyn Fn(&Path) -> Result<String>,
}

/// Imports one or more parameter files, read as one (as vdbench reads
/// several `-f` files); a file included twice is read once.
pub fn import_files(paths: &[PathBuf], map: &PathMap, src: &Sources) -> Result<Imported> {
    let mut notes = Notes::default();
    let mut defs = Vec::new();
    let mut seen = BTreeSet::new();
    for p in paths {
        let text = (src.read)(p)?;
        parse(
            &p.display().to_string(),
            &text,
            p,
            src,
            0,
            &mut defs,
            &mut seen,
            &mut notes,
        )?;
    }
    let origin = paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(" ");
    finish(&origin, &defs, map, notes)
}

/// The parameters as text, without reading any file (unit and property tests).
#[cfg(any(test, feature = "test-fixtures"))]
pub fn import_text(origin: &str, text: &str, map: &PathMap, src: &Sources) -> Result<Imported> {
    let mut notes = Notes::default();
    let mut defs = Vec::new();
    let mut seen = BTreeSet::new();
    parse(
        origin,
        text,
        Path::new(origin),
        src,
        0,
        &mut defs,
        &mut seen,
        &mut notes,
    )?;
    finish(origin, &defs, map, notes)
}

fn finish(origin: &str, defs: &[Def], map: &PathMap, mut notes: Notes) -> Result<Imported> {
    notes.check()?;
    if super::vdbench_fs::is_fs(defs) {
        let draft = super::vdbench_fs::translate(origin, defs, map, &mut notes)?;
        return Ok(Imported { draft, notes });
    }
    let draft = super::vdbench_map::translate(origin, defs, map, &mut notes)?;
    notes.check()?;
    Ok(Imported { draft, notes })
}

/// Splits `a=1,b=(x,y),c="z"` at the commas outside parentheses and quotes.
fn split_params(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let (mut depth, mut quoted) = (0i32, false);
    for c in line.chars() {
        match c {
            '"' => quoted = !quoted,
            '(' if !quoted => depth += 1,
            ')' if !quoted => depth -= 1,
            ',' if !quoted && depth <= 0 => {
                out.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    out.push(cur);
    out.into_iter()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// `(a,b)`, `("sd*")`, `a`: the list of items, quotes and parentheses off.
pub(crate) fn items(value: &str) -> Vec<String> {
    let v = value.trim();
    let v = v
        .strip_prefix('(')
        .and_then(|x| x.strip_suffix(')'))
        .unwrap_or(v);
    v.split(',')
        .map(|s| s.trim().trim_matches('"').trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

const KINDS: [&str; 6] = ["hd", "sd", "wd", "rd", "fsd", "fwd"];

#[allow(clippy::too_many_arguments)]
fn parse(
    origin: &str,
    text: &str,
    path: &Path,
    src: &Sources,
    depth: usize,
    defs: &mut Vec<Def>,
    seen: &mut BTreeSet<PathBuf>,
    notes: &mut Notes,
) -> Result<()> {
    seen.insert(path.to_path_buf());
    // vdbench joins a line ending in ',' with the next one.
    let mut joined = false;
    for (n, raw) in crate::input::file::strip_bom(text).lines().enumerate() {
        let at = format!("{origin} line {}", n + 1);
        let line = raw.trim();
        // As vdbench: a line starting `eof` ends the file.
        if line.starts_with("eof") {
            break;
        }
        if line.is_empty() || line.starts_with(['*', '/', '#']) {
            continue;
        }
        let line = first_word(line);
        // vdbench reads parameters as one stream: after the first
        // definition, a line that starts no new definition adds to the last.
        let head_key = line
            .split('=')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        let continues = joined
            || line.starts_with(',')
            || (!defs.is_empty() && !KINDS.contains(&head_key.as_str()) && head_key != "include");
        joined = line.ends_with(',');
        let mut params = split_params(line).into_iter();
        if continues {
            let Some(last) = defs.last_mut() else {
                return Err(VbError::input(format!(
                    "{at}: a continuation line before any definition"
                )));
            };
            for p in params {
                let mut p = param(&p, &at)?;
                p.key = super::vdbench_keys::full(&last.kind, &p.key);
                last.params.push(p);
            }
            continue;
        }
        let Some(first) = params.next() else {
            continue;
        };
        let head = param(&first, &at)?;
        if head.key == "include" {
            if depth >= MAX_INCLUDE_DEPTH {
                return Err(VbError::input(format!(
                    "{at}: include nests deeper than {MAX_INCLUDE_DEPTH} files"
                )));
            }
            let inc = if Path::new(&head.value).is_absolute() {
                PathBuf::from(&head.value)
            } else {
                path.parent().unwrap_or(Path::new(".")).join(&head.value)
            };
            if seen.contains(&inc) {
                notes.exact(
                    &at,
                    &head.text(),
                    "already read: its definitions are used once",
                );
                continue;
            }
            // A file reached under many spellings (a/../a/b) is read once
            // per spelling: the count bounds that fan-out.
            if seen.len() >= super::fio::MAX_INCLUDES {
                return Err(VbError::input(format!(
                    "{at}: more than {} include files read in all",
                    super::fio::MAX_INCLUDES
                )));
            }
            notes.exact(&at, &head.text(), "its definitions read in place");
            let text = (src.read)(&inc).map_err(|e| VbError::input(format!("{at}: {e}")))?;
            parse(
                &inc.display().to_string(),
                &text,
                &inc,
                src,
                depth + 1,
                defs,
                seen,
                notes,
            )?;
            continue;
        }
        if defs.len() >= MAX_DEFS {
            return Err(VbError::input(format!(
                "{at}: more than {MAX_DEFS} definitions"
            )));
        }
        let kind = head.key.clone();
        let mut def = Def {
            kind: if KINDS.contains(&kind.as_str()) {
                kind
            } else {
                "general".into()
            },
            name: head.value.clone(),
            at: at.clone(),
            params: Vec::new(),
        };
        if def.kind == "general" {
            def.params.push(head);
        }
        for p in params {
            let mut p = param(&p, &at)?;
            p.key = super::vdbench_keys::full(&def.kind, &p.key);
            def.params.push(p);
        }
        defs.push(def);
    }
    Ok(())
}

/// The line up to its first blank outside quotes: vdbench reads no further,
/// so what follows is a comment (`sd=sd1,lun=/dev/sdb  * the data disk`).
fn first_word(line: &str) -> &str {
    let mut quoted = false;
    for (i, c) in line.char_indices() {
        match c {
            '"' => quoted = !quoted,
            c if c.is_whitespace() && !quoted => return line.get(..i).unwrap_or(line),
            _ => {}
        }
    }
    line
}

fn param(text: &str, at: &str) -> Result<Param> {
    let (k, v) = text.split_once('=').ok_or_else(|| {
        // Not echoed: the line may come from a file that is not a
        // parameter file at all (`include=/etc/shadow`).
        VbError::input(format!(
            "{at}: not keyword=value (its text is not shown: is this a vdbench parameter file?)"
        ))
    })?;
    Ok(Param {
        key: k.trim().to_ascii_lowercase(),
        value: v.trim().to_string(),
        at: at.to_string(),
    })
}

/// vdbench's wildcards: `*` matches any run of characters.
/// The definitions a parameter names (`wd=(a,b)`, `fwd=fwd*`), or None
/// with its refusal when it names none defined before.
pub(crate) fn named<'a>(
    defs: &'a [Def],
    p: &Param,
    kind: &str,
    notes: &mut Notes,
) -> Option<Vec<&'a Def>> {
    let chosen: Vec<&Def> = defs
        .iter()
        .filter(|d| items(&p.value).iter().any(|x| wildcard(x, &d.name)))
        .collect();
    if chosen.is_empty() {
        notes.refuse(&p.at, &p.text(), format!("names no {kind} defined before"));
        return None;
    }
    Some(chosen)
}

pub(crate) fn wildcard(pattern: &str, name: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == name;
    }
    let mut rest = name;
    for (i, part) in parts.iter().enumerate() {
        if i == 0 {
            match rest.strip_prefix(part) {
                Some(r) => rest = r,
                None => return false,
            }
        } else if i == parts.len() - 1 {
            return rest.ends_with(part);
        } else {
            match rest.find(part) {
                Some(pos) => rest = rest.get(pos + part.len()..).unwrap_or(""),
                None => return false,
            }
        }
    }
    true
}

/// A definition with its kind's `default` entries before it applied.
pub(crate) fn with_defaults(defs: &[Def], idx: usize) -> Def {
    let Some(d) = defs.get(idx) else {
        return Def {
            kind: String::new(),
            name: String::new(),
            at: String::new(),
            params: Vec::new(),
        };
    };
    let mut params: Vec<Param> = defs
        .iter()
        .take(idx)
        .filter(|x| x.kind == d.kind && x.name == "default")
        .flat_map(|x| x.params.iter().cloned())
        .collect();
    params.extend(d.params.iter().cloned());
    Def {
        params,
        ..d.clone()
    }
}

pub(crate) fn seconds(p: &Param) -> std::result::Result<f64, String> {
    parse_duration(&p.value)
        .map(|d| d.as_secs_f64())
        .map_err(|e| e.message)
}

/// forthreads style lists: `(1,2,4)`, `(1-8,1)` steps, `(1-64,d)` doubling.
pub(crate) fn for_list(p: &Param) -> std::result::Result<Vec<String>, String> {
    let it = items(&p.value);
    if let [range, step] = it.as_slice()
        && let Some((a, b)) = range.split_once('-')
    {
        let (a, b) = match (a.trim().parse::<u64>(), b.trim().parse::<u64>()) {
            (Ok(a), Ok(b)) if a >= 1 && a <= b => (a, b),
            _ => return Err(format!("'{range}' is not a range of whole numbers")),
        };
        let mut out = Vec::new();
        let mut v = a;
        while v <= b {
            // Cut short silently, (1-100000,1) was still a 10,000-run suite.
            if out.len() == bounds::MAX_SWEEP_POINTS {
                return Err(format!(
                    "'{range}' expands to more than {} values, the most a sweep takes",
                    bounds::MAX_SWEEP_POINTS
                ));
            }
            out.push(v.to_string());
            v = if step == "d" {
                v.saturating_mul(2)
            } else {
                match step.parse::<u64>() {
                    Ok(s) if s >= 1 => v.saturating_add(s),
                    _ => return Err(format!("'{step}' is not a step (a number or d)")),
                }
            };
        }
        return Ok(out);
    }
    if it.is_empty() || it.len() > bounds::MAX_SWEEP_POINTS {
        return Err(format!("1..{} values", bounds::MAX_SWEEP_POINTS));
    }
    Ok(it)
}

/// xfersize: `64k`, or `(4k,30,64k,70)` size/percent pairs.
pub(crate) fn xfersize(v: &str) -> std::result::Result<Vec<(u64, u32)>, String> {
    let it = items(v);
    let size = |s: &str| -> std::result::Result<u64, String> {
        let b = parse_size(s).map_err(|e| e.message)?;
        if b == 0 || b > bounds::MAX_BS {
            return Err(format!("{s} is outside 1..1g"));
        }
        Ok(b)
    };
    match it.as_slice() {
        [one] => Ok(vec![(size(one)?, 1)]),
        pairs if pairs.len() % 2 == 0 && pairs.len() <= 2 * bounds::MAX_BS_MIX => {
            let mut out = Vec::new();
            let mut total = 0u64;
            for pair in pairs.chunks(2) {
                if let [s, p] = pair {
                    let pct = p
                        .parse::<u64>()
                        .ok()
                        .filter(|p| *p <= 100)
                        .ok_or_else(|| format!("'{p}' is not a percentage"))?;
                    total += pct;
                    if pct > 0 {
                        out.push((size(s)?, pct as u32));
                    }
                }
            }
            if total != 100 {
                return Err(format!("the percentages add up to {total}, not 100"));
            }
            Ok(out)
        }
        _ => Err("a (min,max,align) range is not supported yet".into()),
    }
}
