//! The NT calls Win32 has no counterpart for: an open relative to a
//! directory handle (`NtCreateFile` with `OBJECT_ATTRIBUTES.RootDirectory`),
//! which is what makes the *at calls real on Windows (no path is ever
//! joined, so a directory renamed or replaced by a junction after volbench
//! opened it is not followed), and the volume's size by handle. Declared
//! here rather than through windows-sys' WDK features: two calls and three
//! records, all stable parts of the NT ABI since NT 4.

use std::ffi::c_void;
use std::os::windows::io::{FromRawHandle, RawHandle};

use super::errno::Errno;
use super::fd::{BorrowedFd, OwnedFd};

#[repr(C)]
struct UnicodeString {
    length: u16,
    maximum_length: u16,
    buffer: *const u16,
}

#[repr(C)]
struct ObjectAttributes {
    length: u32,
    root_directory: RawHandle,
    object_name: *const UnicodeString,
    attributes: u32,
    security_descriptor: *const c_void,
    security_quality_of_service: *const c_void,
}

#[repr(C)]
pub(super) struct IoStatusBlock {
    status: usize,
    information: usize,
}

#[link(name = "ntdll")]
unsafe extern "system" {
    fn NtCreateFile(
        handle: *mut RawHandle,
        access: u32,
        attributes: *const ObjectAttributes,
        io_status: *mut IoStatusBlock,
        allocation_size: *const i64,
        file_attributes: u32,
        share_access: u32,
        create_disposition: u32,
        create_options: u32,
        ea_buffer: *const c_void,
        ea_length: u32,
    ) -> i32;
    fn NtQueryVolumeInformationFile(
        handle: RawHandle,
        io_status: *mut IoStatusBlock,
        info: *mut c_void,
        length: u32,
        class: u32,
    ) -> i32;
    fn NtSetInformationFile(
        handle: RawHandle,
        io_status: *mut IoStatusBlock,
        info: *const c_void,
        length: u32,
        class: u32,
    ) -> i32;
    fn RtlNtStatusToDosError(status: i32) -> u32;
}

/// FILE_INFORMATION_CLASS's FileRenameInformation.
const FILE_RENAME_INFORMATION: u32 = 10;

/// Renames the file behind `fd` with a FILE_RENAME_INFORMATION record
/// (`info`, `len` bytes: its name relative to its RootDirectory). Straight
/// to NT rather than SetFileInformationByHandle: Wine's kernelbase turns
/// the name into a full path from the working directory and then fails
/// on the RootDirectory it keeps (ERROR_INVALID_PARAMETER).
pub(super) fn set_rename(fd: BorrowedFd<'_>, info: *const c_void, len: u32) -> Result<(), Errno> {
    let mut io = IoStatusBlock {
        status: 0,
        information: 0,
    };
    // SAFETY: the caller's record is `len` bytes long and outlives the call.
    let status = unsafe {
        NtSetInformationFile(
            std::os::windows::io::AsRawHandle::as_raw_handle(&fd),
            &mut io,
            info,
            len,
            FILE_RENAME_INFORMATION,
        )
    };
    if status < 0 {
        return Err(errno_of_status(status));
    }
    Ok(())
}

const OBJ_CASE_INSENSITIVE: u32 = 0x40;

pub(super) const FILE_OPEN: u32 = 1;
pub(super) const FILE_CREATE: u32 = 2;
pub(super) const FILE_OPEN_IF: u32 = 3;
pub(super) const FILE_OVERWRITE_IF: u32 = 5;

pub(super) const FILE_DIRECTORY_FILE: u32 = 0x1;
pub(super) const FILE_WRITE_THROUGH: u32 = 0x2;
pub(super) const FILE_NO_INTERMEDIATE_BUFFERING: u32 = 0x8;
pub(super) const FILE_SYNCHRONOUS_IO_NONALERT: u32 = 0x20;
/// Not an NT option (those fit in 24 bits): asks `open_relative` for a handle
/// without FILE_SYNCHRONOUS_IO_NONALERT, i.e. one for overlapped I/O.
pub(super) const OPEN_ASYNC: u32 = 0x8000_0000;
pub(super) const FILE_NON_DIRECTORY_FILE: u32 = 0x40;
pub(super) const FILE_OPEN_REPARSE_POINT: u32 = 0x20_0000;

