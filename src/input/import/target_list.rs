//! Several targets of one imported job (diskspd's ten files, fio's
//! `filename=a:b`) as one volbench target list: `--target '{a,b}'`, each
//! target run with its own threads and, for files the tool would create,
//! its own file set of the same size.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use super::{How, Mapping, Notes};
use crate::error::Result;
use crate::units::format_size;

/// How a run's threads are counted over the targets of a list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Threads {
    /// Each target gets `threads` of its own (diskspd -t, vdbench's threads per sd).
    Each,
    /// `threads` in all, spread evenly (diskspd -F): `--threads-total`.
    Total,
}

/// The brace list naming `paths`, the size of each target and its file
/// count; `create` is the size of the files the tool would create (None:
/// existing files or devices, used whole).
pub(super) fn list(
    paths: &[String],
    create: Option<u64>,
    threads: u64,
    m: &mut Vec<Mapping>,
    notes: &mut Notes,
) -> Result<(String, Option<u64>, u64)> {
    list_with(paths, create, threads, Threads::Each, m, notes)
}

/// `list`, with the threads counted as `how` says.
pub(super) fn list_with(
    paths: &[String],
    create: Option<u64>,
    threads: u64,
    how_threads: Threads,
    m: &mut Vec<Mapping>,
    notes: &mut Notes,
) -> Result<(String, Option<u64>, u64)> {
    let n = paths.len() as u64;
    let distinct: std::collections::BTreeSet<&String> = paths.iter().collect();
    if distinct.len() < paths.len() {
        notes.refuse(
            "targets",
            &paths.join(" "),
            "a target named twice; each target is run once",
        );
    }
    if how_threads == Threads::Total && threads < n {
        notes.refuse(
            "targets",
            &paths.join(" "),
            format!(
                "{threads} threads in all over {n} targets leaves a target without a thread \
                 (volbench gives each target threads of its own); give at least {n}"
            ),
        );
    }
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
    let threads = match how_threads {
        Threads::Each => format!("{threads} threads each"),
        Threads::Total => {
            format!(
                "{threads} threads in all, spread evenly over them (the suite's threads_total = true, as --threads-total)"
            )
        }
    };
    let how = match create {
        Some(c) => How::Note(format!(
            "{} targets run together, {threads}; volbench writes only files it \
             creates, so each path is a directory holding its own {} file volbench.0.dat",
            paths.len(),
            format_size(c)
        )),
        None => How::Exact(format!(
            "{} targets run together, {threads}; each existing file or device \
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

/// Refuses each path that is not an existing regular file or block device:
/// without its create switch a tool opens what is there, and volbench would
/// otherwise make a directory of that name for a file set of its own.
pub(super) fn must_exist(paths: &[(String, String)], why: &str, notes: &mut Notes) {
    for (at, p) in paths {
        match std::fs::metadata(p) {
            Ok(md) if md.is_file() || super::is_block_device(&md) => {}
            Ok(_) => notes.refuse(at, p, "not a regular file or block device"),
            Err(e) => notes.refuse(at, p, format!("cannot use it ({e}); {why}")),
        }
    }
}
