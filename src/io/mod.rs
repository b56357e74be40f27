//! What touches storage and this machine: the engines, the targets and the
//! file sets volbench owns, the worker loop with its per-I/O decisions and
//! data, and the facts about the host a result records.

pub(crate) mod backend;
pub(crate) mod capture;
pub(crate) mod child;
pub(crate) mod counters;
pub(crate) mod data;
pub mod engine;
pub(crate) mod fd_limit;
pub mod gate;
pub mod host;
pub(crate) mod meta;
pub(crate) mod mounts;
pub(crate) mod phase;
pub(crate) mod platform;
pub(crate) mod progress;
pub(crate) mod reap;
pub(crate) mod replay;
pub(crate) mod ring;
pub(crate) mod scan;
pub(crate) mod shaping;
pub(crate) mod skew;
pub(crate) mod sys;
pub mod target;
pub mod verify;
pub(crate) mod worker;
pub(crate) mod workload;
