//! Everything a user hands volbench, turned into one validated
//! `spec::JobSpec`: command-line flags, suite files, sweeps and host lists.
//! Nothing downstream knows which front end a job came from.

pub mod args;
pub mod catalogue;
pub(crate) mod common_flags;
pub(crate) mod expect;
pub(crate) mod file;
pub(crate) mod flags;
pub mod foreign_flags;
pub mod hosts;
pub mod import;
pub(crate) mod job;
pub(crate) mod like;
pub(crate) mod meta;
pub(crate) mod overrides;
pub(crate) mod rate;
pub(crate) mod replay;
pub(crate) mod shape;
pub mod suite;
pub mod sweep;
pub(crate) mod targets;
pub(crate) mod version;
pub(crate) mod words;
