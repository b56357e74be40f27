//! What touches storage and this machine: the engines, the targets and the
//! file sets volbench owns, the worker loop with its per-I/O decisions and
//! data, and the facts about the host a result records.

pub mod data;
pub mod engine;
pub mod host;
pub mod meta;
pub mod mounts;
pub mod target;
pub mod worker;
pub mod workload;
