//! The file system a target lives on and how it is mounted, as a result
//! records it ("NFS v3, nconnect=16, rsize=wsize=64K"); `io::mounts` reads
//! it from /proc/self/mountinfo.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MountInfo {
    pub(crate) mount_point: String,
    pub(crate) fs_type: String,
    /// What is mounted: a device, or `server:/export` for NFS.
    pub(crate) source: String,
    /// Per-mount and file-system options together, as /proc/mounts shows
    /// them (NFS puts vers, rsize, wsize and nconnect among them).
    pub options: String,
}

impl MountInfo {
    /// The options a storage reader looks for first, e.g. `vers=3`,
    /// `nconnect=16`, `rsize=65536`; empty when none apply.
    pub(crate) fn key_options(&self) -> Vec<String> {
        const KEYS: [&str; 6] = ["vers", "nconnect", "rsize", "wsize", "proto", "max_connect"];
        self.options
            .split(',')
            .filter(|o| o.split_once('=').is_some_and(|(k, _)| KEYS.contains(&k)))
            .map(str::to_string)
            .collect()
    }
}
