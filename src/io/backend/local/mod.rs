//! The local back end, the default: a directory target reached through a
//! descriptor opened once (`gate::setdir`), every name one component with
//! O_NOFOLLOW, files proven by what the kernel says of them, the run's
//! lock a flock (`lock.rs`), and a worker's files local descriptors for the
//! kernel engines.

pub(crate) mod lock;

use std::path::Path;
use std::sync::Arc;

use super::{Access, Attr, Dir, Entry, Files, Held, IoOpen, Proof, SetFile};
use crate::error::{Result, VbError};
use crate::io::gate::setdir::{self, SetDir};
use crate::io::sys::fd::{AsFd, OwnedFd};
use crate::io::sys::fs::{OFlags, Stat};
use crate::io::sys::io::Errno;

/// A directory of a local target.
#[derive(Debug)]
pub(crate) struct LocalDir {
    dir: SetDir,
}

/// A local file of a set, open.
pub(crate) struct LocalFile {
    fd: OwnedFd,
}

impl Held for lock::Lock {}

/// Opens the directory target `path`, made (one level) if missing when
/// `create`.
pub(crate) fn open(path: &Path, create: bool) -> Result<Arc<dyn Dir>> {
    let dir = if create {
        SetDir::open_or_create(path)?
    } else {
        SetDir::open_existing(path)?
    };
    Ok(Arc::new(LocalDir { dir }))
}

fn attr_of(st: &Stat) -> Attr {
    Attr::of_stat(st)
}

fn file(fd: OwnedFd, st: Stat) -> (Box<dyn SetFile>, Attr) {
    (Box::new(LocalFile { fd }), attr_of(&st))
}

impl LocalDir {
    /// The directory's file system, which every file of the set shares.
    fn dev(&self) -> u64 {
        self.dir.dev
    }
}

impl Dir for LocalDir {
    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn attr(&self) -> Result<Attr> {
        crate::io::sys::fs::fstat(self.dir.fd())
            .map(|st| attr_of(&st))
            .map_err(|e| {
                VbError::target(format!(
                    "cannot inspect {}: {}",
                    self.path().display(),
                    std::io::Error::from(e)
                ))
            })
    }

    fn uid(&self) -> u32 {
        crate::io::gate::owner::euid()
    }

    fn entry(&self, name: &str) -> Result<Entry> {
        Ok(match self.dir.entry(name)? {
            setdir::Entry::Missing => Entry::Missing,
            setdir::Entry::Regular(st) => Entry::Regular(Attr {
                birth: self.dir.birth_of(name),
                ..attr_of(&st)
            }),
            setdir::Entry::Other(what) => Entry::Other(what),
        })
    }

    fn create_new(&self, name: &str, access: Access) -> Result<(Box<dyn SetFile>, Attr)> {
        let (fd, st) = self.dir.create_new(name, access)?;
        Ok(file(fd, st))
    }

    fn open_read(&self, name: &str) -> Result<(Box<dyn SetFile>, Attr)> {
        let (fd, st) = self.dir.open_read(name, OFlags::empty())?;
        Ok(file(fd, st))
    }

    fn open_ours(
        &self,
        name: &str,
        access: Access,
        proof: Proof<'_>,
    ) -> Result<(Box<dyn SetFile>, Attr)> {
        let (fd, st) = self
            .dir
            .open_ours(name, access, OFlags::empty(), |st| proof(&attr_of(st)))?;
        Ok(file(fd, st))
    }

    fn remove_if_ours(&self, name: &str, id: u64) {
        self.dir.remove_if_ours(name, id)
    }

    fn read_capped(&self, name: &str, cap: usize) -> Result<Option<Vec<u8>>> {
        self.dir.read_capped(name, cap)
    }

    fn replace(&self, name: &str, bytes: &[u8]) -> Result<u64> {
        self.dir.replace(name, bytes)
    }

    fn rewrite_ours(&self, name: &str, id: u64, bytes: &[u8]) -> Result<()> {
        self.dir.rewrite_ours(name, id, bytes)
    }

    fn free_bytes(&self) -> Option<u64> {
        self.dir.free_bytes()
    }

    fn open_sub(&self, name: &str) -> Result<Arc<dyn Dir>> {
        Ok(Arc::new(LocalDir {
            dir: self.dir.open_sub(name)?,
        }))
    }

