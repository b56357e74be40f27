//! The `fs` calls on Windows. Opens relative to a directory are
//! `NtCreateFile` with the directory's handle as root (`nt.rs`), so the *at
//! calls mean what they mean on Linux; `NOFOLLOW` is
//! `FILE_OPEN_REPARSE_POINT` plus a refusal (ELOOP) of what opens as a
//! reparse point, so a symbolic link or junction is refused as a link is;
//! unlink and rename act on a handle opened that way, so they too never
//! follow one. A path the user names (`open`, `mkdir`, `unlink`) goes to
//! the Win32 calls, which take drive-letter and UNC paths alike.

use std::os::windows::io::FromRawHandle;

use windows_sys::Win32::Foundation::{FILETIME, INVALID_HANDLE_VALUE};
use windows_sys::Win32::Storage::FileSystem as F;

use super::dir::type_of_attributes;
use super::errno::{Errno, Result};
use super::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use super::nt;
use super::path::Arg;
use super::types::*;

const GENERIC_READ: u32 = 0x8000_0000;
const GENERIC_WRITE: u32 = 0x4000_0000;
const DELETE: u32 = 0x1_0000;
const READ_CONTROL: u32 = 0x2_0000;
const FILE_READ_ATTRIBUTES: u32 = 0x80;
const FILE_WRITE_ATTRIBUTES: u32 = 0x100;
const FILE_LIST_DIRECTORY: u32 = 0x1;
const FILE_FLAG_BACKUP_SEMANTICS: u32 = 0x0200_0000;
const FILE_FLAG_OPEN_REPARSE_POINT: u32 = 0x0020_0000;
const FILE_FLAG_NO_BUFFERING: u32 = 0x2000_0000;
const FILE_FLAG_WRITE_THROUGH: u32 = 0x8000_0000;
const ATTR_DIRECTORY: u32 = 0x10;
const ATTR_REPARSE_POINT: u32 = 0x400;
const ATTR_READONLY: u32 = 0x1;

pub(super) fn check(ok: i32) -> Result<()> {
    if ok == 0 { Err(Errno::last()) } else { Ok(()) }
}

fn wide_nul(p: &impl Arg) -> Result<Vec<u16>> {
    let mut w = p.to_wide()?;
    w.push(0);
    Ok(w)
}

fn access_of(flags: OFlags) -> u32 {
    let rw = if flags.contains(OFlags::RDWR) {
        GENERIC_READ | GENERIC_WRITE
    } else if flags.contains(OFlags::WRONLY) {
        GENERIC_WRITE
    } else {
        GENERIC_READ
    };
    // Attributes and the owner stay readable on a write-only handle: every
    // open is inspected by handle (fstat) before it is used.
    rw | FILE_READ_ATTRIBUTES | READ_CONTROL
}

fn writes(flags: OFlags) -> bool {
    flags.intersects(OFlags::WRONLY | OFlags::RDWR)
}

/// Linux's O_CREAT/O_EXCL/O_TRUNC as an NT create disposition.
fn nt_disposition(flags: OFlags) -> u32 {
    let create = flags.contains(OFlags::CREATE);
    if create && flags.contains(OFlags::EXCL) {
        nt::FILE_CREATE
    } else if create && flags.contains(OFlags::TRUNC) {
        nt::FILE_OVERWRITE_IF
    } else if create {
        nt::FILE_OPEN_IF
    } else if flags.contains(OFlags::TRUNC) {
        4 // FILE_OVERWRITE
    } else {
        nt::FILE_OPEN
    }
}

/// The same as Win32's CreateFileW disposition.
fn win32_disposition(flags: OFlags) -> u32 {
    match nt_disposition(flags) {
        nt::FILE_CREATE => 1,       // CREATE_NEW
        nt::FILE_OVERWRITE_IF => 2, // CREATE_ALWAYS
        nt::FILE_OPEN_IF => 4,      // OPEN_ALWAYS
        4 => 5,                     // TRUNCATE_EXISTING
        _ => 3,                     // OPEN_EXISTING
    }
}

