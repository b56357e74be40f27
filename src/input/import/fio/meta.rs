//! fio's file engines (`filecreate`, `filestat`, `filedelete`) as volbench's
//! metadata runs: a job's `nrfiles` files, `numjobs` times, become one flat
//! tree in the job's directory, and each stonewall group a phase over it.
//! fio's own `*-ioengine.fio` examples are the shape this follows: one
//! `[global]` with the engine and many identical jobs run at once.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::collections::BTreeMap;

use super::super::{
    Draft, DraftTree, DraftTreeRun, How, Mapping, Notes, PathMap, run_name, size_text,
};
use super::parse::{Opt, Section, Sources, bool_opt};
use crate::error::{Result, VbError};
use crate::units::{bounds, parse_duration, parse_size};

use crate::spec::meta::{MAX_FILE_SIZE, MAX_FILES as MAX_TREE_FILES};

/// The volbench operation a fio file engine does, or None for other engines.
pub(super) fn engine_op(o: &BTreeMap<String, Opt>) -> Option<&'static str> {
    match o.get("ioengine")?.val().trim() {
        "filecreate" => Some("create"),
        "filestat" => Some("stat"),
        "filedelete" => Some("delete"),
        _ => None,
    }
}

/// One fio job with a file engine.
#[derive(Debug, Clone)]
pub(super) struct MetaJob {
    name: String,
    at: String,
    stonewall: bool,
    op: &'static str,
    numjobs: u64,
    nrfiles: u64,
    file_size: u64,
    dir: String,
    runtime: Option<f64>,
    notes: Vec<Mapping>,
}

fn mapping(o: &Opt, how: impl Into<String>, exact: bool) -> Mapping {
    let how = how.into();
    Mapping {
        at: o.at.clone(),
        option: o.text(),
        how: if exact {
            How::Exact(how)
        } else {
            How::Note(how)
        },
    }
}

