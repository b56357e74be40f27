//! A tree on a back end that is not local (`io::backend::FarTree`: an
//! `nfs://` or `smb://` target), with the local tree's rules, written once for every
//! such back end: the marker proven for this directory and this user
//! (`owner::judge_marker`) or written new on an empty directory, nothing
//! foreign under a fresh tree, no link or special file where the tree's
//! names go, the skeleton made through the back end's own operations
//! (one component from its parent's handle), and `clean` walking what the
//! server lists, removing only what the per-file proof accepts.

use std::ffi::CStr;
use std::path::Path;
use std::sync::Arc;

use super::clean::{Cleaned, dir_name};
use super::tree::Name;
use super::{
    MARKER_CAP, Marker, TREE_MARKER, TreeReady, errno_text, ours, parse_marker, tolerated,
};
use crate::error::{Result, VbError};
use crate::io::backend::{
    Access, Dir, Entry, Fail, FarTree, Identity, Kind, MetaIo, Storage, TreeDir, TreeRoot,
};
use crate::io::gate::owner;
use crate::io::sys::io::Errno;
use crate::spec::meta::{MetaOp, MetaSpec};

/// A far tree proven by its marker: each worker's root on a connection of
/// its own, with the identity every change is checked against.
#[derive(Debug)]
struct FarRoot {
    tree: Arc<dyn FarTree>,
    id: Identity,
}

impl TreeRoot for FarRoot {
    fn open(&self) -> std::result::Result<(Box<dyn TreeDir>, Identity), String> {
        let dir = self.tree.open().map_err(|e| e.to_string())?;
        Ok((dir, self.id))
    }
}

fn refuse_marker(path: &Path, why: &str) -> VbError {
    VbError::refused(format!(
        "refusing {}: its {TREE_MARKER} is not one volbench wrote for this directory ({why}); \
         volbench touches nothing under it",
        path.display()
    ))
}

/// The tree's marker and its file id, if any, proven written by this user
/// for this directory; anything else is refused.
fn read_marker(dir: &dyn Dir) -> Result<Option<(Marker, u64)>> {
    let path = dir.path();
    let a = match dir.entry(TREE_MARKER)? {
        Entry::Missing => return Ok(None),
        Entry::Other(what) => return Err(refuse_marker(path, &format!("it is {what}"))),
        Entry::Regular(a) => a,
    };
    if a.size > MARKER_CAP as u64 {
        return Err(refuse_marker(path, "it is not a small regular file"));
    }
    let bytes = dir
        .read_capped(TREE_MARKER, MARKER_CAP)?
        .ok_or_else(|| refuse_marker(path, "it went away while it was read"))?;
    let m = parse_marker(&bytes).map_err(|why| refuse_marker(path, &why))?;
    owner::judge_marker(&dir.attr()?, &a, &m.identity, dir.uid())
        .map_err(|why| refuse_marker(path, why))?;
    Ok(Some((m, a.id)))
}

/// Writes a new marker for the tree `m` in `dir`, recording the
/// directory's identity and the marker's own change time (NFS keeps no
/// birth time) on the server's clock.
fn write_marker(dir: &dyn Dir, m: &MetaSpec) -> Result<()> {
    let root = dir.attr()?;
    let (file, a) = dir.create_new(TREE_MARKER, Access::Write)?;
    let marker = Marker {
        created_by: "volbench".into(),
        depth: m.depth,
        width: m.width,
        files_per_dir: m.files_per_dir,
        identity: Identity {
            dev: root.dev,
            ino: root.id,
            uid: dir.uid(),
            born_s: a.born.0,
            born_ns: a.born.1,
        },
    };
    let text = serde_json::to_string_pretty(&marker).map_err(|e| VbError::run(e.to_string()))?;
    let fail = |e: Errno| {
        VbError::target(format!(
            "cannot write {}: {}",
            dir.path_of(TREE_MARKER).display(),
            errno_text(e)
        ))
    };
    let mut done = 0;
    while done < text.len() {
        match file.write_at(&text.as_bytes()[done..], done as u64) {
            Ok(0) => return Err(fail(Errno::NOSPC)),
            Ok(n) => done += n,
            Err(e) => return Err(fail(e)),
        }
    }
    file.settle().map_err(fail)
}