/// O_DIRECT is FILE_NO_INTERMEDIATE_BUFFERING (sector-aligned offsets,
/// lengths and buffers, as O_DIRECT wants), O_DSYNC/O_SYNC write-through.
fn nt_options(flags: OFlags) -> u32 {
    let mut o = 0;
    if flags.contains(OFlags::DIRECTORY) {
        o |= nt::FILE_DIRECTORY_FILE;
    } else if writes(flags) {
        o |= nt::FILE_NON_DIRECTORY_FILE;
    }
    if flags.contains(OFlags::NOFOLLOW) {
        o |= nt::FILE_OPEN_REPARSE_POINT;
    }
    if flags.contains(OFlags::DIRECT) {
        o |= nt::FILE_NO_INTERMEDIATE_BUFFERING;
    }
    if flags.intersects(OFlags::DSYNC | OFlags::SYNC) {
        o |= nt::FILE_WRITE_THROUGH;
    }
    if flags.contains(OFlags::OVERLAPPED) {
        o |= nt::OPEN_ASYNC;
    }
    o
}

/// What an open must refuse after the fact, as Linux's open would have:
/// a reparse point opened itself (NOFOLLOW: ELOOP), a non-directory where
/// O_DIRECTORY asked for one, a directory opened for writing.
fn checked(fd: OwnedFd, flags: OFlags) -> Result<OwnedFd> {
    let tag = attribute_tag(fd.as_fd())?;
    if flags.contains(OFlags::NOFOLLOW) && tag.FileAttributes & ATTR_REPARSE_POINT != 0 {
        return Err(Errno::LOOP);
    }
    let dir = tag.FileAttributes & ATTR_DIRECTORY != 0;
    if flags.contains(OFlags::DIRECTORY) && !dir {
        return Err(Errno::NOTDIR);
    }
    if writes(flags) && dir {
        return Err(Errno::ISDIR);
    }
    Ok(fd)
}

fn attribute_tag(fd: BorrowedFd<'_>) -> Result<F::FILE_ATTRIBUTE_TAG_INFO> {
    let mut tag = F::FILE_ATTRIBUTE_TAG_INFO {
        FileAttributes: 0,
        ReparseTag: 0,
    };
    // SAFETY: `tag` is the record of the class asked, of the length passed.
    check(unsafe {
        F::GetFileInformationByHandleEx(
            fd.as_raw_fd(),
            F::FileAttributeTagInfo,
            (&mut tag as *mut F::FILE_ATTRIBUTE_TAG_INFO).cast(),
            std::mem::size_of::<F::FILE_ATTRIBUTE_TAG_INFO>() as u32,
        )
    })?;
    Ok(tag)
}

/// One component (or "." for the directory itself): names with a separator
/// are refused, so no intermediate component is ever followed.
fn component(name: &impl Arg) -> Result<Vec<u16>> {
    let w = name.to_wide()?;
    if w == [u16::from(b'.')] {
        return Ok(Vec::new());
    }
    if w.iter()
        .any(|&c| c == u16::from(b'/') || c == u16::from(b'\\'))
    {
        return Err(Errno::INVAL);
    }
    Ok(w)
}

/// Opens a path the user named (drive letter, UNC, or relative).
pub(crate) fn open(path: impl Arg, flags: OFlags, _mode: Mode) -> Result<OwnedFd> {
    let w = wide_nul(&path)?;
    let mut attrs = FILE_FLAG_BACKUP_SEMANTICS; // lets a directory open
    if flags.contains(OFlags::NOFOLLOW) {
        attrs |= FILE_FLAG_OPEN_REPARSE_POINT;
    }
    if flags.contains(OFlags::DIRECT) {
        attrs |= FILE_FLAG_NO_BUFFERING;
    }
    if flags.intersects(OFlags::DSYNC | OFlags::SYNC) {
        attrs |= FILE_FLAG_WRITE_THROUGH;
    }
    if flags.contains(OFlags::OVERLAPPED) {
        attrs |= F::FILE_FLAG_OVERLAPPED;
    }
    // SAFETY: `w` is NUL-terminated and outlives the call.
    let h = unsafe {
        F::CreateFileW(
            w.as_ptr(),
            access_of(flags),
            nt::SHARE_ALL,
            std::ptr::null(),
            win32_disposition(flags),
            attrs,
            std::ptr::null_mut(),
        )
    };
    if h == INVALID_HANDLE_VALUE {
        return Err(Errno::last());
    }
    // SAFETY: CreateFileW succeeded: a new handle we own.
    let fd = unsafe { OwnedFd::from_raw_handle(h) };
    // A disk has no attributes to ask, and no reparse point or directory.
    if super::disk::is_device_path(&w) {
        return Ok(fd);
    }
    checked(fd, flags)
}

