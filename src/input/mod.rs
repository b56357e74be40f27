//! Everything a user hands volbench, turned into one validated
//! `spec::JobSpec`: command-line flags, suite files, sweeps and host lists.
//! Nothing downstream knows which front end a job came from.

pub mod cli;
pub(crate) mod cli_host_counts;
pub(crate) mod cli_launch;
pub(crate) mod cli_shape;
pub(crate) mod cli_suite;
pub(crate) mod cli_targets;
pub mod data_args;
pub(crate) mod file;
pub(crate) mod fill_args;
pub(crate) mod flags;
pub(crate) mod host_counts;
pub mod hostlist;
pub mod hosts;
pub(crate) mod hosts_from;
pub mod import;
pub(crate) mod meta;
pub(crate) mod meta_hosts;
pub(crate) mod reading_args;
pub mod service;
pub(crate) mod shape;
pub mod suite;
pub mod sweep;
pub(crate) mod targets;
pub(crate) mod version;
pub(crate) mod words;
