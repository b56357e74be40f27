//! The replay worker: the requests of a trace issued at their recorded
//! times (scaled, or as fast as the depth allows), open loop, up to the
//! worker's depth in flight. Worker `w` of `n` takes every request whose
//! index is `w` modulo `n` (a synchronous engine runs one worker per I/O in
//! flight). Latency counts from each request's due time, so a request
//! that waited for a free slot shows it, and is counted late; service time
//! (from the actual issue) is kept beside it. Flushes and discards wait
//! for this worker's I/O in flight, then run on their own, timed apart.
//! It is a loop of its own beside `io::worker`, so the random and
//! sequential paths pay nothing for it.
#![deny(clippy::unwrap_used, clippy::expect_used)]
// Slots index vectors of `depth` entries, and a slot is always < depth.
#![allow(clippy::indexing_slicing)]

use crate::io::sys::fd::{AsFd, OwnedFd};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::{ReqOp, Request, Trace};
use crate::io::data::{AlignedBuf, fill_random};
use crate::io::engine::{self, Completion, Engine};
use crate::io::phase::{Control, PHASE_STOP, PhaseStats, SPIN, WorkerResult, WorkerSetup, now_ns};
use crate::io::reap::{Slots, record_io};
use crate::io::workload::IoOp;
use crate::spec::replay::ReplaySpec;
use crate::stats::OpStats;

/// What a worker needs besides the common setup.
pub(crate) struct ReplayWorker {
    pub(crate) spec: ReplaySpec,
    /// Bytes of the target the offsets land on.
    pub(crate) target_bytes: u64,
    pub(crate) workers: u32,
    pub(crate) report: Arc<Mutex<ReplayReport>>,
}

/// What the workers of one replay add up to, beside the read and write
/// statistics every run has.
#[derive(Default, Debug, Clone)]
pub(crate) struct ReplayReport {
    pub(crate) flush: OpStats,
    pub(crate) discard: OpStats,
    /// Requests due while every slot was busy, and how late they went.
    pub(crate) late: u64,
    pub(crate) late_sum_ns: u128,
    /// The latest any request was issued after its due time, for any reason.
    pub(crate) behind_max_ns: u64,
    /// Requests issued (all ops).
    pub(crate) issued: u64,
    /// Requests whose offset wrapped around the target (`--replay-wrap`).
    pub(crate) wrapped: u64,
}

impl ReplayReport {
    pub(crate) fn merge(&mut self, o: &ReplayReport) {
        self.flush.merge(&o.flush);
        self.discard.merge(&o.discard);
        self.late += o.late;
        self.late_sum_ns += o.late_sum_ns;
        self.behind_max_ns = self.behind_max_ns.max(o.behind_max_ns);
        self.issued += o.issued;
        self.wrapped += o.wrapped;
    }
}

/// Where a request of `len` bytes at `offset` lands on a target of `total`
/// bytes: as recorded when it fits; with wrap, `offset` modulo the target,
/// moved back (to `align`) when it would then run past the end.
pub(crate) fn place(
    offset: u64,
    len: u64,
    total: u64,
    wrap: bool,
    align: u64,
) -> Option<(u64, bool)> {
    if offset.checked_add(len)? <= total {
        return Some((offset, false));
    }
    if !wrap || len > total || total == 0 {
        return None;
    }
    let o = offset % total;
    if o + len <= total {
        Some((o, true))
    } else {
        Some(((total - len) / align.max(1) * align.max(1), true))
    }
}

/// Flushes and discards, run synchronously on the target's descriptor.
struct Sync {
    fd: Option<OwnedFd>,
    device: bool,
}

impl Sync {
    /// A copy of the target's descriptor (the engine takes the worker's).
    fn of(files: &[OwnedFd]) -> Sync {
        let first = files.first();
        let device = first
            .and_then(|f| crate::io::sys::fs::fstat(f).ok())
            .is_some_and(|st| {
                crate::io::sys::fs::FileType::from_raw_mode(st.st_mode).is_block_device()
            });
        Sync {
            fd: first.and_then(|f| f.try_clone().ok()),
            device,
        }
    }

