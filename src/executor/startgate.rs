//! The start line of a run's I/O threads: each reports ready, then waits
//! to be released together. Unlike a `Barrier`, it can be called off: when
//! a thread cannot be created, one fails to set up, or a signal arrives
//! during start-up, the threads already waiting are released at once
//! (told not to start) instead of waiting forever for the missing ones.
//!
//! The same line serves both levels of a run: the I/O threads of one
//! target, and the targets of one run on this host, which a local job
//! starts at once (`Start::Now`) and an agent at the time its coordinator
//! decides for every host (`Start::Decided`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// When a run's I/O starts once everything on this host is ready.
#[derive(Clone, Copy)]
pub(crate) enum Start<'a> {
    /// At once: a job on this host alone.
    Now,
    /// At the time this asks for (an agent: the coordinator's common start
    /// across hosts); None calls the run off.
    Decided(&'a (dyn Fn() -> Option<Instant> + Sync)),
}

impl Start<'_> {
    /// The start time, asked once everything is ready.
    pub(crate) fn decide(&self) -> Option<Instant> {
        match self {
            Start::Now => Some(Instant::now()),
            Start::Decided(f) => f(),
        }
    }
}

/// Sleeps until `at` and returns when it woke, in both clocks: the
/// instant a run's clock starts from and the wall time reported as its
/// start (taken together, before anything else, so the reported start is
/// the wake-up itself).
///
/// Why a real-time priority: every agent of a multi-host run wakes at the
/// same instant, and on a busy machine (or many simulated agents on one)
/// each waits its turn in the normal scheduler's queue: 100 agents on a
/// loaded 2-core machine woke over 15 ms. For the wake-up alone this
/// thread asks for SCHED_FIFO (root or CAP_SYS_NICE; otherwise it sleeps as
/// it is), so it runs as soon as its timer fires, and drops back to its
/// own policy before any I/O is issued. A thread already under another
/// policy (a user's `chrt`) is left alone.
pub(crate) fn sleep_until(at: Instant) -> (Instant, std::time::SystemTime) {
    let wait = at.saturating_duration_since(Instant::now());
    if wait.is_zero() {
        return (Instant::now(), std::time::SystemTime::now());
    }
    let raised = raise_for_wake_up();
    // Re-read after the policy change, which may itself have waited.
    let wait = at.saturating_duration_since(Instant::now());
    if !wait.is_zero() {
        std::thread::sleep(wait);
    }
    let woke = (Instant::now(), std::time::SystemTime::now());
    if raised {
        lower_after_wake_up();
    }
    woke
}

#[cfg(unix)]
fn raise_for_wake_up() -> bool {
    // SAFETY: the sched_* calls read and set this thread's own policy
    // (pid 0) through the param struct we own.
    unsafe {
        if libc::sched_getscheduler(0) != libc::SCHED_OTHER {
            return false;
        }
        let p = libc::sched_param { sched_priority: 1 };
        libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) == 0
    }
}

#[cfg(unix)]
fn lower_after_wake_up() {
    // SAFETY: as above; going back to SCHED_OTHER needs no privilege.
    unsafe {
        let p = libc::sched_param { sched_priority: 0 };
        libc::sched_setscheduler(0, libc::SCHED_OTHER, &p);
    }
}

/// Windows' counterpart: the thread's priority raised to
/// TIME_CRITICAL for the wake-up (no privilege needed inside the normal
/// priority class), unless a user already set another.
#[cfg(windows)]
fn raise_for_wake_up() -> bool {
    use windows_sys::Win32::System::Threading::{
        GetCurrentThread, GetThreadPriority, SetThreadPriority, THREAD_PRIORITY_NORMAL,
        THREAD_PRIORITY_TIME_CRITICAL,
    };
    // SAFETY: the pseudo-handle of the calling thread, its own priority.
    unsafe {
        if GetThreadPriority(GetCurrentThread()) != THREAD_PRIORITY_NORMAL {
            return false;
        }
        SetThreadPriority(GetCurrentThread(), THREAD_PRIORITY_TIME_CRITICAL) != 0
    }
}

#[cfg(windows)]
fn lower_after_wake_up() {
    use windows_sys::Win32::System::Threading::{
        GetCurrentThread, SetThreadPriority, THREAD_PRIORITY_NORMAL,
    };
    // SAFETY: as above.
    unsafe {
        SetThreadPriority(GetCurrentThread(), THREAD_PRIORITY_NORMAL);
    }
}

#[derive(Default)]
struct State {
    ready: usize,
    /// Some(Some(t)): go at t; Some(None): called off.
    released: Option<Option<Instant>>,
}

#[derive(Default)]
pub(crate) struct ThreadGate {
    state: Mutex<State>,
    changed: Condvar,
}

