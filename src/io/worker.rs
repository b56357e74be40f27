//! The I/O loop. A worker owns everything it touches (engine, buffers, RNG,
//! statistics); per I/O it takes two clock reads per batch, a histogram
//! increment and a few plain stores, with no locks, allocation or logging.

use std::sync::atomic::Ordering;
use std::time::Duration;

use crate::io::data::{AlignedBuf, fill_random};
use crate::io::engine::{Completion, Engine};
use crate::io::reap::{Slots, record_io};
use crate::io::ring::WriteSource;
use crate::io::workload::IoOp;
use crate::stats::{LiveCounters, OpStats};

pub(crate) use crate::io::phase::{
    Control, PHASE_COOLDOWN, PHASE_MEASURE, PHASE_STOP, PHASE_WARMUP, PhaseStats, Schedule,
    WorkerResult, WorkerSetup,
};
pub(crate) use crate::io::phase::{SPIN, now_ns, wait_until};

/// Runs until the control says stop (or an I/O fails). `ready` is called
/// once the engine is set up, so the collector can start every worker's
/// clock together.
pub(crate) fn run(setup: WorkerSetup, ready: impl FnOnce()) -> WorkerResult {
    // Copies of the loop: with RATED false the compiler drops every
    // rate-control branch, store and stat (about 75 instructions per I/O),
    // so runs without --rate pay nothing for it.
    // Likewise VERIFY (runs without --verify compile without its checks)
    // and SHAPED (syncs and think time cost plain runs nothing).
    let verify = setup.data.as_ref().is_some_and(|d| d.map.is_some());
    let shaped = setup.shaper.is_some();
    match (setup.rate.is_some(), verify, shaped) {
        (false, false, false) => run_loop::<false, false, false>(setup, ready),
        (true, false, false) => run_loop::<true, false, false>(setup, ready),
        (false, true, false) => run_loop::<false, true, false>(setup, ready),
        (true, true, false) => run_loop::<true, true, false>(setup, ready),
        (false, false, true) => run_loop::<false, false, true>(setup, ready),
        (true, false, true) => run_loop::<true, false, true>(setup, ready),
        (false, true, true) => run_loop::<false, true, true>(setup, ready),
        (true, true, true) => run_loop::<true, true, true>(setup, ready),
    }
}

