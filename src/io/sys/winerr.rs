//! Win32 error codes onto the errno values the file layer matches on
//! (`Errno::NOENT`, `EXIST`, ...): pure data, so it is tested on Linux too.
//! NTSTATUS codes reach it through ntdll's own NTSTATUS -> Win32 table.

// On Linux only the tests use it.
#![cfg_attr(not(windows), allow(dead_code))]

/// The errno values (Linux's numbers) the Windows layer reports.
pub(crate) mod code {
    pub(crate) const PERM: i32 = 1;
    pub(crate) const NOENT: i32 = 2;
    pub(crate) const INTR: i32 = 4;
    pub(crate) const IO: i32 = 5;
    pub(crate) const NXIO: i32 = 6;
    pub(crate) const BADF: i32 = 9;
    pub(crate) const WOULDBLOCK: i32 = 11;
    pub(crate) const NOMEM: i32 = 12;
    pub(crate) const ACCESS: i32 = 13;
    pub(crate) const BUSY: i32 = 16;
    pub(crate) const EXIST: i32 = 17;
    pub(crate) const XDEV: i32 = 18;
    pub(crate) const NOTDIR: i32 = 20;
    pub(crate) const ISDIR: i32 = 21;
    pub(crate) const INVAL: i32 = 22;
    pub(crate) const MFILE: i32 = 24;
    pub(crate) const FBIG: i32 = 27;
    pub(crate) const NOSPC: i32 = 28;
    pub(crate) const ROFS: i32 = 30;
    pub(crate) const NAMETOOLONG: i32 = 36;
    pub(crate) const NOSYS: i32 = 38;
    pub(crate) const NOTEMPTY: i32 = 39;
    pub(crate) const LOOP: i32 = 40;
    pub(crate) const OPNOTSUPP: i32 = 95;
    pub(crate) const DQUOT: i32 = 122;
}

/// (Win32 error, errno): the errors a file call can return, each onto the
/// errno a Linux caller would see for the same cause.
pub(crate) const TABLE: &[(u32, i32)] = &[
    (1, code::NOSYS),         // ERROR_INVALID_FUNCTION
    (2, code::NOENT),         // ERROR_FILE_NOT_FOUND
    (3, code::NOENT),         // ERROR_PATH_NOT_FOUND
    (4, code::MFILE),         // ERROR_TOO_MANY_OPEN_FILES
    (5, code::ACCESS),        // ERROR_ACCESS_DENIED
    (6, code::BADF),          // ERROR_INVALID_HANDLE
    (8, code::NOMEM),         // ERROR_NOT_ENOUGH_MEMORY
    (15, code::NOENT),        // ERROR_INVALID_DRIVE
    (17, code::XDEV),         // ERROR_NOT_SAME_DEVICE
    (19, code::ROFS),         // ERROR_WRITE_PROTECT
    (21, code::BUSY),         // ERROR_NOT_READY
    (32, code::BUSY),         // ERROR_SHARING_VIOLATION
    (33, code::WOULDBLOCK),   // ERROR_LOCK_VIOLATION
    (38, code::NXIO),         // ERROR_HANDLE_EOF
    (39, code::NOSPC),        // ERROR_HANDLE_DISK_FULL
    (50, code::OPNOTSUPP),    // ERROR_NOT_SUPPORTED
    (53, code::NOENT),        // ERROR_BAD_NETPATH
    (67, code::NOENT),        // ERROR_BAD_NET_NAME
    (80, code::EXIST),        // ERROR_FILE_EXISTS
    (87, code::INVAL),        // ERROR_INVALID_PARAMETER
    (112, code::NOSPC),       // ERROR_DISK_FULL
    (120, code::NOSYS),       // ERROR_CALL_NOT_IMPLEMENTED
    (123, code::INVAL),       // ERROR_INVALID_NAME
    (145, code::NOTEMPTY),    // ERROR_DIR_NOT_EMPTY
    (161, code::NOENT),       // ERROR_BAD_PATHNAME
    (183, code::EXIST),       // ERROR_ALREADY_EXISTS
    (206, code::NAMETOOLONG), // ERROR_FILENAME_EXCED_RANGE
    (223, code::FBIG),        // ERROR_FILE_TOO_LARGE
    (267, code::NOTDIR),      // ERROR_DIRECTORY
    (336, code::ISDIR),       // ERROR_DIRECTORY_NOT_SUPPORTED
    (1117, code::IO),         // ERROR_IO_DEVICE
    (1224, code::BUSY),       // ERROR_USER_MAPPED_FILE
    (1295, code::DQUOT),      // ERROR_DISK_QUOTA_EXCEEDED
    (1920, code::LOOP),       // ERROR_CANT_ACCESS_FILE (a reparse point not followed)
    (4390, code::LOOP),       // ERROR_NOT_A_REPARSE_POINT
];

/// The errno for a Win32 error; one with no counterpart keeps its own code,
/// negated, so its message still names the Windows error.
pub(crate) fn errno_of(win32: u32) -> i32 {
    TABLE
        .iter()
        .find(|(w, _)| *w == win32)
        .map_or(-(win32.min(i32::MAX as u32) as i32), |&(_, e)| e)
}

/// The Win32 error to report an errno as (the first row that gives it):
/// how `std::io::Error` shows one on Windows.
pub(crate) fn win32_of(errno: i32) -> u32 {
    if errno < 0 {
        return errno.unsigned_abs();
    }
    TABLE
        .iter()
        .find(|(_, e)| *e == errno)
        .map_or(31 /* ERROR_GEN_FAILURE */, |&(w, _)| w)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_errors_the_gate_matches_on_map_to_their_errno() {
        assert_eq!(errno_of(2), code::NOENT);
        assert_eq!(errno_of(3), code::NOENT);
        assert_eq!(errno_of(80), code::EXIST);
        assert_eq!(errno_of(183), code::EXIST);
        assert_eq!(errno_of(5), code::ACCESS);
        assert_eq!(errno_of(112), code::NOSPC);
        assert_eq!(errno_of(145), code::NOTEMPTY);
        assert_eq!(errno_of(267), code::NOTDIR);
        assert_eq!(errno_of(33), code::WOULDBLOCK);
        assert_eq!(errno_of(32), code::BUSY);
    }

    #[test]
    fn an_unknown_error_keeps_its_windows_code_both_ways() {
        assert_eq!(errno_of(9999), -9999);
        assert_eq!(win32_of(-9999), 9999);
    }

    #[test]
    fn every_errno_maps_back_to_a_win32_error_that_gives_it() {
        for &(_, e) in TABLE {
            assert_eq!(errno_of(win32_of(e)), e, "errno {e}");
        }
    }

    #[test]
    fn the_errno_numbers_are_linuxs() {
        // What a result or a message shows must not depend on the client.
        assert_eq!((code::NOENT, code::EXIST, code::NOSPC), (2, 17, 28));
        assert_eq!((code::LOOP, code::NOTEMPTY, code::DQUOT), (40, 39, 122));
    }
}
