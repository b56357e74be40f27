//! volbench: a storage benchmark in one binary. The folders are the stages
//! of one flow (see ARCHITECTURE.md):
//!
//! 1. `input`: flags, suite files, sweeps, host lists -> one `spec::JobSpec`
//! 2. `plan`: the job resolved against this machine (engine, threads, time)
//! 3. `executor`: prepares the target and runs the plan, using `io`
//!    (engines, targets, workers), telling `events`' observers as it goes
//! 4. `result`: the one versioned results structure, merged exactly
//! 5. `output` and `report`: every view of a result; `store` keeps every
//!    result (SQLite or PostgreSQL) for history, baselines and trends
//! 6. `remote`: the same executor on many hosts, merged into one result
//! 7. `cmd`: the commands on top
//!
//! A module may use the ones below it in this list of layers, never above:
//! cmd > remote > report > store > output > executor > events > plan > input > io > proto >
//! result > spec > units, stats, console, error.

#![deny(unreachable_pub)]

pub mod cmd;
pub mod console;
pub mod error;
pub(crate) mod events;
pub(crate) mod executor;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzz;
pub mod input;
pub mod io;
pub mod output;
pub(crate) mod plan;
pub mod proto;
pub mod remote;
pub mod report;
pub mod result;
pub mod spec;
pub mod stats;
pub(crate) mod store;
pub mod units;
