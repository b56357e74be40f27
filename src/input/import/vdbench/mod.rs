//! vdbench parameter files: general parameters, `hd=` hosts, `sd=`
//! storage, `wd=` workloads and `rd=` runs, each kind with its `default`
//! entry, `include=` followed. Every `rd` becomes one run per point of its
//! for-loops; the luns become each host's targets.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

pub(crate) mod cli;
mod data;
mod defs;
mod fill;
mod flags;
mod fs;
mod fsd;
pub(crate) mod keys;
mod map;
mod parse;
mod place;
mod rd;
mod skew;
mod wd;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::{Imported, Notes, PathMap};
use crate::error::{Result, VbError};
use parse::{Def, Opt};

/// Include files nest at most this deep.
pub(crate) use crate::units::bounds::MAX_INCLUDE_DEPTH;
/// Definitions of all kinds, over all files.
pub(crate) const MAX_DEFS: usize = 100_000;

pub struct Sources<'a> {
    pub read: &'a dyn Fn(&Path) -> Result<String>,
}

/// Imports one or more parameter files, read as one (as vdbench reads
/// several `-f` files); a file included twice is read once.
pub(crate) fn import_files(paths: &[PathBuf], map: &PathMap, src: &Sources) -> Result<Imported> {
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

/// The parameters as text: text in, the suite or the reason out
/// (`include=` read through `src`).
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
    let imp = if fs::is_fs(defs) {
        fs::translate(origin, defs, map, &mut notes)?
    } else {
        map::translate(origin, defs, map, &mut notes)?
    };
    notes.check()?;
    Ok(imp.read_first(notes))
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
                last.params.push(param(&p, &at, &last.kind)?);
            }
            continue;
        }
        let Some(first) = params.next() else {
            continue;
        };
        let head = param(&first, &at, "general")?;
        if head.key == "include" {
            if depth >= MAX_INCLUDE_DEPTH {
                return Err(VbError::input(format!(
                    "{at}: include nests deeper than {MAX_INCLUDE_DEPTH} files"
                )));
            }
            let inc = if Path::new(head.val()).is_absolute() {
                PathBuf::from(head.val())
            } else {
                path.parent().unwrap_or(Path::new(".")).join(head.val())
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
            name: head.val().to_string(),
            at: at.clone(),
            params: Vec::new(),
        };
        if def.kind == "general" {
            def.params.push(head);
        }
        for p in params {
            def.params.push(param(&p, &at, &def.kind)?);
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

/// One `key=value` of a definition of `kind`, its key widened to the full
/// keyword vdbench reads it as.
fn param(text: &str, at: &str, kind: &str) -> Result<Opt> {
    let (k, v) = text.split_once('=').ok_or_else(|| {
        // Not echoed: the line may come from a file that is not a
        // parameter file at all (`include=/etc/shadow`).
        VbError::input(format!(
            "{at}: not keyword=value (its text is not shown: is this a vdbench parameter file?)"
        ))
    })?;
    let key = keys::full(kind, &k.trim().to_ascii_lowercase());
    Ok(Opt::new(at, &key, Some(v.trim())))
}
