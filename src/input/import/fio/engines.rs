//! The options of a job with one of fio's file engines (`filecreate`,
//! `filestat`, `filedelete`), one row each: these jobs do no block I/O, so
//! their options mean other things than `options.rs`'s (`nrfiles` is the
//! tree's files, `runtime` a cap on a phase). An option no row here names
//! takes its verdict from `options.rs` when it changes nothing volbench
//! runs, and is refused by name otherwise (`meta.rs`).
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use super::super::table::{Row, Rule, Said, Verdict, alias, row};
use super::super::{Mapping, Notes};
use super::parse::{Opt, bool_opt};
use crate::spec::meta::MAX_FILES as MAX_TREE_FILES;
use crate::units::{bounds, parse_duration, parse_size};

use Rule::{Always, Map};
use Verdict::{Exact, Refuse};

/// One file-engine job's options as its rows read them.
#[derive(Debug, Default)]
pub(crate) struct EngineRead {
    pub(super) said: Vec<Mapping>,
    /// The volbench operation of the job's engine (`create`, `stat`, `delete`).
    pub(super) op: &'static str,
    pub(super) numjobs: u64,
    pub(super) nrfiles: u64,
    pub(super) filesize: Option<u64>,
    pub(super) size: Option<u64>,
    pub(super) runtime: Option<f64>,
    pub(super) stonewall: bool,
    /// `directory=`, resolved once every option is read, and where its
    /// mapping goes among the others.
    pub(super) dir: Option<(Opt, usize)>,
}

impl Said for EngineRead {
    fn said(&mut self) -> &mut Vec<Mapping> {
        &mut self.said
    }
}

const NO_IO: &str = "no effect here: fio's file engines do no I/O and open each file once";
const NAMES: &str = "with a file engine: volbench names the tree's files itself (give directory=)";

pub(crate) const ENGINE_OPTIONS: &[Row<EngineRead>] = &[
    row("ioengine", Map(ioengine)),
    row("numjobs", Map(numjobs)),
    alias("nrfiles", &["nr_files"], Map(nrfiles)),
    row("filesize", Map(filesize)),
    row("size", Map(size)),
    row("directory", Map(directory)),
    row("stat_type", Map(stat_type)),
    alias("stonewall", &["wait_for_previous"], Map(stonewall)),
    alias("runtime", &["timeout"], Map(runtime)),
    row("time_based", Map(time_based)),
    row("filename", Always(Refuse(NAMES))),
    row("filename_format", Always(Refuse(NAMES))),
    row("name", Always(Exact("the run's name"))),
    row("description", Always(Exact("kept here only"))),
    alias("bs", &["blocksize"], Always(Exact(NO_IO))),
    alias("rw", &["readwrite"], Always(Exact(NO_IO))),
    row("iodepth", Always(Exact(NO_IO))),
    row("direct", Always(Exact(NO_IO))),
    row("buffered", Always(Exact(NO_IO))),
    row("create_on_open", Always(Exact(NO_IO))),
    row("openfiles", Always(Exact(NO_IO))),
    row("fallocate", Always(Exact(NO_IO))),
    row("unlink", Always(Exact(NO_IO))),
    row("allow_file_create", Always(Exact(NO_IO))),
    row("overwrite", Always(Exact(NO_IO))),
    row("invalidate", Always(Exact(NO_IO))),
    row("file_service_type", Always(Exact(NO_IO))),
    row("create_serialize", Always(Exact(NO_IO))),
];

/// The volbench operation of a fio file engine, or None for another engine.
pub(super) fn op_of(engine: &str) -> Option<&'static str> {
    match engine.trim() {
        "filecreate" => Some("create"),
        "filestat" => Some("stat"),
        "filedelete" => Some("delete"),
        _ => None,
    }
}

/// fio's name of the engine doing `op`.
pub(super) fn fio_engine(op: &str) -> &'static str {
    match op {
        "create" => "filecreate",
        "stat" => "filestat",
        _ => "filedelete",
    }
}

