//! The one gate: every create, open-for-write-by-creation, truncate, rename,
//! unlink, mkdir and rmdir volbench makes is one of the functions here, so
//! the rules live in one place and `tests/e2e/architecture.rs` can refuse
//! those system calls anywhere else. Relative names never follow a link
//! (O_NOFOLLOW, *at calls on a directory descriptor the caller verified);
//! a rename never replaces a name unless the caller says it replaces its own
//! temporary file over a name it checked; what may be unlinked or
//! overwritten inside a file set or tree is decided by `owner`.

pub(crate) mod owner;
pub(crate) mod setdir;

use crate::io::sys::fd::{AsFd, OwnedFd};
use std::path::Path;

use crate::io::sys::fs::{AtFlags, Mode, OFlags, RenameFlags};
use crate::io::sys::io::Errno;
use crate::io::sys::path::Arg;

/// How a file is opened: callers outside the gate name what they do, never
/// the write flags themselves (`tests/e2e/architecture.rs` looks for those).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    Read,
    Write,
    ReadWrite,
    /// Writes go to the end (O_APPEND).
    Append,
}

impl Access {
    pub(crate) fn flags(self) -> OFlags {
        match self {
            Access::Read => OFlags::RDONLY,
            Access::Write => OFlags::WRONLY,
            Access::ReadWrite => OFlags::RDWR,
            Access::Append => OFlags::WRONLY | OFlags::APPEND,
        }
    }
}

/// Creates `name` in `dir` as a new regular file: an existing name (a file,
/// a link, anything) fails with EEXIST, and no link is followed.
pub(crate) fn create_new_at<P: Arg>(
    dir: impl AsFd,
    name: P,
    flags: OFlags,
    mode: u32,
) -> Result<OwnedFd, Errno> {
    crate::io::sys::fs::openat(
        dir,
        name,
        flags | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(mode),
    )
}

/// `create_new_at` for a path the user named (a journal, an imported suite):
/// the last component must not exist and is never a followed link.
pub(crate) fn create_new(path: &Path, flags: OFlags, mode: u32) -> Result<OwnedFd, Errno> {
    crate::io::sys::fs::open(
        path,
        flags | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(mode),
    )
}

/// Opens the file or block device the user named as the target, which
/// `expect` (device, inode, device number) says was inspected: writing it
/// (`access` other than `Read`) is the user's `--allow-overwrite`, checked
/// by the caller; here the open must reach that very file. O_NONBLOCK: a
/// FIFO swapped in cannot block the open.
pub(crate) fn open_named(
    path: &Path,
    access: Access,
    extra: OFlags,
    expect: (u64, u64, u64),
) -> crate::error::Result<OwnedFd> {
    let direct = extra.contains(OFlags::DIRECT);
    let fd = crate::io::sys::fs::open(
        path,
        access.flags() | extra | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| setdir::open_error(path, e, direct))?;
    let st = crate::io::sys::fs::fstat(&fd).map_err(|e| setdir::open_error(path, e, false))?;
    if (st.st_dev, st.st_ino, st.st_rdev) != expect {
        return Err(crate::error::VbError::refused(format!(
            "refusing to use {}: it was replaced after volbench inspected it",
            path.display()
        )));
    }
    if let Ok(fl) = crate::io::sys::fs::fcntl_getfl(&fd) {
        let _ = crate::io::sys::fs::fcntl_setfl(&fd, fl - OFlags::NONBLOCK);
    }
    Ok(fd)
}

/// Opens an existing file at a path the user named (a journal volbench
/// made) with `access`, never following a link there: `proof` must accept
/// the open descriptor's file (regular, one link, ours) before the caller
/// gets it, and a write access never truncates. `Ok(None)`: nothing there.
pub(crate) fn open_own_file(
    path: &Path,
    access: Access,
    proof: impl Fn(&crate::io::sys::fs::Stat) -> Result<(), &'static str>,
) -> Result<Option<(OwnedFd, crate::io::sys::fs::Stat)>, OwnFileError> {
    let fd = match crate::io::sys::fs::open(
        path,
        access.flags() | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK,
        Mode::empty(),
    ) {
        Ok(fd) => fd,
        Err(Errno::NOENT) => return Ok(None),
        Err(e) => return Err(OwnFileError::Sys(e)),
    };
    let st = crate::io::sys::fs::fstat(&fd).map_err(OwnFileError::Sys)?;
    proof(&st).map_err(OwnFileError::NotOurs)?;
    Ok(Some((fd, st)))
}

