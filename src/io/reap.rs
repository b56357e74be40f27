//! The reap step the three worker loops share (block I/O, replay,
//! metadata): the slots an I/O or an operation is in flight in, when each
//! was due and when it was issued, and what a completion becomes: its slot
//! freed, its latency counted from its due time (no coordinated omission)
//! and its service time from its issue, recorded where the loop says. A
//! back end that pipelines requests (queue, then poll completions) fills
//! the same slots, so no loop grows a reap of its own.

use std::sync::atomic::{AtomicBool, Ordering};

use crate::io::engine::{Completion, Engine};
use crate::io::phase::PhaseStats;
use crate::stats::LiveCounters;

/// A worker's slots: `depth` of them, each free or holding one op in flight.
pub(crate) struct Slots<O> {
    pub(crate) ops: Vec<O>,
    /// When each slot's op was due: its latency counts from here.
    pub(crate) intended: Vec<u64>,
    /// When it was handed to the engine: its service time counts from here.
    pub(crate) issued: Vec<u64>,
    pub(crate) free: Vec<u32>,
    pub(crate) in_flight: u32,
}

/// One completion, as the loop records it.
#[derive(Clone, Copy)]
pub(crate) struct Reaped<O> {
    pub(crate) slot: u32,
    pub(crate) op: O,
    /// Bytes moved, or a negative errno.
    pub(crate) result: i64,
    /// From the due time to the completion.
    pub(crate) lat: u64,
    /// From the issue to the completion.
    pub(crate) svc: u64,
}

impl<O: Copy> Slots<O> {
    pub(crate) fn new(depth: u32, idle: O, now: u64) -> Self {
        let n = depth as usize;
        Self {
            ops: vec![idle; n],
            intended: vec![now; n],
            issued: vec![now; n],
            free: (0..depth).rev().collect(),
            in_flight: 0,
        }
    }

    /// Frees the slot of every completion in `done` (emptied) and hands
    /// each to `each` with its latency and service time at `t_done`.
    #[inline(always)]
    pub(crate) fn reap(
        &mut self,
        done: &mut Vec<Completion>,
        t_done: u64,
        mut each: impl FnMut(Reaped<O>),
    ) {
        for c in done.drain(..) {
            let s = c.slot as usize;
            self.in_flight -= 1;
            self.free.push(c.slot);
            each(Reaped {
                slot: c.slot,
                op: self.ops[s],
                result: c.result,
                lat: t_done.saturating_sub(self.intended[s]),
                svc: t_done.saturating_sub(self.issued[s]),
            });
        }
    }

    /// At the end of a loop: waits for everything still in flight, since
    /// the buffers must outlive it, handing each op and result to `each`;
    /// an engine that can give up what is left does, once it has been
    /// waited for long enough (`Engine::abandon`: a server that went away
    /// is not waited for, nor one that is slow when the job is being
    /// stopped, `stopped`).
    /// Returns how many never came back (the engine failed or gave them
    /// up): their memory must then be leaked, never freed.
    pub(crate) fn drain(
        &mut self,
        engine: &mut impl Engine,
        done: &mut Vec<Completion>,
        stopped: &AtomicBool,
        mut each: impl FnMut(O, i64),
    ) -> u32 {
        let since = std::time::Instant::now();
        while self.in_flight > 0 {
            if engine.abandon(since.elapsed(), stopped.load(Ordering::Relaxed)) {
                break;
            }
            if engine
                .submit_and_wait(self.in_flight as usize, done)
                .is_err()
            {
                break;
            }
            for c in done.drain(..) {
                self.in_flight -= 1;
                self.free.push(c.slot);
                each(self.ops[c.slot as usize], c.result);
            }
        }
        self.in_flight
    }
}

/// Records one completed read or write of a block or replay run: its
/// latency in the phase's histogram and the interval's live one, and its
/// service time when the run keeps it (rate-limited or replayed).
#[inline(always)]
pub(crate) fn record_io(
    phase: &mut PhaseStats,
    counters: &LiveCounters,
    write: bool,
    bytes: u64,
    lat: u64,
    svc: Option<u64>,
) {
    let (main, service, live) = if write {
        (
            &mut phase.write,
            &mut phase.write_service,
            &counters.write_hist,
        )
    } else {
        (
            &mut phase.read,
            &mut phase.read_service,
            &counters.read_hist,
        )
    };
    main.record(lat, bytes);
    live.record(lat);
    if let Some(svc) = svc {
        service.record(svc, bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::engine::NullEngine;
    use crate::io::workload::IoOp;

    fn op(len: u32) -> IoOp {
        IoOp {
            write: false,
            file: 0,
            offset: 0,
            len,
        }
    }

    #[test]
    fn a_completion_frees_its_slot_and_counts_from_due_and_issue() {
        let mut s = Slots::new(2, op(0), 100);
        let slot = s.free.pop().unwrap();
        s.ops[slot as usize] = op(4096);
        s.intended[slot as usize] = 100;
        s.issued[slot as usize] = 150;
        s.in_flight = 1;
        let mut done = vec![Completion { slot, result: 4096 }];
        let mut seen = Vec::new();
        s.reap(&mut done, 400, |r| {
            seen.push((r.slot, r.op.len, r.result, r.lat, r.svc))
        });
        assert_eq!(seen, vec![(slot, 4096, 4096, 300, 250)]);
        assert!(done.is_empty());
        assert_eq!((s.in_flight, s.free.len()), (0, 2));
    }

    #[test]
    fn drain_waits_for_what_is_in_flight() {
        let mut s = Slots::new(4, op(0), 0);
        let mut e = NullEngine::new(4);
        for _ in 0..3 {
            let slot = s.free.pop().unwrap();
            s.ops[slot as usize] = op(512);
            // SAFETY: the null engine touches no memory.
            unsafe { e.queue(slot, op(512), std::ptr::null_mut()) };
            s.in_flight += 1;
        }
        let mut done = Vec::new();
        let mut bytes = 0;
        let stopped = AtomicBool::new(false);
        let left = s.drain(&mut e, &mut done, &stopped, |o, r| {
            bytes += r + o.len as i64
        });
        assert_eq!(left, 0);
        assert_eq!((bytes, s.free.len()), (3 * 1024, 4));
    }
}
