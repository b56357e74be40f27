//! volbench: a storage benchmark in one binary. The library holds the whole
//! flow (spec -> plan -> execution -> results -> outputs); `main.rs` is a
//! thin shell over `app`.

pub mod app;
pub mod cli;
pub mod data;
pub mod engine;
pub mod error;
pub mod executor;
pub mod frontend;
pub mod hostinfo;
pub mod littles;
pub mod mounts;
pub mod output;
pub mod plan;
pub mod remote;
pub mod report;
pub mod result;
pub mod spec;
pub mod stats;
pub mod steady;
pub mod suite;
pub mod sweep;
pub mod tables;
pub mod target;
pub mod ui;
pub mod units;
pub mod worker;
pub mod workload;
