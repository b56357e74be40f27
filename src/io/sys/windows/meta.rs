//! `metadata` and `symlink_metadata` of a path with the facts the Linux
//! code reads through `std::os::unix::fs::MetadataExt` (std's Windows
//! metadata has no stable file index or volume serial): a handle opened
//! for attributes only, then `fstat`.

use super::errno::Errno;
use super::file::{fstat, open};
use super::types::{FileType as Kind, Mode, OFlags, Stat};

#[derive(Clone, Copy, Debug)]
pub(crate) struct Metadata(Stat);

/// The type of what a path names, with std's and Unix's questions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FileType(Kind);

impl FileType {
    pub(crate) fn is_dir(self) -> bool {
        self.0 == Kind::Directory
    }
    pub(crate) fn is_file(self) -> bool {
        self.0 == Kind::RegularFile
    }
}

/// `std::os::unix::fs::FileTypeExt`: a Windows path is never a device node.
pub(crate) trait FileTypeExt {
    fn is_block_device(&self) -> bool;
}

impl FileTypeExt for FileType {
    fn is_block_device(&self) -> bool {
        self.0 == Kind::BlockDevice
    }
}

impl Metadata {
    pub(crate) fn file_type(&self) -> FileType {
        FileType(Kind::from_raw_mode(self.0.st_mode))
    }
    pub(crate) fn is_dir(&self) -> bool {
        self.file_type().is_dir()
    }
    pub(crate) fn is_file(&self) -> bool {
        self.file_type().is_file()
    }
    pub(crate) fn len(&self) -> u64 {
        self.0.st_size.max(0) as u64
    }
}

/// `std::os::unix::fs::MetadataExt`'s fields, from `fstat`.
pub(crate) trait MetadataExt {
    fn dev(&self) -> u64;
    fn ino(&self) -> u64;
    fn rdev(&self) -> u64;
    fn blocks(&self) -> u64;
}

impl MetadataExt for Metadata {
    fn dev(&self) -> u64 {
        self.0.st_dev
    }
    fn ino(&self) -> u64 {
        self.0.st_ino
    }
    fn rdev(&self) -> u64 {
        self.0.st_rdev
    }
    fn blocks(&self) -> u64 {
        self.0.st_blocks.max(0) as u64
    }
}

fn of(path: &std::path::Path, flags: OFlags) -> std::io::Result<Metadata> {
    let fd = open(path, flags, Mode::empty()).map_err(std::io::Error::from)?;
    fstat(&fd).map(Metadata).map_err(std::io::Error::from)
}

/// What `path` names, following a link at its end.
pub(crate) fn metadata(path: impl AsRef<std::path::Path>) -> std::io::Result<Metadata> {
    of(path.as_ref(), OFlags::RDONLY)
}

/// What `path` names, a link (reparse point) itself rather than its target.
pub(crate) fn symlink_metadata(path: impl AsRef<std::path::Path>) -> std::io::Result<Metadata> {
    match of(path.as_ref(), OFlags::RDONLY | OFlags::NOFOLLOW) {
        // NOFOLLOW refuses a reparse point (ELOOP); here it is the answer.
        Err(e) if Errno::from_io_error(&e) == Some(Errno::LOOP) => Ok(Metadata(Stat {
            st_mode: super::types::S_IFLNK | 0o777,
            ..Stat::default()
        })),
        other => other,
    }
}