/// An operation's scratch that names no data: mkdir and rmdir.
fn no_data(owner: &Identity, f: impl FnOnce(&mut MetaIo<'_>) -> Result<()>) -> Result<()> {
    let mut buf = [0u8; 0];
    let mut dents: [std::mem::MaybeUninit<u8>; 0] = [];
    f(&mut MetaIo {
        buf: &mut buf,
        size: 0,
        direct: false,
        dents: &mut dents,
        owner,
    })
}

fn cname(n: &mut Name, bytes: &[u8]) {
    n.clear();
    n.push(bytes);
}

/// Makes `path` on `storage` ready as the tree of `m`, by `prepare`'s rules.
pub(super) fn prepare(
    storage: Storage,
    path: &Path,
    m: &MetaSpec,
    make_leaves: bool,
) -> Result<TreeReady> {
    if m.host_part {
        return Err(VbError::input(format!(
            "{}: a tree shared by many hosts is made on a local or mounted path; over this \
             storage give each host a directory of its own (a target template with {{host}})",
            path.display()
        )));
    }
    let tree = crate::io::backend::open_tree(storage, path, true)?;
    let dir = tree.dir();
    // Before anything is read or written: a second run on the same tree
    // must not create or delete under the first.
    let lock = dir.lock()?;
    let top = tree.open()?;
    let mut notes = Vec::new();
    let id = match read_marker(&*dir)? {
        Some((have, _)) if have.same_shape(m) => {
            notes.push(format!("reusing the volbench tree in {}", path.display()));
            have.identity
        }
        Some((have, _)) => {
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
            top.list(c"", &mut |name, _| {
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
            write_marker(&*dir, m)?;
            match read_marker(&*dir)? {
                Some((written, _)) => written.identity,
                None => return Err(refuse_marker(path, "it went away once written")),
            }
        }
    };
    let build = Build {
        path,
        depth: m.depth,
        width: m.width as u64,
        make_leaves,
        id,
    };
    build.dir(&*top, 0, "")?;
    Ok(TreeReady {
        notes,
        lock,
        root: Arc::new(FarRoot { tree, id }),
    })
}

struct Build<'a> {
    path: &'a Path,
    depth: u32,
    width: u64,
    make_leaves: bool,
    id: Identity,
}

impl Build<'_> {
    fn refuse(&self, what: &str, rel: &str) -> VbError {
        VbError::refused(format!(
            "refusing {}: {}/{rel} is {what}; volbench follows no link in its tree and touches no \
             file it did not make",
            self.path.display(),
            self.path.display()
        ))
    }

    /// Checks and makes the directories below `dir` (at `level`; the root
    /// is 0), depth first: as deep as the tree, at most
    /// `spec::meta::MAX_DEPTH`.
    fn dir(&self, dir: &dyn TreeDir, level: u32, rel: &str) -> Result<()> {
        if level == self.depth {
            return self.leaf(dir, rel);
        }
        let mut n = Name::default();
        for i in 0..self.width {
            n.clear();
            n.push(b"d");
            n.push_num(i);
            let here = if rel.is_empty() {
                n.as_str().to_string()
            } else {
                format!("{rel}/{}", n.as_str())
            };
            let sub = match dir.open_below(n.as_cstr()) {
                Ok(d) => d,
                Err(Errno::NOENT) if level + 1 == self.depth && !self.make_leaves => continue,
                Err(Errno::NOENT) => {
                    no_data(&self.id, |io| {
                        match dir.op(MetaOp::Mkdir, n.as_cstr(), c"", io) {
                            Ok(_) | Err(Fail::Sys(Errno::EXIST)) => Ok(()),
                            Err(Fail::Sys(e)) => Err(VbError::target(format!(
                                "cannot create {}/{here}: {}",
                                self.path.display(),
                                errno_text(e)
                            ))),
                            Err(Fail::NotOurs(why)) => Err(self.refuse(why, &here)),
                        }
                    })?;
                    dir.open_below(n.as_cstr())
                        .map_err(|e| self.refuse_or_target(&here, e))?
                }
                Err(e) => return Err(self.refuse_or_target(&here, e)),
            };
            self.dir(&*sub, level + 1, &here)?;
        }
        Ok(())
    }

    /// A leaf: no link or special file under any name.
    fn leaf(&self, dir: &dyn TreeDir, rel: &str) -> Result<()> {
        let mut bad: Option<(String, &str)> = None;
        dir.list(c"", &mut |name, a| {
            let what = match a.kind {
                Kind::Symlink => Some("a symbolic link"),
                Kind::Regular | Kind::Directory => None,
                Kind::Other => Some("not a regular file"),
            };
            if let (None, Some(w)) = (&bad, what) {
                bad = Some((String::from_utf8_lossy(name).into_owned(), w));
            }
        })
        .map_err(|e| self.refuse_or_target(rel, e))?;
        match bad {
            Some((name, what)) if rel.is_empty() => Err(self.refuse(what, &name)),
            Some((name, what)) => Err(self.refuse(what, &format!("{rel}/{name}"))),
            None => Ok(()),
        }
    }

    fn refuse_or_target(&self, rel: &str, e: Errno) -> VbError {
        match e {
            Errno::LOOP => self.refuse("a symbolic link", rel),
            Errno::NOTDIR => self.refuse("not a directory", rel),
            _ => VbError::target(format!(
                "cannot open {}/{rel}: {}",
                self.path.display(),
                errno_text(e)
            )),
        }
    }
}

/// `volbench clean` on a URL: the tree there removed as `clean` removes a
/// local one, or None when the directory holds no tree marker (a file set
/// is cleaned by its own rules).
pub(crate) fn clean_url(path: &Path) -> Result<Option<Cleaned>> {
    // A back end without trees holds only file sets, cleaned by their rules.
    let Some(storage) =
        crate::io::backend::url_storage(path).filter(|s| crate::io::backend::caps(*s).trees)
    else {
        return Ok(None);
    };
    let tree = crate::io::backend::open_tree(storage, path, false)?;
    let dir = tree.dir();
    if matches!(dir.entry(TREE_MARKER)?, Entry::Missing) {
        return Ok(None);
    }
    let _lock = dir.lock()?;
    let Some((marker, marker_id)) = read_marker(&*dir)? else {
        return Ok(None);
    };
    let top = tree.open()?;
    let mut out = Cleaned::default();
    let walk = Walk {
        path,
        id: marker.identity,
        depth: marker.depth,
        files_per_dir: u64::from(marker.files_per_dir),
        skip: [TREE_MARKER.as_bytes(), lock_name(storage)],
    };
    walk.dir(&*top, "", 0, &mut out)?;
    if out.left.is_empty() {
        dir.remove_if_ours(TREE_MARKER, marker_id);
    }
    Ok(Some(out))
}

/// The run lock's name at a far tree's root, which `clean` passes by.
fn lock_name(storage: Storage) -> &'static [u8] {
    match storage {
        #[cfg(unix)]
        Storage::Nfs => crate::io::backend::nfs::NFS_LOCK_NAME.as_bytes(),
        #[cfg(unix)]
        Storage::Smb => crate::io::backend::smb::SMB_LOCK_NAME.as_bytes(),
        _ => b"",
    }
}

