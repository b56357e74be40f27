//! The results a view is made of: a result.json read back (untrusted,
//! capped, checked whole) or the one a run just made, each with the short
//! label that names it in tables and legends.

use std::path::{Path, PathBuf};

use crate::error::{Result, VbError};
use crate::result::ResultDoc;

/// One loaded result and the short label that names it in tables and legends.
#[derive(Debug, Clone)]
pub struct Source {
    pub label: String,
    pub path: PathBuf,
    pub doc: ResultDoc,
}

/// Loads each path (a result directory or a result.json) and labels it by
/// its directory name, falling back to the whole path where names repeat.
pub fn load(paths: &[PathBuf]) -> Result<Vec<Source>> {
    let mut out = Vec::new();
    for p in paths {
        let doc = read_result(p)?;
        out.push(Source {
            label: String::new(),
            path: p.clone(),
            doc,
        });
    }
    label_sources(&mut out);
    Ok(out)
}

fn short_name(p: &Path) -> String {
    let dir = if p.file_name().is_some_and(|n| n == "result.json") {
        p.parent().unwrap_or(p)
    } else {
        p
    };
    dir.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| dir.display().to_string())
}

pub fn label_sources(sources: &mut [Source]) {
    let names: Vec<String> = sources.iter().map(|s| short_name(&s.path)).collect();
    for (i, s) in sources.iter_mut().enumerate() {
        let dup = names.iter().filter(|n| **n == names[i]).count() > 1;
        s.label = if dup || names[i].is_empty() {
            s.path.display().to_string()
        } else {
            names[i].clone()
        };
    }
}

/// The one source of a report written beside its own result (`--output`).
pub fn own_source(doc: &ResultDoc, dir: &Path) -> [Source; 1] {
    let mut sources = [Source {
        label: String::new(),
        path: dir.to_path_buf(),
        doc: doc.clone(),
    }];
    label_sources(&mut sources);
    sources
}

/// Largest result file read: a long run with full histograms and the
/// bounded interval series is a few MiB; this leaves room for big sweeps.
pub const MAX_RESULT_BYTES: u64 = 256 << 20;

/// Reads a result.json (or a directory holding one) for `report` and
/// `compare`: an untrusted file, so it is read with a size cap (a device
/// such as /dev/zero is refused, not read forever) and checked whole
/// (`result::check`) before any view of it is made; every string in it is
/// cleaned of control characters.
pub fn read_result(path: &Path) -> Result<ResultDoc> {
    let file = if path.is_dir() {
        path.join("result.json")
    } else {
        path.to_path_buf()
    };
    let text = crate::input::file::read_text(&file, "result file", MAX_RESULT_BYTES)?;
    crate::result::check::parse_result_owned(text.into_bytes())
        .map_err(|e| VbError::input(format!("{} is not a volbench result: {e}", file.display())))
}
