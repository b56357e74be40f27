//! I/O engines, in the spirit of fio's ioengine ops: queue requests into
//! slots, then submit and reap completions in one call. The worker loop is
//! the same for every engine; only these few methods differ.

use crate::io::sys::fd::OwnedFd;
use std::io;

use crate::io::workload::IoOp;
use crate::spec::EngineChoice;

mod null;
pub(crate) mod on_demand;
#[cfg(windows)]
mod overlapped;
mod psync;
#[cfg(windows)]
pub(crate) use overlapped::OverlappedEngine;
#[cfg(target_os = "linux")]
mod uring;

pub(crate) use null::NullEngine;
pub(crate) use psync::PsyncEngine;
#[cfg(target_os = "linux")]
pub use uring::{UringEngine, probe_io_uring};

/// io_uring is Linux's: elsewhere the probe says so, and `auto` never picks it.
#[cfg(not(target_os = "linux"))]
pub fn probe_io_uring() -> Result<(), String> {
    Err("io_uring is a Linux interface".into())
}

/// A worker's files as a kernel engine reaches them: all open for the
/// whole run, or opened as I/Os need them, a bounded number at a time
/// (`on_demand`), when the set has more files than a thread may hold.
pub(crate) enum Fds {
    All(Vec<OwnedFd>),
    OnDemand(on_demand::OnDemand),
}

impl Fds {
    /// Why a file could not be opened on demand, once one could not.
    pub(crate) fn failure(&self) -> Option<String> {
        match self {
            Fds::All(_) => None,
            Fds::OnDemand(c) => c.failure(),
        }
    }
}

/// The result of an I/O whose file could not be opened on demand (EIO);
/// the engine's `failure` says why.
pub(crate) const OPEN_FAILED: i64 = -5;

/// Whether the run has been told to stop: what an engine that waits on a
/// server of its own reads while it waits for a lost server to come back
/// (`Engine::watch_stop`), so a Ctrl-C reaches it within a moment and not
/// only once the URL's `reconnect=` has run out.
pub(crate) type Stopping = std::sync::Arc<dyn Fn() -> bool + Send + Sync>;

/// How long the wait for what is in flight at the end of a worker's loop
/// lasts before an engine that can give it up does (`Engine::abandon`),
/// when the run is stopped or the server is away. Short beside the stop's
/// grace (`cmd::stop::GRACE`, 2 s), so a stop still ends with the run's
/// own result, its protocol figures in it. (The user-space clients are
/// Unix's.)
#[cfg_attr(not(unix), allow(dead_code))]
pub(crate) const ABANDON_AFTER: std::time::Duration = std::time::Duration::from_millis(500);

/// The rule of the user-space clients' `Engine::abandon`: give up what is
/// still in flight once it has been waited for `ABANDON_AFTER`, but only
/// when the run is stopped (`stopped`: its result is due within the grace)
/// or the server is away (`away`: a connection down, so the answers may
/// never come). A server that is only slow (a deep queue on a throttled
/// volume: seconds) is waited for at a run's own end, as a kernel client's
/// close waits: its writes are then committed and its files closed. The
/// wait is bounded still, by the client's own call timeouts.
#[cfg_attr(not(unix), allow(dead_code))]
pub(crate) fn give_up(waited: std::time::Duration, stopped: bool, away: bool) -> bool {
    waited >= ABANDON_AFTER && (stopped || away)
}

/// One finished I/O: the slot it was queued in and the kernel's result
/// (bytes transferred, or a negative errno).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Completion {
    pub(crate) slot: u32,
    pub result: i64,
}

pub(crate) trait Engine {
    /// Queues `op` in `slot`, reading into or writing from `buf`. Never blocks.
    ///
    /// # Safety
    ///
    /// The engine (or the kernel, for io_uring) reads or writes the memory
    /// behind `buf` at any time until it returns `slot`'s completion, long
    /// after this call, so the caller must make sure that:
    /// - `buf` points to at least `op.len` bytes, valid for reads and writes;
    /// - from this call until `submit_and_wait` or `submit_and_wait_for` has
    ///   returned the completion for `slot`, those bytes are neither read,
    ///   written, moved nor freed by anyone else, and `slot` is not queued
    ///   again. Dropping the engine does not end this: io_uring may still
    ///   complete an I/O after its ring is gone, so memory of an I/O that
    ///   never completed must never be freed.
    unsafe fn queue(&mut self, slot: u32, op: IoOp, buf: *mut u8);

