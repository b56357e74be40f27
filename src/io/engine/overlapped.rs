//! Windows overlapped I/O: up to `--iodepth` I/Os in flight per thread on one I/O completion port, reaped in batches
//!
//! Each worker owns its port, and its files are associated with it, so a
//! completion packet carries the slot's `OVERLAPPED` back to the thread that
//! queued it; `GetQueuedCompletionStatusEx` takes many packets per call, as
//! io_uring reaps many completions per system call. Timing is the worker's
//! own clock (std's `Instant`, QueryPerformanceCounter on Windows).

use std::io;
use std::os::windows::io::{AsRawHandle, OwnedHandle};
use std::ptr;

use windows_sys::Win32::Foundation::{
    CloseHandle, ERROR_HANDLE_EOF, ERROR_IO_PENDING, GetLastError, HANDLE, INVALID_HANDLE_VALUE,
    WAIT_TIMEOUT,
};
use windows_sys::Win32::Storage::FileSystem::{ReadFile, WriteFile};
use windows_sys::Win32::System::IO::{
    CreateIoCompletionPort, GetOverlappedResult, GetQueuedCompletionStatusEx, OVERLAPPED,
    OVERLAPPED_ENTRY,
};

use super::{Completion, Engine};
use crate::io::workload::IoOp;

pub(crate) struct OverlappedEngine {
    port: HANDLE,
    files: Vec<OwnedHandle>,
    /// One `OVERLAPPED` per slot, boxed so its address stays put while the
    /// kernel holds it; a packet's slot is its index in here.
    slots: Box<[OVERLAPPED]>,
    /// The file each slot's I/O went to, for `GetOverlappedResult` on failure.
    slot_file: Box<[u32]>,
    pending: Vec<(u32, IoOp, *mut u8)>,
    entries: Box<[OVERLAPPED_ENTRY]>,
    /// I/Os started and not yet reaped.
    in_flight: usize,
    /// I/Os that failed to start: reported as completions by the next wait.
    failed: Vec<Completion>,
}

// SAFETY: the engine is built and used on one worker thread; the raw
// pointers it holds are the caller's buffers (see `queue`) and its own port.
unsafe impl Send for OverlappedEngine {}

impl OverlappedEngine {
    /// `files` must have been opened with FILE_FLAG_OVERLAPPED (the target's
    /// `open_files` does so on Windows).
    pub(crate) fn new(files: Vec<OwnedHandle>, depth: u32) -> io::Result<Self> {
        let depth = depth.max(1) as usize;
        // SAFETY: a new port with no file yet; checked below.
        let port = unsafe { CreateIoCompletionPort(INVALID_HANDLE_VALUE, ptr::null_mut(), 0, 1) };
        if port.is_null() {
            return Err(io::Error::last_os_error());
        }
        let mut engine = Self {
            port,
            files: Vec::new(),
            // SAFETY: OVERLAPPED and OVERLAPPED_ENTRY are plain C structs
            // for which all-zero is the documented initial state.
            slots: (0..depth).map(|_| unsafe { std::mem::zeroed() }).collect(),
            slot_file: vec![0; depth].into_boxed_slice(),
            pending: Vec::with_capacity(depth),
            entries: (0..depth).map(|_| unsafe { std::mem::zeroed() }).collect(),
            in_flight: 0,
            failed: Vec::with_capacity(depth),
        };
        for (i, f) in files.iter().enumerate() {
            // SAFETY: `f` is an open handle this engine keeps open as long as
            // the port (both are dropped together).
            let got = unsafe { CreateIoCompletionPort(f.as_raw_handle(), port, i, 0) };
            if got.is_null() {
                return Err(io::Error::last_os_error());
            }
        }
        engine.files = files;
        Ok(engine)
    }

    fn start(&mut self, slot: u32, op: IoOp, buf: *mut u8) {
        let s = slot as usize;
        let file = self.files[op.file as usize].as_raw_handle();
        self.slot_file[s] = op.file;
        // SAFETY: zeroing a plain C struct this engine owns and no I/O uses
        // (the slot's previous I/O was reaped before it was queued again).
        let ov = &mut self.slots[s];
        *ov = unsafe { std::mem::zeroed() };
        ov.Anonymous.Anonymous.Offset = op.offset as u32;
        ov.Anonymous.Anonymous.OffsetHigh = (op.offset >> 32) as u32;
        let ov: *mut OVERLAPPED = ov;
        // SAFETY: `queue`'s contract keeps `buf` valid for op.len bytes until
        // the slot's completion; `ov` lives in `self.slots` until then.
        let ok = unsafe {
            if op.write {
                WriteFile(file, buf, op.len, ptr::null_mut(), ov)
            } else {
                ReadFile(file, buf, op.len, ptr::null_mut(), ov)
            }
        };
        // Started (pending) or done at once: either way a packet will come
        // to the port, since the files do not skip it on success.
        // SAFETY: reads this thread's last error, set by the call above.
        if ok != 0 || unsafe { GetLastError() } == ERROR_IO_PENDING {
            self.in_flight += 1;
            return;
        }
        let err = unsafe { GetLastError() };
        let result = if err == ERROR_HANDLE_EOF {
            0
        } else {
            -(err as i64)
        };
        self.failed.push(Completion { slot, result });
    }

