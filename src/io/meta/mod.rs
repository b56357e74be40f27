//! Trees of directories and small files for metadata runs: the tree's
//! marker and safety checks, its directory skeleton, `clean`, and dropping
//! caches between phases. Every path below the root is reached relative to
//! a directory descriptor without following a symbolic link, and only
//! names the tree's arithmetic produces are ever created or removed.

mod clean;
pub(crate) mod far;
pub(crate) mod ops;
pub(crate) mod shared;
mod tally;
pub(crate) mod tree;
pub(crate) mod worker;

use crate::io::sys::fd::OwnedFd;
use std::ffi::CStr;
use std::mem::MaybeUninit;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::io::sys::fs::{AtFlags, FileType, Mode, OFlags, ResolveFlags};
use crate::io::sys::io::Errno;
use serde::{Deserialize, Serialize};

use crate::error::{Result, VbError};
use crate::io::backend::{Held, Storage, TreeDir, TreeRoot};
use crate::io::gate;
use crate::io::gate::owner::{self, Identity};
use crate::spec::meta::MetaSpec;
use tree::{Name, Tree};

pub(crate) use crate::io::phase::MetaOpStats;
pub(crate) use worker::MetaWorker;

pub(crate) const TREE_MARKER: &str = ".volbench-tree.json";
const TREE_MARKER_C: &CStr = c".volbench-tree.json";
/// A marker is a few lines; anything larger is not ours.
const MARKER_CAP: usize = 4096;

/// What the marker at a tree's root records: that volbench made the tree,
/// its shape (names depend on it, so another shape is another tree), and
/// for which directory, by whom and when (`gate::owner`): the proof every
/// unlink and overwrite in the tree is checked against.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Marker {
    created_by: String,
    depth: u32,
    width: u32,
    files_per_dir: u32,
    pub(crate) identity: Identity,
}

/// A marker's claims, parsed and bounded before anything is trusted: any
/// bytes give a marker or a refusal (the reason), never a panic.
pub(crate) fn parse_marker(bytes: &[u8]) -> std::result::Result<Marker, String> {
    let m: Marker = serde_json::from_slice(bytes)
        .map_err(|_| "it is not a marker this volbench writes".to_string())?;
    if m.created_by != "volbench" {
        return Err("it was not written by volbench".into());
    }
    use crate::spec::meta::{MAX_DEPTH, MAX_FILES, MAX_WIDTH};
    if m.depth > MAX_DEPTH
        || m.width == 0
        || m.width > MAX_WIDTH
        || m.files_per_dir == 0
        || m.files_per_dir as u64 > MAX_FILES
    {
        return Err(format!("it claims a shape out of bounds ({})", m.shape()));
    }
    Ok(m)
}

impl Marker {
    fn same_shape(&self, m: &MetaSpec) -> bool {
        (self.depth, self.width, self.files_per_dir) == (m.depth, m.width, m.files_per_dir)
    }

    fn shape(&self) -> String {
        format!(
            "--depth {} --width {} --files-per-dir {}",
            self.depth, self.width, self.files_per_dir
        )
    }
}

pub(crate) fn errno_text(e: Errno) -> String {
    std::io::Error::from(e).to_string()
}

