//! Everything a user hands volbench, turned into one validated
//! `spec::JobSpec`: command-line flags, suite files, sweeps and host lists.
//! Nothing downstream knows which front end a job came from.

pub mod cli;
pub mod cli_launch;
pub mod cli_shape;
pub mod cli_suite;
pub mod data_args;
pub(crate) mod file;
pub mod fill_args;
pub(crate) mod flags;
pub mod hostlist;
pub mod hosts;
pub mod hosts_from;
pub mod import;
pub mod meta;
pub mod meta_hosts;
pub mod service;
pub(crate) mod shape;
pub mod suite;
pub mod sweep;
pub mod version;
pub mod words;