/// Why `open_own_file` gave nothing.
#[derive(Debug)]
pub(crate) enum OwnFileError {
    Sys(Errno),
    /// The proof's reason: the file is left as it is.
    NotOurs(&'static str),
}

/// Sets the length of a file the caller opened and checked as its own.
pub(crate) fn truncate(fd: impl AsFd, len: u64) -> Result<(), Errno> {
    crate::io::sys::fs::ftruncate(fd, len)
}

pub(crate) fn mkdir_at<P: Arg>(dir: impl AsFd, name: P, mode: u32) -> Result<(), Errno> {
    crate::io::sys::fs::mkdirat(dir, name, Mode::from_raw_mode(mode))
}

/// Makes one directory level at a path (the target or output directory the
/// user named; its parents must exist).
pub(crate) fn mkdir(path: &Path, mode: u32) -> Result<(), Errno> {
    crate::io::sys::fs::mkdir(path, Mode::from_raw_mode(mode))
}

/// Makes a directory the user named and its missing parents.
pub(crate) fn create_dir_all(path: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(path)
}

/// Removes an empty directory; a non-empty one stays (ENOTEMPTY).
pub(crate) fn rmdir_at<P: Arg>(dir: impl AsFd, name: P) -> Result<(), Errno> {
    crate::io::sys::fs::unlinkat(dir, name, AtFlags::REMOVEDIR)
}

/// Unlinks a name the caller has just proven its own (`owner::check_at`,
/// or a temporary file it created itself).
pub(crate) fn unlink_at<P: Arg>(dir: impl AsFd, name: P) -> Result<(), Errno> {
    crate::io::sys::fs::unlinkat(dir, name, AtFlags::empty())
}

/// Renames within one directory without ever replacing what sits at `to`:
/// renameat2(RENAME_NOREPLACE), or where the file system lacks it (EINVAL)
/// a hard link to the new name (which fails on an existing name) and an
/// unlink of the old.
pub(crate) fn rename_noreplace_at<P: Arg + Copy, Q: Arg + Copy>(
    dir: impl AsFd,
    from: P,
    to: Q,
) -> Result<(), Errno> {
    let dir = dir.as_fd();
    match crate::io::sys::fs::renameat_with(dir, from, dir, to, RenameFlags::NOREPLACE) {
        Err(Errno::INVAL | Errno::NOSYS) => {
            crate::io::sys::fs::linkat(dir, from, dir, to, AtFlags::empty())?;
            crate::io::sys::fs::unlinkat(dir, from, AtFlags::empty())
        }
        other => other,
    }
}

/// Puts a temporary file the caller created over `name`, which the caller
/// checked is missing or a regular file: how an output file is replaced
/// whole, so a reader never sees half of it.
pub(crate) fn replace_own_temp_at<P: Arg, Q: Arg>(
    dir: impl AsFd,
    tmp: P,
    name: Q,
) -> Result<(), Errno> {
    let dir = dir.as_fd();
    crate::io::sys::fs::renameat(dir, tmp, dir, name)
}

/// Writes to an existing kernel knob (`/proc/sys/vm/drop_caches`): opened
/// for writing only, never created or truncated.
pub(crate) fn write_knob(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let fd = crate::io::sys::fs::open(
        path,
        OFlags::WRONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    std::fs::File::from(fd).write_all(bytes)
}

/// Removes a directory volbench made for itself once the caller emptied it
/// of what it proved its own; anything left in it keeps it (ENOTEMPTY).
pub(crate) fn remove_empty_dir(path: &Path) -> std::io::Result<()> {
    std::fs::remove_dir(path)
}

/// Unlinks a path's last component (never following a link there): the
/// lock file of a directory a refused prepare made and checked as its own.
pub(crate) fn unlink(path: &Path) -> Result<(), Errno> {
    crate::io::sys::fs::unlink(path)
}

/// Allocates `len` bytes of a file the caller created (a journal), so no
/// later write to it can find the disk full.
pub(crate) fn allocate(fd: impl AsFd, len: u64) -> Result<(), Errno> {
    crate::io::sys::fs::fallocate(fd, crate::io::sys::fs::FallocateFlags::empty(), 0, len)
}

/// Deallocates `len` bytes at `offset` of a file volbench made, keeping its
/// size: a replayed trace's discard (a block device's is BLKDISCARD, no
/// change to any name or size).
pub(crate) fn punch_hole(fd: impl AsFd, offset: u64, len: u64) -> Result<(), Errno> {
    crate::io::sys::fs::fallocate(
        fd,
        crate::io::sys::fs::FallocateFlags::PUNCH_HOLE
            | crate::io::sys::fs::FallocateFlags::KEEP_SIZE,
        offset,
        len,
    )
}