/// Opens `name` relative to the directory `dir`.
pub(crate) fn openat(
    dir: impl AsFd,
    name: impl Arg,
    flags: OFlags,
    _mode: Mode,
) -> Result<OwnedFd> {
    let w = component(&name)?;
    let fd = nt::open_relative(
        dir.as_fd(),
        &w,
        access_of(flags),
        nt_disposition(flags),
        nt_options(flags),
    )?;
    checked(fd, flags)
}

/// Linux's openat2 with RESOLVE_*: Windows has none; the callers open one
/// component at a time instead, as on a kernel before 5.6.
pub(crate) fn openat2(
    _dir: impl AsFd,
    _name: impl Arg,
    _flags: OFlags,
    _mode: Mode,
    _resolve: ResolveFlags,
) -> Result<OwnedFd> {
    Err(Errno::NOSYS)
}

/// An open for looking only (attributes and owner), never following a
/// reparse point when `nofollow`.
fn open_to_inspect(dir: BorrowedFd<'_>, name: &impl Arg, nofollow: bool) -> Result<OwnedFd> {
    let w = component(name)?;
    let opts = if nofollow {
        nt::FILE_OPEN_REPARSE_POINT
    } else {
        0
    };
    nt::open_relative(
        dir,
        &w,
        FILE_READ_ATTRIBUTES | READ_CONTROL,
        nt::FILE_OPEN,
        opts,
    )
}

fn by_handle(fd: BorrowedFd<'_>) -> Result<F::BY_HANDLE_FILE_INFORMATION> {
    // SAFETY: plain data, filled by the call.
    let mut info: F::BY_HANDLE_FILE_INFORMATION = unsafe { std::mem::zeroed() };
    // SAFETY: `info` is writable and outlives the call.
    check(unsafe { F::GetFileInformationByHandle(fd.as_raw_fd(), &mut info) })?;
    Ok(info)
}

pub(super) fn info<T>(fd: BorrowedFd<'_>, class: F::FILE_INFO_BY_HANDLE_CLASS) -> Result<T> {
    // SAFETY: every T this is called with is a plain-data record.
    let mut v: T = unsafe { std::mem::zeroed() };
    // SAFETY: `v` is the record of `class`, of the length passed.
    check(unsafe {
        F::GetFileInformationByHandleEx(
            fd.as_raw_fd(),
            class,
            (&mut v as *mut T).cast(),
            std::mem::size_of::<T>() as u32,
        )
    })?;
    Ok(v)
}

pub(super) fn set_info<T>(
    fd: BorrowedFd<'_>,
    class: F::FILE_INFO_BY_HANDLE_CLASS,
    v: &T,
) -> Result<()> {
    // SAFETY: `v` is the record of `class`, of the length passed.
    check(unsafe {
        F::SetFileInformationByHandle(
            fd.as_raw_fd(),
            class,
            (v as *const T).cast(),
            std::mem::size_of::<T>() as u32,
        )
    })
}