    fn flush(&self) -> Result<(), String> {
        match &self.fd {
            Some(fd) => crate::io::sys::fs::fdatasync(fd).map_err(|e| format!("flush failed: {e}")),
            None => Ok(()),
        }
    }

    fn discard(&self, offset: u64, len: u64) -> Result<(), String> {
        let Some(fd) = &self.fd else {
            return Ok(());
        };
        let r = if self.device {
            discard_device(fd.as_fd(), offset, len)
        } else {
            crate::io::gate::punch_hole(fd, offset, len)
        };
        r.map_err(|e| format!("discard of {len} bytes at offset {offset} failed: {e}"))
    }
}

/// BLKDISCARD (_IO(0x12, 119)) on a block device: the range is a pair of u64.
#[cfg(unix)]
fn discard_device(
    fd: crate::io::sys::fd::BorrowedFd<'_>,
    offset: u64,
    len: u64,
) -> crate::io::sys::io::Result<()> {
    let range = [offset, len];
    // SAFETY: BLKDISCARD reads two u64 from the pointer, which points at
    // `range`, alive for the call; the descriptor is a block device's.
    let r = unsafe {
        libc::ioctl(
            crate::io::sys::fd::AsRawFd::as_raw_fd(&fd),
            0x1277,
            range.as_ptr(),
        )
    };
    if r < 0 {
        Err(
            crate::io::sys::io::Errno::from_io_error(&std::io::Error::last_os_error())
                .unwrap_or(crate::io::sys::io::Errno::IO),
        )
    } else {
        Ok(())
    }
}

/// No raw disk is a target on Windows yet, so no discard reaches one.
#[cfg(windows)]
fn discard_device(
    _fd: crate::io::sys::fd::BorrowedFd<'_>,
    _offset: u64,
    _len: u64,
) -> crate::io::sys::io::Result<()> {
    Err(crate::io::sys::io::Errno::OPNOTSUPP)
}

/// This worker's next request: every `n`th from the `w`th.
fn next_mine(t: &mut Trace, index: &mut u64, w: u32, n: u32) -> Result<Option<Request>, String> {
    loop {
        let r = t.next_request().map_err(|e| e.to_string())?;
        let Some(r) = r else {
            return Ok(None);
        };
        let i = *index;
        *index += 1;
        if i % n.max(1) as u64 == w as u64 {
            return Ok(Some(r));
        }
    }
}

/// A flush or a discard, run on its own once this worker has nothing in
/// flight, timed from its due time like every request.
fn barrier(
    req: &Request,
    due: u64,
    now: u64,
    rw: &ReplayWorker,
    sync: &Sync,
    report: &mut ReplayReport,
) -> Result<(), String> {
    let spec = &rw.spec;
    if spec.speed.is_some() {
        report.behind_max_ns = report.behind_max_ns.max(now - due);
    }
    if req.op == ReqOp::Flush {
        sync.flush()?;
    } else {
        let placed = place(
            req.offset,
            req.len,
            rw.target_bytes,
            spec.wrap,
            spec.summary.align,
        );
        let Some((o, wrapped)) = placed else {
            return Err(format!(
                "discard at offset {} is beyond the target",
                req.offset
            ));
        };
        report.wrapped += wrapped as u64;
        sync.discard(o, req.len.min(rw.target_bytes - o))?;
    }
    let t = now_ns();
    let (st, bytes) = if req.op == ReqOp::Flush {
        (&mut report.flush, 0)
    } else {
        (&mut report.discard, req.len)
    };
    st.record(t.saturating_sub(due), bytes);
    report.issued += 1;
    Ok(())
}

fn failed(setup: &WorkerSetup, error: String, ready: impl FnOnce()) -> WorkerResult {
    crate::io::worker::not_started(&setup.control, error, ready)
}