    /// Starts everything queued and waits until at least `min` I/Os have
    /// completed, appending them to `out`. An engine that waits on a server
    /// of its own may return sooner, with fewer or none, every so often
    /// (its callers loop), so the worker sees a stop while that server is
    /// silent.
    fn submit_and_wait(&mut self, min: usize, out: &mut Vec<Completion>) -> io::Result<()>;

    /// Like `submit_and_wait`, but gives up waiting after `timeout` (a
    /// rate-limited worker must wake for its next scheduled I/O). Synchronous
    /// engines have nothing in flight after a submit, so they never wait.
    fn submit_and_wait_for(
        &mut self,
        min: usize,
        timeout: std::time::Duration,
        out: &mut Vec<Completion>,
    ) -> io::Result<()> {
        let _ = timeout;
        self.submit_and_wait(min, out)
    }

    /// The measured phase starts: a client that counts what it sees per
    /// operation starts over, so its figures are the phase's.
    fn measure_started(&mut self) {}

    /// The measured phase is over: what `protocol` returns stops here, so
    /// the calls of the cool-down and the final drain (which the run's
    /// figures do not count) are not in the client's either.
    fn measure_ended(&mut self) {}

    /// What the engine's own protocol client saw since `measure_started`
    /// (`result::protocol`); None for the kernel engines.
    fn protocol(&mut self) -> Option<crate::result::protocol::ProtoSeen> {
        None
    }

    /// Why a failed completion failed, when the engine knows more than
    /// its errno (a protocol client: the server gone, and for how long it
    /// was waited for); read only once an I/O has failed.
    fn failure(&self) -> Option<String> {
        None
    }

    /// Whether the failure was the loss of the engine's server (a protocol
    /// client's: not reached again within its deadline), which a list of
    /// targets may leave out and go on without (`--on-host-loss
    /// continue`); read only once an I/O has failed.
    fn server_lost(&self) -> bool {
        false
    }

    /// After each batch of completions: a protocol client stores its
    /// running totals for the live outputs (`LiveCounters::proto`).
    fn publish_live(&mut self, _counters: &crate::stats::LiveCounters) {}

    /// The run's stop, for an engine whose waits on a lost server must end
    /// when the run is stopped (a reconnect loop), not only at the URL's
    /// `reconnect=`. Called once, before any I/O.
    fn watch_stop(&mut self, _stopping: Stopping) {}

    /// The worker's loop is over and it has waited `waited` for the I/Os
    /// still in flight (asked before each wait; `stopped`: the job is being
    /// stopped, `Control::stop`): true if the engine gives them up now
    /// (`give_up`, or at once when it already stopped waiting for a lost
    /// server at the run's stop), so the worker goes on without them (it
    /// then leaks their buffers, and drops the engine next). Only an engine
    /// that touches the buffers inside its own calls alone can (a protocol
    /// client in user space: once the worker stops calling, nothing lands
    /// in them); it then leaves out the goodbyes (COMMIT, CLOSE, LOGOFF) a
    /// lost server would not answer. The kernel's engines never can: the
    /// kernel may still complete an I/O.
    fn abandon(&mut self, _waited: std::time::Duration, _stopped: bool) -> bool {
        false
    }
}

pub(crate) use crate::spec::EngineKind;