pub(crate) fn fstat(fd: impl AsFd) -> Result<Stat> {
    let fd = fd.as_fd();
    let i = match by_handle(fd) {
        Ok(i) => i,
        // A disk handle answers no file query: its facts come from IOCTLs.
        Err(e) => return super::disk::stat(fd).map_err(|_| e),
    };
    let std_info: F::FILE_STANDARD_INFO = info(fd, F::FileStandardInfo)?;
    let kind = type_of_attributes(i.dwFileAttributes);
    let perm = match kind {
        S_IFLNK => 0o777,
        S_IFDIR => 0o755,
        _ if i.dwFileAttributes & ATTR_READONLY != 0 => 0o444,
        _ => 0o644,
    };
    Ok(Stat {
        st_dev: u64::from(i.dwVolumeSerialNumber),
        st_ino: (u64::from(i.nFileIndexHigh) << 32) | u64::from(i.nFileIndexLow),
        st_mode: kind | perm,
        st_nlink: u64::from(i.nNumberOfLinks),
        st_uid: super::owner::uid_of(fd),
        st_rdev: 0,
        st_size: (i64::from(i.nFileSizeHigh) << 32) | i64::from(i.nFileSizeLow),
        st_blocks: std_info.AllocationSize / 512,
    })
}

/// `name` may hold several components (`d0/d1`, as a metadata tree's
/// skeleton check asks): NT takes one per open here, so the directories on
/// the way are opened one at a time, each without following a reparse
/// point (a link on the way is then no directory to go through, where
/// Linux would follow it: never more permissive).
pub(crate) fn statat(dir: impl AsFd, name: impl Arg, flags: AtFlags) -> Result<Stat> {
    let nofollow = flags.contains(AtFlags::SYMLINK_NOFOLLOW);
    let w = name.to_wide()?;
    let sep = |c: &u16| *c == u16::from(b'/') || *c == u16::from(b'\\');
    let Some(last) = w.iter().rposition(sep) else {
        return fstat(&open_to_inspect(dir.as_fd(), &name, nofollow)?);
    };
    let mut at: Option<OwnedFd> = None;
    for part in w[..last].split(sep).filter(|p| !p.is_empty()) {
        let from = at.as_ref().map_or(dir.as_fd(), |d| d.as_fd());
        at = Some(nt::open_relative(
            from,
            part,
            F::FILE_TRAVERSE | FILE_READ_ATTRIBUTES,
            nt::FILE_OPEN,
            nt::FILE_DIRECTORY_FILE | nt::FILE_OPEN_REPARSE_POINT,
        )?);
    }
    let from = at.as_ref().map_or(dir.as_fd(), |d| d.as_fd());
    let leaf = String::from_utf16(&w[last + 1..]).map_err(|_| Errno::INVAL)?;
    fstat(&open_to_inspect(from, &leaf, nofollow)?)
}

/// Windows FILETIME (100 ns since 1601) as Unix seconds and nanoseconds.
fn unix_time(t: i64) -> StatxTimestamp {
    const EPOCH_DIFF_S: i64 = 11_644_473_600;
    StatxTimestamp {
        tv_sec: t.div_euclid(10_000_000) - EPOCH_DIFF_S,
        tv_nsec: (t.rem_euclid(10_000_000) * 100) as u32,
    }
}

/// statx: the birth time is the file's CreationTime, which every Windows
/// file system records.
pub(crate) fn statx(
    dir: impl AsFd,
    name: impl Arg,
    flags: AtFlags,
    mask: StatxFlags,
) -> Result<Statx> {
    let empty = name.to_wide()?.is_empty();
    let opened;
    let fd = if empty && flags.contains(AtFlags::EMPTY_PATH) {
        dir.as_fd()
    } else {
        opened = open_to_inspect(
            dir.as_fd(),
            &name,
            flags.contains(AtFlags::SYMLINK_NOFOLLOW),
        )?;
        opened.as_fd()
    };
    let st = fstat(fd)?;
    let basic: F::FILE_BASIC_INFO = info(fd, F::FileBasicInfo)?;
    let mut out = Statx {
        stx_mask: (StatxFlags::BASIC_STATS | StatxFlags::BTIME).bits(),
        stx_mode: st.st_mode as u16,
        stx_nlink: st.st_nlink.min(u64::from(u32::MAX)) as u32,
        stx_uid: st.st_uid,
        stx_ino: st.st_ino,
        stx_btime: unix_time(basic.CreationTime),
        stx_ctime: unix_time(basic.ChangeTime),
        stx_dev_major: 0,
        stx_dev_minor: st.st_dev as u32,
        stx_dio_offset_align: 0,
    };
    if mask.contains(StatxFlags::DIOALIGN) {
        if let Ok(v) = nt::volume_size(fd) {
            out.stx_dio_offset_align = v.bytes_per_sector;
            out.stx_mask |= StatxFlags::DIOALIGN.bits();
        }
    }
    Ok(out)
}

