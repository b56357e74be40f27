//! Everything a user hands volbench, turned into one validated
//! `spec::JobSpec`: command-line flags, suite files, sweeps and host lists.
//! Nothing downstream knows which front end a job came from.

pub mod cli;
pub mod file;
pub mod flags;
pub mod hosts;
pub mod import;
pub mod suite;
pub mod sweep;
