//! Trees of directories and small files for metadata runs: the tree's
//! marker and safety checks, its directory skeleton, `clean`, and dropping
//! caches between phases. Every path below the root is reached relative to
//! a directory descriptor without following a symbolic link, and only
//! names the tree's arithmetic produces are ever created or removed.

pub mod ops;
pub mod shared;
pub mod tree;
pub mod worker;

use std::ffi::CStr;
use std::mem::MaybeUninit;
use std::os::fd::OwnedFd;
use std::path::Path;

use rustix::fs::{AtFlags, FileType, Mode, OFlags, ResolveFlags};
use rustix::io::Errno;
use serde::{Deserialize, Serialize};

use crate::error::{Result, VbError};
use crate::io::gate;
use crate::spec::meta::MetaSpec;
use tree::{Name, Tree};

pub use worker::{MetaOpStats, MetaWorker};

pub const TREE_MARKER: &str = ".volbench-tree.json";
const TREE_MARKER_C: &CStr = c".volbench-tree.json";
/// A marker is a few lines; anything larger is not ours.
const MARKER_CAP: usize = 4096;

/// What the marker at a tree's root records: that volbench made the tree,
/// and its shape (names depend on it, so another shape is another tree).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Marker {
    created_by: String,
    depth: u32,
    width: u32,
    files_per_dir: u32,
}

impl Marker {
    fn of(m: &MetaSpec) -> Self {
        Self {
            created_by: "volbench".into(),
            depth: m.depth,
            width: m.width,
            files_per_dir: m.files_per_dir,
        }
    }

    fn shape(&self) -> String {
        format!(
            "--depth {} --width {} --files-per-dir {}",
            self.depth, self.width, self.files_per_dir
        )
    }
}

fn errno_text(e: Errno) -> String {
    std::io::Error::from(e).to_string()
}

/// Opens the tree root, refusing a symbolic link or anything not a directory.
pub fn open_root(path: &Path) -> Result<OwnedFd> {
    rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| match e {
        Errno::LOOP | Errno::NOTDIR => VbError::refused(format!(
            "refusing {}: it is a symbolic link or not a directory (volbench follows no link to its tree)",
            path.display()
        )),
        _ => VbError::target(format!("cannot open {}: {}", path.display(), errno_text(e))),
    })
}

/// Opens a directory below `root` by a relative path, following no link on
/// the way (openat2 with RESOLVE_NO_SYMLINKS; component by component with
/// O_NOFOLLOW on kernels without it). An empty path is the root itself.
pub fn open_below(root: &OwnedFd, rel: &CStr) -> std::result::Result<OwnedFd, Errno> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    if rel.is_empty() {
        return rustix::fs::openat(root, c".", flags, Mode::empty());
    }
    match rustix::fs::openat2(
        root,
        rel,
        flags,
        Mode::empty(),
        ResolveFlags::NO_SYMLINKS | ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS,
    ) {
        Err(Errno::NOSYS) => {}
        other => return other,
    }
    let mut dir = rustix::fs::openat(root, c".", flags, Mode::empty())?;
    for part in rel.to_bytes().split(|&b| b == b'/') {
        let mut n = Name::default();
        n.push(part);
        dir = rustix::fs::openat(&dir, n.as_cstr(), flags, Mode::empty())?;
    }
    Ok(dir)
}

fn read_marker(root: &OwnedFd, path: &Path) -> Result<Option<Marker>> {
    let fd = match rustix::fs::openat(
        root,
        TREE_MARKER_C,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK,
        Mode::empty(),
    ) {
        Ok(fd) => fd,
        Err(Errno::NOENT) => return Ok(None),
        Err(e) => {
            return Err(VbError::refused(format!(
                "refusing {}: its {TREE_MARKER} cannot be read as a regular file ({})",
                path.display(),
                errno_text(e)
            )));
        }
    };
    let st = rustix::fs::fstat(&fd).map_err(|e| VbError::target(errno_text(e)))?;
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile
        || st.st_size as usize > MARKER_CAP
    {
        return Err(VbError::refused(format!(
            "refusing {}: its {TREE_MARKER} is not a small regular file, so not volbench's",
            path.display()
        )));
    }
    let buf = crate::io::target::read_up_to(&fd, MARKER_CAP)
        .map_err(|e| VbError::target(errno_text(e)))?;
    let m: Marker = serde_json::from_slice(&buf).map_err(|_| {
        VbError::refused(format!(
            "refusing {}: its {TREE_MARKER} is not volbench's",
            path.display()
        ))
    })?;
    if m.created_by != "volbench" {
        return Err(VbError::refused(format!(
            "refusing {}: its {TREE_MARKER} is not volbench's",
            path.display()
        )));
    }
    Ok(Some(m))
}

