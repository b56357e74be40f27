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
    pub(crate) wmem_max: Option<u64>,
    /// What a socket gets unless it asks (seed 000 lists it beside the
    /// maxima: a client that never sets SO_RCVBUF lives with it).
    #[serde(
        rename = "net.core.rmem_default",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub(crate) rmem_default: Option<u64>,
    #[serde(
        rename = "net.core.wmem_default",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub(crate) wmem_default: Option<u64>,
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
    pub(crate) fn is_empty(&self) -> bool {
        *self == NetBuffers::default()
    }

    /// (sysctl name, value as `sysctl` prints it), the ones recorded.
    pub(crate) fn rows(&self) -> Vec<(&'static str, String)> {
        let triple = |t: &[u64; 3]| format!("{} {} {}", t[0], t[1], t[2]);
        [
            ("net.core.rmem_max", self.rmem_max.map(|v| v.to_string())),
            ("net.core.wmem_max", self.wmem_max.map(|v| v.to_string())),
            (
                "net.core.rmem_default",
                self.rmem_default.map(|v| v.to_string()),
            ),
            (
                "net.core.wmem_default",
                self.wmem_default.map(|v| v.to_string()),
            ),
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
    pub(crate) cloud: Option<String>,
    /// The VM size or instance type the platform names ("m6i.4xlarge",
    /// "Standard_D16s_v5"); `HostInfo::vm_size` takes it when the user
    /// named none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) vm_size: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    /// Where it was read: "dmi", "cloud-init".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) source: Option<String>,
}

impl Platform {
    pub(crate) fn is_empty(&self) -> bool {
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
    pub(crate) physical_sector: Option<u32>,
}

impl BlockSizes {
    pub(crate) fn is_empty(&self) -> bool {
        *self == BlockSizes::default()
    }

    /// "block 4096 bytes", "logical sector 512, physical 4096 bytes";
    /// None when nothing was recorded.
    pub(crate) fn describe(&self) -> Option<String> {
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

/// The kernel keeps socket buffer sysctls in an int.
const MAX_SOCKET_BUFFER: u64 = i32::MAX as u64;
/// No file system allocates in units above 1 GiB, no disk in sectors above 1 MiB.
const MAX_FS_BLOCK: u64 = 1 << 30;
const MAX_SECTOR: u32 = 1 << 20;

/// The environment each host and target recorded (`result::environment`):
/// sysctls within what the kernel can hold, names as `--vm-size` takes
/// them, block and sector sizes within what storage uses.
pub(crate) fn check_environment(doc: &super::ResultDoc) -> Result<(), String> {
    let cluster = doc.cluster.iter().flat_map(|c| c.hosts.iter());
    let hosts = std::iter::once(&doc.host).chain(cluster.clone().filter_map(|h| h.host.as_ref()));
    for h in hosts {
        check_host_environment(h)?;
    }
    let targets = doc
        .target
        .iter()
        .chain(cluster.flat_map(|h| h.targets.iter()));
    for t in targets {
        check_blocks(t)?;
    }
    Ok(())
}

/// One host's sysctls and platform names; also what an agent's hello must
/// pass, so no host can make the merged result unreadable.
pub(crate) fn check_host_environment(h: &crate::result::HostInfo) -> Result<(), String> {
    let n = &h.net;
    let sysctls = [n.rmem_max, n.wmem_max, n.rmem_default, n.wmem_default]
        .into_iter()
        .flatten();
    let triples = [n.tcp_rmem, n.tcp_wmem].into_iter().flatten().flatten();
    if let Some(v) = sysctls.chain(triples).find(|v| *v > MAX_SOCKET_BUFFER) {
        return Err(format!(
            "host '{}': a socket buffer of {v} bytes, more than a kernel holds ({MAX_SOCKET_BUFFER})",
            h.hostname
        ));
    }
    let p = &h.platform;
    let os = (!h.os.is_empty()).then(|| h.os.clone());
    for (what, v) in [
        ("operating system", &os),
        ("VM size", &h.vm_size),
        ("platform VM size", &p.vm_size),
        ("cloud", &p.cloud),
        ("region", &p.region),
        ("platform source", &p.source),
    ] {
        let Some(v) = v else { continue };
        let max = crate::units::bounds::MAX_VM_SIZE_LEN;
        if v.is_empty() || v.chars().count() > max || v.chars().any(|c| c.is_control()) {
            return Err(format!(
                "host '{}': a {what} that is empty or longer than {max} characters",
                h.hostname
            ));
        }
    }
    Ok(())
}

/// A target's block and sector sizes; also what an agent's prepared
/// targets must pass.
pub(crate) fn check_blocks(t: &crate::result::TargetInfo) -> Result<(), String> {
    let b = &t.blocks;
    let fs_ok = [b.fs_block, b.fs_fragment]
        .into_iter()
        .flatten()
        .all(|v| (1..=MAX_FS_BLOCK).contains(&v));
    let sectors_ok = [b.logical_sector, b.physical_sector]
        .into_iter()
        .flatten()
        .all(|v| (1..=MAX_SECTOR).contains(&v));
    if !(fs_ok && sectors_ok) {
        return Err(format!(
            "target {}: a block size of 0 or over {MAX_FS_BLOCK} bytes, or a sector size \
             of 0 or over {MAX_SECTOR}",
            t.path
        ));
    }
    Ok(())
}
