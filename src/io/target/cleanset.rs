//! Removing a file set volbench made: quick's scratch directory (the set,
//! then the empty directory), and `volbench clean` on a set, each only
//! what the set's marker lists and the files still prove ours.

use std::path::Path;

use super::marker::{MARKER_NAME, read_marker};
use crate::error::{Result, VbError};
use crate::io::backend::{Dir, Entry, Storage};
use crate::io::gate::owner::set_file_ours;

use super::fileset::file_name;

/// Removes a directory volbench created for a set of its own (quick's
/// scratch directory): the files its marker lists, the marker and the lock
/// file, then the directory itself, which must be empty by then; anything
/// else found there is left, and so is the directory.
pub(crate) fn remove_set_dir(path: &Path) -> Result<()> {
    #[cfg(unix)]
    if let Some(storage) = crate::io::backend::url_storage(path) {
        use crate::io::backend::{nfs, smb};
        let dir = crate::io::backend::open_dir(storage, path, false)?;
        remove_set(&*dir)?;
        let lock = match storage {
            Storage::Smb => smb::SMB_LOCK_NAME,
            _ => nfs::NFS_LOCK_NAME,
        };
        for name in [MARKER_NAME, lock] {
            if let Ok(Entry::Regular(a)) = dir.entry(name) {
                dir.remove_if_ours(name, a.id);
            }
        }
        drop(dir);
        return match storage {
            Storage::Smb => smb::remove_empty_dir(path),
            _ => nfs::remove_empty_dir(path),
        };
    }
    let dir = crate::io::backend::local::open(path, false)?;
    remove_set(&*dir)?;
    for name in [MARKER_NAME, super::LOCK_NAME] {
        if let Ok(Entry::Regular(a)) = dir.entry(name) {
            dir.remove_if_ours(name, a.id);
        }
    }
    drop(dir);
    crate::io::gate::remove_empty_dir(path)
        .map_err(|e| VbError::target(format!("cannot remove {}: {e}", path.display())))
}

/// Removes the files of the set in `dir` that its marker lists and that
/// are still those files (the id it records, regular, one link, this
/// user's, on the set's file system), then the marker once none is left;
/// anything else is left where it is. Returns the files removed.
pub(crate) fn remove_set(dir: &dyn Dir) -> Result<u64> {
    let Some(m) = read_marker(dir, false)? else {
        return Ok(0);
    };
    let (uid, dev) = (dir.uid(), dir.attr()?.dev);
    let marker_at = super::marker::marker_attr(dir);
    let mut removed = 0;
    let mut kept = false;
    for (i, &ino) in m.inodes.iter().enumerate() {
        let name = file_name(i as u32);
        match dir.entry(&name)? {
            Entry::Regular(a)
                if a.id == ino
                    && set_file_ours(&a, uid, dev).is_ok()
                    && !super::marker::born_after_marker(&a, marker_at.as_ref()) =>
            {
                dir.remove_if_ours(&name, ino);
                removed += 1;
            }
            Entry::Missing => {}
            _ => kept = true,
        }
    }
    if !kept {
        if let Ok(Entry::Regular(a)) = dir.entry(MARKER_NAME) {
            dir.remove_if_ours(MARKER_NAME, a.id);
        }
    }
    Ok(removed)
}

/// `volbench clean` on a file set, in a local directory or named by URL:
/// the set's lock taken (a run using it refuses the clean), its own files
/// removed, nothing else. None when `path` holds no set's marker.
pub(crate) fn clean_set(path: &Path) -> Result<Option<u64>> {
    let storage = crate::io::backend::url_storage(path).unwrap_or(Storage::Local);
    let dir = crate::io::backend::open_dir(storage, path, false)?;
    if !matches!(dir.entry(MARKER_NAME)?, Entry::Regular(_)) {
        return Ok(None);
    }
    let _lock = dir.lock()?;
    remove_set(&*dir).map(Some)
}
