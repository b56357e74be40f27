//! fio's `filename=a:b:c`: one job over several files or devices. fio's
//! jobs each open every file and take them in turn; volbench runs existing
//! files and devices as a list of targets sharing the job's threads, and
//! files fio would create as its own file set of that many files.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::collections::{BTreeMap, BTreeSet};

use super::super::target_list::{Threads, list_with};
use super::super::{How, Mapping, Notes, parent_dir};
use super::parse::Opt;

/// Where one job with several files goes.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct FileList {
    /// A brace list of targets, or the directory of volbench's file set.
    pub(crate) target: String,
    /// Existing files or devices, each used whole: no size to lay out.
    pub(crate) whole: bool,
    /// Files per target (the file set's count; 1 for a list).
    pub(crate) files: u64,
    /// The job's threads are the total over the list (`--threads-total`).
    pub(crate) threads_total: bool,
}

/// fio's list of names: split at each ':' that `\` does not escape. A lone
/// drive letter before `\` is kept with its path, as fio's own parser can
/// not (`c:\x`), so a Windows name still reaches `--map` whole.
pub(super) fn split(v: &str) -> Vec<String> {
    let mut parts = vec![String::new()];
    let mut chars = v.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&':') => {
                chars.next();
                if let Some(last) = parts.last_mut() {
                    last.push(':');
                }
            }
            ':' => parts.push(String::new()),
            c => {
                if let Some(last) = parts.last_mut() {
                    last.push(c);
                }
            }
        }
    }
    let mut out: Vec<String> = Vec::new();
    for p in parts {
        match out.last_mut() {
            Some(prev)
                if prev.len() == 1
                    && prev.chars().all(|c| c.is_ascii_alphabetic())
                    && p.starts_with('\\') =>
            {
                prev.push(':');
                prev.push_str(&p);
            }
            _ => out.push(p),
        }
    }
    out.retain(|p| !p.is_empty());
    out
}

#[derive(PartialEq)]
enum Kind {
    Device,
    Existing,
    New,
}

fn kind(path: &str) -> Result<Kind, String> {
    if super::super::names_device(path) {
        return Ok(Kind::Device);
    }
    match std::fs::metadata(path) {
        Ok(md) if md.is_file() => Ok(Kind::Existing),
        Ok(_) => Err(format!("{path} is not a regular file")),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Kind::New),
        Err(e) => Err(format!("cannot use {path}: {e}")),
    }
}

/// How `file_service_type` maps onto volbench's spread of the threads.
fn service_type(o: &BTreeMap<String, Opt>, whole: bool, m: &mut Vec<Mapping>, notes: &mut Notes) {
    // fio_noted's generic note says nothing about several files.
    m.retain(|x| !x.option.starts_with("file_service_type"));
    let Some(opt) = o.get("file_service_type") else {
        return;
    };
    let kind = opt.val().split(':').next().unwrap_or("").trim();
    let how = match (kind, whole) {
        ("roundrobin" | "random", true) => {
            "every file busy at once, each with its share of the threads".to_string()
        }
        ("roundrobin" | "random", false) => {
            "each I/O's file drawn at random, every file the same share".to_string()
        }
        ("sequential", _) => {
            notes.unsupported(
                &opt.at,
                &opt.text(),
                "one file after another (volbench keeps every file busy at once)",
            );
            return;
        }
        _ => {
            notes.unsupported(&opt.at, &opt.text(), "skewed choice of files");
            return;
        }
    };
    m.push(Mapping {
        at: opt.at.clone(),
        option: opt.text(),
        how: How::Note(how),
    });
}