/// Picks the engine for a run. `auto` uses io_uring only where it wins: with
/// more than one I/O in flight per thread. At depth 1 (and on page-cache
/// reads, where io_uring punts to kernel workers) plain pread is cheaper.
/// Returns the engine and, when the choice differs from the request, why.
pub(crate) fn resolve(
    choice: EngineChoice,
    iodepth: u32,
    uring: &Result<(), String>,
) -> (EngineKind, Option<String>) {
    let async_or_psync = || match uring {
        Ok(()) => (EngineKind::IoUring, None),
        Err(why) => (
            EngineKind::Psync,
            Some(format!(
                "{} is not available ({why}); using {}",
                EngineKind::IoUring,
                EngineKind::Psync
            )),
        ),
    };
    if cfg!(windows) && choice.kind().is_none() {
        // Overlapped I/O is Windows' one engine with a queue; at depth 1 it
        // has one I/O in flight like a synchronous one.
        return (EngineKind::Overlapped, None);
    }
    match choice.kind() {
        Some(EngineKind::IoUring) => async_or_psync(),
        Some(kind) => (kind, None),
        None if iodepth <= 1 => (EngineKind::Psync, None),
        None => async_or_psync(),
    }
}

/// One worker's engine. An enum rather than `Box<dyn Engine>`: the worker
/// calls it twice per I/O, and a match on a never-changing tag is a
/// perfectly predicted branch that lets each engine's small methods inline
/// into the loop, where a virtual call cannot.
// One per worker, built once: its size does not matter, and boxing the
// ring would put a pointer chase back on the hot path.
#[allow(clippy::large_enum_variant)]
pub(crate) enum AnyEngine {
    Null(NullEngine),
    Psync(PsyncEngine),
    #[cfg(target_os = "linux")]
    IoUring(UringEngine),
    #[cfg(windows)]
    Overlapped(OverlappedEngine),
    /// A back end's own engine (`backend::Files::Own`): files named by its
    /// handles, requests over its connections. A virtual call per I/O,
    /// beside a network round trip, costs nothing the local engines pay.
    #[cfg_attr(not(any(test, unix)), allow(dead_code))]
    Own(Box<dyn Engine + Send>),
}

impl Engine for AnyEngine {
    #[inline(always)]
    unsafe fn queue(&mut self, slot: u32, op: IoOp, buf: *mut u8) {
        // SAFETY: the caller's contract is the engines' contract, passed on.
        unsafe {
            match self {
                Self::Null(e) => e.queue(slot, op, buf),
                Self::Psync(e) => e.queue(slot, op, buf),
                #[cfg(target_os = "linux")]
                Self::IoUring(e) => e.queue(slot, op, buf),
                #[cfg(windows)]
                Self::Overlapped(e) => e.queue(slot, op, buf),
                Self::Own(e) => e.queue(slot, op, buf),
            }
        }
    }

    #[inline(always)]
    fn submit_and_wait(&mut self, min: usize, out: &mut Vec<Completion>) -> io::Result<()> {
        match self {
            Self::Null(e) => e.submit_and_wait(min, out),
            Self::Psync(e) => e.submit_and_wait(min, out),
            #[cfg(target_os = "linux")]
            Self::IoUring(e) => e.submit_and_wait(min, out),
            #[cfg(windows)]
            Self::Overlapped(e) => e.submit_and_wait(min, out),
            Self::Own(e) => e.submit_and_wait(min, out),
        }
    }

    #[inline(always)]
    fn submit_and_wait_for(
        &mut self,
        min: usize,
        timeout: std::time::Duration,
        out: &mut Vec<Completion>,
    ) -> io::Result<()> {
        match self {
            Self::Null(e) => e.submit_and_wait_for(min, timeout, out),
            Self::Psync(e) => e.submit_and_wait_for(min, timeout, out),
            #[cfg(target_os = "linux")]
            Self::IoUring(e) => e.submit_and_wait_for(min, timeout, out),
            #[cfg(windows)]
            Self::Overlapped(e) => e.submit_and_wait_for(min, timeout, out),
            Self::Own(e) => e.submit_and_wait_for(min, timeout, out),
        }
    }

    fn measure_started(&mut self) {
        if let Self::Own(e) = self {
            e.measure_started();
        }
    }

    fn measure_ended(&mut self) {
        if let Self::Own(e) = self {
            e.measure_ended();
        }
    }

    fn protocol(&mut self) -> Option<crate::result::protocol::ProtoSeen> {
        match self {
            Self::Own(e) => e.protocol(),
            _ => None,
        }
    }

