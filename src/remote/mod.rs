//! One job across many client hosts. The coordinator (`volbench run
//! --hosts ...`) starts `volbench agent` on each host through the system
//! ssh client; agents run the same executor as a local run and stream
//! intervals and final results (with histograms) back over a versioned
//! line protocol; the coordinator merges them exactly.

pub(crate) mod agent;
pub(crate) mod coordinator;
pub mod protocol;
pub(crate) mod ssh;

/// Sets SIGPIPE's disposition (`main` makes it the default, for `| head`).
pub(crate) fn set_sigpipe(how: libc::sighandler_t) {
    // SAFETY: changing one signal's disposition to a libc constant.
    unsafe {
        libc::signal(libc::SIGPIPE, how);
    }
}
