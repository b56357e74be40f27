//! read, write, pread and pwrite on a synchronous handle (pread/pwrite put
//! the offset in an OVERLAPPED, which a synchronous handle honours without
//! moving its file pointer), and handle duplication.

use windows_sys::Win32::Storage::FileSystem::{ReadFile, WriteFile};
use windows_sys::Win32::System::IO::OVERLAPPED;

pub(crate) use super::errno::{Errno, Result};
use super::fd::{AsFd, AsRawFd, OwnedFd};

const ERROR_HANDLE_EOF: u32 = 38;
const ERROR_BROKEN_PIPE: u32 = 109;

fn at(offset: u64) -> OVERLAPPED {
    // SAFETY: OVERLAPPED is plain data; all-zero is its documented start.
    let mut o: OVERLAPPED = unsafe { std::mem::zeroed() };
    o.Anonymous.Anonymous.Offset = offset as u32;
    o.Anonymous.Anonymous.OffsetHigh = (offset >> 32) as u32;
    o
}

/// One ReadFile; the end of a file or of a pipe's writer reads as 0 bytes.
fn read_with(fd: impl AsFd, buf: &mut [u8], offset: Option<u64>) -> Result<usize> {
    let len = buf.len().min(u32::MAX as usize) as u32;
    let mut done = 0u32;
    let mut o = offset.map(at);
    let op = o
        .as_mut()
        .map_or(std::ptr::null_mut(), |o| o as *mut OVERLAPPED);
    // SAFETY: `buf` is valid for `len` bytes, `done` and `o` outlive the
    // call, and the handle is synchronous so the call completes before it
    // returns.
    let ok = unsafe { ReadFile(fd.as_fd().as_raw_fd(), buf.as_mut_ptr(), len, &mut done, op) };
    if ok == 0 {
        // SAFETY: reads the calling thread's error slot.
        let e = unsafe { windows_sys::Win32::Foundation::GetLastError() };
        if e == ERROR_HANDLE_EOF || e == ERROR_BROKEN_PIPE {
            return Ok(0);
        }
        return Err(Errno::from_win32(e));
    }
    Ok(done as usize)
}

fn write_with(fd: impl AsFd, buf: &[u8], offset: Option<u64>) -> Result<usize> {
    let len = buf.len().min(u32::MAX as usize) as u32;
    let mut done = 0u32;
    let mut o = offset.map(at);
    let op = o
        .as_mut()
        .map_or(std::ptr::null_mut(), |o| o as *mut OVERLAPPED);
    // SAFETY: as in `read_with`, for a buffer only read.
    let ok = unsafe { WriteFile(fd.as_fd().as_raw_fd(), buf.as_ptr(), len, &mut done, op) };
    if ok == 0 {
        return Err(Errno::last());
    }
    Ok(done as usize)
}

pub(crate) fn read(fd: impl AsFd, buf: &mut [u8]) -> Result<usize> {
    read_with(fd, buf, None)
}

pub(crate) fn write(fd: impl AsFd, buf: &[u8]) -> Result<usize> {
    write_with(fd, buf, None)
}

pub(crate) fn pread(fd: impl AsFd, buf: &mut [u8], offset: u64) -> Result<usize> {
    read_with(fd, buf, Some(offset))
}

pub(crate) fn pwrite(fd: impl AsFd, buf: &[u8], offset: u64) -> Result<usize> {
    write_with(fd, buf, Some(offset))
}

/// A second handle to the same open file (Windows handles are never
/// inherited by a child unless asked, so every handle is "close-on-exec").
pub(crate) fn fcntl_dupfd_cloexec(fd: impl AsFd, _min: i32) -> Result<OwnedFd> {
    fd.as_fd()
        .try_clone_to_owned()
        .map_err(|e| Errno::from_io_error(&e).unwrap_or(Errno::IO))
}
