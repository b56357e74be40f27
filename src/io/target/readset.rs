//! An existing file set opened for reading only (`volbench verify`): the
//! files its marker lists, checked to be those very files, under the set's
//! lock so no run writes them meanwhile. Nothing is created but the lock.

use crate::io::sys::fd::OwnedFd;
use std::path::{Path, PathBuf};

use crate::io::sys::fs::OFlags;

use super::lock;
use super::marker::{FILE_PREFIX, MARKER_NAME, SetIdentity, existing_set};
use crate::error::{Result, VbError};
use crate::io::gate::setdir::SetDir;
use crate::io::workload::Layout;

pub(crate) struct ReadSet {
    pub layout: Layout,
    /// The data format the marker records (None: made before formats were).
    pub format: Option<String>,
    pub paths: Vec<PathBuf>,
    pub files: Vec<OwnedFd>,
    /// Whether the files were opened with O_DIRECT (else the page cache).
    pub direct: bool,
    /// The set's identity, which a journal of it names.
    pub identity: SetIdentity,
    /// A write without --verify's stamps since the fill, said as when.
    pub unstamped: Option<String>,
    _lock: lock::Lock,
}

pub(crate) fn open(dir: &Path) -> Result<ReadSet> {
    let set = SetDir::open_existing(dir)?;
    let lock = lock::lock_set(&set)?;
    let Some(shape) = existing_set(&set)? else {
        return Err(VbError::target(format!(
            "{} holds no filled volbench file set ({MARKER_NAME} is missing or unfinished)",
            dir.display()
        )));
    };
    let (nfiles, file_size) = (shape.files, shape.file_size);
    let mut files = Vec::with_capacity(nfiles as usize);
    let mut paths = Vec::with_capacity(nfiles as usize);
    let mut direct = true;
    for (i, ino) in shape.inodes.iter().enumerate() {
        let name = format!("{FILE_PREFIX}{i}.dat");
        let path = set.path_of(&name);
        let opened = set
            .open_regular(&name, OFlags::RDONLY | OFlags::DIRECT)
            .or_else(|_| {
                direct = false;
                set.open_regular(&name, OFlags::RDONLY)
            });
        let (fd, st) = opened?;
        if st.st_ino != *ino {
            return Err(VbError::refused(format!(
                "refusing to check {}: it is not the file the set's marker lists",
                path.display()
            )));
        }
        if (st.st_size as u64) < file_size {
            return Err(VbError::target(format!(
                "{} is {} bytes, shorter than the set's {file_size}",
                path.display(),
                st.st_size
            )));
        }
        files.push(fd);
        paths.push(path);
    }
    Ok(ReadSet {
        layout: Layout { nfiles, file_size },
        format: shape.format,
        identity: shape.identity,
        unstamped: shape.unstamped,
        paths,
        files,
        direct,
        _lock: lock,
    })
}
