//! One job across many client hosts. The coordinator (`volbench run
//! --hosts ...`) starts `volbench agent` on each host through a launcher
//! (the system ssh client by default; srun, kubectl exec, any exec-style
//! command); agents run the same executor as a local run and stream
//! intervals and final results (with histograms) back over a versioned
//! line protocol; the coordinator merges them exactly.

pub(crate) mod agent;
pub mod binary;
pub(crate) mod coordinator;
pub(crate) mod launcher;
pub mod protocol;
pub(crate) mod ssh;

/// Sets SIGPIPE's disposition (`main` makes it the default, for `| head`).
pub(crate) fn set_sigpipe(how: libc::sighandler_t) {
    // SAFETY: changing one signal's disposition to a libc constant.
    unsafe {
        libc::signal(libc::SIGPIPE, how);
    }
}
