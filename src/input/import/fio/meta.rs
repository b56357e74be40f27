//! fio's file engines (`filecreate`, `filestat`, `filedelete`) as volbench's
//! metadata runs: a job's `nrfiles` files, `numjobs` times, become one flat
//! tree in the job's directory, and each stonewall group a phase over it.
//! fio's own `*-ioengine.fio` examples are the shape this follows: one
//! `[global]` with the engine and many identical jobs run at once.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::collections::BTreeMap;

use super::super::table::{self, verdict};
use super::super::{How, Imported, Mapping, Notes, PathMap, dedup, file_name, run_name, size_text};
use super::engines::{ENGINE_OPTIONS, EngineRead, fio_engine, op_of};
use super::parse::{Opt, Section, Sources};
use crate::error::{Result, VbError};
use crate::input::suite::write::value;
use crate::input::suite::{RunEntry, SuiteFile};
use crate::spec::TableKind;

use crate::spec::meta::{MAX_FILE_SIZE, MAX_FILES as MAX_TREE_FILES};

/// The volbench operation a fio file engine does, or None for other engines.
pub(super) fn engine_op(o: &BTreeMap<String, Opt>) -> Option<&'static str> {
    op_of(o.get("ioengine")?.val())
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

/// Reads one job whose `ioengine` is a file engine through its rows
/// (`engines.rs`); refusals go to `notes`.
pub(super) fn job(
    s: &Section,
    o: &BTreeMap<String, Opt>,
    map: &PathMap,
    src: &Sources,
    notes: &mut Notes,
) -> Option<MetaJob> {
    let before = notes.refused.len();
    let op = engine_op(o)?;
    let mut r = EngineRead {
        op,
        numjobs: 1,
        nrfiles: 1,
        ..EngineRead::default()
    };
    for opt in o.values() {
        if let Some(row) = table::find(ENGINE_OPTIONS, &opt.key) {
            table::apply(row, opt, &mut r, notes);
        } else if let Some(v) = super::options::note_only(opt) {
            // An option that changes nothing volbench runs, here either.
            verdict(v, opt, &mut r, notes);
        } else if super::options::find(&opt.key).is_some() {
            notes.unsupported(
                &opt.at,
                &opt.text(),
                &format!("with ioengine={}", fio_engine(op)),
            );
        } else {
            table::unknown(opt, notes, "fio option");
        }
    }
    let dir = match r.dir.take() {
        None => src.cwd.display().to_string(),
        Some((opt, at)) => {
            let raw = opt.val().trim();
            let full = if raw.starts_with('/') || raw.contains('\\') || raw.contains(':') {
                raw.to_string()
            } else {
                format!(
                    "{}/{raw}",
                    src.cwd.display().to_string().trim_end_matches('/')
                )
            };
            match map.resolve(&full) {
                Ok((p, _)) => {
                    let how = "the tree's target directory: volbench's names (f0, f1...) instead \
                               of fio's jobname.N.M";
                    r.said.insert(at.min(r.said.len()), opt.mapping(how, false));
                    p
                }
                Err(e) => {
                    opt.refuse(notes, e);
                    String::new()
                }
            }
        }
    };
    // fio's filecreate only opens and closes (its files stay empty); for
    // filestat and filedelete the files are laid out at filesize first.
    let per_file = r.filesize.or(r.size.map(|s| s / r.nrfiles)).unwrap_or(0);
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
        stonewall: r.stonewall,
        op,
        numjobs: r.numjobs,
        nrfiles: r.nrfiles,
        file_size,
        dir,
        runtime: r.runtime,
        notes: r.said,
    })
}

/// One phase over the tree.
struct Phase {
    name: String,
    op: &'static str,
    threads: u64,
    /// A cap on the phase (fio's runtime without time_based).
    duration_s: Option<f64>,
    notes: Vec<Mapping>,
}

/// The jobs' groups as runs over one tree.
pub(super) fn translate(origin: &str, jobs: Vec<MetaJob>, notes: &mut Notes) -> Result<Imported> {
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
            ("stat" | "delete", false) => runs.push(Phase {
                name: format!("{name}-layout"),
                op: "create",
                threads,
                duration_s: None,
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
        runs.push(Phase {
            name,
            op: first.op,
            threads,
            duration_s: first.runtime,
            notes: dedup(run_notes),
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
            .any(|r| r.op == "create" && !r.name.ends_with("-layout"))
    {
        global.push(Mapping {
            at: head.at.clone(),
            option: "ioengine=filecreate".into(),
            how: How::Note(
                "fio's filecreate leaves its files empty; volbench's create writes the tree's file_size (that of the filestat/filedelete jobs)".into(),
            ),
        });
    }
    let suite = SuiteFile::new(
        &file_name(origin, "fio"),
        &format!("fio job file {origin}"),
        TableKind::Ops,
        // A discarded copy of a phase would leave the tree changed for the real one.
        false,
    );
    // The tree every phase works on: one flat directory.
    let mut tree = RunEntry::named("");
    tree.depth = value(0u64);
    tree.width = value(1u64);
    tree.files_per_dir = value(files);
    tree.file_size = value(size_text(file_size.unwrap_or(0)));
    if shared {
        tree.shared_dirs = value(true);
    }
    let mut imp = Imported::new(suite, head.dir.clone());
    imp.said = global;
    for p in runs {
        let mut run = tree.clone();
        run.set_name(&p.name);
        run.ops = value(p.op);
        run.threads = value(p.threads);
        run.duration = p.duration_s.map(super::super::secs_text).and_then(value);
        imp.push_run(run, p.notes);
    }
    Ok(imp)
}
