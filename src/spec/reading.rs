//! What a job records for reading its results later: whether client
//! counters were sampled, and the machine size the user named.

use serde::{Deserialize, Serialize};

/// Flattened into `JobSpec`: absent fields read as their defaults, so
/// results written before them still load.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ReadingSpec {
    /// `--no-counters`: no client counters sampled (nothing read from
    /// /proc or /sys during the runs), none in the result.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) no_counters: bool,
    /// `--vm-size NAME` (or a hosts file's `vm_size=`): the machine size
    /// as the user names it, recorded with the host; volbench never asks a
    /// metadata service.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) vm_size: Option<String>,
}
