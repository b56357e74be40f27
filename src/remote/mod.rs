//! One job across many client hosts. The coordinator (`volbench run
//! --hosts ...`) starts `volbench agent` on each host through a launcher
//! (the system ssh client by default; srun, kubectl exec, any exec-style
//! command); agents run the same executor as a local run and stream
//! intervals and final results (with histograms) back over a versioned
//! line protocol; the coordinator merges them exactly.

pub(crate) mod agent;
pub(crate) mod coordinator;
pub(crate) mod launch;
pub mod protocol;
pub mod push;

/// Blocks SIGPIPE in the calling thread only. A thread writing to a host's
/// pipe calls this first: the process-wide SIG_IGN the coordinator sets is
/// put back to the default when it returns (for `| head` on our own
/// output), and a writer thread still flushing to an ssh that has just died
/// would then kill the whole process, results unwritten. Blocked, the write
/// fails with EPIPE and the signal dies with the thread. (Unix coordinators
/// write from their own loop instead: `coordinator::host::Direct`.)
#[cfg(unix)]
#[allow(dead_code)]
pub(crate) fn block_sigpipe_in_this_thread() {
    // SAFETY: a zeroed sigset_t is valid input to sigemptyset, which
    // initialises it; pthread_sigmask only reads the set it is given.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGPIPE);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

/// Windows has no SIGPIPE: a write to a closed pipe is an error already.
#[cfg(windows)]
pub(crate) fn block_sigpipe_in_this_thread() {}

/// Ignores SIGPIPE (`ignore`), or puts back the default that `main` set
/// (for `| head`); a no-op on Windows, which has no SIGPIPE.
pub(crate) fn set_sigpipe(ignore: bool) {
    #[cfg(unix)]
    // SAFETY: changing one signal's disposition to a libc constant.
    unsafe {
        libc::signal(
            libc::SIGPIPE,
            if ignore { libc::SIG_IGN } else { libc::SIG_DFL },
        );
    }
    #[cfg(windows)]
    let _ = ignore;
}
