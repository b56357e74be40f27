//! `volbench store import`: results made before the store, brought in. A
//! result directory (or its result.json) is stored as it is, its text
//! unchanged; fio's JSON output becomes a result first (`fio.rs`). A
//! directory holding neither is read one level down, so a folder of dated
//! result directories imports in one command. The same result imported
//! twice is stored once (its text's digest).

pub(crate) mod fio;

use std::path::{Path, PathBuf};

use super::rows::Origin;
use super::{Put, Store};
use crate::error::{Result, VbError};
use crate::output::source::MAX_RESULT_BYTES;
use crate::result::ResultDoc;

/// One file imported, or why not, and the seconds its reading (parse and
/// check) and its storing took.
pub(crate) struct Outcome {
    pub(crate) path: PathBuf,
    pub(crate) what: Result<(Put, &'static str)>,
    pub(crate) read_s: f64,
    pub(crate) store_s: f64,
}

/// The result files `paths` name: each file, each directory's result.json,
/// or, for a directory with none, its entries' (sorted by name).
pub(crate) fn files(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for p in paths {
        let m =
            std::fs::metadata(p).map_err(|e| VbError::input(format!("{}: {e}", p.display())))?;
        if !m.is_dir() {
            out.push(p.clone());
            continue;
        }
        let own = p.join("result.json");
        if own.is_file() {
            out.push(own);
            continue;
        }
        let mut found: Vec<PathBuf> = std::fs::read_dir(p)
            .map_err(|e| VbError::input(format!("{}: {e}", p.display())))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter_map(|e| {
                if e.join("result.json").is_file() {
                    Some(e.join("result.json"))
                } else if e.extension().is_some_and(|x| x == "json") && e.is_file() {
                    Some(e)
                } else {
                    None
                }
            })
            .collect();
        if found.is_empty() {
            return Err(VbError::input(format!(
                "{}: no result.json there, nor in the directories in it, and no fio JSON file",
                p.display()
            )));
        }
        found.sort();
        out.extend(found);
    }
    Ok(out)
}

/// Imports each file, each in its own transaction: one that fails is said
/// and the others still go in.
pub(crate) fn import(store: &mut Store, files: &[PathBuf]) -> Vec<Outcome> {
    files.iter().map(|p| one(store, p)).collect()
}

fn one(store: &mut Store, p: &Path) -> Outcome {
    let t = std::time::Instant::now();
    let read = read(p);
    let read_s = t.elapsed().as_secs_f64();
    let t = std::time::Instant::now();
    let what = read.and_then(|(doc, json, source)| {
        let origin = Origin {
            source,
            path: p.display().to_string(),
        };
        store.put(&doc, &json, &origin).map(|put| (put, source))
    });
    Outcome {
        path: p.to_path_buf(),
        what,
        read_s,
        store_s: t.elapsed().as_secs_f64(),
    }
}

/// A result file or fio's JSON output, as a checked result and the text
/// to keep.
pub(crate) fn read(p: &Path) -> Result<(ResultDoc, String, &'static str)> {
    let shown = p.display().to_string();
    let text = crate::input::file::read_text(p, "result file", MAX_RESULT_BYTES)?;
    // fio prints notes before its JSON when it writes to stdout.
    let body = text.find('{').map_or(text.as_str(), |i| &text[i..]);
    let v: serde_json::Value = serde_json::from_str(body)
        .map_err(|e| VbError::input(format!("{shown}: not a volbench result nor fio JSON: {e}")))?;
    if v.get("schema").is_some() {
        let doc = crate::result::check::parse_result(text.as_bytes())
            .map_err(|e| VbError::input(format!("{shown} is not a volbench result: {e}")))?;
        return Ok((doc, text, "import"));
    }
    if !fio::is_fio(&v) {
        return Err(VbError::input(format!(
            "{shown}: neither a volbench result (no schema) nor fio's JSON output (no \
             \"fio version\" and jobs)"
        )));
    }
    if body.len() as u64 > crate::units::bounds::MAX_FIO_JSON {
        return Err(VbError::input(format!(
            "{shown}: fio JSON of {} bytes, past the bound of {}",
            body.len(),
            crate::units::bounds::MAX_FIO_JSON
        )));
    }
    let doc = fio::to_result(&v, &shown)?;
    let json = crate::output::to_json(&doc)?;
    // What the store keeps must read back as any result does.
    let doc = crate::result::check::parse_result(json.as_bytes()).map_err(|e| {
        VbError::input(format!(
            "{shown}: fio's figures do not make a consistent result: {e}"
        ))
    })?;
    Ok((doc, json, "fio"))
}