/// Deletes what `fd` is open on (opened with DELETE): POSIX semantics where
/// the file system has them (the name goes at once, as unlink's does), else
/// the classic delete-on-last-close.
fn dispose(fd: BorrowedFd<'_>) -> Result<()> {
    const DELETE_POSIX: u32 = 0x1 | 0x2; // FILE_DISPOSITION_FLAG_DELETE | POSIX_SEMANTICS
    let ex = F::FILE_DISPOSITION_INFO_EX {
        Flags: DELETE_POSIX,
    };
    match set_info(fd, F::FileDispositionInfoEx, &ex) {
        Err(e) if e == Errno::INVAL || e == Errno::NOSYS || e == Errno::OPNOTSUPP => set_info(
            fd,
            F::FileDispositionInfo,
            &F::FILE_DISPOSITION_INFO { DeleteFile: 1 },
        ),
        other => other,
    }
}

pub(crate) fn unlinkat(dir: impl AsFd, name: impl Arg, flags: AtFlags) -> Result<()> {
    let w = component(&name)?;
    let kind = if flags.contains(AtFlags::REMOVEDIR) {
        nt::FILE_DIRECTORY_FILE
    } else {
        nt::FILE_NON_DIRECTORY_FILE
    };
    let fd = nt::open_relative(
        dir.as_fd(),
        &w,
        DELETE | FILE_READ_ATTRIBUTES,
        nt::FILE_OPEN,
        kind | nt::FILE_OPEN_REPARSE_POINT,
    )?;
    dispose(fd.as_fd())
}

/// Unlinks a path's last component, never following a reparse point there.
pub(crate) fn unlink(path: impl Arg) -> Result<()> {
    let w = wide_nul(&path)?;
    // SAFETY: `w` is NUL-terminated and outlives the call.
    let h = unsafe {
        F::CreateFileW(
            w.as_ptr(),
            DELETE | FILE_READ_ATTRIBUTES,
            nt::SHARE_ALL,
            std::ptr::null(),
            3, // OPEN_EXISTING
            FILE_FLAG_OPEN_REPARSE_POINT | FILE_FLAG_BACKUP_SEMANTICS,
            std::ptr::null_mut(),
        )
    };
    if h == INVALID_HANDLE_VALUE {
        return Err(Errno::last());
    }
    // SAFETY: a new handle we own.
    let fd = unsafe { OwnedFd::from_raw_handle(h) };
    if attribute_tag(fd.as_fd())?.FileAttributes & ATTR_DIRECTORY != 0 {
        return Err(Errno::ISDIR);
    }
    dispose(fd.as_fd())
}

fn rename(
    old_dir: BorrowedFd<'_>,
    old: &impl Arg,
    new_dir: BorrowedFd<'_>,
    new: &impl Arg,
    replace: bool,
) -> Result<()> {
    let from = component(old)?;
    let to = component(new)?;
    if from.is_empty() || to.is_empty() {
        return Err(Errno::INVAL);
    }
    let fd = nt::open_relative(
        old_dir,
        &from,
        DELETE | FILE_READ_ATTRIBUTES,
        nt::FILE_OPEN,
        nt::FILE_OPEN_REPARSE_POINT,
    )?;
    // FILE_RENAME_INFO ends in the new name: a header and the UTF-16 bytes
    // in one 8-byte-aligned buffer.
    let head = std::mem::offset_of!(F::FILE_RENAME_INFO, FileName);
    let bytes = head + to.len() * 2 + 2;
    let mut buf = vec![0u64; bytes.div_ceil(8)];
    let p = buf.as_mut_ptr().cast::<F::FILE_RENAME_INFO>();
    // SAFETY: `buf` is zeroed, aligned for FILE_RENAME_INFO and long enough
    // for its header and the name written after it.
    unsafe {
        (*p).Anonymous.ReplaceIfExists = u8::from(replace);
        (*p).RootDirectory = new_dir.as_raw_fd();
        (*p).FileNameLength = (to.len() * 2) as u32;
        std::ptr::copy_nonoverlapping(
            to.as_ptr(),
            buf.as_mut_ptr().cast::<u8>().add(head).cast::<u16>(),
            to.len(),
        );
    }
    // FILE_RENAME_INFO is NT's FILE_RENAME_INFORMATION, field for field.
    nt::set_rename(fd.as_fd(), buf.as_ptr().cast(), bytes as u32)
}

