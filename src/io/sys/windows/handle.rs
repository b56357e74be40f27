//! The `fs` calls on an open handle: length and allocation, flush, the
//! run's lock, the volume's free space, seek, and the flag calls Windows
//! keeps fixed for a handle's life.

use windows_sys::Win32::Storage::FileSystem as F;
use windows_sys::Win32::System::IO::OVERLAPPED;

use super::errno::{Errno, Result};
use super::fd::{AsFd, AsRawFd};
use super::file::{check, info, open, set_info};
use super::nt;
use super::path::Arg;
use super::types::*;

pub(crate) fn ftruncate(fd: impl AsFd, len: u64) -> Result<()> {
    let eof = F::FILE_END_OF_FILE_INFO {
        EndOfFile: i64::try_from(len).map_err(|_| Errno::INVAL)?,
    };
    set_info(fd.as_fd(), F::FileEndOfFileInfo, &eof)
}

/// fallocate's mode 0 (and KEEP_SIZE) is the file's allocation size, which
/// reserves the clusters; PUNCH_HOLE has no counterpart here.
pub(crate) fn fallocate(fd: impl AsFd, flags: FallocateFlags, offset: u64, len: u64) -> Result<()> {
    if flags.contains(FallocateFlags::PUNCH_HOLE) {
        return Err(Errno::OPNOTSUPP);
    }
    let fd = fd.as_fd();
    let end = offset.checked_add(len).ok_or(Errno::INVAL)?;
    let end = i64::try_from(end).map_err(|_| Errno::INVAL)?;
    let std_info: F::FILE_STANDARD_INFO = info(fd, F::FileStandardInfo)?;
    if std_info.AllocationSize < end {
        set_info(
            fd,
            F::FileAllocationInfo,
            &F::FILE_ALLOCATION_INFO {
                AllocationSize: end,
            },
        )?;
    }
    if !flags.contains(FallocateFlags::KEEP_SIZE) && std_info.EndOfFile < end {
        set_info(
            fd,
            F::FileEndOfFileInfo,
            &F::FILE_END_OF_FILE_INFO { EndOfFile: end },
        )?;
    }
    Ok(())
}

/// FlushFileBuffers: data and metadata, the only flush Windows has.
pub(crate) fn fdatasync(fd: impl AsFd) -> Result<()> {
    // SAFETY: a flush of a handle we hold.
    check(unsafe { F::FlushFileBuffers(fd.as_fd().as_raw_fd()) })
}

/// Windows keeps an open handle's flags for its life: nothing reads as set.
pub(crate) fn fcntl_getfl(_fd: impl AsFd) -> Result<OFlags> {
    Ok(OFlags::empty())
}

/// Windows cannot change an open handle's flags. NONBLOCK means nothing
/// for a file there; DIRECT (FILE_NO_INTERMEDIATE_BUFFERING) is set when a
/// worker's handle is opened (`target::open_files`), so a fill that asks
/// for it after its create writes through the cache and FlushFileBuffers.
pub(crate) fn fcntl_setfl(_fd: impl AsFd, _flags: OFlags) -> Result<()> {
    Ok(())
}

/// flock as a byte-range lock far past any data (the last byte of the
/// 64-bit range): Windows' locks are mandatory, and a lock on the data
/// would stop the next run from reading the holder line it names. The lock
/// ends when the handle closes, so there is no unlock.
pub(crate) fn flock(fd: impl AsFd, op: FlockOperation) -> Result<()> {
    const LOCK_AT: u64 = u64::MAX - 1;
    // SAFETY: plain data; the offset goes in below.
    let mut o: OVERLAPPED = unsafe { std::mem::zeroed() };
    o.Anonymous.Anonymous.Offset = LOCK_AT as u32;
    o.Anonymous.Anonymous.OffsetHigh = (LOCK_AT >> 32) as u32;
    let h = fd.as_fd().as_raw_fd();
    let flags = match op {
        FlockOperation::NonBlockingLockExclusive => {
            F::LOCKFILE_EXCLUSIVE_LOCK | F::LOCKFILE_FAIL_IMMEDIATELY
        }
    };
    // SAFETY: `o` outlives the call, which completes before it returns on a
    // synchronous handle.
    check(unsafe { F::LockFileEx(h, flags, 0, 1, 0, &mut o) })
}

