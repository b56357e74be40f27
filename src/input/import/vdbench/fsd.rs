//! vdbench's file-system definitions (`fsd=`: the tree) and file-system
//! workload definitions (`fwd=`: an operation and its threads), one row per
//! key, read into the tree's shape and each fwd's share of a mix.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use super::super::table::{self, Row, Rule, Said, Verdict, alias, row};
use super::super::{Mapping, Notes, PathMap, kernel_set_dir, size_text};
use super::parse::{Def, Opt, exact, items, noted};
use crate::units::{bounds, parse_size};

use Rule::{Always, Map};
use Verdict::{Exact, Note, Refuse};

/// The tree an fsd describes, and its directory.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Tree {
    pub(super) depth: u64,
    pub(super) width: u64,
    pub(super) files_per_dir: u64,
    /// As the suite key takes it: "0", "4k", "4k:50,64k:50".
    pub(super) file_size: String,
    pub(super) shared_dirs: bool,
    pub(super) target: String,
}

/// An fsd's keys as its rows read them.
pub(super) struct FsdRead {
    tree: Tree,
    /// `anchor=`, resolved against `--map` once the keys are read, and
    /// where its mapping goes among the others.
    anchor: Option<(Opt, usize)>,
    said: Vec<Mapping>,
}

impl Said for FsdRead {
    fn said(&mut self) -> &mut Vec<Mapping> {
        &mut self.said
    }
}

pub(super) const FSD: &[Row<FsdRead>] = &[
    row("anchor", Map(anchor)),
    row("depth", Map(depth)),
    row("width", Map(width)),
    row("files", Map(files)),
    alias("size", &["sizes"], Map(sizes)),
    row("shared", Map(shared)),
    row(
        "distribution",
        Always(Refuse(
            "files in every directory rather than the lowest ones",
        )),
    ),
    row("totalsize", Always(Refuse("a tree bounded by total size"))),
    row(
        "workingsetsize",
        Always(Refuse("a working set smaller than the tree")),
    ),
];

fn number(p: &Opt, lo: u64, hi: u64, notes: &mut Notes) -> Option<u64> {
    match p.val().trim().parse::<u64>() {
        Ok(n) if (lo..=hi).contains(&n) => Some(n),
        _ => {
            p.refuse(notes, format!("must be {lo}..{hi}"));
            None
        }
    }
}

fn anchor(p: &Opt, f: &mut FsdRead, _: &mut Notes) {
    f.anchor = Some((p.clone(), f.said.len()));
}

fn depth(p: &Opt, f: &mut FsdRead, notes: &mut Notes) {
    f.tree.depth = number(p, 0, bounds::MAX_TREE_DEPTH.into(), notes).unwrap_or(1);
    exact(&mut f.said, p, "depth");
}

fn width(p: &Opt, f: &mut FsdRead, notes: &mut Notes) {
    f.tree.width = number(p, 1, bounds::MAX_TREE_WIDTH.into(), notes).unwrap_or(1);
    exact(&mut f.said, p, "width");
}

fn files(p: &Opt, f: &mut FsdRead, notes: &mut Notes) {
    f.tree.files_per_dir = number(p, 1, bounds::MAX_TREE_FILES, notes).unwrap_or(1);
    exact(
        &mut f.said,
        p,
        "files_per_dir (files in each lowest directory)",
    );
}

fn sizes(p: &Opt, f: &mut FsdRead, notes: &mut Notes) {
    match file_sizes(p.val()) {
        Ok((text, mix)) => {
            let how = if mix {
                format!("file_size = \"{text}\": each file's size drawn from the same weights")
            } else {
                "file_size".into()
            };
            f.tree.file_size = text;
            exact(&mut f.said, p, &how);
        }
        Err(e) => p.refuse(notes, e),
    }
}

fn shared(p: &Opt, f: &mut FsdRead, _: &mut Notes) {
    f.tree.shared_dirs = p.val().trim() == "yes";
    exact(
        &mut f.said,
        p,
        "shared_dirs: every thread works in every directory",
    );
}

/// vdbench's fsd `size=`: one size, or `(size,pct,size,pct...)` with the
/// percentages adding up to 100, as volbench's `file_size` text (and
/// whether it is a mix).
fn file_sizes(v: &str) -> std::result::Result<(String, bool), String> {
    let max = bounds::MAX_TREE_FILE_SIZE;
    let one = |s: &str| -> std::result::Result<u64, String> {
        let b = parse_size(s.trim()).map_err(|e| e.message)?;
        if b > max {
            return Err(format!(
                "volbench's tree files are at most {}",
                size_text(max)
            ));
        }
        Ok(b)
    };
    let it = items(v);
    if let [s] = it.as_slice() {
        return one(s).map(|b| (size_text(b), false));
    }
    if it.is_empty() || it.len() % 2 != 0 || it.len() > 2 * bounds::MAX_BS_MIX {
        return Err(format!(
            "a size, or up to {} (size,percent) pairs",
            bounds::MAX_BS_MIX
        ));
    }
    let mut parts = Vec::new();
    let mut total = 0u64;
    for pair in it.chunks(2) {
        let (size, pct) = match pair {
            [s, p] => (s, p),
            _ => continue,
        };
        let pct = pct
            .parse::<u64>()
            .ok()
            .filter(|p| (1..=100).contains(p))
            .ok_or_else(|| {
                format!("'{pct}' is not a percentage 1..100 (vdbench's (size,0) average form is not supported yet)")
            })?;
        total += pct;
        parts.push(format!("{}:{pct}", size_text(one(size)?)));
    }
    if total != 100 {
        return Err(format!("the percentages add up to {total}, not 100"));
    }
    Ok((parts.join(","), true))
}

