//! Client counters: the host's CPU, the block devices under the target,
//! the network interfaces, the target's NFS mount and SMB share, read from
//! /proc and /sys by the collector thread once per interval (never by the
//! workers); on Windows the same figures from Win32 (`windows.rs`, with
//! `perf.rs` turning them into the same samples, and `windows_smb.rs` the
//! SMB client's per-share counters). Each file holds a pure parser of one kernel format, tested on
//! text as the kernel prints it, and the rates between two samples.
//!
//! Hand-written rather than a crate: the procfs crates parse far more than
//! these five files and none resolves a target through loop and
//! device-mapper to its disk, which is the point here.

pub(crate) mod block;
pub(crate) mod cpu;
pub(crate) mod net;
pub(crate) mod nfs;
// Windows' conversions: built there, and for the tests everywhere.
#[cfg(any(windows, test))]
pub(crate) mod perf;
// /proc/fs/cifs/Stats on Linux, "SMB Client Shares" on Windows.
#[cfg_attr(windows, allow(dead_code))]
pub(crate) mod smb;
#[cfg(windows)]
mod windows;
#[cfg(windows)]
mod windows_smb;

#[cfg(unix)]
use std::path::Path;
use std::time::Instant;

use crate::result::PhaseName;
use crate::result::counters::{CounterInterval, RunCounters};

#[cfg(unix)]
const PROC: &str = "/proc";

/// Set (to anything but "" or "0") to run without counters: the A side of
/// bench/counters-ab.sh, which shows what reading them costs.
pub(crate) const OFF_VAR: &str = "VOLBENCH_NO_COUNTERS";

pub(crate) fn enabled() -> bool {
    std::env::var_os(OFF_VAR).is_none_or(|v| v.is_empty() || v == "0")
}
#[cfg(unix)]
const SYS: &str = "/sys";

/// What to read for one target, worked out once before the run.
pub(crate) struct Sampler {
    header: RunCounters,
    #[cfg(unix)]
    nfs_mount: Option<String>,
    #[cfg(unix)]
    smb_share: Option<String>,
    /// The disks' device paths and what else Windows reads from.
    #[cfg(windows)]
    win: windows::Sources,
}

/// The cumulative counters at one moment.
#[derive(Clone)]
pub(crate) struct Sample {
    at: Instant,
    cpu: Option<cpu::CpuSample>,
    disks: Vec<(String, block::DiskStat)>,
    net: Vec<(String, net::NetStat)>,
    nfs: Option<nfs::NfsStat>,
    smb: Vec<(String, smb::ShareStat)>,
}

#[cfg(unix)]
fn read(path: &str) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

impl Sampler {
    /// What a run's counters start as: the devices and interfaces, no figures yet.
    pub(crate) fn header(&self) -> RunCounters {
        self.header.clone()
    }
}

#[cfg(unix)]
impl Sampler {
    /// The devices, interfaces and mount under `target`. Reads sysfs and
    /// /proc only; a host without them gives a sampler that finds nothing.
    pub(crate) fn for_target(target: &Path) -> Self {
        let sys = Path::new(SYS);
        let host = super::host::this_host();
        let mount = super::mounts::for_path(target);
        let fs = mount.as_ref().map(|m| m.fs_type.as_str()).unwrap_or("");
        let nfs_mount = mount
            .as_ref()
            .filter(|_| fs.starts_with("nfs"))
            .map(|m| m.mount_point.clone());
        let smb_share = mount
            .as_ref()
            .filter(|_| matches!(fs, "cifs" | "smb3"))
            .map(|m| smb::share_name(&m.source));
        let header = RunCounters {
            host: host.hostname,
            cpus: host.cpus,
            devices: block::under(target, sys),
            interfaces: net::interfaces(&read(&format!("{PROC}/net/dev")), sys),
            nfs_mount: nfs_mount.clone(),
            unavailable: Vec::new(),
            intervals: Vec::new(),
            summary: None,
        };
        Self {
            header,
            nfs_mount,
            smb_share,
        }
    }

    pub(crate) fn sample(&self) -> Sample {
        let names: Vec<String> = self.header.devices.iter().map(|d| d.name.clone()).collect();
        let disks = if names.is_empty() {
            Vec::new()
        } else {
            block::parse(&read(&format!("{PROC}/diskstats")), &names)
        };
        let net = net::parse(&read(&format!("{PROC}/net/dev")))
            .into_iter()
            .filter(|(n, _)| self.header.interfaces.iter().any(|i| &i.name == n))
            .collect();
        let nfs = self
            .nfs_mount
            .as_deref()
            .and_then(|m| nfs::parse(&read(&format!("{PROC}/self/mountstats")), m));
        let smb = match &self.smb_share {
            Some(share) => smb::parse(&read(&format!("{PROC}/fs/cifs/Stats")))
                .into_iter()
                .filter(|(n, _)| n == share)
                .collect(),
            None => Vec::new(),
        };
        Sample {
            at: Instant::now(),
            cpu: cpu::parse(&read(&format!("{PROC}/stat"))),
            disks,
            net,
            nfs,
            smb,
        }
    }
}

/// The rates between two samples, for the stretch ending `t_s` seconds
/// into the run. A device or interface missing from either sample (gone
/// meanwhile) is left out of the stretch.
pub(crate) fn between(a: &Sample, b: &Sample, t_s: f64, phase: PhaseName) -> CounterInterval {
    let secs = (b.at - a.at).as_secs_f64().max(1e-6);
    CounterInterval {
        t_s,
        duration_s: secs,
        phase,
        cpu: match (&a.cpu, &b.cpu) {
            (Some(x), Some(y)) => cpu::rates(x, y),
            _ => None,
        },
        devices: b
            .disks
            .iter()
            .filter_map(|(n, y)| {
                let (_, x) = a.disks.iter().find(|(m, _)| m == n)?;
                Some(block::rates(n, x, y, secs))
            })
            .collect(),
        net: b
            .net
            .iter()
            .filter_map(|(n, y)| {
                let (_, x) = a.net.iter().find(|(m, _)| m == n)?;
                Some(net::rates(n, x, y, secs))
            })
            .collect(),
        nfs: match (&a.nfs, &b.nfs) {
            (Some(x), Some(y)) => Some(nfs::rates(x, y, secs)),
            _ => None,
        },
        smb: b
            .smb
            .iter()
            .filter_map(|(n, y)| {
                let (_, x) = a.smb.iter().find(|(m, _)| m == n)?;
                Some(smb::rates(n, x, y, secs))
            })
            .collect(),
    }
}
