//! The start line of a run's I/O threads: each reports ready, then waits
//! to be released together. Unlike a `Barrier`, it can be called off: when
//! a thread cannot be created, one fails to set up, or a signal arrives
//! during start-up, the threads already waiting are released at once
//! (told not to start) instead of waiting forever for the missing ones.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

#[derive(Default)]
struct State {
    ready: usize,
    /// Some(true): go; Some(false): called off.
    released: Option<bool>,
}

#[derive(Default)]
pub struct ThreadGate {
    state: Mutex<State>,
    changed: Condvar,
}

/// How often the coordinating thread looks at the stop flag while waiting
/// for the workers to be ready: signals are caught within this.
const POLL: Duration = Duration::from_millis(50);

impl ThreadGate {
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic elsewhere while holding this lock leaves plain counters
        // behind, still meaningful.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A worker is set up (or has failed and will not start).
    pub fn arrive(&self) {
        self.lock().ready += 1;
        self.changed.notify_all();
    }

    /// A worker waits for the start; true to go, false when called off.
    pub fn wait_start(&self) -> bool {
        let mut s = self.lock();
        loop {
            if let Some(go) = s.released {
                return go;
            }
            s = self.changed.wait(s).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// Waits until `n` workers have arrived, or `stop` is set, or
    /// `failed()` says a worker gave up: true only in the first case.
    pub fn wait_ready(&self, n: usize, stop: &AtomicBool, failed: impl Fn() -> bool) -> bool {
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
    pub fn release(&self, go: bool) {
        let mut s = self.lock();
        if s.released.is_none() {
            s.released = Some(go);
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
}