/// Replays this worker's share of the trace; ends when it is done (or
/// stopped, or an I/O fails).
pub(crate) fn run(rw: ReplayWorker, setup: WorkerSetup, ready: impl FnOnce()) -> WorkerResult {
    let mut trace = match Trace::of(&rw.spec) {
        Ok(t) => t,
        Err(e) => return failed(&setup, e.to_string(), ready),
    };
    let sync = Sync::of(setup.files.fds());
    let WorkerSetup {
        index: w,
        engine: kind,
        depth,
        files,
        max_bs,
        buf_align,
        seed,
        control,
        counters,
        ..
    } = setup;
    let mut rng = fastrand::Rng::with_seed(crate::io::workload::worker_seed(seed ^ 0x7e91, w));
    let mut bufs: Vec<AlignedBuf> = (0..depth)
        .map(|_| AlignedBuf::new(max_bs, buf_align))
        .collect();
    for b in &mut bufs {
        fill_random(b.as_mut_slice(), &mut rng);
    }
    let ptrs: Vec<(*mut u8, usize)> = bufs.iter_mut().map(|b| (b.as_mut_ptr(), b.len())).collect();
    let mut engine = match crate::io::backend::engine(kind, files, depth, &ptrs, true) {
        Ok(e) => e,
        Err(e) => {
            let why = format!("cannot set up the {} engine: {e}", kind.name());
            return crate::io::worker::not_started(&control, why, ready);
        }
    };
    engine.watch_stop(control.stopping());
    ready();

    let spec = &rw.spec;
    let align = spec.summary.align;
    let mut report = ReplayReport::default();
    let mut stats = [
        PhaseStats::default(),
        PhaseStats::default(),
        PhaseStats::default(),
    ];
    let idle = IoOp {
        write: false,
        file: 0,
        offset: 0,
        len: 0,
    };
    let start = now_ns();
    let mut slots = Slots::new(depth, idle, start);
    let mut done: Vec<Completion> = Vec::with_capacity(depth as usize);
    let mut index = 0u64;
    // The next request of this worker, and whether it found every slot busy.
    let (mut pending, mut error) = match next_mine(&mut trace, &mut index, w, rw.workers) {
        Ok(r) => (r.map(|r| (r, false)), None),
        Err(e) => (None, Some(e)),
    };
    'run: while error.is_none() {
        let phase = control.phase.load(Ordering::Relaxed);
        if phase >= PHASE_STOP {
            break;
        }
        let current = &mut stats[(phase as usize).min(2)];
        while let Some((req, blocked)) = pending {
            let due = start + spec.due_ns(req.at_ns);
            let now = now_ns();
            if due > now {
                break;
            }
            if matches!(req.op, ReqOp::Flush | ReqOp::Discard) {
                // A barrier: what this worker issued before it completes first.
                if slots.in_flight > 0 {
                    break;
                }
                if let Err(e) = barrier(&req, due, now, &rw, &sync, &mut report) {
                    error = Some(e);
                    break 'run;
                }
            } else {
                let Some(slot) = slots.free.pop() else {
                    pending = Some((req, true));
                    break;
                };
                let Some((offset, wrapped)) =
                    place(req.offset, req.len, rw.target_bytes, spec.wrap, align)
                else {
                    error = Some(format!(
                        "request at offset {} of {} bytes is beyond the target",
                        req.offset, req.len
                    ));
                    break 'run;
                };
                report.wrapped += wrapped as u64;
                let op = IoOp {
                    write: req.op == ReqOp::Write,
                    file: 0,
                    offset,
                    // Bounded by MAX_TRACE_REQUEST_BYTES (64 MiB) in the scan.
                    len: req.len as u32,
                };
                let s = slot as usize;
                slots.ops[s] = op;
                slots.intended[s] = due;
                // SAFETY: the slot's buffer is max_bs >= op.len bytes, taken
                // from the free list, so no I/O is in flight on it; it is
                // not touched until the slot's completion comes back, and
                // the buffers outlive every I/O (drained below, or leaked).
                unsafe { engine.queue(slot, op, ptrs[s].0) };
                let t = now_ns();
                slots.issued[s] = t;
                if spec.speed.is_some() {
                    report.behind_max_ns = report.behind_max_ns.max(t - due);
                }
                // At `max` every request is due at once: none is late.
                if blocked && spec.speed.is_some() {
                    report.late += 1;
                    report.late_sum_ns += (t - due) as u128;
                }
                report.issued += 1;
                slots.in_flight += 1;
            }
            pending = match next_mine(&mut trace, &mut index, w, rw.workers) {
                Ok(r) => r.map(|r| (r, false)),
                Err(e) => {
                    error = Some(e);
                    break 'run;
                }
            };
        }
        let next_due = pending.map(|(r, _)| start + spec.due_ns(r.at_ns));
        let waited = if slots.in_flight == 0 {
            match next_due {
                None => break,
                Some(due) => {
                    crate::io::phase::wait_until(due);
                    continue;
                }
            }
        } else if let (Some(due), false) = (next_due, slots.free.is_empty()) {
            // Reap, but wake in time for the next request.
            let wait = Duration::from_nanos(due.saturating_sub(now_ns()));
            engine.submit_and_wait_for(
                1,
                wait.saturating_sub(SPIN).max(Duration::from_micros(1)),
                &mut done,
            )
        } else {
            engine.submit_and_wait(1, &mut done)
        };
        if let Err(e) = waited {
            error = Some(format!("I/O submission failed: {e}"));
            break;
        }
        let t_done = now_ns();
        slots.reap(&mut done, t_done, |r| {
            let op = r.op;
            if r.result != op.len as i64 {
                error = Some(crate::io::worker::describe_failure(
                    &op,
                    r.result,
                    engine.failure(),
                ));
                return;
            }
            record_io(
                current,
                &counters,
                op.write,
                op.len as u64,
                r.lat,
                Some(r.svc),
            );
        });
        crate::io::worker::publish::<true>(&counters, &stats);
    }
    if error.is_some() {
        control.fail(engine.server_lost());
    } else {
        control.mark_finished();
    }
    if let Ok(mut r) = rw.report.lock() {
        r.merge(&report);
    }
    finish(engine, slots, bufs, &control, stats, error)
}

