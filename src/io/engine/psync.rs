//! pread/pwrite: synchronous, one I/O in flight per thread, works everywhere.

use crate::io::sys::fd::OwnedFd;
use std::io;

use super::{Completion, Engine, Fds, OPEN_FAILED};
use crate::io::workload::IoOp;

pub(crate) struct PsyncEngine {
    files: Fds,
    pending: Vec<(u32, IoOp, *mut u8)>,
}

impl PsyncEngine {
    pub(crate) fn new(files: Fds, depth: u32) -> Self {
        Self {
            files,
            pending: Vec::with_capacity(depth as usize),
        }
    }

    pub(crate) fn failure(&self) -> Option<String> {
        self.files.failure()
    }
}

/// One synchronous I/O: bytes moved, or a negative errno.
///
/// # Safety
///
/// `queue`'s contract: `buf` holds op.len bytes, valid for reads and
/// writes and used by no one else until this slot's completion.
#[inline]
unsafe fn io_on(fd: &OwnedFd, op: &IoOp, buf: *mut u8) -> i64 {
    // SAFETY: the caller's contract, above.
    let result = unsafe {
        if op.write {
            let data = std::slice::from_raw_parts(buf, op.len as usize);
            crate::io::sys::io::pwrite(fd, data, op.offset)
        } else {
            let data = std::slice::from_raw_parts_mut(buf, op.len as usize);
            crate::io::sys::io::pread(fd, data, op.offset)
        }
    };
    match result {
        Ok(n) => n as i64,
        Err(e) => -(e.raw_os_error() as i64),
    }
}

impl Engine for PsyncEngine {
    #[inline]
    unsafe fn queue(&mut self, slot: u32, op: IoOp, buf: *mut u8) {
        self.pending.push((slot, op, buf));
    }

    #[inline]
    fn submit_and_wait(&mut self, _min: usize, out: &mut Vec<Completion>) -> io::Result<()> {
        for (slot, op, buf) in self.pending.drain(..) {
            // SAFETY: `queue`'s contract, passed on; the completion is
            // pushed only after the call returns.
            let result = unsafe {
                match &mut self.files {
                    Fds::All(fds) => io_on(&fds[op.file as usize], &op, buf),
                    Fds::OnDemand(c) => match c.acquire(op.file) {
                        Some((held, _)) => {
                            let r = c.fd(held).map_or(OPEN_FAILED, |fd| io_on(fd, &op, buf));
                            c.release(held);
                            r
                        }
                        None => OPEN_FAILED,
                    },
                }
            };
            out.push(Completion { slot, result });
        }
        Ok(())
    }
}
