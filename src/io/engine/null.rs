//! An engine that does no I/O: completes every request at once. For tests
//! and for measuring volbench's own overhead.

use std::io;

use super::{Completion, Engine};
use crate::io::workload::IoOp;

pub(crate) struct NullEngine {
    pending: Vec<Completion>,
}

impl NullEngine {
    pub(crate) fn new(depth: u32) -> Self {
        Self {
            pending: Vec::with_capacity(depth as usize),
        }
    }
}

impl Engine for NullEngine {
    /// Touches no memory: completes as if `op.len` bytes moved.
    #[inline]
    unsafe fn queue(&mut self, slot: u32, op: IoOp, _buf: *mut u8) {
        self.pending.push(Completion {
            slot,
            result: op.len as i64,
        });
    }

    #[inline]
    fn submit_and_wait(&mut self, _min: usize, out: &mut Vec<Completion>) -> io::Result<()> {
        out.append(&mut self.pending);
        Ok(())
    }
}