/// Waits for what is still in flight (the buffers must outlive it; given
/// up only as `Slots::drain` says) and hands the worker's statistics back.
fn finish(
    mut engine: engine::AnyEngine,
    mut slots: Slots<IoOp>,
    bufs: Vec<AlignedBuf>,
    control: &Control,
    stats: [PhaseStats; 3],
    error: Option<String>,
) -> WorkerResult {
    let mut done = Vec::with_capacity(slots.in_flight as usize);
    let in_flight = slots.drain(&mut engine, &mut done, &control.stop, |_, _| {});
    drop(engine);
    if in_flight > 0 {
        // The kernel may still finish those I/Os into these buffers.
        std::mem::forget(bufs);
    }
    let [warmup, measure, _] = stats;
    WorkerResult {
        warmup,
        measure,
        error,
        meta: Vec::new(),
        data: Default::default(),
        protocol: None,
    }
}

#[cfg(test)]
mod tests {
    use super::place;

    #[test]
    fn offsets_past_the_target_are_refused_or_wrapped_as_stated() {
        assert_eq!(place(4096, 4096, 8192, false, 4096), Some((4096, false)));
        assert_eq!(place(8192, 4096, 8192, false, 4096), None);
        assert_eq!(
            place(8192 + 4096, 4096, 8192, true, 4096),
            Some((4096, true))
        );
        // Wrapped into the last partial block: moved back to fit, aligned.
        assert_eq!(
            place(8192 + 6144, 4096, 8192, true, 512),
            Some((4096, true))
        );
        assert_eq!(place(0, 16384, 8192, true, 4096), None);
        assert_eq!(place(u64::MAX, 1, 8192, true, 1), None);
    }
}
