//! What the user said the storage should deliver (`--expect`): a service
//! level and quota from the catalogue, or plain figures. Recorded in
//! result.json so a report read later compares with the same limits.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Expectation {
    /// As the user typed it: "anf-premium:4TiB", "iops=500,mib_s=60"
    /// (empty when only `--expect-from` was given).
    pub given: String,
    /// `--expect-from PROFILE`: the production profile read before any
    /// I/O (its path as given), whose headroom the run states at its end.
    /// Carried here so it travels with `--expect` to the finish; not
    /// written (the result records the headroom itself).
    #[serde(skip)]
    pub from: Option<std::sync::Arc<(String, crate::result::profile::Profile)>>,
    /// The catalogue entry it names, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service: Option<String>,
    /// The provisioned size the limits were worked out for, in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quota_bytes: Option<u64>,
    /// Total (read + write) IOPS the storage should cap at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iops: Option<f64>,
    /// Total (read + write) MiB/s the storage should cap at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mib_s: Option<f64>,
    /// Reads and writes capped apart (a service that states 500 read IOPS
    /// and 500 write IOPS): each direction is held to its own limit, never
    /// their sum to one of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_iops: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_iops: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_mib_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_mib_s: Option<f64>,
    /// How each limit was arrived at ("64 MiB/s per TiB x 4 TiB = 256 MiB/s"),
    /// and the catalogue entry's source.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub basis: Vec<String>,
}

impl Expectation {
    /// "500 IOPS, 60 MiB/s" (what a finding names as "the limit").
    pub(crate) fn limits_text(&self) -> String {
        let mut parts = Vec::new();
        if let Some(i) = self.iops {
            parts.push(format!("{} IOPS", crate::units::trim(i, 2)));
        }
        if let Some(m) = self.mib_s {
            parts.push(format!("{} MiB/s", crate::units::trim(m, 2)));
        }
        for (v, what) in [
            (self.read_iops, "read IOPS"),
            (self.write_iops, "write IOPS"),
            (self.read_mib_s, "read MiB/s"),
            (self.write_mib_s, "write MiB/s"),
        ] {
            if let Some(v) = v {
                parts.push(format!("{} {what}", crate::units::trim(v, 2)));
            }
        }
        parts.join(", ")
    }
}
