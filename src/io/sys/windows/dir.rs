//! `RawDir`: a directory's entries read by handle
//! (`GetFileInformationByHandleEx(FileIdBothDirectoryInfo)`), with rustix's
//! shape: `next()` gives each entry's name and type, "." and ".." included.

use std::ffi::{CStr, CString};
use std::mem::MaybeUninit;

use windows_sys::Win32::Storage::FileSystem::{
    FILE_ID_BOTH_DIR_INFO, FileIdBothDirectoryInfo, FileIdBothDirectoryRestartInfo,
    GetFileInformationByHandleEx,
};

use super::errno::Errno;
use super::fd::{AsFd, AsRawFd};
use super::types::{FileType, S_IFDIR, S_IFLNK, S_IFREG};

const ERROR_NO_MORE_FILES: u32 = 18;

/// The entries of one directory handle. The records are 8-byte aligned, so
/// they are read into a buffer of our own; the caller's (rustix wants one)
/// only sets its size.
pub(crate) struct RawDir<F: AsFd> {
    fd: F,
    buf: Vec<u64>,
    /// Byte offset of the next record in `buf`, or None when `buf` holds
    /// no more.
    next: Option<usize>,
    started: bool,
    done: bool,
}

pub(crate) struct RawDirEntry {
    name: CString,
    file_type: FileType,
}

impl RawDirEntry {
    pub(crate) fn file_name(&self) -> &CStr {
        &self.name
    }
    pub(crate) fn file_type(&self) -> FileType {
        self.file_type
    }
}

/// The type of an entry from its attributes: any reparse point reads as a
/// link, as `fstat` says.
pub(super) fn type_of_attributes(attributes: u32) -> u32 {
    if attributes & 0x400 != 0 {
        S_IFLNK
    } else if attributes & 0x10 != 0 {
        S_IFDIR
    } else {
        S_IFREG
    }
}

impl<F: AsFd> RawDir<F> {
    pub(crate) fn new(fd: F, buf: &mut [MaybeUninit<u8>]) -> RawDir<F> {
        RawDir {
            fd,
            buf: vec![0u64; (buf.len().max(4096) + 7) / 8],
            next: None,
            started: false,
            done: false,
        }
    }

    fn fill(&mut self) -> Result<bool, Errno> {
        let class = if self.started {
            FileIdBothDirectoryInfo
        } else {
            FileIdBothDirectoryRestartInfo
        };
        self.started = true;
        // SAFETY: `buf` is writable for its whole byte length.
        let ok = unsafe {
            GetFileInformationByHandleEx(
                self.fd.as_fd().as_raw_fd(),
                class,
                self.buf.as_mut_ptr().cast(),
                (self.buf.len() * 8) as u32,
            )
        };
        if ok == 0 {
            // SAFETY: reads the calling thread's error slot.
            let e = unsafe { windows_sys::Win32::Foundation::GetLastError() };
            if e == ERROR_NO_MORE_FILES {
                return Ok(false);
            }
            return Err(Errno::from_win32(e));
        }
        self.next = Some(0);
        Ok(true)
    }

    #[allow(clippy::should_implement_trait)] // rustix's name and shape
    pub(crate) fn next(&mut self) -> Option<Result<RawDirEntry, Errno>> {
        if self.done {
            return None;
        }
        if self.next.is_none() {
            match self.fill() {
                Ok(true) => {}
                Ok(false) => {
                    self.done = true;
                    return None;
                }
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
            }
        }
        let at = self.next.unwrap_or(0);
        let bytes = self.buf.len() * 8;
        let head = std::mem::offset_of!(FILE_ID_BOTH_DIR_INFO, FileName);
        if at + head > bytes {
            self.done = true;
            return Some(Err(Errno::IO));
        }
        // SAFETY: the call wrote a chain of records into `buf`; `at` is the
        // start of one (0, or a previous record's NextEntryOffset, both
        // 8-byte aligned), and its header lies inside `buf` (checked above).
        let rec =
            unsafe { &*(self.buf.as_ptr().cast::<u8>().add(at)).cast::<FILE_ID_BOTH_DIR_INFO>() };
        let name_len = rec.FileNameLength as usize;
        if at + head + name_len > bytes {
            self.done = true;
            return Some(Err(Errno::IO));
        }
        // SAFETY: the name's bytes lie inside `buf` (checked above); u16 is
        // 2-aligned at FileName's offset.
        let name = unsafe {
            std::slice::from_raw_parts(
                self.buf.as_ptr().cast::<u8>().add(at + head).cast::<u16>(),
                name_len / 2,
            )
        };
        let name = String::from_utf16_lossy(name);
        self.next = match rec.NextEntryOffset {
            0 => None,
            n => Some(at + n as usize),
        };
        let file_type = FileType::from_raw_mode(type_of_attributes(rec.FileAttributes));
        // A Windows name holds no NUL.
        let name = CString::new(name).unwrap_or_default();
        Some(Ok(RawDirEntry { name, file_type }))
    }
}