/// Reads one job whose `ioengine` is a file engine; refusals go to `notes`.
pub(super) fn job(
    s: &Section,
    o: &BTreeMap<String, Opt>,
    map: &PathMap,
    src: &Sources,
    notes: &mut Notes,
) -> Option<MetaJob> {
    let before = notes.refused.len();
    let op = engine_op(o)?;
    let mut m: Vec<Mapping> = Vec::new();
    let mut numjobs = 1u64;
    let mut nrfiles = 1u64;
    let mut filesize: Option<u64> = None;
    let mut size: Option<u64> = None;
    let mut runtime = None;
    let mut stonewall = false;
    let mut dir: Option<String> = None;
    for opt in o.values() {
        let (key, v, at, text) = (opt.key.as_str(), opt.val(), opt.at.as_str(), opt.text());
        let bad = |notes: &mut Notes, why: &str| notes.refuse(at, &text, why.to_string());
        match key {
            "ioengine" => m.push(mapping(
                opt,
                format!("ops = \"{op}\": volbench's {op} phase over the job's files"),
                true,
            )),
            "numjobs" => match v.trim().parse::<u64>() {
                Ok(n) if (1..=bounds::MAX_THREADS).contains(&n) => {
                    numjobs = n;
                    m.push(mapping(opt, "threads, each with its own nrfiles files", true));
                }
                _ => bad(notes, &format!("must be 1..{}", bounds::MAX_THREADS)),
            },
            "nrfiles" => match v.trim().parse::<u64>() {
                Ok(n) if (1..=MAX_TREE_FILES).contains(&n) => {
                    nrfiles = n;
                    m.push(mapping(opt, "files_per_dir = nrfiles x numjobs", true));
                }
                _ => bad(notes, &format!("must be 1..{MAX_TREE_FILES}")),
            },
            "filesize" | "size" => match parse_size(v.trim()) {
                Ok(b) => {
                    m.push(if op == "create" {
                        mapping(opt, "file_size = 0: fio's filecreate only opens and closes, its files stay empty", true)
                    } else {
                        mapping(opt, "file_size (fio lays the files out at this size first)", true)
                    });
                    if key == "filesize" {
                        filesize = Some(b);
                    } else {
                        size = Some(b);
                    }
                }
                Err(e) => bad(notes, &e.message),
            },
            "directory" => {
                let raw = v.trim();
                let full = if raw.starts_with('/') || raw.contains('\\') || raw.contains(':') {
                    raw.to_string()
                } else {
                    format!("{}/{raw}", src.cwd.display().to_string().trim_end_matches('/'))
                };
                match map.resolve(&full) {
                    Ok((p, _)) => {
                        dir = Some(p);
                        m.push(mapping(
                            opt,
                            "the tree's target directory: volbench's names (f0, f1...) instead of fio's jobname.N.M",
                            false,
                        ));
                    }
                    Err(e) => bad(notes, &e),
                }
            }
            "stat_type" => match (op, v.trim()) {
                ("stat", "stat" | "lstat") => m.push(mapping(
                    opt,
                    "volbench's stat (fstatat without following links: the same on its regular files)",
                    true,
                )),
                ("stat", "statx") => m.push(mapping(
                    opt,
                    "volbench's stat is fstatat, not statx: the same lookup and attributes",
                    false,
                )),
                ("stat", _) => bad(notes, "must be stat, lstat or statx"),
                _ => m.push(mapping(opt, "only filestat reads it (as in fio)", true)),
            },
            "stonewall" | "wait_for_previous" => {
                stonewall = true;
                m.push(mapping(opt, "a new run after the ones before", true));
            }
            "runtime" => match parse_duration(v.trim()) {
                Ok(d) => {
                    runtime = Some(d.as_secs_f64());
                    m.push(mapping(
                        opt,
                        "duration: a cap on the phase (it ends once every file is done, as fio's job)",
                        true,
                    ));
                }
                Err(e) => bad(notes, &e.message),
            },
            "time_based" if bool_opt(opt) == Some(false) => {
                m.push(mapping(opt, "each phase covers the files once", true));
            }
            "time_based" => bad(
                notes,
                "not supported with a file engine (volbench's phase covers the files once; a timed mix is `ops = \"stat:N,...\"`)",
            ),
            "filename" | "filename_format" => bad(
                notes,
                "not supported with a file engine (volbench names the tree's files itself: give directory=)",
            ),
            "bs" | "rw" | "readwrite" | "iodepth" | "direct" | "buffered" | "create_on_open"
            | "openfiles" | "fallocate" | "unlink" | "allow_file_create" | "overwrite"
            | "invalidate" | "file_service_type" | "create_serialize" => m.push(mapping(
                opt,
                "no effect here: fio's file engines do no I/O and open each file once",
                true,
            )),
            "name" | "description" => m.push(mapping(opt, "the run's name", true)),
            _ => match super::options::note_only(opt) {
                Some((how, exact)) => m.push(mapping(opt, how, exact)),
                _ => notes.unsupported(at, &text, &format!("with ioengine={}", fio_engine(op))),
            },
        }
    }
    // fio's filecreate only opens and closes (its files stay empty); for
    // filestat and filedelete the files are laid out at filesize first.
    let per_file = filesize.or(size.map(|s| s / nrfiles)).unwrap_or(0);
    let file_size = if op == "create" { 0 } else { per_file };
    if file_size > MAX_FILE_SIZE {
        notes.refuse(
            &s.at,
            &format!("[{}] filesize", s.name),
            format!(
                "{} per file; volbench's tree files are at most {}",
                size_text(file_size),
                size_text(MAX_FILE_SIZE)
            ),
        );
    }
    if notes.refused.len() > before {
        return None;
    }
    let name = o
        .get("name")
        .map(|n| n.val().to_string())
        .unwrap_or_else(|| s.name.clone());
    Some(MetaJob {
        name,
        at: s.at.clone(),
        stonewall,
        op,
        numjobs,
        nrfiles,
        file_size,
        dir: dir.unwrap_or_else(|| src.cwd.display().to_string()),
        runtime,
        notes: m,
    })
}

fn fio_engine(op: &str) -> &'static str {
    match op {
        "create" => "filecreate",
        "stat" => "filestat",
        _ => "filedelete",
    }
}