/// The targets of `filename=` naming several files: None when refused (in
/// `notes`), Some(None) for one name.
#[allow(clippy::too_many_arguments)]
pub(super) fn list(
    raw: &str,
    o: &BTreeMap<String, Opt>,
    dir: Option<&str>,
    from_cwd: &dyn Fn(&str) -> String,
    resolve: &dyn Fn(&str, &mut Notes) -> Option<String>,
    numjobs: u64,
    m: &mut Vec<Mapping>,
    notes: &mut Notes,
) -> Option<Option<FileList>> {
    let names = split(raw);
    if names.len() < 2 {
        return Some(None);
    }
    let opt = o.get("filename")?;
    let n = names.len() as u64;
    if let Some(nr) = o.get("nrfiles") {
        if nr.val().trim().parse::<u64>().ok() != Some(n) {
            notes.refuse(
                &nr.at,
                &nr.text(),
                format!("filename= names {n} files; fio takes the files from it"),
            );
            return None;
        }
    }
    let mut paths = Vec::new();
    let mut kinds = Vec::new();
    for f in &names {
        let full = match dir {
            Some(d) if !f.starts_with('/') => format!("{d}/{f}"),
            _ => from_cwd(f),
        };
        let p = resolve(&full, notes)?;
        match kind(&p) {
            Ok(k) => kinds.push(k),
            Err(e) => {
                notes.refuse(&opt.at, &opt.text(), e);
                return None;
            }
        }
        paths.push(p);
    }
    if kinds.iter().all(|k| *k != Kind::New) {
        service_type(o, true, m, notes);
        let (target, _, _) = list_with(&paths, None, numjobs, Threads::Total, m, notes).ok()?;
        m.push(Mapping {
            at: opt.at.clone(),
            option: opt.text(),
            how: How::Note(format!(
                "fio's {numjobs} job(s) each take the {n} files in turn; volbench gives each file \
                 its own share of the {numjobs} threads: the same threads and I/Os in flight, but \
                 a slow file no longer holds back the I/O to the others"
            )),
        });
        if let Some(s) = o.get("size").or_else(|| o.get("filesize")) {
            m.push(Mapping {
                at: s.at.clone(),
                option: s.text(),
                how: How::Note(
                    "fio uses the start of each file or device; volbench uses each whole unless \
                     the suite runs with --size"
                        .into(),
                ),
            });
        }
        return Some(Some(FileList {
            target,
            whole: true,
            files: 1,
            threads_total: true,
        }));
    }
    if kinds.iter().any(|k| *k != Kind::New) {
        notes.unsupported(
            &opt.at,
            &opt.text(),
            "existing files or devices together with files fio would create",
        );
        return None;
    }
    let dirs: BTreeSet<String> = paths.iter().map(|p| parent_dir(p)).collect();
    let Some(d) = dirs.first().filter(|_| dirs.len() == 1).cloned() else {
        notes.unsupported(
            &opt.at,
            &opt.text(),
            "new files in several directories (volbench's own files go in one)",
        );
        return None;
    };
    service_type(o, false, m, notes);
    m.push(Mapping {
        at: opt.at.clone(),
        option: opt.text(),
        how: How::Note(format!(
            "volbench writes only files it creates: its own {n} files volbench.N.dat in {d}, the \
             size split among them as fio does; every thread reaches every file"
        )),
    });
    Some(Some(FileList {
        target: d,
        whole: false,
        files: n,
        threads_total: false,
    }))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    #[test]
    fn names_split_at_unescaped_colons() {
        assert_eq!(split("/dev/sdb:/dev/sdc"), ["/dev/sdb", "/dev/sdc"]);
        assert_eq!(split("/d/a\\:1:/d/b"), ["/d/a:1", "/d/b"]);
        assert_eq!(split("/d/one"), ["/d/one"]);
        // fio's escaped drive letter and the unescaped one both stay whole.
        assert_eq!(split("c\\:\\data\\f"), ["c:\\data\\f"]);
        assert_eq!(split("c:\\data\\f"), ["c:\\data\\f"]);
        assert_eq!(split("z:\\a:z:\\b"), ["z:\\a", "z:\\b"]);
    }
}
