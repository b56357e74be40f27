//! One file of a set on an NFS server, open on the directory's client:
//! what the fill and the marker write through (blocking READ, WRITE,
//! SETATTR and COMMIT calls), closed (NFSv4.1's CLOSE) when dropped.

use std::sync::Arc;

use super::Shared;
use crate::io::backend::SetFile;
use crate::io::sys::io::Errno;
use crate::proto::nfs::{Fh, NfsError, Reply, Request, Stable};

pub(crate) struct NfsFile {
    shared: Arc<Shared>,
    file: u32,
    fh: Fh,
}

impl NfsFile {
    pub(super) fn new(shared: Arc<Shared>, file: u32, fh: Fh) -> NfsFile {
        NfsFile { shared, file, fh }
    }
}

pub(super) fn errno(e: &NfsError) -> Errno {
    Errno::from_raw_os_error(e.errno())
}

impl SetFile for NfsFile {
    fn read_at(&self, buf: &mut [u8], off: u64) -> Result<usize, Errno> {
        let len = u32::try_from(buf.len()).unwrap_or(u32::MAX);
        match self.shared.client().call(Request::Read {
            file: self.file,
            offset: off,
            len,
            buf: buf.as_mut_ptr(),
        }) {
            Ok(Reply::Read { count, .. }) => Ok((count as usize).min(buf.len())),
            Ok(_) => Err(Errno::IO),
            Err(e) => Err(errno(&e)),
        }
    }

    fn write_at(&self, buf: &[u8], off: u64) -> Result<usize, Errno> {
        let len = u32::try_from(buf.len()).unwrap_or(u32::MAX);
        // UNSTABLE, as a kernel client writes back: `settle` COMMITs.
        match self.shared.client().call(Request::Write {
            file: self.file,
            offset: off,
            len,
            buf: buf.as_ptr(),
            stable: Stable::Unstable,
        }) {
            Ok(Reply::Write { count, .. }) => Ok((count as usize).min(buf.len())),
            Ok(_) => Err(Errno::IO),
            Err(e) => Err(errno(&e)),
        }
    }

    fn truncate(&self, len: u64) -> Result<(), Errno> {
        self.shared
            .client()
            .call(Request::Setattr {
                fh: &self.fh,
                size: Some(len),
                mode: None,
                times: false,
            })
            .map(|_| ())
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

    /// COMMIT: what the fill wrote UNSTABLE is on the server's storage.
    fn settle(&self) -> Result<(), Errno> {
        self.shared
            .client()
            .call(Request::Commit {
                file: self.file,
                offset: 0,
                len: 0,
            })
            .map(|_| ())
            .map_err(|e| errno(&e))
    }
}

impl Drop for NfsFile {
    fn drop(&mut self) {
        let _ = self.shared.client().close(self.file);
    }
}