/// The jobs' groups as runs over one tree.
pub(super) fn translate(origin: &str, jobs: Vec<MetaJob>, notes: &mut Notes) -> Result<Draft> {
    let mut groups: Vec<Vec<MetaJob>> = Vec::new();
    for j in jobs {
        match groups.last_mut() {
            Some(g) if !j.stonewall => g.push(j),
            _ => groups.push(vec![j]),
        }
    }
    let Some(head) = groups.first().and_then(|g| g.first()).cloned() else {
        return Err(VbError::input(format!("{origin}: no job sections")));
    };
    let mut tree_files = None;
    let mut file_size: Option<u64> = None;
    let mut runs = Vec::new();
    // Whether the files exist before each group: fio lays out filestat's
    // and filedelete's files untimed; volbench makes them with a create phase.
    let mut exist = false;
    for g in &groups {
        let Some(first) = g.first() else { continue };
        let mut threads = 0u64;
        let mut files = 0u64;
        let mut run_notes = Vec::new();
        for j in g {
            if j.op != first.op || j.dir != head.dir {
                notes.refuse(
                    &j.at,
                    &format!("[{}]", j.name),
                    format!(
                        "runs at the same time as [{}] ({}) with another engine or directory; \
                         volbench runs one operation over one tree at a time: put stonewall in [{}]",
                        first.name, first.at, j.name
                    ),
                );
                continue;
            }
            threads = threads.saturating_add(j.numjobs);
            files = files.saturating_add(j.nrfiles.saturating_mul(j.numjobs));
            run_notes.extend(j.notes.iter().cloned());
            if j.name != first.name {
                run_notes.push(Mapping {
                    at: j.at.clone(),
                    option: format!("[{}]", j.name),
                    how: How::Exact(format!(
                        "runs with [{}] in one group: its threads and files join this run",
                        first.name
                    )),
                });
            }
        }
        if files > MAX_TREE_FILES {
            notes.refuse(
                &first.at,
                &format!("[{}] nrfiles", first.name),
                format!("{files} files in all (nrfiles x numjobs); volbench's tree holds at most {MAX_TREE_FILES}"),
            );
        }
        match tree_files {
            None => tree_files = Some(files),
            Some(t) if t != files => notes.refuse(
                &first.at,
                &format!("[{}]", first.name),
                format!(
                    "its group works on {files} files, the first on {t}; volbench's runs share one tree (import them apart)"
                ),
            ),
            Some(_) => {}
        }
        if first.op != "create" {
            match file_size {
                Some(s) if s != first.file_size => notes.refuse(
                    &first.at,
                    &format!("[{}] filesize", first.name),
                    "differs from an earlier group's; volbench's runs share one tree (import them apart)",
                ),
                _ => file_size = Some(first.file_size),
            }
        }
        let name = run_name(&first.name);
        match (first.op, exist) {
            ("create", true) => notes.refuse(
                &first.at,
                &format!("[{}] ioengine=filecreate", first.name),
                "its files exist from an earlier group; volbench's create makes new files only (import it apart)",
            ),
            ("stat" | "delete", false) => runs.push(DraftTreeRun {
                name: format!("{name}-layout"),
                ops: "create".into(),
                threads,
                duration_s: None,
                warmup_s: None,
                rate: None,
                notes: vec![Mapping {
                    at: first.at.clone(),
                    option: format!("ioengine={}", fio_engine(first.op)),
                    how: How::Note(
                        "fio lays the files out untimed before the job; volbench creates them in a phase of its own first, reported apart".into(),
                    ),
                }],
            }),
            _ => {}
        }
        exist = first.op != "delete";
        runs.push(DraftTreeRun {
            name,
            ops: first.op.into(),
            threads,
            duration_s: first.runtime,
            warmup_s: None,
            rate: None,
            notes: super::super::dedup(run_notes),
        });
    }
    notes.check()?;
    let files = tree_files.unwrap_or(1);
    let shared = runs.iter().any(|r| r.threads > 1);
    let mut global = Vec::new();
    if shared {
        global.push(Mapping {
            at: head.at.clone(),
            option: format!("[{}] (jobs in one directory)", head.name),
            how: How::Exact(
                "one flat directory (depth = 0) with shared_dirs: the threads work in it at once, each on its own files, as fio's jobs".into(),
            ),
        });
    }
    if file_size.is_some()
        && runs
            .iter()
            .any(|r| r.ops == "create" && !r.name.ends_with("-layout"))
    {
        global.push(Mapping {
            at: head.at.clone(),
            option: "ioengine=filecreate".into(),
            how: How::Note(
                "fio's filecreate leaves its files empty; volbench's create writes the tree's file_size (that of the filestat/filedelete jobs)".into(),
            ),
        });
    }
    Ok(Draft {
        name: run_name(
            std::path::Path::new(origin)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "fio".into())
                .as_str(),
        ),
        source: format!("fio job file {origin}"),
        target: head.dir.clone(),
        global,
        tree: Some(DraftTree {
            depth: 0,
            width: 1,
            files_per_dir: files,
            file_size: size_text(file_size.unwrap_or(0)),
            shared_dirs: shared,
            runs,
        }),
        ..Draft::default()
    })
}