fn ioengine(o: &Opt, r: &mut EngineRead, _: &mut Notes) {
    let op = op_of(o.val()).unwrap_or(r.op);
    r.op = op;
    r.said.push(o.mapping(
        format!("ops = \"{op}\": volbench's {op} phase over the job's files"),
        true,
    ));
}

fn numjobs(o: &Opt, r: &mut EngineRead, notes: &mut Notes) {
    match o.val().trim().parse::<u64>() {
        Ok(n) if (1..=bounds::MAX_THREADS).contains(&n) => {
            r.numjobs = n;
            r.said
                .push(o.mapping("threads, each with its own nrfiles files", true));
        }
        _ => o.refuse(notes, format!("must be 1..{}", bounds::MAX_THREADS)),
    }
}

fn nrfiles(o: &Opt, r: &mut EngineRead, notes: &mut Notes) {
    match o.val().trim().parse::<u64>() {
        Ok(n) if (1..=MAX_TREE_FILES).contains(&n) => {
            r.nrfiles = n;
            r.said
                .push(o.mapping("files_per_dir = nrfiles x numjobs", true));
        }
        _ => o.refuse(notes, format!("must be 1..{MAX_TREE_FILES}")),
    }
}

/// `filesize=` and `size=`: the size of the files fio lays out first.
fn file_bytes(o: &Opt, r: &mut EngineRead, notes: &mut Notes) -> Option<u64> {
    match parse_size(o.val().trim()) {
        Ok(b) => {
            let how = if r.op == "create" {
                "file_size = 0: fio's filecreate only opens and closes, its files stay empty"
            } else {
                "file_size (fio lays the files out at this size first)"
            };
            r.said.push(o.mapping(how, true));
            Some(b)
        }
        Err(e) => {
            o.refuse(notes, e.message);
            None
        }
    }
}

fn filesize(o: &Opt, r: &mut EngineRead, notes: &mut Notes) {
    if let Some(b) = file_bytes(o, r, notes) {
        r.filesize = Some(b);
    }
}

fn size(o: &Opt, r: &mut EngineRead, notes: &mut Notes) {
    if let Some(b) = file_bytes(o, r, notes) {
        r.size = Some(b);
    }
}

fn directory(o: &Opt, r: &mut EngineRead, _: &mut Notes) {
    r.dir = Some((o.clone(), r.said.len()));
}

fn stat_type(o: &Opt, r: &mut EngineRead, notes: &mut Notes) {
    let how = match (r.op, o.val().trim()) {
        ("stat", "stat" | "lstat") => o.mapping(
            "volbench's stat (fstatat without following links: the same on its regular files)",
            true,
        ),
        ("stat", "statx") => o.mapping(
            "volbench's stat is fstatat, not statx: the same lookup and attributes",
            false,
        ),
        ("stat", _) => return o.refuse(notes, "must be stat, lstat or statx"),
        _ => o.mapping("only filestat reads it (as in fio)", true),
    };
    r.said.push(how);
}

fn stonewall(o: &Opt, r: &mut EngineRead, _: &mut Notes) {
    r.stonewall = true;
    r.said
        .push(o.mapping("a new run after the ones before", true));
}

fn runtime(o: &Opt, r: &mut EngineRead, notes: &mut Notes) {
    match parse_duration(o.val().trim()) {
        Ok(d) => {
            r.runtime = Some(d.as_secs_f64());
            r.said.push(o.mapping(
                "duration: a cap on the phase (it ends once every file is done, as fio's job)",
                true,
            ));
        }
        Err(e) => o.refuse(notes, e.message),
    }
}

fn time_based(o: &Opt, r: &mut EngineRead, notes: &mut Notes) {
    if bool_opt(o) == Some(false) {
        r.said
            .push(o.mapping("each phase covers the files once", true));
    } else {
        o.refuse(
            notes,
            "not supported with a file engine (volbench's phase covers the files once; a timed \
             mix is `ops = \"stat:N,...\"`)",
        );
    }
}
