//! `Errno` on Windows: the errno the same failure gives on Linux (so the
//! callers' `match`es stay as they are), from the Win32 or NTSTATUS error.

use crate::io::sys::winerr::{code, errno_of, win32_of};

/// One failed call's error, as Linux's errno number (a Win32 error with no
/// errno counterpart is kept negated, so its message still names it).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Errno(i32);

pub(crate) type Result<T> = std::result::Result<T, Errno>;

impl Errno {
    pub(crate) const PERM: Errno = Errno(code::PERM);
    pub(crate) const NOENT: Errno = Errno(code::NOENT);
    pub(crate) const INTR: Errno = Errno(code::INTR);
    pub(crate) const IO: Errno = Errno(code::IO);
    pub(crate) const NXIO: Errno = Errno(code::NXIO);
    pub(crate) const WOULDBLOCK: Errno = Errno(code::WOULDBLOCK);
    pub(crate) const ACCESS: Errno = Errno(code::ACCESS);
    pub(crate) const BUSY: Errno = Errno(code::BUSY);
    pub(crate) const EXIST: Errno = Errno(code::EXIST);
    pub(crate) const XDEV: Errno = Errno(code::XDEV);
    pub(crate) const NOTDIR: Errno = Errno(code::NOTDIR);
    pub(crate) const ISDIR: Errno = Errno(code::ISDIR);
    pub(crate) const INVAL: Errno = Errno(code::INVAL);
    pub(crate) const NOSPC: Errno = Errno(code::NOSPC);
    pub(crate) const NOSYS: Errno = Errno(code::NOSYS);
    pub(crate) const NOTEMPTY: Errno = Errno(code::NOTEMPTY);
    pub(crate) const LOOP: Errno = Errno(code::LOOP);
    pub(crate) const OPNOTSUPP: Errno = Errno(code::OPNOTSUPP);
    pub(crate) const DQUOT: Errno = Errno(code::DQUOT);

    /// The errno of a Win32 error code.
    pub(crate) fn from_win32(e: u32) -> Errno {
        Errno(errno_of(e))
    }

    /// The calling thread's last Win32 error.
    pub(crate) fn last() -> Errno {
        // SAFETY: GetLastError reads the calling thread's error slot only.
        Errno::from_win32(unsafe { windows_sys::Win32::Foundation::GetLastError() })
    }

    pub(crate) fn from_io_error(e: &std::io::Error) -> Option<Errno> {
        e.raw_os_error().map(|c| Errno::from_win32(c as u32))
    }

    pub(crate) fn raw_os_error(self) -> i32 {
        self.0
    }
}

impl From<Errno> for std::io::Error {
    fn from(e: Errno) -> std::io::Error {
        // std shows a Win32 code with Windows' own message for it.
        std::io::Error::from_raw_os_error(win32_of(e.0) as i32)
    }
}

impl std::fmt::Display for Errno {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&std::io::Error::from(*self), f)
    }
}

impl std::fmt::Debug for Errno {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Errno({}: {self})", self.0)
    }
}

impl std::error::Error for Errno {}