    fn failure(&self) -> Option<String> {
        match self {
            Self::Own(e) => e.failure(),
            Self::Psync(e) => e.failure(),
            #[cfg(target_os = "linux")]
            Self::IoUring(e) => e.failure(),
            _ => None,
        }
    }

    fn server_lost(&self) -> bool {
        match self {
            Self::Own(e) => e.server_lost(),
            _ => false,
        }
    }

    #[inline]
    fn publish_live(&mut self, counters: &crate::stats::LiveCounters) {
        if let Self::Own(e) = self {
            e.publish_live(counters);
        }
    }

    fn watch_stop(&mut self, stopping: Stopping) {
        if let Self::Own(e) = self {
            e.watch_stop(stopping);
        }
    }

    fn abandon(&mut self, waited: std::time::Duration, stopped: bool) -> bool {
        match self {
            Self::Own(e) => e.abandon(waited, stopped),
            _ => false,
        }
    }
}

/// Builds the kernel engine for one worker over its own file descriptors
/// (a back end with its own engine hands that over instead:
/// `backend::engine`).
pub(crate) fn build(
    kind: EngineKind,
    files: Fds,
    depth: u32,
    buffers: &[(*mut u8, usize)],
    submit_each: bool,
) -> io::Result<AnyEngine> {
    Ok(match kind {
        EngineKind::Null => AnyEngine::Null(NullEngine::new(depth)),
        EngineKind::Psync => AnyEngine::Psync(PsyncEngine::new(files, depth)),
        #[cfg(target_os = "linux")]
        EngineKind::IoUring => {
            AnyEngine::IoUring(UringEngine::new(files, depth, buffers, submit_each)?)
        }
        // Refused when planning, as the overlapped engine is on Linux.
        #[cfg(not(target_os = "linux"))]
        EngineKind::IoUring => {
            let _ = (buffers, submit_each);
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "the io_uring engine runs on Linux only",
            ));
        }
        // Its files were opened for overlapped I/O (`open_files`, from the
        // row's kernel_async).
        #[cfg(windows)]
        EngineKind::Overlapped => match files {
            Fds::All(files) => AnyEngine::Overlapped(OverlappedEngine::new(files, depth)?),
            // Refused when planning: each handle would have to join the
            // completion port as it opens.
            Fds::OnDemand(_) => {
                return Err(io::Error::new(
                    io::ErrorKind::Unsupported,
                    "the overlapped engine keeps every file of its set open",
                ));
            }
        },
        // Refused when planning (`EngineChoice::check_platform`); never built here.
        #[cfg(not(windows))]
        EngineKind::Overlapped => {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "the overlapped engine runs on Windows only",
            ));
        }
        // Its engine is the back end's own (`Files::Own`, from an nfs://
        // target's `Dir::open_files`): local descriptors never reach it.
        EngineKind::Nfs | EngineKind::Smb => {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                format!("the {kind} engine runs on a {kind}:// target only"),
            ));
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_uses_io_uring_only_with_depth() {
        let ok = Ok(());
        assert_eq!(resolve(EngineChoice::Auto, 1, &ok).0, EngineKind::Psync);
        assert_eq!(resolve(EngineChoice::Auto, 32, &ok).0, EngineKind::IoUring);
    }

    #[test]
    fn missing_io_uring_falls_back_and_says_why() {
        let no = Err("disabled by kernel.io_uring_disabled".to_string());
        let (k, why) = resolve(EngineChoice::Only(EngineKind::IoUring), 8, &no);
        assert_eq!(k, EngineKind::Psync);
        assert!(why.unwrap().contains("io_uring_disabled"));
    }

    #[test]
    fn in_flight_i_o_is_given_up_only_when_stopped_or_the_server_is_away() {
        let long = ABANDON_AFTER * 10;
        // A slow server at the run's own end is waited for, however long.
        assert!(!give_up(long, false, false));
        // Stopped, or the server away: after ABANDON_AFTER, not before.
        for (stopped, away) in [(true, false), (false, true), (true, true)] {
            assert!(!give_up(ABANDON_AFTER / 2, stopped, away));
            assert!(give_up(ABANDON_AFTER, stopped, away));
        }
    }
}
