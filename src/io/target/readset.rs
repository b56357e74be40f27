//! An existing file set opened for reading only (`volbench verify`): the
//! files its marker lists, checked to be those very files, under the set's
//! lock so no run writes them meanwhile. Nothing is created but the lock.

use std::path::{Path, PathBuf};

use super::marker::{FILE_PREFIX, MARKER_NAME, SetIdentity, existing_set};
use crate::error::{Result, VbError};
use crate::io::backend::{Dir, Held, SetFile};
use crate::io::workload::Layout;

pub(crate) struct ReadSet {
    pub(crate) layout: Layout,
    /// The data format the marker records (None: made before formats were).
    pub(crate) format: Option<String>,
    pub(crate) paths: Vec<PathBuf>,
    /// The set's directory and each file's id: the files are opened one at
    /// a time (`file`), so a set may have more than this process may hold
    /// open.
    dir: std::sync::Arc<dyn Dir>,
    ids: Vec<u64>,
    /// Whether the files were opened with O_DIRECT (else the page cache).
    pub(crate) direct: bool,
    /// The set's identity, which a journal of it names.
    pub(crate) identity: SetIdentity,
    /// A write without --verify's stamps since the fill, said as when.
    pub(crate) unstamped: Option<String>,
    _lock: Box<dyn Held>,
}

/// Opens the set at `dir`, a local directory or a URL (`nfs://`,
/// `smb://`: read through that back end's client, which has no cache to
/// bypass).
pub(crate) fn open(dir: &Path) -> Result<ReadSet> {
    if crate::io::backend::is_url(dir) {
        crate::io::backend::check_url(dir)?;
    }
    let storage = crate::io::backend::url_storage(dir).unwrap_or(crate::spec::Storage::Local);
    let set = crate::io::backend::open_dir(storage, dir, false)?;
    let lock = set.lock()?;
    let Some(shape) = existing_set(&*set)? else {
        return Err(VbError::target(format!(
            "{} holds no filled volbench file set ({MARKER_NAME} is missing or unfinished)",
            dir.display()
        )));
    };
    let (nfiles, file_size) = (shape.files, shape.file_size);
    let mut paths = Vec::with_capacity(nfiles as usize);
    let mut direct = true;
    for (i, ino) in shape.inodes.iter().enumerate() {
        let name = format!("{FILE_PREFIX}{i}.dat");
        let path = set.path_of(&name);
        let (f, a) = set.open_read(&name)?;
        // The page cache would hide what the device holds: direct where
        // the file system takes it.
        if direct && f.set_direct().is_err() {
            direct = false;
        }
        if a.id != *ino {
            return Err(VbError::refused(format!(
                "refusing to check {}: it is not the file the set's marker lists",
                path.display()
            )));
        }
        if a.size < file_size {
            return Err(VbError::target(format!(
                "{} is {} bytes, shorter than the set's {file_size}",
                path.display(),
                a.size
            )));
        }
        paths.push(path);
    }
    Ok(ReadSet {
        layout: Layout { nfiles, file_size },
        format: shape.format,
        identity: shape.identity,
        unstamped: shape.unstamped,
        paths,
        dir: set,
        ids: shape.inodes,
        direct,
        _lock: lock,
    })
}

impl ReadSet {
    /// File `i` of the set, open for reading (direct if the set's first
    /// file took it), still the file the marker lists.
    pub(crate) fn file(&self, i: usize) -> Result<Box<dyn SetFile>> {
        let name = format!("{FILE_PREFIX}{i}.dat");
        let (f, a) = self.dir.open_read(&name)?;
        if Some(&a.id) != self.ids.get(i) {
            return Err(VbError::refused(format!(
                "refusing to check {}: it is not the file the set's marker lists",
                self.dir.path_of(&name).display()
            )));
        }
        if self.direct && f.set_direct().is_err() {
            return Err(VbError::target(format!(
                "{} no longer opens for direct I/O",
                self.dir.path_of(&name).display()
            )));
        }
        Ok(f)
    }
}
