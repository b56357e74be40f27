//! The host-count sweep flag (`--host-counts`), part of the host flags that
//! `run` and `suite run` share.

use clap::Args;

#[derive(Args, Debug, Clone, Default)]
pub(crate) struct HostCountArgs {
    /// Sweep the number of hosts: each run once on the first N hosts of the
    /// host list for every N given (1,2,4 or 1:8:*2; each 1..number of
    /// hosts, no repeats); the other hosts stay connected and idle for that
    /// run. Runs are named NAME-hostsN. Suite key: host_counts = [1, 2, 4].
    #[arg(long, value_name = "LIST")]
    pub(crate) host_counts: Option<String>,
}
