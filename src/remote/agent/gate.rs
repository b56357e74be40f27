//! The start barrier across one host's targets.

use std::sync::{Condvar, Mutex};
use std::time::Instant;

/// The start barrier across one host's targets: the last target to be ready
/// asks the coordinator for the start time (`decide`) and every target gets
/// it. A target that fails before it is ready calls the run off for all.
pub(super) struct Gate {
    n: usize,
    state: Mutex<GateState>,
    cv: Condvar,
}

#[derive(Default)]
pub(super) struct GateState {
    arrived: usize,
    abandoned: usize,
    decision: Option<Option<Instant>>,
}

impl Gate {
    pub(super) fn new(n: usize) -> Self {
        Self {
            n,
            state: Mutex::new(GateState::default()),
            cv: Condvar::new(),
        }
    }

    pub(super) fn arrive(&self, decide: &dyn Fn() -> Option<Instant>) -> Option<Instant> {
        let Ok(mut st) = self.state.lock() else {
            return None;
        };
        st.arrived += 1;
        if st.arrived + st.abandoned == self.n && st.decision.is_none() {
            let d = if st.abandoned > 0 {
                None
            } else {
                drop(st);
                let d = decide();
                st = match self.state.lock() {
                    Ok(s) => s,
                    Err(_) => return None,
                };
                d
            };
            st.decision = Some(d);
            self.cv.notify_all();
            return d;
        }
        loop {
            if let Some(d) = st.decision {
                return d;
            }
            st = match self.cv.wait(st) {
                Ok(s) => s,
                Err(_) => return None,
            };
        }
    }

    pub(super) fn abandon(&self) {
        if let Ok(mut st) = self.state.lock() {
            st.abandoned += 1;
            if st.arrived + st.abandoned == self.n && st.decision.is_none() {
                st.decision = Some(None);
                self.cv.notify_all();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    #[test]
    fn gate_releases_all_with_one_decision() {
        let gate = Gate::new(3);
        let asked = AtomicU32::new(0);
        let decide = || {
            asked.fetch_add(1, Ordering::SeqCst);
            Some(Instant::now())
        };
        let got: Vec<Option<Instant>> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..3).map(|_| s.spawn(|| gate.arrive(&decide))).collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(asked.load(Ordering::SeqCst), 1);
        assert!(got.iter().all(|g| g.is_some() && *g == got[0]));
    }

    #[test]
    fn gate_calls_off_when_a_target_fails_first() {
        let gate = Gate::new(2);
        let decide = || -> Option<Instant> { panic!("must not ask the coordinator") };
        let got = std::thread::scope(|s| {
            let waiter = s.spawn(|| gate.arrive(&decide));
            gate.abandon();
            waiter.join().unwrap()
        });
        assert_eq!(got, None);
    }
}
