//! What the papers tell you to check about the client besides its CPUs: the
//! socket buffer limits (the ANF paper's `net.core.rmem_max` and
//! `net.ipv4.tcp_rmem`), the platform's own word on VM size and region, and
//! the block and sector sizes under a target (the Azure disk articles).
//! `io::host` and `io::mounts` read them; `result::check` bounds them.

use serde::{Deserialize, Serialize};

/// The socket buffer sysctls, as the kernel reported them (bytes). Absent
/// ones were not readable (another network namespace, a hardened /proc).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NetBuffers {
    #[serde(
        rename = "net.core.rmem_max",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub rmem_max: Option<u64>,
    #[serde(
        rename = "net.core.wmem_max",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub wmem_max: Option<u64>,
    /// min, default, max.
    #[serde(
        rename = "net.ipv4.tcp_rmem",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub tcp_rmem: Option<[u64; 3]>,
    #[serde(
        rename = "net.ipv4.tcp_wmem",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub tcp_wmem: Option<[u64; 3]>,
}

impl NetBuffers {
    pub fn is_empty(&self) -> bool {
        *self == NetBuffers::default()
    }

    /// (sysctl name, value as `sysctl` prints it), the ones recorded.
    pub fn rows(&self) -> Vec<(&'static str, String)> {
        let triple = |t: &[u64; 3]| format!("{} {} {}", t[0], t[1], t[2]);
        [
            ("net.core.rmem_max", self.rmem_max.map(|v| v.to_string())),
            ("net.core.wmem_max", self.wmem_max.map(|v| v.to_string())),
            ("net.ipv4.tcp_rmem", self.tcp_rmem.as_ref().map(triple)),
            ("net.ipv4.tcp_wmem", self.tcp_wmem.as_ref().map(triple)),
        ]
        .into_iter()
        .filter_map(|(k, v)| Some((k, v?)))
        .collect()
    }
}

/// What the machine's platform says about it, read locally (DMI, and
/// cloud-init's instance data when present); no metadata service is asked.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Platform {
    /// "azure", "aws", "gce"... as cloud-init names it, or as DMI shows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cloud: Option<String>,
    /// The VM size or instance type the platform names ("m6i.4xlarge",
    /// "Standard_D16s_v5"); `HostInfo::vm_size` takes it when the user
    /// named none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vm_size: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    /// Where it was read: "dmi", "cloud-init".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

impl Platform {
    pub fn is_empty(&self) -> bool {
        *self == Platform::default()
    }
}

/// The allocation units under a target: the file system's block and
/// fragment size (statvfs `f_bsize`, `f_frsize`) for a directory or file,
/// the logical and physical sector size for a block device.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockSizes {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fs_block: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fs_fragment: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logical_sector: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub physical_sector: Option<u32>,
}

impl BlockSizes {
    pub fn is_empty(&self) -> bool {
        *self == BlockSizes::default()
    }

    /// "block 4096 bytes", "logical sector 512, physical 4096 bytes";
    /// None when nothing was recorded.
    pub fn describe(&self) -> Option<String> {
        let mut parts = Vec::new();
        if let Some(b) = self.fs_block {
            parts.push(format!("block {b}"));
        }
        if let Some(f) = self.fs_fragment.filter(|f| Some(*f) != self.fs_block) {
            parts.push(format!("fragment {f}"));
        }
        match (self.logical_sector, self.physical_sector) {
            (Some(l), Some(p)) => parts.push(format!("logical sector {l}, physical {p}")),
            (Some(l), None) => parts.push(format!("logical sector {l}")),
            (None, Some(p)) => parts.push(format!("physical sector {p}")),
            (None, None) => {}
        }
        (!parts.is_empty()).then(|| format!("{} bytes", parts.join(", ")))
    }
}