/// The lock of a directory (a metadata tree's root), which Windows cannot
/// byte-range lock: a second handle of it asking to add files and sharing
/// reading and deleting but not writing. While it is open, another handle
/// that asks to write the directory (the next run's lock) fails with a
/// sharing violation (WOULDBLOCK here), while opens that only read or
/// traverse it, and the creates and deletes below it, go on as before;
/// closing it, or the process ending, releases it. Share modes are kept by
/// the file system, so a tree on an SMB share is locked for every client.
pub(crate) fn lock_directory(dir: impl AsFd) -> Result<super::fd::OwnedFd> {
    const FILE_ADD_FILE: u32 = 0x2;
    const SHARE_READ_DELETE: u32 = 0x1 | 0x4;
    nt::open_relative_sharing(
        dir.as_fd(),
        &[],
        FILE_ADD_FILE,
        nt::FILE_OPEN,
        nt::FILE_DIRECTORY_FILE | nt::FILE_OPEN_REPARSE_POINT,
        SHARE_READ_DELETE,
    )
    .map_err(|e| {
        if e == Errno::BUSY {
            Errno::WOULDBLOCK
        } else {
            e
        }
    })
}

/// The free space and read-only flag of the volume `fd` is on.
pub(crate) fn fstatvfs(fd: impl AsFd) -> Result<StatVfs> {
    let fd = fd.as_fd();
    let v = nt::volume_size(fd)?;
    let unit = u64::from(v.sectors_per_unit) * u64::from(v.bytes_per_sector);
    let mut fs_flags = 0u32;
    // SAFETY: only the flags are asked for; the other outputs are null.
    let ok = unsafe {
        F::GetVolumeInformationByHandleW(
            fd.as_raw_fd(),
            std::ptr::null_mut(),
            0,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            &mut fs_flags,
            std::ptr::null_mut(),
            0,
        )
    };
    const FILE_READ_ONLY_VOLUME: u32 = 0x8_0000;
    let ro = ok != 0 && fs_flags & FILE_READ_ONLY_VOLUME != 0;
    Ok(StatVfs {
        f_bsize: unit,
        f_frsize: unit,
        f_bavail: v.caller_available_units.max(0) as u64,
        f_flag: if ro {
            StatVfsMountFlags::RDONLY
        } else {
            StatVfsMountFlags::empty()
        },
    })
}

pub(crate) fn statvfs(path: impl Arg) -> Result<StatVfs> {
    fstatvfs(open(path, OFlags::RDONLY, Mode::empty())?)
}

/// A cache hint Windows has no per-file counterpart of; the callers treat
/// it as best effort on Linux too.
pub(crate) fn fadvise(
    _fd: impl AsFd,
    _offset: u64,
    _len: Option<u64>,
    _advice: Advice,
) -> Result<()> {
    Ok(())
}

/// Moves a handle's file pointer; returns the new offset.
// Linux sizes a block device by seeking to its end; a Windows disk's size
// comes from an IOCTL (`disk.rs`), so nothing here seeks today.
#[allow(dead_code)]
pub(crate) fn seek(fd: impl AsFd, pos: SeekFrom) -> Result<u64> {
    let (dist, how) = match pos {
        SeekFrom::Start(n) => (i64::try_from(n).map_err(|_| Errno::INVAL)?, 0),
        SeekFrom::Current(n) => (n, 1),
        SeekFrom::End(n) => (n, 2),
    };
    let mut at = 0i64;
    // SAFETY: `at` outlives the call.
    check(unsafe { F::SetFilePointerEx(fd.as_fd().as_raw_fd(), dist, &mut at, how) })?;
    Ok(at as u64)
}
