//! io_uring: many I/Os in flight per thread with one system call per batch.
//! Files and buffers are registered once, so the kernel skips per-I/O file
//! lookups and page pinning.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

use io_uring::{IoUring, opcode, types};

use super::{Completion, Engine};
use crate::io::workload::IoOp;

pub struct UringEngine {
    ring: IoUring,
    _files: Vec<OwnedFd>,
    raw_fds: Vec<i32>,
    fixed_files: bool,
    fixed_buffers: bool,
    /// A buffer shared by many slots (the worker's write ring): its address
    /// range and, if registered, its fixed-buffer index.
    shared: (usize, usize, Option<u16>),
    queued: u32,
    submit_each: bool,
    /// A failed eager submit, reported by the next wait.
    submit_error: Option<io::Error>,
}

/// Checks that this kernel and process may use io_uring at all.
pub fn probe_io_uring() -> Result<(), String> {
    if let Ok(v) = std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled") {
        if v.trim() == "2" {
            return Err("disabled by sysctl kernel.io_uring_disabled=2".into());
        }
    }
    match IoUring::new(2) {
        Ok(_) => Ok(()),
        Err(e) => Err(format!("cannot create a ring: {e}")),
    }
}

impl UringEngine {
    /// `submit_each`: submit every I/O as it is queued (sequential patterns)
    /// instead of in batches. `buffers`: one per slot, then optionally one
    /// shared region any slot may write from.
    pub(crate) fn new(
        files: Vec<OwnedFd>,
        depth: u32,
        buffers: &[(*mut u8, usize)],
        submit_each: bool,
    ) -> io::Result<Self> {
        let entries = depth.max(1).next_power_of_two();
        let ring = IoUring::builder()
            .setup_single_issuer()
            .setup_coop_taskrun()
            .build(entries)
            .or_else(|_| IoUring::new(entries))?;
        let raw_fds: Vec<i32> = files.iter().map(|f| f.as_raw_fd()).collect();
        let fixed_files = ring.submitter().register_files(&raw_fds).is_ok();
        let iovecs: Vec<libc::iovec> = buffers
            .iter()
            .map(|&(ptr, len)| libc::iovec {
                iov_base: ptr.cast(),
                iov_len: len,
            })
            .collect();
        // Registration pins the buffers; it can fail under a low memlock
        // limit on older kernels, and plain reads and writes still work then.
        let register = |iovecs: &[libc::iovec]| {
            // SAFETY: registering only pins the pages; the kernel touches
            // them only for an I/O queued on them, and `queue` is where the
            // caller promises they are valid for that I/O.
            !iovecs.is_empty() && unsafe { ring.submitter().register_buffers(iovecs) }.is_ok()
        };
        let slots = (depth as usize).min(iovecs.len());
        let mut shared = match buffers.get(slots) {
            Some(&(ptr, len)) => (ptr as usize, len, None),
            None => (0, 0, None),
        };
        // The shared region is large (8 MiB or more): where pinning it all
        // is refused, the slots' buffers alone still register.
        let fixed_buffers = if register(&iovecs) {
            if iovecs.len() > slots {
                shared.2 = Some(slots as u16);
            }
            true
        } else {
            iovecs.len() > slots && register(&iovecs[..slots])
        };
        Ok(Self {
            ring,
            _files: files,
            raw_fds,
            fixed_files,
            fixed_buffers,
            shared,
            queued: 0,
            submit_each,
            submit_error: None,
        })
    }
}

impl Engine for UringEngine {
    #[inline]
    unsafe fn queue(&mut self, slot: u32, op: IoOp, buf: *mut u8) {
        let index = if !self.fixed_buffers {
            None
        } else if (buf as usize).wrapping_sub(self.shared.0) < self.shared.1 {
            self.shared.2
        } else {
            Some(slot as u16)
        };
        let entry = match (op.write, self.fixed_files, index) {
            (false, true, Some(i)) => opcode::ReadFixed::new(types::Fixed(op.file), buf, op.len, i)
                .offset(op.offset)
                .build(),
            (true, true, Some(i)) => opcode::WriteFixed::new(types::Fixed(op.file), buf, op.len, i)
                .offset(op.offset)
                .build(),
            (false, true, None) => opcode::Read::new(types::Fixed(op.file), buf, op.len)
                .offset(op.offset)
                .build(),
            (true, true, None) => opcode::Write::new(types::Fixed(op.file), buf, op.len)
                .offset(op.offset)
                .build(),
            (false, false, _) => {
                opcode::Read::new(types::Fd(self.raw_fds[op.file as usize]), buf, op.len)
                    .offset(op.offset)
                    .build()
            }
            (true, false, _) => {
                opcode::Write::new(types::Fd(self.raw_fds[op.file as usize]), buf, op.len)
                    .offset(op.offset)
                    .build()
            }
        }
        .user_data(slot as u64);
        // SAFETY: `queue`'s contract keeps `buf` valid and unused by anyone
        // else until the completion for `slot` is reaped; the ring has one
        // entry per slot, so the queue cannot be full.
        let pushed = unsafe { self.ring.submission().push(&entry) };
        debug_assert!(pushed.is_ok(), "submission queue sized to depth");
        self.queued += 1;
        if self.submit_each {
            // Submitted together, contiguous I/Os are merged by the block
            // layer's plug into larger requests: a "64 KiB sequential" test
            // would put 512 KiB requests on the device. One at a time, the
            // device sees the block size asked for (as fio's default does).
            if let Err(e) = self.ring.submit() {
                self.submit_error.get_or_insert(e);
            }
        }
    }

    #[inline]
    fn submit_and_wait(&mut self, min: usize, out: &mut Vec<Completion>) -> io::Result<()> {
        self.enter(min, None, out)
    }

    /// Waits for a completion or the timeout, whichever comes first, so a
    /// rate-limited worker wakes for its next due I/O even while slow I/Os
    /// are in flight (waiting for a completion alone would start it late).
    fn submit_and_wait_for(
        &mut self,
        min: usize,
        timeout: std::time::Duration,
        out: &mut Vec<Completion>,
    ) -> io::Result<()> {
        self.enter(min, Some(timeout), out)
    }
}

impl UringEngine {
    /// Submits what is queued and waits for `min` completions (or until
    /// `timeout`, if given), then reaps everything that has completed.
    #[inline]
    fn enter(
        &mut self,
        min: usize,
        timeout: Option<std::time::Duration>,
        out: &mut Vec<Completion>,
    ) -> io::Result<()> {
        if let Some(e) = self.submit_error.take() {
            return Err(e);
        }
        loop {
            let entered = match timeout {
                None => self.ring.submit_and_wait(min),
                Some(t) => {
                    let ts = types::Timespec::from(t);
                    let args = types::SubmitArgs::new().timespec(&ts);
                    self.ring.submitter().submit_with_args(min, &args)
                }
            };
            match entered {
                Ok(_) => break,
                // Nothing completed in time: the caller's next I/O is due.
                Err(e) if timeout.is_some() && e.raw_os_error() == Some(libc::ETIME) => break,
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                // The completion queue is full: reap first, then retry.
                Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {
                    if !self.ring.completion().is_empty() {
                        break;
                    }
                }
                Err(e) => return Err(e),
            }
        }
        self.queued = 0;
        self.reap(out);
        Ok(())
    }

    #[inline]
    fn reap(&mut self, out: &mut Vec<Completion>) {
        for cqe in self.ring.completion() {
            out.push(Completion {
                slot: cqe.user_data() as u32,
                result: cqe.result() as i64,
            });
        }
    }
}
