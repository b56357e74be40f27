//! One file of a set on an SMB share, open on the directory's client:
//! what the fill and the marker write through (blocking READ, WRITE,
//! SET_INFO and FLUSH requests on the first channel), closed when dropped.

use std::sync::Arc;

use super::Shared;
use crate::io::backend::SetFile;
use crate::io::sys::io::Errno;
use crate::proto::smb::consts::status;
use crate::proto::smb::error::SmbError;
use crate::proto::smb::msg::FileId;
use crate::proto::smb::msg::info::SetInfo;

pub(crate) struct SmbFile {
    shared: Arc<Shared>,
    file: FileId,
}

impl SmbFile {
    pub(super) fn new(shared: Arc<Shared>, file: FileId) -> SmbFile {
        SmbFile { shared, file }
    }
}

/// The errno a local file system would have given for what the server
/// said (a lost connection or a bad reply is EIO).
pub(super) fn errno_of(e: &SmbError) -> i32 {
    match e.nt_status() {
        Some(status::DISK_FULL | status::QUOTA_EXCEEDED) => libc::ENOSPC,
        Some(status::ACCESS_DENIED) => libc::EACCES,
        Some(
            status::OBJECT_NAME_NOT_FOUND
            | status::OBJECT_PATH_NOT_FOUND
            | status::NO_SUCH_FILE
            | status::DELETE_PENDING,
        ) => libc::ENOENT,
        Some(status::OBJECT_NAME_COLLISION) => libc::EEXIST,
        Some(status::DIRECTORY_NOT_EMPTY) => libc::ENOTEMPTY,
        Some(status::NOT_A_DIRECTORY) => libc::ENOTDIR,
        Some(status::FILE_IS_A_DIRECTORY) => libc::EISDIR,
        Some(status::STOPPED_ON_SYMLINK) => libc::ELOOP,
        Some(status::INVALID_PARAMETER) => libc::EINVAL,
        Some(status::INSUFFICIENT_RESOURCES) => libc::ENOMEM,
        _ if e.is_disconnect() => libc::ECONNRESET,
        _ => libc::EIO,
    }
}

fn errno(e: &SmbError) -> Errno {
    Errno::from_raw_os_error(errno_of(e))
}

impl SetFile for SmbFile {
    fn read_at(&self, buf: &mut [u8], off: u64) -> Result<usize, Errno> {
        self.shared
            .client()
            .read_at(self.file, off, buf)
            .map_err(|e| errno(&e))
    }

    fn write_at(&self, buf: &[u8], off: u64) -> Result<usize, Errno> {
        self.shared
            .client()
            .write_at(self.file, off, buf)
            .map_err(|e| errno(&e))
    }

    fn truncate(&self, len: u64) -> Result<(), Errno> {
        self.shared
            .client()
            .set_info(self.file, SetInfo::EndOfFile(len))
            .map_err(|e| errno(&e))
    }

    /// No client cache: every I/O already goes to the server.
    fn set_direct(&self) -> Result<(), Errno> {
        Ok(())
    }

    /// Any offset and length: the server takes bytes, not sectors.
    fn dio_align(&self) -> u64 {
        1
    }

    /// FLUSH: what the fill wrote is on the server's storage.
    fn settle(&self) -> Result<(), Errno> {
        self.shared.client().flush(self.file).map_err(|e| errno(&e))
    }
}

impl Drop for SmbFile {
    fn drop(&mut self) {
        let _ = self.shared.client().close(self.file);
    }
}
