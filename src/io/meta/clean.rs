//! `clean`: removes a volbench tree by walking what is on disk (readdir),
//! never what the marker claims, so a hostile marker claiming a huge tree
//! cannot make it spin; and it removes only what `gate::owner` proves the
//! tree's own, listing everything else.

use crate::io::sys::fd::OwnedFd;
use std::path::Path;

use crate::io::sys::fs::FileType;
use crate::io::sys::io::Errno;

use super::tree::Name;
use super::{
    TREE_MARKER, TREE_MARKER_C, errno_text, open_below, open_root, ours, read_marker,
    refuse_or_target, scan_dir,
};
use crate::error::{Result, VbError};
use crate::io::gate::{self, owner};

/// What `clean` removed and what it left.
#[derive(Debug, Default)]
pub(crate) struct Cleaned {
    pub(crate) files: u64,
    pub(crate) dirs: u64,
    /// Entries that are not volbench's, left in place (with why, for files
    /// that fail the ownership check).
    pub(crate) left: Vec<String>,
}

/// Removes a volbench tree: under a marker proven this user's for this
/// directory, only `dN` directories down to the marker's depth and `fN`
/// files in the leaves that pass the per-file check; then the marker. The
/// root itself stays. Anything else is left and reported.
pub(crate) fn clean(path: &Path) -> Result<Cleaned> {
    let root = open_root(path)?;
    let _lock = crate::io::target::lock_tree(&root, path)?;
    let Some(marker) = read_marker(&root, path)? else {
        return Err(VbError::refused(format!(
            "refusing to clean {}: it has no {TREE_MARKER}, so it is not a volbench tree",
            path.display()
        )));
    };
    let mut out = Cleaned::default();
    let walk = Walk {
        path,
        id: marker.identity,
        depth: marker.depth,
        files_per_dir: marker.files_per_dir as u64,
    };
    walk.dir(&root, "", 0, &mut out)?;
    if out.left.is_empty() {
        let _ = gate::unlink_at(&root, TREE_MARKER_C);
    }
    Ok(out)
}

struct Walk<'a> {
    path: &'a Path,
    id: owner::Identity,
    depth: u32,
    files_per_dir: u64,
}

/// `dN`, N a plain decimal number.
pub(super) fn dir_name(name: &[u8]) -> bool {
    name.strip_prefix(b"d").is_some_and(|d| {
        !d.is_empty()
            && d.len() <= 10
            && d.iter().all(u8::is_ascii_digit)
            && (d.len() == 1 || d[0] != b'0')
    })
}

fn join(rel: &str, name: &[u8]) -> String {
    let n = String::from_utf8_lossy(name);
    if rel.is_empty() {
        n.into_owned()
    } else {
        format!("{rel}/{n}")
    }
}

impl Walk<'_> {
    /// Cleans the directory `dir` at `level` (the root is 0): the recursion
    /// is as deep as the marker's depth, at most `spec::meta::MAX_DEPTH`.
    fn dir(&self, dir: &OwnedFd, rel: &str, level: u32, out: &mut Cleaned) -> Result<()> {
        let mut entries: Vec<(Vec<u8>, FileType)> = Vec::new();
        scan_dir(dir, |name, ft| {
            if name != b"." && name != b".." {
                entries.push((name.to_vec(), ft));
            }
        })
        .map_err(|e| refuse_or_target(self.path, rel, e))?;
        for (name, ft) in entries {
            if level == 0 && name == TREE_MARKER.as_bytes() {
                continue;
            }
            let mut n = Name::default();
            n.push(&name);
            let here = join(rel, &name);
            if level < self.depth {
                if !dir_name(&name) || !matches!(ft, FileType::Directory | FileType::Unknown) {
                    out.left.push(here);
                    continue;
                }
                let sub = match open_below(dir, n.as_cstr()) {
                    Ok(d) => d,
                    Err(Errno::NOENT) => continue,
                    Err(Errno::LOOP | Errno::NOTDIR | Errno::XDEV) => {
                        out.left.push(here);
                        continue;
                    }
                    Err(e) => return Err(refuse_or_target(self.path, &here, e)),
                };
                // A directory of someone else's, renamed in, is not walked.
                let st = crate::io::sys::fs::fstat(&sub)
                    .map_err(|e| refuse_or_target(self.path, &here, e))?;
                if st.st_uid != self.id.uid || st.st_dev != self.id.dev {
                    out.left.push(format!(
                        "{here}/ (not volbench's: another owner or file system)"
                    ));
                    continue;
                }
                self.dir(&sub, &here, level + 1, out)?;
                match gate::rmdir_at(dir, n.as_cstr()) {
                    Ok(()) => out.dirs += 1,
                    Err(Errno::NOENT) => {}
                    // What kept it is listed already.
                    Err(Errno::NOTEMPTY | Errno::EXIST) => {}
                    Err(e) => {
                        return Err(VbError::run(format!(
                            "cannot remove {}/{here}: {}",
                            self.path.display(),
                            errno_text(e)
                        )));
                    }
                }
            } else if ours(&name, self.files_per_dir) {
                match owner::check_at(dir, n.as_cstr(), &self.id) {
                    Ok(()) => match gate::unlink_at(dir, n.as_cstr()) {
                        Ok(()) => out.files += 1,
                        Err(Errno::NOENT) => {}
                        Err(e) => {
                            return Err(VbError::run(format!(
                                "cannot delete {}/{here}: {}",
                                self.path.display(),
                                errno_text(e)
                            )));
                        }
                    },
                    Err(None) => {}
                    Err(Some(why)) => out.left.push(format!("{here} ({why})")),
                }
            } else {
                out.left.push(here);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_d_and_a_number_name_a_tree_directory() {
        assert!(dir_name(b"d0"));
        assert!(dir_name(b"d99999"));
        assert!(!dir_name(b"d"));
        assert!(!dir_name(b"d01"));
        assert!(!dir_name(b"data"));
    }
}