pub(super) const SYNCHRONIZE: u32 = 0x10_0000;
pub(super) const SHARE_ALL: u32 = 0x7; // read, write and delete

/// The errno of an NTSTATUS, through ntdll's own NTSTATUS -> Win32 table.
pub(super) fn errno_of_status(status: i32) -> Errno {
    // SAFETY: a pure table lookup in ntdll.
    Errno::from_win32(unsafe { RtlNtStatusToDosError(status) })
}

/// Opens `name` (UTF-16, one or more components, no NUL) relative to `dir`,
/// or `dir` itself when `name` is empty. The caller passes
/// `FILE_OPEN_REPARSE_POINT` to open a link itself instead of its target.
pub(super) fn open_relative(
    dir: BorrowedFd<'_>,
    name: &[u16],
    access: u32,
    disposition: u32,
    options: u32,
) -> Result<OwnedFd, Errno> {
    open_relative_sharing(dir, name, access, disposition, options, SHARE_ALL)
}

/// `open_relative` with the share mode given: what other handles of the
/// same file may do while this one is open (a tree's lock shares no writing).
pub(super) fn open_relative_sharing(
    dir: BorrowedFd<'_>,
    name: &[u16],
    access: u32,
    disposition: u32,
    options: u32,
    share: u32,
) -> Result<OwnedFd, Errno> {
    let bytes = name.len() * 2;
    if bytes > u16::MAX as usize - 2 {
        return Err(Errno::from_win32(206)); // ERROR_FILENAME_EXCED_RANGE
    }
    let uname = UnicodeString {
        length: bytes as u16,
        maximum_length: bytes as u16,
        buffer: name.as_ptr(),
    };
    let attrs = ObjectAttributes {
        length: std::mem::size_of::<ObjectAttributes>() as u32,
        root_directory: std::os::windows::io::AsRawHandle::as_raw_handle(&dir),
        object_name: &uname,
        // Win32 names are case-insensitive; so are the opens relative to them.
        attributes: OBJ_CASE_INSENSITIVE,
        security_descriptor: std::ptr::null(),
        security_quality_of_service: std::ptr::null(),
    };
    let mut io = IoStatusBlock {
        status: 0,
        information: 0,
    };
    let mut handle: RawHandle = std::ptr::null_mut();
    // SAFETY: every pointer is to a live local for the duration of the call;
    // `uname` points into `name`, which outlives it.
    let status = unsafe {
        NtCreateFile(
            &mut handle,
            access | SYNCHRONIZE,
            &attrs,
            &mut io,
            std::ptr::null(),
            0x80, // FILE_ATTRIBUTE_NORMAL, for a file this creates
            share,
            disposition,
            if options & OPEN_ASYNC != 0 {
                options & !OPEN_ASYNC
            } else {
                options | FILE_SYNCHRONOUS_IO_NONALERT
            },
            std::ptr::null(),
            0,
        )
    };
    if status < 0 {
        return Err(errno_of_status(status));
    }
    // SAFETY: NtCreateFile succeeded, so `handle` is a new handle we own.
    Ok(unsafe { OwnedFd::from_raw_handle(handle) })
}

/// FILE_FS_FULL_SIZE_INFORMATION: the volume's size seen by this caller.
#[repr(C)]
#[derive(Default)]
pub(super) struct FullSize {
    pub(crate) total_units: i64,
    pub(crate) caller_available_units: i64,
    pub(crate) actual_available_units: i64,
    pub(crate) sectors_per_unit: u32,
    pub(crate) bytes_per_sector: u32,
}

/// The size facts of the volume `fd` is on.
pub(super) fn volume_size(fd: BorrowedFd<'_>) -> Result<FullSize, Errno> {
    let mut info = FullSize::default();
    let mut io = IoStatusBlock {
        status: 0,
        information: 0,
    };
    // SAFETY: `info` is a writable FILE_FS_FULL_SIZE_INFORMATION of the
    // length passed; FileFsFullSizeInformation is class 7.
    let status = unsafe {
        NtQueryVolumeInformationFile(
            std::os::windows::io::AsRawHandle::as_raw_handle(&fd),
            &mut io,
            (&mut info as *mut FullSize).cast(),
            std::mem::size_of::<FullSize>() as u32,
            7,
        )
    };
    if status < 0 {
        return Err(errno_of_status(status));
    }
    Ok(info)
}