struct Walk<'a> {
    path: &'a Path,
    id: Identity,
    depth: u32,
    files_per_dir: u64,
    /// The root's own names: the marker and the lock.
    skip: [&'a [u8]; 2],
}

impl Walk<'_> {
    /// Cleans the directory `dir` at `level` (the root is 0): as deep as
    /// the marker's depth, at most `spec::meta::MAX_DEPTH`.
    fn dir(&self, dir: &dyn TreeDir, rel: &str, level: u32, out: &mut Cleaned) -> Result<()> {
        let mut entries: Vec<(Vec<u8>, crate::io::backend::Attr)> = Vec::new();
        dir.list(c"", &mut |name, a| entries.push((name.to_vec(), *a)))
            .map_err(|e| {
                VbError::target(format!(
                    "cannot list {}/{rel}: {}",
                    self.path.display(),
                    errno_text(e)
                ))
            })?;
        let mut n = Name::default();
        for (name, a) in entries {
            if level == 0 && self.skip.contains(&name.as_slice()) {
                continue;
            }
            cname(&mut n, &name);
            let here = if rel.is_empty() {
                String::from_utf8_lossy(&name).into_owned()
            } else {
                format!("{rel}/{}", String::from_utf8_lossy(&name))
            };
            if level < self.depth {
                if !dir_name(&name) || a.kind != Kind::Directory {
                    out.left.push(here);
                    continue;
                }
                // A directory of someone else's, renamed in, is not walked.
                if a.uid != self.id.uid || a.dev != self.id.dev {
                    out.left.push(format!(
                        "{here}/ (not volbench's: another owner or file system)"
                    ));
                    continue;
                }
                let sub = match dir.open_below(n.as_cstr()) {
                    Ok(d) => d,
                    Err(Errno::NOENT) => continue,
                    Err(Errno::LOOP | Errno::NOTDIR) => {
                        out.left.push(here);
                        continue;
                    }
                    Err(e) => {
                        return Err(VbError::target(format!(
                            "cannot open {}/{here}: {}",
                            self.path.display(),
                            errno_text(e)
                        )));
                    }
                };
                self.dir(&*sub, &here, level + 1, out)?;
                self.prune(dir, n.as_cstr(), &here, out)?;
            } else if ours(&name, self.files_per_dir) {
                match dir.remove_ours(n.as_cstr(), &self.id) {
                    Ok(()) => out.files += 1,
                    Err(None) => {}
                    Err(Some(why)) => out.left.push(format!("{here} ({why})")),
                }
            } else {
                out.left.push(here);
            }
        }
        Ok(())
    }

    fn prune(&self, dir: &dyn TreeDir, name: &CStr, here: &str, out: &mut Cleaned) -> Result<()> {
        no_data(&self.id, |io| match dir.op(MetaOp::Rmdir, name, c"", io) {
            Ok(_) => {
                out.dirs += 1;
                Ok(())
            }
            // Gone, or kept by what is listed already.
            Err(Fail::Sys(Errno::NOENT | Errno::NOTEMPTY | Errno::EXIST)) => Ok(()),
            Err(Fail::Sys(e)) => Err(VbError::run(format!(
                "cannot remove {}/{here}: {}",
                self.path.display(),
                errno_text(e)
            ))),
            Err(Fail::NotOurs(_)) => Ok(()),
        })
    }
}