fn write_marker(root: &OwnedFd, path: &Path, m: &Marker) -> Result<()> {
    let text = serde_json::to_string_pretty(m).map_err(|e| VbError::run(e.to_string()))?;
    let fd = gate::create_new_at(root, TREE_MARKER_C, OFlags::WRONLY, 0o644).map_err(|e| {
        VbError::target(format!(
            "cannot write {} in {}: {}",
            TREE_MARKER,
            path.display(),
            errno_text(e)
        ))
    })?;
    rustix::io::write(&fd, text.as_bytes())
        .map(|_| ())
        .map_err(|e| VbError::target(errno_text(e)))
}

/// Names a fresh target may already hold: a volbench file set beside the tree.
fn tolerated(name: &[u8]) -> bool {
    name == b"."
        || name == b".."
        || name.starts_with(b"volbench.")
        || name == b".volbench-fileset.json"
}

/// What `prepare` found and did.
pub struct TreeReady {
    pub notes: Vec<String>,
    /// One run per tree: held until the run ends.
    pub lock: crate::io::target::Lock,
}

/// Makes `path` ready as the tree of `m`: creates it (or takes an empty
/// directory, or a volbench tree of the same shape), refuses anything else,
/// checks no symbolic link or foreign file type sits where the tree's names
/// are, and creates the directory skeleton (the leaves too, unless a phase
/// makes them with `mkdir`). Untimed, like filling a file set.
pub fn prepare(path: &Path, m: &MetaSpec, make_leaves: bool) -> Result<TreeReady> {
    let mut notes = Vec::new();
    if m.host_part {
        shared::prepare_root(path)?;
    }
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            gate::mkdir(path, 0o755).map_err(|e| {
                VbError::target(format!(
                    "cannot create {}: {}",
                    path.display(),
                    errno_text(e)
                ))
            })?;
        }
        Err(e) => {
            return Err(VbError::target(format!(
                "cannot inspect {}: {e}",
                path.display()
            )));
        }
        Ok(_) => {}
    }
    let root = open_root(path)?;
    // Before anything is read or written: a second run on the same tree
    // must not create or delete under the first.
    let lock = crate::io::target::lock_tree(&root, path)?;
    match read_marker(&root, path)? {
        Some(have) if have == Marker::of(m) => {
            notes.push(format!("reusing the volbench tree in {}", path.display()));
        }
        Some(have) => {
            return Err(VbError::refused(format!(
                "refusing {}: it holds a volbench tree of another shape ({}); \
                 remove it with `volbench clean --target {}` first",
                path.display(),
                have.shape(),
                path.display()
            )));
        }
        None => {
            let mut foreign = None;
            scan_dir(&root, |name, _| {
                if !tolerated(name) && foreign.is_none() {
                    foreign = Some(String::from_utf8_lossy(name).into_owned());
                }
            })
            .map_err(|e| {
                VbError::target(format!("cannot list {}: {}", path.display(), errno_text(e)))
            })?;
            if let Some(f) = foreign {
                return Err(VbError::refused(format!(
                    "refusing {}: it is not empty ({f}...) and not a volbench tree; \
                     give an empty or new directory",
                    path.display()
                )));
            }
            write_marker(&root, path, &Marker::of(m))?;
        }
    }
    let tree = Tree::new(m, 0);
    check_and_build(&root, path, &tree, make_leaves)?;
    Ok(TreeReady { notes, lock })
}

