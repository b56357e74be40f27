//! Everything a user hands volbench, turned into one validated
//! `spec::JobSpec`: command-line flags, suite files, sweeps and host lists.
//! Nothing downstream knows which front end a job came from.

pub mod args;
pub mod catalogue;
pub mod common_flags;
pub mod expect;
pub mod file;
pub(crate) mod flags;
pub mod foreign_flags;
pub mod hosts;
pub mod import;
pub mod job;
pub mod like;
pub mod meta;
pub mod overrides;
pub mod rate;
pub mod replay;
pub(crate) mod shape;
pub mod suite;
pub mod sweep;
pub mod targets;
pub(crate) mod version;
pub(crate) mod words;