/// The fsd's keys: the tree's shape, sizes and directory; the keys'
/// mappings go to `global`. A tree of more files than
/// `bounds::MAX_TREE_FILES` is refused at the fsd, before any run is made.
pub(super) fn read_fsd(
    fsd: &Def,
    map: &PathMap,
    global: &mut Vec<Mapping>,
    notes: &mut Notes,
) -> Tree {
    let mut f = FsdRead {
        tree: Tree {
            depth: 1,
            width: 1,
            files_per_dir: 1,
            file_size: "0".into(),
            shared_dirs: false,
            target: String::new(),
        },
        anchor: None,
        said: Vec::new(),
    };
    for p in &fsd.params {
        table::read(FSD, p, &mut f, notes, "fsd parameter");
    }
    if let Some((p, at)) = f.anchor.take() {
        match map.resolve(p.val().trim()) {
            Ok((t, _)) => match kernel_set_dir(&t) {
                Some(why) => p.refuse(notes, why),
                None => {
                    f.tree.target = t;
                    let how = "the tree's target directory (volbench's names d0../f0..)";
                    f.said.insert(at.min(f.said.len()), p.mapping(how, true));
                }
            },
            Err(e) => p.refuse(notes, e),
        }
    }
    let t = &f.tree;
    let leaves = t
        .width
        .checked_pow(u32::try_from(t.depth).unwrap_or(u32::MAX));
    let all = leaves.and_then(|l| l.checked_mul(t.files_per_dir));
    if all.is_none_or(|n| n > bounds::MAX_TREE_FILES) {
        notes.refuse(
            &fsd.at,
            &format!("fsd={}", fsd.name),
            format!(
                "width {} ^ depth {} x files {} is more than {} files, the most one host's \
                 tree holds",
                t.width,
                t.depth,
                t.files_per_dir,
                bounds::MAX_TREE_FILES
            ),
        );
    }
    global.append(&mut f.said);
    f.tree
}

/// One fwd: its operation, threads and weight.
pub(super) struct Fwd {
    pub(super) op: Option<&'static str>,
    pub(super) threads: u64,
    pub(super) skew: Option<u64>,
    said: Vec<Mapping>,
}

impl Said for Fwd {
    fn said(&mut self) -> &mut Vec<Mapping> {
        &mut self.said
    }
}

const WHOLE_FILE: &str = "volbench moves each file whole, in one pass, files picked at random";

pub(super) const FWD: &[Row<Fwd>] = &[
    row("fsd", Always(Exact("the tree"))),
    row("operation", Map(operation)),
    row("threads", Map(fwd_threads)),
    row("skew", Map(skew)),
    row("xfersize", Always(Note(WHOLE_FILE))),
    row("fileio", Always(Note(WHOLE_FILE))),
    row("fileselect", Always(Note(WHOLE_FILE))),
    alias(
        "rdpct",
        &["readpct"],
        Always(Refuse(
            "reads and writes mixed within one fwd (give each its own fwd)",
        )),
    ),
];

/// vdbench's operation= as volbench's operation, with whether it is exact.
fn op(v: &str) -> Option<(&'static str, bool)> {
    Some(match v {
        "create" => ("create", true),
        "delete" => ("delete", true),
        "getattr" => ("stat", true),
        "setattr" => ("setattr", true),
        "mkdir" => ("mkdir", true),
        "rmdir" => ("rmdir", true),
        "read" => ("read", false),
        "write" => ("write", false),
        "open" | "close" => ("open", false),
        _ => return None,
    })
}

/// Operations on the tree's shape: volbench runs them as a phase.
pub(super) fn on_shape(op: &str) -> bool {
    matches!(op, "mkdir" | "rmdir")
}

fn operation(p: &Opt, f: &mut Fwd, notes: &mut Notes) {
    match op(p.val().trim()) {
        Some((o, true)) if on_shape(o) => {
            f.op = Some(o);
            noted(
                &mut f.said,
                p,
                &format!(
                    "{o}: a phase over the tree's leaf directories, each once, then the run ends \
                     (capped at elapsed=)"
                ),
            );
        }
        Some((o, true)) => {
            f.op = Some(o);
            exact(&mut f.said, p, o);
        }
        Some((o, false)) => {
            f.op = Some(o);
            noted(
                &mut f.said,
                p,
                &format!(
                    "{o}: volbench's {o} takes the whole file, open to close, as one operation"
                ),
            );
        }
        None => notes.unsupported(
            &p.at,
            &p.text(),
            "this operation (volbench has create, delete, getattr, setattr, read, write, open, \
             mkdir, rmdir)",
        ),
    }
}

fn fwd_threads(p: &Opt, f: &mut Fwd, notes: &mut Notes) {
    f.threads = number(p, 1, bounds::MAX_THREADS, notes).unwrap_or(1);
    exact(&mut f.said, p, "threads (added over the rd's fwds)");
}

fn skew(p: &Opt, f: &mut Fwd, notes: &mut Notes) {
    f.skew = number(p, 1, 100, notes);
    exact(&mut f.said, p, "the operation's weight in the mix");
}

/// One fwd's keys; their mappings go to `m`.
pub(super) fn read_fwd(w: &Def, m: &mut Vec<Mapping>, notes: &mut Notes) -> Fwd {
    let mut f = Fwd {
        op: None,
        threads: 1,
        skew: None,
        said: Vec::new(),
    };
    for p in &w.params {
        table::read(FWD, p, &mut f, notes, "fwd parameter");
    }
    m.append(&mut f.said);
    f
}