/// Reads every entry of a directory with a buffer on the stack.
fn scan_dir(
    dir: &OwnedFd,
    mut each: impl FnMut(&[u8], FileType),
) -> std::result::Result<(), Errno> {
    let fd = rustix::fs::openat(
        dir,
        c".",
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    let mut buf = [MaybeUninit::<u8>::uninit(); 8192];
    let mut it = rustix::fs::RawDir::new(&fd, &mut buf);
    while let Some(entry) = it.next() {
        let e = entry?;
        each(e.file_name().to_bytes(), e.file_type());
    }
    Ok(())
}

/// Walks the skeleton level by level: creates missing directories, refuses
/// a link or a non-directory where a directory belongs, and in the leaves a
/// link or a non-regular file where a file belongs.
fn check_and_build(root: &OwnedFd, path: &Path, tree: &Tree, make_leaves: bool) -> Result<()> {
    let refuse = |what: &str, rel: &str| {
        VbError::refused(format!(
            "refusing {}: {}/{rel} is {what}; volbench follows no link in its tree and touches no \
             file it did not make",
            path.display(),
            path.display()
        ))
    };
    let mut n = Name::default();
    let mut count = 1u64;
    for level in 1..=tree.depth {
        count *= tree.width;
        let stride = tree.leaves / count;
        let last = level == tree.depth;
        for j in 0..count {
            tree.dir_path(j * stride, level, &mut n);
            match rustix::fs::statat(root, n.as_cstr(), AtFlags::SYMLINK_NOFOLLOW) {
                Ok(st) => match FileType::from_raw_mode(st.st_mode) {
                    FileType::Directory => {}
                    FileType::Symlink => return Err(refuse("a symbolic link", n.as_str())),
                    _ => return Err(refuse("not a directory", n.as_str())),
                },
                Err(Errno::NOENT) if last && !make_leaves => {}
                Err(Errno::NOENT) => {
                    let (parent, leaf) = split_last(n.as_str());
                    let mut p = Name::default();
                    p.push(parent.as_bytes());
                    let pfd = open_below(root, p.as_cstr())
                        .map_err(|e| refuse_or_target(path, parent, e))?;
                    let mut l = Name::default();
                    l.push(leaf.as_bytes());
                    match gate::mkdir_at(&pfd, l.as_cstr(), 0o755) {
                        Ok(()) | Err(Errno::EXIST) => {}
                        Err(e) => {
                            return Err(VbError::target(format!(
                                "cannot create {}/{}: {}",
                                path.display(),
                                n.as_str(),
                                errno_text(e)
                            )));
                        }
                    }
                }
                Err(e) => return Err(refuse_or_target(path, n.as_str(), e)),
            }
        }
    }
    // The leaves: no link or special file under any name.
    for leaf in 0..tree.leaves {
        tree.leaf_path(leaf, &mut n);
        let dir = match open_below(root, n.as_cstr()) {
            Ok(d) => d,
            Err(Errno::NOENT) if !make_leaves => continue,
            Err(e) => return Err(refuse_or_target(path, n.as_str(), e)),
        };
        let mut bad: Option<(String, &str)> = None;
        scan_dir(&dir, |name, ft| {
            if bad.is_some() || name == b"." || name == b".." {
                return;
            }
            let what = match ft {
                FileType::Symlink => Some("a symbolic link"),
                FileType::RegularFile | FileType::Directory | FileType::Unknown => None,
                _ => Some("not a regular file"),
            };
            if let Some(w) = what {
                bad = Some((String::from_utf8_lossy(name).into_owned(), w));
            }
        })
        .map_err(|e| refuse_or_target(path, n.as_str(), e))?;
        if let Some((name, what)) = bad {
            let rel = if n.as_str().is_empty() {
                name
            } else {
                format!("{}/{name}", n.as_str())
            };
            return Err(refuse(what, &rel));
        }
    }
    Ok(())
}

fn split_last(rel: &str) -> (&str, &str) {
    match rel.rfind('/') {
        Some(i) => (&rel[..i], &rel[i + 1..]),
        None => ("", rel),
    }
}

fn refuse_or_target(path: &Path, rel: &str, e: Errno) -> VbError {
    match e {
        Errno::LOOP | Errno::NOTDIR | Errno::XDEV => VbError::refused(format!(
            "refusing {}: {}/{rel} is or passes through a symbolic link (volbench follows no link in its tree)",
            path.display(),
            path.display()
        )),
        _ => VbError::target(format!(
            "cannot open {}/{rel}: {}",
            path.display(),
            errno_text(e)
        )),
    }
}

/// Writes the client's dirty data back and drops its page, dentry and inode
/// caches, so the next phase is served by the storage. Root only.
pub fn drop_caches(path: &Path) -> Result<()> {
    let root = open_root(path)?;
    rustix::fs::syncfs(&root)
        .map_err(|e| VbError::run(format!("syncfs {}: {}", path.display(), errno_text(e))))?;
    gate::write_knob(Path::new("/proc/sys/vm/drop_caches"), b"3").map_err(|e| {
        VbError::run(format!(
            "cannot drop caches (writing /proc/sys/vm/drop_caches needs root): {e}"
        ))
    })
}

/// What `clean` removed and what it left.
#[derive(Debug, Default)]
pub struct Cleaned {
    pub files: u64,
    pub dirs: u64,
    /// Entries that are not volbench's, left in place.
    pub left: Vec<String>,
}

/// Removes a volbench tree: only names its marker's shape produces, only
/// regular files and directories, no link followed; then the marker. The
/// root directory itself stays. Anything else is left and reported.
pub fn clean(path: &Path) -> Result<Cleaned> {
    let root = open_root(path)?;
    let _lock = crate::io::target::lock_tree(&root, path)?;
    let Some(marker) = read_marker(&root, path)? else {
        return Err(VbError::refused(format!(
            "refusing to clean {}: it has no {TREE_MARKER}, so it is not a volbench tree",
            path.display()
        )));
    };
    let spec = MetaSpec {
        depth: marker.depth,
        width: marker.width,
        files_per_dir: marker.files_per_dir,
        file_size: vec![crate::spec::BlockSize {
            bytes: 0,
            weight: 1,
        }],
        ops: vec![crate::spec::meta::MetaOpWeight {
            op: crate::spec::meta::MetaOp::Delete,
            weight: 1,
        }],
        whole_tree: true,
        shared_dirs: true,
        drop_caches: false,
        direct: false,
        host_part: false,
    };
    spec.validate(1).map_err(|e| {
        VbError::refused(format!(
            "refusing to clean {}: its {TREE_MARKER} describes no valid tree ({e})",
            path.display()
        ))
    })?;
    let tree = Tree::new(&spec, 0);
    let mut out = Cleaned::default();
    let mut n = Name::default();
    let mut victims: Vec<Vec<u8>> = Vec::new();
    for leaf in 0..tree.leaves {
        tree.leaf_path(leaf, &mut n);
        let dir = match open_below(&root, n.as_cstr()) {
            Ok(d) => d,
            Err(Errno::NOENT) => continue,
            Err(e) => return Err(refuse_or_target(path, n.as_str(), e)),
        };
        victims.clear();
        scan_dir(&dir, |name, ft| {
            if name == b"." || name == b".." {
                return;
            }
            let ours = ours(name, tree.files_per_dir)
                && matches!(ft, FileType::RegularFile | FileType::Unknown);
            if ours {
                victims.push(name.to_vec());
            } else {
                let rel = String::from_utf8_lossy(name);
                out.left.push(if n.as_str().is_empty() {
                    rel.into_owned()
                } else {
                    format!("{}/{rel}", n.as_str())
                });
            }
        })
        .map_err(|e| refuse_or_target(path, n.as_str(), e))?;
        for v in &victims {
            let mut name = Name::default();
            name.push(v);
            // Unknown types were not checked by the scan: look without following.
            match rustix::fs::statat(&dir, name.as_cstr(), AtFlags::SYMLINK_NOFOLLOW) {
                Ok(st) if FileType::from_raw_mode(st.st_mode) == FileType::RegularFile => {}
                _ => continue,
            }
            match gate::unlink_at(&dir, name.as_cstr()) {
                Ok(()) => out.files += 1,
                Err(Errno::NOENT) => {}
                Err(e) => {
                    return Err(VbError::run(format!(
                        "cannot delete {}/{}/{}: {}",
                        path.display(),
                        n.as_str(),
                        name.as_str(),
                        errno_text(e)
                    )));
                }
            }
        }
    }
    // Directories, deepest level first.
    let mut counts: Vec<u64> = (0..=tree.depth).map(|l| tree.width.pow(l)).collect();
    counts.remove(0);
    for level in (1..=tree.depth).rev() {
        let count = counts[level as usize - 1];
        let stride = tree.leaves / count;
        for j in 0..count {
            tree.dir_path(j * stride, level, &mut n);
            let (parent, last) = split_last(n.as_str());
            let mut p = Name::default();
            p.push(parent.as_bytes());
            let pfd = match open_below(&root, p.as_cstr()) {
                Ok(d) => d,
                Err(Errno::NOENT) => continue,
                Err(e) => return Err(refuse_or_target(path, parent, e)),
            };
            let mut l = Name::default();
            l.push(last.as_bytes());
            match gate::rmdir_at(&pfd, l.as_cstr()) {
                Ok(()) => out.dirs += 1,
                Err(Errno::NOENT) => {}
                Err(Errno::NOTEMPTY) if level == tree.depth => {}
                Err(Errno::NOTEMPTY) => out.left.push(format!("{}/", n.as_str())),
                Err(Errno::NOTDIR) => out.left.push(n.as_str().to_string()),
                Err(e) => {
                    return Err(VbError::run(format!(
                        "cannot remove {}/{}: {}",
                        path.display(),
                        n.as_str(),
                        errno_text(e)
                    )));
                }
            }
        }
    }
    if out.left.is_empty() {
        let _ = gate::unlink_at(&root, TREE_MARKER_C);
    }
    Ok(out)
}

/// `fN` or `fN.r` with N below the files per directory.
fn ours(name: &[u8], files_per_dir: u64) -> bool {
    let Some(rest) = name.strip_prefix(b"f") else {
        return false;
    };
    let digits = rest.strip_suffix(b".r").unwrap_or(rest);
    if digits.is_empty() || digits.len() > 10 || !digits.iter().all(u8::is_ascii_digit) {
        return false;
    }
    if digits.len() > 1 && digits[0] == b'0' {
        return false;
    }
    std::str::from_utf8(digits)
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .is_some_and(|v| v < files_per_dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_trees_own_names_are_ours() {
        assert!(ours(b"f0", 10));
        assert!(ours(b"f9.r", 10));
        assert!(!ours(b"f10", 10));
        assert!(!ours(b"f01", 10));
        assert!(!ours(b"f", 10));
        assert!(!ours(b"g1", 10));
        assert!(!ours(b"f1.txt", 10));
    }
}
