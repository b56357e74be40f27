//! Every end-to-end test in one crate (one link, one set of helpers in
//! `common`): each drives the real `volbench` binary, or checks the source
//! tree itself (`architecture`).

mod architecture;
mod capped_diagnosis;
mod capped_methods;
mod common;
mod counters;
mod data;
mod diag_audit;
mod diagnosis;
mod docs;
mod host_scaling;
mod hostile_flags;
mod hostile_inputs;
mod import_cli;
mod import_data;
mod import_lists;
mod import_meta;
mod launchers;
mod meta;
mod meta_compare;
mod meta_hosts;
mod meta_intervals;
mod methods;
mod multihost;
mod prop_import;
mod prop_input;
mod prop_untrusted;
mod published;
mod quick;
mod reading;
mod report;
mod ring;
mod run_cli;
mod run_sizes;
mod safety_fileset;
mod safety_input;
mod safety_output;
mod service_cli;
mod shape_cli;
mod small_files;
mod target_list;
mod targets;
mod targets_hosts;
mod throttled;
