//! The fill as a result: before the first run volbench writes every file of
//! a set it creates sequentially to its end; how long that took and at
//! what rate is a figure of its own (the papers time their FillWrite),
//! never mixed into a run's.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use serde::{Deserialize, Serialize};

use crate::units::format_size;

/// One file set's fill (a job with several file counts has several sets;
/// a multi-host run one per host and target).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FillResult {
    /// The host that filled it, in a multi-host run; empty on one host.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub host: String,
    /// The set's directory.
    pub path: String,
    pub files: u32,
    /// Bytes of the set: what the fill wrote, or found already written.
    pub bytes: u64,
    /// Transfer size of the fill's writes.
    pub bs: u64,
    /// Wall time of the fill (0 when the set was reused).
    pub seconds: f64,
    /// bytes / seconds, MiB/s (0 when the set was reused).
    pub mib_s: f64,
    /// The set was already filled by an earlier run of the same shape and
    /// data: nothing was written this time.
    pub skipped_reused: bool,
}

impl FillResult {
    /// One line for the terminal and the report's notes.
    pub fn line(&self) -> String {
        let host = if self.host.is_empty() {
            String::new()
        } else {
            format!("{}: ", self.host)
        };
        let set = format!(
            "{} x {} in {}",
            self.files,
            format_size(self.bytes / u64::from(self.files.max(1))),
            self.path
        );
        if self.skipped_reused {
            format!("{host}fill: reusing the filled file set ({set}), nothing written")
        } else {
            format!(
                "{host}fill: wrote {} ({set}) in {:.2} s at {:.1} MiB/s, {} writes",
                format_size(self.bytes),
                self.seconds,
                self.mib_s,
                format_size(self.bs)
            )
        }
    }
}