/// How often the coordinating thread looks at the stop flag while waiting
/// for the workers to be ready: signals are caught within this.
const POLL: Duration = Duration::from_millis(50);

impl ThreadGate {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic elsewhere while holding this lock leaves plain counters
        // behind, still meaningful.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A worker is set up (or has failed and will not start).
    pub(crate) fn arrive(&self) {
        self.lock().ready += 1;
        self.changed.notify_all();
    }

    /// A worker waits for the start; true to go, false when called off.
    pub(crate) fn wait_start(&self) -> bool {
        self.wait_start_at().is_some()
    }

    /// A worker waits for the start: the time to start at, None when
    /// called off.
    pub(crate) fn wait_start_at(&self) -> Option<Instant> {
        let mut s = self.lock();
        loop {
            if let Some(at) = s.released {
                return at;
            }
            s = self.changed.wait(s).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// Waits until `n` workers have arrived, or `stop` is set, or
    /// `failed()` says a worker gave up: true only in the first case.
    pub(crate) fn wait_ready(
        &self,
        n: usize,
        stop: &AtomicBool,
        failed: impl Fn() -> bool,
    ) -> bool {
        let mut s = self.lock();
        loop {
            if s.ready >= n {
                return true;
            }
            if stop.load(Ordering::Relaxed) || failed() {
                return false;
            }
            s = self
                .changed
                .wait_timeout(s, POLL)
                .map(|(g, _)| g)
                .unwrap_or_else(|p| p.into_inner().0);
        }
    }

    /// Releases every worker, now and later: `go` false calls the run off.
    pub(crate) fn release(&self, go: bool) {
        self.release_at(go.then(Instant::now));
    }

    /// Releases every worker, now and later, to start at `at`; None calls
    /// the run off.
    pub(crate) fn release_at(&self, at: Option<Instant>) {
        let mut s = self.lock();
        if s.released.is_none() {
            s.released = Some(at);
        }
        drop(s);
        self.changed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn calling_off_releases_waiters_even_if_some_never_arrive() {
        let gate = Arc::new(ThreadGate::new());
        let stop = AtomicBool::new(false);
        let waiters: Vec<_> = (0..3)
            .map(|_| {
                let g = gate.clone();
                std::thread::spawn(move || {
                    g.arrive();
                    g.wait_start()
                })
            })
            .collect();
        // Five were expected; a failure is reported: no deadlock.
        assert!(!gate.wait_ready(5, &stop, || true));
        gate.release(false);
        for w in waiters {
            assert!(!w.join().expect("joined"));
        }
    }

    #[test]
    fn a_stop_flag_ends_the_wait_for_ready() {
        let gate = ThreadGate::new();
        let stop = AtomicBool::new(true);
        assert!(!gate.wait_ready(1, &stop, || false));
    }

    #[test]
    fn all_ready_then_go() {
        let gate = Arc::new(ThreadGate::new());
        let stop = AtomicBool::new(false);
        let g = gate.clone();
        let t = std::thread::spawn(move || {
            g.arrive();
            g.wait_start()
        });
        assert!(gate.wait_ready(1, &stop, || false));
        gate.release(true);
        assert!(t.join().expect("joined"));
    }

    #[test]
    fn a_decided_start_is_asked_once_and_every_waiter_gets_the_same_time() {
        let gate = ThreadGate::new();
        let stop = AtomicBool::new(false);
        let asked = std::sync::atomic::AtomicU32::new(0);
        let at = Instant::now() + Duration::from_millis(5);
        let decide = || {
            asked.fetch_add(1, Ordering::SeqCst);
            Some(at)
        };
        let got: Vec<Option<Instant>> = std::thread::scope(|s| {
            let waiters: Vec<_> = (0..3)
                .map(|_| {
                    s.spawn(|| {
                        gate.arrive();
                        gate.wait_start_at()
                    })
                })
                .collect();
            assert!(gate.wait_ready(3, &stop, || false));
            gate.release_at(Start::Decided(&decide).decide());
            waiters
                .into_iter()
                .map(|w| w.join().expect("joined"))
                .collect()
        });
        assert_eq!(asked.load(Ordering::SeqCst), 1);
        assert_eq!(got, vec![Some(at); 3]);
    }

    #[test]
    fn a_run_called_off_before_everyone_is_ready_gives_no_start_time() {
        let gate = ThreadGate::new();
        let stop = AtomicBool::new(false);
        let got = std::thread::scope(|s| {
            let waiter = s.spawn(|| {
                gate.arrive();
                gate.wait_start_at()
            });
            // The second target failed before it was ready: the decision
            // is never asked for, and the first is released without a time.
            assert!(!gate.wait_ready(2, &stop, || true));
            gate.release_at(None);
            waiter.join().expect("joined")
        });
        assert_eq!(got, None);
    }
}