    fn lock(&self) -> Result<Box<dyn Held>> {
        Ok(Box::new(lock::lock_set(&self.dir)?))
    }

    fn open_files(&self, files: &[(String, u64)], how: &IoOpen) -> Result<Files> {
        let access = if how.write {
            Access::ReadWrite
        } else {
            Access::Read
        };
        let extra = io_flags(how);
        let dev = self.dev();
        let mut fds = Vec::with_capacity(files.len());
        for (name, ino) in files {
            let same = |st: &Stat| {
                if st.st_ino != *ino || st.st_dev != dev {
                    Err("it was replaced after volbench prepared it")
                } else {
                    Ok(())
                }
            };
            let (fd, st) = match access {
                Access::Read => self.dir.open_read(name, extra)?,
                _ => self.dir.open_ours(name, access, extra, same)?,
            };
            same(&st).map_err(|why| {
                VbError::refused(format!(
                    "refusing to use {}: {why}",
                    self.dir.path_of(name).display()
                ))
            })?;
            fds.push(fd);
        }
        Ok(Files::Fds(fds))
    }
}

/// The open flags beside the access a worker's files take: O_DIRECT, the
/// write-through of --sync, and on Windows overlapped handles for an
/// engine that keeps I/Os in flight (the synchronous calls cannot use
/// them; Linux's descriptors serve both).
pub(crate) fn io_flags(how: &IoOpen) -> OFlags {
    let mut flags = OFlags::empty();
    if how.direct {
        flags |= OFlags::DIRECT;
    }
    if how.write {
        flags |= match how.sync {
            crate::spec::WriteSync::None => OFlags::empty(),
            crate::spec::WriteSync::Dsync => OFlags::DSYNC,
            crate::spec::WriteSync::Sync => OFlags::SYNC,
        };
    }
    #[cfg(windows)]
    if how.overlapped {
        flags |= OFlags::OVERLAPPED;
    }
    flags
}

impl SetFile for LocalFile {
    fn read_at(&self, buf: &mut [u8], off: u64) -> std::result::Result<usize, Errno> {
        crate::io::sys::io::pread(&self.fd, buf, off)
    }

    fn write_at(&self, buf: &[u8], off: u64) -> std::result::Result<usize, Errno> {
        crate::io::sys::io::pwrite(&self.fd, buf, off)
    }

    fn truncate(&self, len: u64) -> std::result::Result<(), Errno> {
        crate::io::gate::truncate(&self.fd, len)
    }

    fn set_direct(&self) -> std::result::Result<(), Errno> {
        crate::io::sys::fs::fcntl_getfl(&self.fd)
            .and_then(|fl| crate::io::sys::fs::fcntl_setfl(&self.fd, fl | OFlags::DIRECT))
    }

    fn dio_align(&self) -> u64 {
        probe_align_fd(&self.fd, false)
    }

    fn settle(&self) -> std::result::Result<(), Errno> {
        crate::io::sys::fs::fdatasync(&self.fd)?;
        let _ =
            crate::io::sys::fs::fadvise(&self.fd, 0, None, crate::io::sys::fs::Advice::DontNeed);
        Ok(())
    }
}

/// The offset and length alignment O_DIRECT needs, probed from the kernel
/// on a descriptor opened with O_DIRECT (which confirms the file system
/// accepts it at all).
pub(crate) fn probe_align_fd(fd: &impl AsFd, device: bool) -> u64 {
    // Direct I/O on a disk is aligned to its logical sector.
    #[cfg(windows)]
    if device {
        return crate::io::sys::fs::disk_sector_size(fd)
            .map(u64::from)
            .unwrap_or(4096)
            .max(512);
    }
    #[cfg(unix)]
    if device {
        return crate::io::sys::fs::ioctl_blksszget(fd)
            .map(|s| s as u64)
            .unwrap_or(4096)
            .max(512);
    }
    match crate::io::sys::fs::statx(
        fd,
        "",
        crate::io::sys::fs::AtFlags::EMPTY_PATH,
        crate::io::sys::fs::StatxFlags::DIOALIGN,
    ) {
        Ok(stx) if stx.stx_dio_offset_align > 0 => stx.stx_dio_offset_align as u64,
        // The kernel or file system does not report it: 4096 is safe on
        // every common device (512e and 4Kn alike).
        _ => 4096,
    }
}
