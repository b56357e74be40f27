//! pread/pwrite: synchronous, one I/O in flight per thread, works everywhere.

use crate::io::sys::fd::OwnedFd;
use std::io;

use super::{Completion, Engine};
use crate::io::workload::IoOp;

pub(crate) struct PsyncEngine {
    files: Vec<OwnedFd>,
    pending: Vec<(u32, IoOp, *mut u8)>,
}

impl PsyncEngine {
    pub(crate) fn new(files: Vec<OwnedFd>, depth: u32) -> Self {
        Self {
            files,
            pending: Vec::with_capacity(depth as usize),
        }
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
            let fd = &self.files[op.file as usize];
            // SAFETY: `queue`'s contract: `buf` holds op.len bytes, valid for
            // reads and writes and used by no one else until this slot's
            // completion, which is pushed only after the call below returns.
            let result = unsafe {
                if op.write {
                    let data = std::slice::from_raw_parts(buf, op.len as usize);
                    crate::io::sys::io::pwrite(fd, data, op.offset)
                } else {
                    let data = std::slice::from_raw_parts_mut(buf, op.len as usize);
                    crate::io::sys::io::pread(fd, data, op.offset)
                }
            };
            let result = match result {
                Ok(n) => n as i64,
                Err(e) => -(e.raw_os_error() as i64),
            };
            out.push(Completion { slot, result });
        }
        Ok(())
    }
}