/// Renames over whatever sits at `new` (a temporary file of ours over a
/// name the caller checked).
pub(crate) fn renameat(
    old_dir: impl AsFd,
    old: impl Arg,
    new_dir: impl AsFd,
    new: impl Arg,
) -> Result<()> {
    rename(old_dir.as_fd(), &old, new_dir.as_fd(), &new, true)
}

/// RENAME_NOREPLACE is ReplaceIfExists = false: an existing name fails.
pub(crate) fn renameat_with(
    old_dir: impl AsFd,
    old: impl Arg,
    new_dir: impl AsFd,
    new: impl Arg,
    flags: RenameFlags,
) -> Result<()> {
    let replace = !flags.contains(RenameFlags::NOREPLACE);
    rename(old_dir.as_fd(), &old, new_dir.as_fd(), &new, replace)
}

/// Hard links are never made on Windows (renames never need one there).
pub(crate) fn linkat(
    _old_dir: impl AsFd,
    _old: impl Arg,
    _new_dir: impl AsFd,
    _new: impl Arg,
    _flags: AtFlags,
) -> Result<()> {
    Err(Errno::NOSYS)
}

pub(crate) fn mkdirat(dir: impl AsFd, name: impl Arg, _mode: Mode) -> Result<()> {
    let w = component(&name)?;
    nt::open_relative(
        dir.as_fd(),
        &w,
        FILE_LIST_DIRECTORY,
        nt::FILE_CREATE,
        nt::FILE_DIRECTORY_FILE,
    )
    .map(drop)
}

pub(crate) fn mkdir(path: impl Arg, _mode: Mode) -> Result<()> {
    let w = wide_nul(&path)?;
    // SAFETY: `w` is NUL-terminated and outlives the call.
    check(unsafe { F::CreateDirectoryW(w.as_ptr(), std::ptr::null()) })
}

fn filetime_now() -> i64 {
    let mut ft = FILETIME {
        dwLowDateTime: 0,
        dwHighDateTime: 0,
    };
    // SAFETY: fills `ft`.
    unsafe { windows_sys::Win32::System::SystemInformation::GetSystemTimeAsFileTime(&mut ft) };
    (i64::from(ft.dwHighDateTime) << 32) | i64::from(ft.dwLowDateTime)
}

fn filetime_of(t: &Timespec, now: i64) -> i64 {
    if t.tv_nsec == UTIME_NOW {
        return now;
    }
    (t.tv_sec + 11_644_473_600) * 10_000_000 + t.tv_nsec / 100
}

/// Sets a name's access and write times (metadata trees' `touch`).
pub(crate) fn utimensat(
    dir: impl AsFd,
    name: impl Arg,
    times: &Timestamps,
    flags: AtFlags,
) -> Result<()> {
    let w = component(&name)?;
    let opts = if flags.contains(AtFlags::SYMLINK_NOFOLLOW) {
        nt::FILE_OPEN_REPARSE_POINT
    } else {
        0
    };
    let fd = nt::open_relative(dir.as_fd(), &w, FILE_WRITE_ATTRIBUTES, nt::FILE_OPEN, opts)?;
    let now = filetime_now();
    // Zero leaves a field as it is.
    let basic = F::FILE_BASIC_INFO {
        CreationTime: 0,
        LastAccessTime: filetime_of(&times.last_access, now),
        LastWriteTime: filetime_of(&times.last_modification, now),
        ChangeTime: 0,
        FileAttributes: 0,
    };
    set_info(fd.as_fd(), F::FileBasicInfo, &basic)
}