fn run_loop<const RATED: bool, const VERIFY: bool, const SHAPED: bool>(
    setup: WorkerSetup,
    ready: impl FnOnce(),
) -> WorkerResult {
    let WorkerSetup {
        index,
        engine: kind,
        depth,
        files,
        mut io_gen,
        max_bs,
        buf_align,
        ring: ring_bytes,
        seed,
        budget,
        rate,
        control,
        counters,
        data,
        shaper,
    } = setup;
    let mut data_report = crate::io::verify::DataReport::default();
    // I/Os not issued because another I/O owned one of their blocks (--verify).
    let mut blocked = 0u32;
    let mut shaper = shaper.unwrap_or_else(crate::io::shaping::Shaper::none);
    if SHAPED {
        shaper.attach(files.fds());
    }
    let mut rng = fastrand::Rng::with_seed(crate::io::workload::worker_seed(seed ^ 0xda7a, index));
    let mut bufs: Vec<AlignedBuf> = (0..depth)
        .map(|_| AlignedBuf::new(max_bs, buf_align))
        .collect();
    for b in &mut bufs {
        fill_random(b.as_mut_slice(), &mut rng);
    }
    let mut writes = WriteSource::new(data.as_deref(), ring_bytes, max_bs, buf_align, depth);
    let mut ptrs: Vec<(*mut u8, usize)> =
        bufs.iter_mut().map(|b| (b.as_mut_ptr(), b.len())).collect();
    // Registered after the slots' buffers: index `depth` on io_uring.
    ptrs.extend(writes.region());
    // The third takes the cool-down's I/O, which counts nowhere.
    let mut stats = [
        PhaseStats::default(),
        PhaseStats::default(),
        PhaseStats::default(),
    ];
    // Sequential I/O on io_uring is submitted as it is queued (see
    // UringEngine::new), so its issue time is read per I/O, before the submit.
    let eager = kind.caps().kernel_async && io_gen.is_sequential();
    let mut engine = match crate::io::backend::engine(kind, files, depth, &ptrs, eager) {
        Ok(e) => e,
        Err(e) => {
            control.failed.store(true, Ordering::Relaxed);
            ready();
            return WorkerResult {
                warmup: PhaseStats::default(),
                measure: PhaseStats::default(),
                error: Some(format!("cannot set up the {} engine: {e}", kind.name())),
                meta: Vec::new(),
                data: Default::default(),
                protocol: None,
            };
        }
    };
    engine.watch_stop(control.stopping());
    ready();

    let idle = IoOp {
        write: false,
        file: 0,
        offset: 0,
        len: 0,
    };
    // Times are u64 nanoseconds from `now_ns`, not `Instant`: see there.
    let now = now_ns();
    let mut slots = Slots::new(depth, idle, now);
    let mut batch: Vec<u32> = Vec::with_capacity(depth as usize);
    let mut done: Vec<Completion> = Vec::with_capacity(depth as usize);
    let mut issued_bytes = 0u64;
    let budget = budget.unwrap_or(u64::MAX);
    let mut error = None;
    let mut next_due = now + rate.as_ref().map_or(0, |r| r.offset.as_nanos() as u64);
    if RATED {
        // Sleep precisely: the default 50us timer slack would skew short gaps.
        #[cfg(target_os = "linux")]
        // SAFETY: prctl with PR_SET_TIMERSLACK takes an integer and touches no memory.
        unsafe {
            libc::prctl(libc::PR_SET_TIMERSLACK, 1usize, 0usize, 0usize, 0usize)
        };
    }

    // The phase the engine was last told of (a protocol client's figures
    // start over with the measured phase).
    let mut told = PHASE_WARMUP;
    loop {
        let phase = control.phase.load(Ordering::Relaxed);
        if phase != told {
            if phase == PHASE_MEASURE {
                engine.measure_started();
            } else if told == PHASE_MEASURE {
                engine.measure_ended();
            }
            told = phase;
        }
        if phase >= PHASE_STOP {
            break;
        }
        // Rate-limited workers issue only what is due by now.
        let due_by = if RATED { Some(now_ns()) } else { None };
        while issued_bytes < budget {
            if due_by.is_some_and(|t| next_due > t) {
                break;
            }
            if SHAPED
                && (shaper.sync_due || (shaper.think_until > 0 && now_ns() < shaper.think_until))
            {
                break;
            }
            let Some(slot) = slots.free.pop() else { break };
            let op = io_gen.next_op();
            if VERIFY {
                if let Some(d) = &data {
                    if !d.acquire(&op) {
                        // Draw another; after a few, reap first (the owner may be ours).
                        slots.free.push(slot);
                        blocked += 1;
                        if blocked % 16 == 0 {
                            break;
                        }
                        continue;
                    }
                    blocked = 0;
                }
            }
            issued_bytes += op.len as u64;
            let mut buf = ptrs[slot as usize].0;
            if op.write {
                // SAFETY: this slot's buffer is idle (not in flight) and max_bs long.
                buf = unsafe { writes.buf(data.as_deref(), slot, buf, &op, &mut rng) };
            }
            slots.ops[slot as usize] = op;
            if RATED {
                if let Some(r) = &rate {
                    slots.intended[slot as usize] = next_due;
                    next_due += if r.ns_per_byte > 0.0 {
                        let spread = if r.poisson {
                            -(1.0 - rng.f64()).ln()
                        } else {
                            1.0
                        };
                        (r.ns_per_byte * op.len as f64 * spread) as u64
                    } else {
                        r.next_gap(&mut rng).as_nanos() as u64
                    };
                }
            }
            if eager {
                let t = now_ns();
                slots.issued[slot as usize] = t;
                if !RATED {
                    slots.intended[slot as usize] = t;
                }
            }
            // SAFETY: `buf` is this slot's own buffer, max_bs >= op.len bytes,
            // taken from the free list, so nothing is in flight on it, or a
            // ring window no other in-flight I/O covers (`Ring::write`); the
            // worker does not touch it again until the slot's completion comes
            // back, and the buffers outlive every I/O (drained below, or
            // leaked if draining fails).
            unsafe { engine.queue(slot, op, buf) };
            batch.push(slot);
        }
        // Otherwise one clock read for the whole batch, just before it is submitted.
        if !batch.is_empty() {
            if !eager {
                let t_issue = now_ns();
                for &slot in &batch {
                    slots.issued[slot as usize] = t_issue;
                    if !RATED {
                        slots.intended[slot as usize] = t_issue;
                    }
                }
            }
            slots.in_flight += batch.len() as u32;
            batch.clear();
        }
        // A sync falls due even on the last write of an --io-limit share.
        if SHAPED && slots.in_flight == 0 {
            if shaper.sync_due {
                if let Err(e) = shaper.sync() {
                    error = Some(e);
                    break;
                }
                continue;
            }
            if shaper.think_until > 0 && issued_bytes < budget {
                wait_until(shaper.think_until);
                if now_ns() >= shaper.think_until {
                    shaper.think_until = 0;
                }
                continue;
            }
        }
        let waited = if slots.in_flight == 0 {
            if VERIFY && blocked > 0 {
                // Every draw hit blocks another worker's I/O owns: not done.
                std::thread::yield_now();
                continue;
            }
            if !RATED || issued_bytes >= budget {
                // The --io-limit share is done and every I/O has completed.
                break;
            }
            // Nothing in flight: wait until the next I/O is due.
            wait_until(next_due);
            continue;
        } else if RATED && !slots.free.is_empty() {
            // Reap completions, but wake in time for the next due I/O (a
            // little early: the rest is spun away in `wait_until`).
            let wait = Duration::from_nanos(next_due.saturating_sub(now_ns()));
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
        if done.is_empty() {
            continue;
        }
        let t_done = now_ns();
        let current = &mut stats[phase as usize];
        slots.reap(&mut done, t_done, |r| {
            let op = r.op;
            writes.done(r.slot);
            if VERIFY {
                if let Some(d) = &data {
                    let ok = r.result == op.len as i64;
                    if ok && !op.write {
                        // SAFETY: the read into this slot's buffer has completed
                        // and the slot is not queued again before this returns.
                        let bytes = unsafe {
                            std::slice::from_raw_parts_mut(ptrs[r.slot as usize].0, op.len as usize)
                        };
                        if let Some(what) = d.check(bytes, &op) {
                            data_report.errors += 1;
                            if data_report.samples.len() < 8 {
                                data_report.samples.push(what);
                            }
                            if d.count_error() {
                                error = Some(format!(
                                    "stopped at --max-data-errors {}",
                                    d.max_errors()
                                ));
                            }
                        }
                    }
                    d.release(&op, ok);
                }
            }
            if r.result != op.len as i64 {
                error = Some(describe_failure(&op, r.result, engine.failure()));
                return;
            }
            let svc = if RATED { Some(r.svc) } else { None };
            record_io(current, &counters, op.write, op.len as u64, r.lat, svc);
            if SHAPED && op.write {
                shaper.write_done(op.file);
            }
        });
        publish::<RATED>(&counters, &stats);
        engine.publish_live(&counters);
        if error.is_some() {
            break;
        }
        if SHAPED && shaper.think_ns > 0 {
            shaper.think_until = t_done + shaper.think_ns;
        }
    }
    if error.is_some() {
        control.fail(engine.server_lost());
    } else {
        control.mark_finished();
    }
    // Buffers must outlive every I/O the kernel still holds.
    let in_flight = slots.drain(&mut engine, &mut done, &control.stop, |op, result| {
        if VERIFY {
            if let Some(d) = &data {
                d.release(&op, result == op.len as i64);
            }
        }
    });
    if SHAPED && error.is_none() && in_flight == 0 {
        if let Err(e) = shaper.finish() {
            error = Some(e);
            control.failed.store(true, Ordering::Relaxed);
        }
    }
    let protocol = engine.protocol();
    drop(engine);
    if VERIFY && in_flight > 0 {
        if let Some(d) = &data {
            d.abandoned();
        }
    }
    if in_flight > 0 {
        // The kernel may still finish those I/Os into these buffers: leak
        // them (a few MiB, once, on a failing run) rather than free them.
        std::mem::forget(bufs);
        std::mem::forget(writes);
    }
    let [warmup, measure, _cooldown] = stats;
    WorkerResult {
        warmup,
        measure,
        error,
        meta: Vec::new(),
        data: data_report,
        protocol,
    }
}

/// Moves the calling I/O thread onto a file-descriptor table of its own and
/// opens its files there with `open`, after closing the copies in `files`.
///
/// Why: while threads share one table, every pread/pwrite takes and drops a
/// reference on its file with atomic operations; the kernel's fdget skips
/// that only when the table has a single user. A single-threaded C loop, or
/// a fio job (a process of its own), never pays it; on 4 KiB page-cache
/// reads it was ~5% of the CPU per I/O here (paired runs of a C loop with
/// and without an idle second thread). io_uring with registered files does
/// not look descriptors up at all, but psync does on every call.
///
/// The shared copies are closed first: once unshared, this thread can no
/// longer reach them, and they would stay open until the process exits. If
/// the kernel refuses to unshare (seccomp, say), the thread keeps sharing:
/// slower, still correct.
pub(crate) fn own_fd_table(
    files: &mut crate::io::backend::Files,
    open: impl FnOnce() -> Result<crate::io::backend::Files, String>,
) -> Result<(), String> {
    *files = crate::io::backend::Files::none();
    // SAFETY: the private table starts as a copy of the shared one, so every
    // descriptor this process owns keeps its meaning on this thread (signal
    // handlers included). This thread holds no descriptor of its own at this
    // point and receives none from other threads afterwards, so nothing it
    // owns can change meaning; descriptors other threads open later are not
    // visible here, and none are handed over. (Windows has no per-thread
    // handle table to split.)
    #[cfg(target_os = "linux")]
    let _ = unsafe { libc::unshare(libc::CLONE_FILES) };
    *files = open()?;
    Ok(())
}

/// The result of a worker that could not start: it still releases the
/// start barrier (`ready`) so the others are not left waiting.
pub(crate) fn not_started(control: &Control, error: String, ready: impl FnOnce()) -> WorkerResult {
    // Failed first: whoever counts the ready workers sees why one is missing.
    control.failed.store(true, Ordering::Relaxed);
    ready();
    WorkerResult {
        warmup: PhaseStats::default(),
        measure: PhaseStats::default(),
        error: Some(error),
        meta: Vec::new(),
        data: Default::default(),
        protocol: None,
    }
}

/// Single-writer publish of running totals, cumulative over both phases so
/// the collector's deltas never go back: plain stores, no read-modify-write.
#[inline]
pub(crate) fn publish<const RATED: bool>(counters: &LiveCounters, stats: &[PhaseStats; 3]) {
    let (a, b) = (&stats[0], &stats[1]);
    let r = Ordering::Relaxed;
    counters.read_ops.store(a.read.ops + b.read.ops, r);
    counters.read_bytes.store(a.read.bytes + b.read.bytes, r);
    counters
        .read_lat_ns
        .store((a.read.lat_sum_ns + b.read.lat_sum_ns) as u64, r);
    counters.write_ops.store(a.write.ops + b.write.ops, r);
    counters.write_bytes.store(a.write.bytes + b.write.bytes, r);
    counters
        .write_lat_ns
        .store((a.write.lat_sum_ns + b.write.lat_sum_ns) as u64, r);
    if !RATED {
        return;
    }
    let svc = |x: &OpStats, y: &OpStats| (x.lat_sum_ns + y.lat_sum_ns) as u64;
    counters
        .read_svc_ns
        .store(svc(&a.read_service, &b.read_service), r);
    counters
        .write_svc_ns
        .store(svc(&a.write_service, &b.write_service), r);
}

/// One line for a failed I/O; `why`, the engine's own account, stands in
/// for the errno's words when it has one.
pub(crate) fn describe_failure(op: &IoOp, result: i64, why: Option<String>) -> String {
    let what = if op.write { "write" } else { "read" };
    if result < 0 {
        let err =
            why.unwrap_or_else(|| std::io::Error::from_raw_os_error((-result) as i32).to_string());
        format!(
            "{what} of {} bytes at offset {} of file #{} failed: {err}",
            op.len, op.offset, op.file
        )
    } else {
        format!(
            "short {what}: {result} of {} bytes at offset {} of file #{} (the file is shorter than expected)",
            op.len, op.offset, op.file
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;
    use std::sync::mpsc;

    /// Descriptors in the calling thread's table that point at `path`.
    fn open_on_this_thread(path: &Path) -> usize {
        std::fs::read_dir("/proc/thread-self/fd")
            .expect("procfs")
            .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
            .filter(|target| target == path)
            .count()
    }

    #[test]
    fn own_fd_table_leaves_nothing_in_the_shared_table() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("data");
        std::fs::write(&path, b"volbench").expect("write");
        let open = |p: &Path| -> Result<crate::io::backend::Files, String> {
            std::fs::File::open(p)
                .map(|f| crate::io::backend::Files::Fds(vec![std::os::fd::OwnedFd::from(f)]))
                .map_err(|e| e.to_string())
        };
        std::thread::scope(|s| {
            // Made inside the scope so a failed assertion drops `to_worker`
            // while unwinding, which releases the worker before the join.
            let (to_test, from_worker) = mpsc::channel();
            let (to_worker, from_test) = mpsc::channel::<()>();
            let path = &path;
            s.spawn(move || {
                // Opened in the table this thread shares with the test thread.
                let mut files = open(path).expect("open");
                own_fd_table(&mut files, || open(path)).expect("reopen");
                let mine = open_on_this_thread(path);
                let mut buf = [0u8; 8];
                let n = crate::io::sys::io::pread(&files.fds()[0], &mut buf, 0).expect("pread");
                to_test.send((mine, buf[..n].to_vec())).expect("send");
                // Keep the private descriptor open while the test looks.
                let _ = from_test.recv();
            });
            let (mine, data) = from_worker.recv().expect("worker reports");
            assert_eq!(mine, 1, "the worker sees exactly its reopened file");
            assert_eq!(data, b"volbench");
            assert_eq!(
                open_on_this_thread(path),
                0,
                "the shared table still holds the worker's file"
            );
            to_worker.send(()).expect("release worker");
        });
    }
}