    fn wait(&mut self, min: usize, timeout_ms: u32, out: &mut Vec<Completion>) -> io::Result<()> {
        // Taken and put back, so its capacity stays: nothing is allocated per I/O.
        let mut pending = std::mem::take(&mut self.pending);
        for &(slot, op, buf) in &pending {
            self.start(slot, op, buf);
        }
        pending.clear();
        self.pending = pending;
        let mut got = self.failed.len();
        out.append(&mut self.failed);
        loop {
            if self.in_flight == 0 {
                break;
            }
            // Enough already: take what else has completed without waiting.
            let timeout = if got >= min { 0 } else { timeout_ms };
            let mut removed = 0u32;
            // SAFETY: `entries` has room for `len` entries, all owned here.
            let ok = unsafe {
                GetQueuedCompletionStatusEx(
                    self.port,
                    self.entries.as_mut_ptr(),
                    self.entries.len() as u32,
                    &mut removed,
                    timeout,
                    0,
                )
            };
            if ok == 0 {
                // SAFETY: this thread's last error, set by the call above.
                let err = unsafe { GetLastError() };
                if err == WAIT_TIMEOUT {
                    break;
                }
                return Err(io::Error::from_raw_os_error(err as i32));
            }
            let base = self.slots.as_ptr() as usize;
            for i in 0..removed as usize {
                let entry = self.entries[i];
                let slot = (entry.lpOverlapped as usize - base) / size_of::<OVERLAPPED>();
                let result = self.result_of(slot, entry.dwNumberOfBytesTransferred);
                out.push(Completion {
                    slot: slot as u32,
                    result,
                });
            }
            self.in_flight -= removed as usize;
            got += removed as usize;
            if got >= min && (removed as usize) < self.entries.len() {
                break;
            }
        }
        Ok(())
    }

    /// Bytes transferred, or the negative Windows error of a failed I/O.
    fn result_of(&mut self, slot: usize, bytes: u32) -> i64 {
        // Internal holds the I/O's NTSTATUS: 0 is success.
        if self.slots[slot].Internal == 0 {
            return bytes as i64;
        }
        let file = self.files[self.slot_file[slot] as usize].as_raw_handle();
        let mut n = 0u32;
        // SAFETY: the slot's I/O is complete, so asking for its result
        // neither waits nor touches the buffer.
        let ok = unsafe { GetOverlappedResult(file, &self.slots[slot], &mut n, 0) };
        if ok != 0 {
            return n as i64;
        }
        match unsafe { GetLastError() } {
            ERROR_HANDLE_EOF => 0,
            err => -(err as i64),
        }
    }
}

impl Engine for OverlappedEngine {
    #[inline]
    unsafe fn queue(&mut self, slot: u32, op: IoOp, buf: *mut u8) {
        self.pending.push((slot, op, buf));
    }

    #[inline]
    fn submit_and_wait(&mut self, min: usize, out: &mut Vec<Completion>) -> io::Result<()> {
        self.wait(min, u32::MAX, out)
    }

    /// Waits for a completion or the timeout, so a rate-limited worker wakes
    /// for its next due I/O even while slow I/Os are in flight.
    fn submit_and_wait_for(
        &mut self,
        min: usize,
        timeout: std::time::Duration,
        out: &mut Vec<Completion>,
    ) -> io::Result<()> {
        let ms = timeout.as_millis().clamp(1, u32::MAX as u128 - 1) as u32;
        self.wait(min, ms, out)
    }
}

impl Drop for OverlappedEngine {
    fn drop(&mut self) {
        // An I/O still in flight owns its OVERLAPPED: wait for it before the
        // slots are freed (the worker reaps everything before it drops us,
        // so this only runs after a failure).
        let mut rest = Vec::new();
        while self.in_flight > 0 {
            if self.wait(1, u32::MAX, &mut rest).is_err() {
                // The port is broken: leaking the slots is the only safe end.
                std::mem::forget(std::mem::take(&mut self.slots));
                break;
            }
            rest.clear();
        }
        // SAFETY: the port is this engine's own handle, closed once.
        unsafe { CloseHandle(self.port) };
    }
}