/// Opens the tree root, refusing a symbolic link or anything not a directory.
pub(crate) fn open_root(path: &Path) -> Result<OwnedFd> {
    crate::io::sys::fs::open(
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
pub(crate) fn open_below(root: &OwnedFd, rel: &CStr) -> std::result::Result<OwnedFd, Errno> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    if rel.is_empty() {
        return crate::io::sys::fs::openat(root, c".", flags, Mode::empty());
    }
    match crate::io::sys::fs::openat2(
        root,
        rel,
        flags,
        Mode::empty(),
        ResolveFlags::NO_SYMLINKS | ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS,
    ) {
        Err(Errno::NOSYS) => {}
        other => return other,
    }
    let mut dir = crate::io::sys::fs::openat(root, c".", flags, Mode::empty())?;
    for part in rel.to_bytes().split(|&b| b == b'/') {
        let mut n = Name::default();
        n.push(part);
        dir = crate::io::sys::fs::openat(&dir, n.as_cstr(), flags, Mode::empty())?;
    }
    Ok(dir)
}

/// Whether `path` holds a tree (its marker, proven as `read_marker`
/// proves it): `clean` on a directory that held a file set.
pub(crate) fn holds_tree(path: &Path) -> Result<bool> {
    let root = open_root(path)?;
    Ok(read_marker(&root, path)?.is_some())
}

/// The tree's marker, if any, proven written by this user for this
/// directory (`owner::check_marker`); anything else is refused.
pub(crate) fn read_marker(root: &OwnedFd, path: &Path) -> Result<Option<Marker>> {
    let refuse = |why: &str| {
        VbError::refused(format!(
            "refusing {}: its {TREE_MARKER} is not one volbench wrote for this directory ({why}); \
             volbench touches nothing under it",
            path.display()
        ))
    };
    let fd = match crate::io::sys::fs::openat(
        root,
        TREE_MARKER_C,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK,
        Mode::empty(),
    ) {
        Ok(fd) => fd,
        Err(Errno::NOENT) => return Ok(None),
        Err(e) => {
            return Err(refuse(&format!(
                "it cannot be read as a regular file: {}",
                errno_text(e)
            )));
        }
    };
    let st = crate::io::sys::fs::fstat(&fd).map_err(|e| VbError::target(errno_text(e)))?;
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile
        || st.st_size as usize > MARKER_CAP
    {
        return Err(refuse("it is not a small regular file"));
    }
    let buf = crate::io::target::read_up_to(&fd, MARKER_CAP)
        .map_err(|e| VbError::target(errno_text(e)))?;
    let m = parse_marker(&buf).map_err(|why| refuse(&why))?;
    owner::check_marker(root, &fd, &m.identity).map_err(refuse)?;
    Ok(Some(m))
}

fn write_marker(root: &OwnedFd, path: &Path, m: &MetaSpec) -> Result<()> {
    let fail = |e: Errno| {
        VbError::target(format!(
            "cannot write {} in {}: {}",
            TREE_MARKER,
            path.display(),
            errno_text(e)
        ))
    };
    // Readable by its owner only: no one else learns or copies its identity.
    let fd = gate::create_new_at(root, TREE_MARKER_C, OFlags::WRONLY, 0o600).map_err(fail)?;
    let marker = Marker {
        created_by: "volbench".into(),
        depth: m.depth,
        width: m.width,
        files_per_dir: m.files_per_dir,
        identity: owner::identity_of_new(root, &fd).map_err(fail)?,
    };
    let text = serde_json::to_string_pretty(&marker).map_err(|e| VbError::run(e.to_string()))?;
    crate::io::gate::setdir::write_all(&fd, text.as_bytes()).map_err(fail)
}

/// Names a fresh target may already hold: a volbench file set beside the
/// tree, and the run's lock where it is a file (NFS's).
fn tolerated(name: &[u8]) -> bool {
    #[cfg(unix)]
    if name == crate::io::backend::nfs::NFS_LOCK_NAME.as_bytes()
        || name == crate::io::backend::smb::SMB_LOCK_NAME.as_bytes()
    {
        return true;
    }
    name == b"."
        || name == b".."
        || name.starts_with(b"volbench.")
        || name == b".volbench-fileset.json"
}

/// What `prepare` found and did.
pub(crate) struct TreeReady {
    pub(crate) notes: Vec<String>,
    /// One run per tree: held until the run ends.
    pub(crate) lock: Box<dyn Held>,
    /// Where each worker opens the tree.
    pub(crate) root: Arc<dyn TreeRoot>,
}

/// A tree on the local file system: each worker opens the root at its
/// path, following no link, and proves it by its marker.
#[derive(Debug)]
pub(crate) struct LocalTree {
    pub(crate) path: PathBuf,
}

impl TreeRoot for LocalTree {
    fn open(&self) -> std::result::Result<(Box<dyn TreeDir>, Identity), String> {
        let root = open_root(&self.path).map_err(|e| e.to_string())?;
        match read_marker(&root, &self.path) {
            Ok(Some(marker)) => Ok((Box::new(ops::LocalTreeDir(root)), marker.identity)),
            Ok(None) => Err(format!("{} has no {TREE_MARKER}", self.path.display())),
            Err(e) => Err(e.to_string()),
        }
    }
}

/// Makes `path` ready as the tree of `m` on `storage`: `prepare` on the
/// local file system, `far::prepare` (the same rules through the back
/// end's operations) on any other.
pub(crate) fn prepare_on(
    storage: Storage,
    path: &Path,
    m: &MetaSpec,
    make_leaves: bool,
) -> Result<TreeReady> {
    match storage {
        Storage::Local => prepare(path, m, make_leaves),
        far => far::prepare(far, path, m, make_leaves),
    }
}

/// Makes `path` ready as the tree of `m`: creates it (or takes an empty
/// directory, or a volbench tree of the same shape), refuses anything else,
/// checks no symbolic link or foreign file type sits where the tree's names
/// are, and creates the directory skeleton (the leaves too, unless a phase
/// makes them with `mkdir`). Untimed, like filling a file set.
pub(crate) fn prepare(path: &Path, m: &MetaSpec, make_leaves: bool) -> Result<TreeReady> {
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
    let lock: Box<dyn Held> = Box::new(crate::io::target::lock_tree(&root, path)?);
    match read_marker(&root, path)? {
        Some(have) if have.same_shape(m) => {
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
            write_marker(&root, path, m)?;
        }
    }
    let tree = Tree::new(m, 0);
    check_and_build(&root, path, &tree, make_leaves)?;
    Ok(TreeReady {
        notes,
        lock,
        root: Arc::new(LocalTree { path: path.into() }),
    })
}

/// Reads every entry of a directory with a buffer on the stack.
pub(crate) fn scan_dir(
    dir: &OwnedFd,
    mut each: impl FnMut(&[u8], FileType),
) -> std::result::Result<(), Errno> {
    let fd = crate::io::sys::fs::openat(
        dir,
        c".",
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    let mut buf = [MaybeUninit::<u8>::uninit(); 8192];
    let mut it = crate::io::sys::fs::RawDir::new(&fd, &mut buf);
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
            match crate::io::sys::fs::statat(root, n.as_cstr(), AtFlags::SYMLINK_NOFOLLOW) {
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
pub(crate) fn drop_caches(path: &Path) -> Result<()> {
    let root = open_root(path)?;
    crate::io::sys::fs::syncfs(&root)
        .map_err(|e| VbError::run(format!("syncfs {}: {}", path.display(), errno_text(e))))?;
    gate::write_knob(Path::new("/proc/sys/vm/drop_caches"), b"3").map_err(|e| {
        VbError::run(format!(
            "cannot drop caches (writing /proc/sys/vm/drop_caches needs root): {e}"
        ))
    })
}

pub(crate) use clean::{Cleaned, clean};

/// `fN` or `fN.r` with N below the files per directory.
pub(crate) fn ours(name: &[u8], files_per_dir: u64) -> bool {
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
    use proptest::prelude::*;

    const GOOD: &str = r#"{"created_by":"volbench","depth":2,"width":3,"files_per_dir":4,
        "identity":{"dev":1,"ino":2,"uid":0,"born_s":5,"born_ns":6}}"#;

    /// A real marker with bytes changed, cut or inserted: near misses reach
    /// deeper into the parser than random bytes.
    fn mutated() -> impl Strategy<Value = Vec<u8>> {
        (
            proptest::collection::vec((any::<usize>(), any::<u8>(), 0u8..3), 0..8),
            any::<usize>(),
        )
            .prop_map(|(edits, cut)| {
                let mut b = GOOD.as_bytes().to_vec();
                for (at, byte, how) in edits {
                    let at = at % (b.len() + 1);
                    match how {
                        0 if at < b.len() => b[at] = byte,
                        1 => b.insert(at, byte),
                        _ if at < b.len() => {
                            b.remove(at);
                        }
                        _ => {}
                    }
                }
                b.truncate(cut % (b.len() + 2));
                b
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, failure_persistence: None, ..ProptestConfig::default() })]

        #[test]
        fn any_bytes_give_a_marker_or_a_one_line_refusal(
            bytes in prop_oneof![proptest::collection::vec(any::<u8>(), 0..300), mutated()]
        ) {
            match parse_marker(&bytes) {
                Ok(m) => {
                    prop_assert!(m.depth <= crate::spec::meta::MAX_DEPTH);
                    prop_assert!(m.width >= 1 && m.width <= crate::spec::meta::MAX_WIDTH);
                    prop_assert!(m.files_per_dir >= 1);
                }
                Err(why) => prop_assert!(!why.is_empty() && !why.contains('\n')),
            }
        }

        #[test]
        fn a_marker_claiming_a_huge_tree_is_refused(depth in 17u32.., width in 100_001u32..) {
            let text = GOOD.replace(r#""depth":2"#, &format!(r#""depth":{depth}"#))
                .replace(r#""width":3"#, &format!(r#""width":{width}"#));
            prop_assert!(parse_marker(text.as_bytes()).is_err());
        }
    }

    #[test]
    fn a_marker_of_an_older_volbench_is_refused() {
        assert!(parse_marker(GOOD.as_bytes()).is_ok());
        let old = r#"{"created_by":"volbench","depth":1,"width":2,"files_per_dir":4}"#;
        assert!(parse_marker(old.as_bytes()).is_err());
    }

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
