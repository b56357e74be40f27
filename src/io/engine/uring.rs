//! io_uring: many I/Os in flight per thread with one system call per batch.
//! Files and buffers are registered once, so the kernel skips per-I/O file
//! lookups and page pinning.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

use io_uring::{IoUring, opcode, types};

use super::on_demand::OnDemand;
use super::{Completion, Engine, Fds, OPEN_FAILED};
use crate::io::workload::IoOp;

pub struct UringEngine {
    ring: IoUring,
    _files: Vec<OwnedFd>,
    raw_fds: Vec<i32>,
    /// Files opened as I/Os need them (`Fds::OnDemand`): the registered
    /// table then holds the cache's slots, not the set's files.
    cache: Option<OnDemand>,
    /// Per I/O slot, the cache slot its I/O was queued on.
    pinned: Vec<u32>,
    /// I/Os whose file could not be opened: completed by the next wait.
    failed: Vec<Completion>,
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
        files: Fds,
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
        let (files, cache) = match files {
            Fds::All(f) => (f, None),
            Fds::OnDemand(c) => (Vec::new(), Some(c)),
        };
        let raw_fds: Vec<i32> = files.iter().map(|f| f.as_raw_fd()).collect();
        let fixed_files = match &cache {
            None => ring.submitter().register_files(&raw_fds).is_ok(),
            // Empty slots (kernel 5.19+), filled as files open; without
            // them each I/O names its descriptor.
            Some(c) => ring
                .submitter()
                .register_files_sparse(c.capacity() as u32)
                .is_ok(),
        };
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
            cache,
            pinned: vec![0; depth as usize],
            failed: Vec::new(),
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
        let Some((file, raw)) = self.file_of(slot, op.file) else {
            self.failed.push(Completion {
                slot,
                result: OPEN_FAILED,
            });
            return;
        };
        let index = if !self.fixed_buffers {
            None
        } else if (buf as usize).wrapping_sub(self.shared.0) < self.shared.1 {
            self.shared.2
        } else {
            Some(slot as u16)
        };
        let entry = match (op.write, self.fixed_files, index) {
            (false, true, Some(i)) => opcode::ReadFixed::new(types::Fixed(file), buf, op.len, i)
                .offset(op.offset)
                .build(),
            (true, true, Some(i)) => opcode::WriteFixed::new(types::Fixed(file), buf, op.len, i)
                .offset(op.offset)
                .build(),
            (false, true, None) => opcode::Read::new(types::Fixed(file), buf, op.len)
                .offset(op.offset)
                .build(),
            (true, true, None) => opcode::Write::new(types::Fixed(file), buf, op.len)
                .offset(op.offset)
                .build(),
            (false, false, _) => opcode::Read::new(types::Fd(raw), buf, op.len)
                .offset(op.offset)
                .build(),
            (true, false, _) => opcode::Write::new(types::Fd(raw), buf, op.len)
                .offset(op.offset)
                .build(),
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
    pub(crate) fn failure(&self) -> Option<String> {
        self.cache.as_ref().and_then(|c| c.failure())
    }

    /// The registered index and the descriptor of `file` for an I/O in
    /// `slot`: the set's own, or the cache slot it is open in (opened,
    /// and registered there, if it was not). None if it cannot be opened.
    #[inline]
    fn file_of(&mut self, slot: u32, file: u32) -> Option<(u32, i32)> {
        let Some(c) = self.cache.as_mut() else {
            let raw = self.raw_fds.get(file as usize).copied().unwrap_or(-1);
            return Some((file, raw));
        };
        let (held, opened) = c.acquire(file)?;
        let raw = c.fd(held).map_or(-1, |f| f.as_raw_fd());
        if opened
            && self.fixed_files
            && self
                .ring
                .submitter()
                .register_files_update(held, &[raw])
                .is_err()
        {
            // Entries already built keep their registered files; the
            // rest name their descriptors.
            self.fixed_files = false;
        }
        if let Some(p) = self.pinned.get_mut(slot as usize) {
            *p = held;
        }
        Some((held, raw))
    }

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
        // I/Os that failed to open are completions already: wait for no
        // more than what remains.
        let min = min.saturating_sub(self.failed.len());
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
        out.append(&mut self.failed);
        Ok(())
    }

    #[inline]
    fn reap(&mut self, out: &mut Vec<Completion>) {
        for cqe in self.ring.completion() {
            let slot = cqe.user_data() as u32;
            if let Some(c) = self.cache.as_mut() {
                if let Some(&held) = self.pinned.get(slot as usize) {
                    c.release(held);
                }
            }
            out.push(Completion {
                slot,
                result: cqe.result() as i64,
            });
        }
    }
}
