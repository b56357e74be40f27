//! Several targets of one imported job (diskspd's ten files, fio's
//! `filename=a:b`) as one volbench target list: `--target '{a,b}'`, each
//! target run with its own threads and, for files the tool would create,
//! its own file set of the same size.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use super::{How, Mapping, Notes};
use crate::error::Result;
use crate::units::format_size;

/// The brace list naming `paths`, the size of each target and its file
/// count; `create` is the size of the files the tool would create (None:
/// existing files or devices, used whole).
pub fn list(
    paths: &[String],
    create: Option<u64>,
    threads: u64,
    m: &mut Vec<Mapping>,
    notes: &mut Notes,
) -> Result<(String, Option<u64>, u64)> {
    for p in paths {
        // The list is written as one brace template; these would split it.
        if p.contains([',', '{', '}']) {
            notes.refuse(
                "targets",
                p,
                "a path with ',', '{' or '}' cannot go in a list of targets",
            );
        }
    }
    notes.check()?;
    let template = format!("{{{}}}", paths.join(","));
    let how = match create {
        Some(c) => How::Note(format!(
            "{} targets run together, {threads} threads each; volbench writes only files it \
             creates, so each path is a directory holding its own {} file volbench.0.dat",
            paths.len(),
            format_size(c)
        )),
        None => How::Exact(format!(
            "{} targets run together, {threads} threads each; each existing file or device \
             whole (writing needs --allow-overwrite)",
            paths.len()
        )),
    };
    m.push(Mapping {
        at: "targets".into(),
        option: paths.join(" "),
        how,
    });
    Ok((template, create, 1))
}
