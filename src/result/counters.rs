//! Client counters: what the host itself saw while a run went on (its
//! CPUs, the block devices under the target, its network interfaces, the
//! NFS mount and SMB shares), read by the collector once per interval from
//! /proc and /sys (`io::counters`), never on the I/O path.
//!
//! The model is flat on purpose so a report can chart it without knowing
//! the kernel's formats: each interval holds rates (per second, or percent)
//! over its `duration_s`, and `summary` holds the same rates over the whole
//! measured phase, worked out from the counters at its two ends (not
//! averaged from intervals). Every field is optional in result.json: a
//! result from before counters, or from a host without /proc, has none.

use serde::{Deserialize, Serialize};

use super::PhaseName;

/// A run's counters on one host (`RunResult::counters`). In a multi-host
/// run each host's own runs carry them (`cluster.hosts[].runs[]`); the
/// merged run has none, since one host's CPU is not another's.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunCounters {
    /// The host they were read on (its hostname).
    pub host: String,
    /// Online CPUs: host CPU percentages are of all of them (100 = every core busy).
    pub cpus: u32,
    /// The block devices under the target, the one it sits on first, then
    /// what that resolves to (through device-mapper, loop and partitions).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub devices: Vec<DeviceInfo>,
    /// Network interfaces other than loopback that were up.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub interfaces: Vec<InterfaceInfo>,
    /// The NFS mount the target is on (its mount point), when it is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nfs_mount: Option<String>,
    /// The counters this host could not read, by name and why ("physical
    /// disks: IOCTL_DISK_PERFORMANCE failed ..."): an empty rate here means
    /// not measured, never idle.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unavailable: Vec<String>,
    /// One entry per interval of the run, warm-up included, in time order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub intervals: Vec<CounterInterval>,
    /// The measured phase as a whole (absent for a run cut short before it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<CounterInterval>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DeviceInfo {
    /// Kernel name: "vda", "loop3", "dm-0", "nvme0n1p2".
    pub name: String,
    /// How it relates to the target: the device the target sits on, or a
    /// device below it ("target" or "below").
    pub role: DeviceRole,
    /// What led here from the device above: "partition of", "slave of" (dm),
    /// "backing file of" (loop); empty for the target's own device.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub via: String,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DeviceRole {
    #[default]
    Target,
    Below,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct InterfaceInfo {
    pub name: String,
    /// Link speed in Mbit/s as the driver reports it; absent when it does
    /// not (virtual interfaces often report none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed_mbit: Option<f64>,
}

/// The counters over one stretch of time, as rates.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CounterInterval {
    /// End of the stretch, seconds since the run started (as `Interval::t_s`).
    pub t_s: f64,
    pub duration_s: f64,
    pub phase: PhaseName,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<HostCpu>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub devices: Vec<DeviceRates>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub net: Vec<NetRates>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nfs: Option<NfsRates>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub smb: Vec<SmbRates>,
}

/// Host CPU time in percent of all online CPUs (from /proc/stat).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostCpu {
    /// User time, nice included.
    pub user_pct: f64,
    /// System time, interrupts and soft interrupts included.
    pub system_pct: f64,
    pub iowait_pct: f64,
    /// Time the hypervisor gave to someone else.
    pub steal_pct: f64,
    pub idle_pct: f64,
    /// The busiest single CPU (user + system + steal), in percent of that
    /// CPU: one thread pinned to a core shows here while the host looks idle.
    pub busiest_cpu_pct: f64,
}

impl HostCpu {
    /// User + system + steal: the part of the host's CPUs not available.
    pub(crate) fn busy_pct(&self) -> f64 {
        self.user_pct + self.system_pct + self.steal_pct
    }
}

/// One block device's activity (from /proc/diskstats).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DeviceRates {
    pub name: String,
    pub read_iops: f64,
    pub write_iops: f64,
    pub read_mib_s: f64,
    pub write_mib_s: f64,
    /// Mean request size in KiB over reads and writes.
    pub avg_request_kib: f64,
    /// Mean number of requests in the device (iostat's aqu-sz).
    pub avg_queue: f64,
    /// Share of the time with at least one request in the device (iostat's
    /// %util, Perfmon's % Disk Time).
    pub busy_pct: f64,
}

impl DeviceRates {
    pub(crate) fn iops(&self) -> f64 {
        self.read_iops + self.write_iops
    }
    pub(crate) fn mib_s(&self) -> f64 {
        self.read_mib_s + self.write_mib_s
    }
}

/// One network interface (from /proc/net/dev).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NetRates {
    pub name: String,
    pub rx_mib_s: f64,
    pub tx_mib_s: f64,
    pub rx_packets_s: f64,
    pub tx_packets_s: f64,
}

/// The target's NFS mount (from /proc/self/mountstats).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NfsRates {
    /// Operations that happened in the stretch, busiest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ops: Vec<NfsOpRates>,
    /// RPC requests sent over the mount's transports, per second.
    pub sends_s: f64,
    /// Mean length of the backlog (requests waiting for a transport slot)
    /// each request found when it was sent.
    pub avg_backlog: f64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NfsOpRates {
    /// "READ", "WRITE", "GETATTR"...
    pub op: String,
    pub ops_s: f64,
    /// Mean round trip: request sent to reply received (the network and
    /// the server), in milliseconds.
    pub avg_rtt_ms: f64,
    /// Mean execution: queued on the client to done, in milliseconds.
    pub avg_exe_ms: f64,
    /// Transmissions beyond one per operation, per second.
    pub retrans_s: f64,
}

/// One SMB share (from /proc/fs/cifs/Stats).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SmbRates {
    /// As the kernel names it: "\\server\share".
    pub(crate) share: String,
    pub(crate) smbs_s: f64,
    pub(crate) read_mib_s: f64,
    pub(crate) write_mib_s: f64,
}

impl RunCounters {
    /// The intervals are kept bounded like a run's own (`MAX_INTERVALS`):
    /// past it, neighbours in the same phase are merged, time-weighted.
    pub(crate) fn push_interval(&mut self, iv: CounterInterval) {
        self.intervals.push(iv);
        if self.intervals.len() >= super::MAX_INTERVALS {
            self.halve();
        }
    }

    /// Neighbours of the same phase merged pairwise: about half as many.
    /// Returns whether anything was merged.
    pub(crate) fn halve(&mut self) -> bool {
        let before = self.intervals.len();
        let old = std::mem::take(&mut self.intervals);
        let mut it = old.into_iter().peekable();
        while let Some(a) = it.next() {
            match it.next_if(|b| b.phase == a.phase) {
                Some(b) => self.intervals.push(combine(&a, &b)),
                None => self.intervals.push(a),
            }
        }
        self.intervals.len() < before
    }
}

/// Two consecutive stretches as one: every rate weighted by its duration.
pub(crate) fn combine(a: &CounterInterval, b: &CounterInterval) -> CounterInterval {
    let (wa, wb) = (a.duration_s, b.duration_s);
    let total = wa + wb;
    let avg = |x: f64, y: f64| {
        if total > 0.0 {
            (x * wa + y * wb) / total
        } else {
            0.0
        }
    };
    let cpu = match (&a.cpu, &b.cpu) {
        (Some(x), Some(y)) => Some(HostCpu {
            user_pct: avg(x.user_pct, y.user_pct),
            system_pct: avg(x.system_pct, y.system_pct),
            iowait_pct: avg(x.iowait_pct, y.iowait_pct),
            steal_pct: avg(x.steal_pct, y.steal_pct),
            idle_pct: avg(x.idle_pct, y.idle_pct),
            busiest_cpu_pct: x.busiest_cpu_pct.max(y.busiest_cpu_pct),
        }),
        (x, y) => x.clone().or_else(|| y.clone()),
    };
    let devices = a
        .devices
        .iter()
        .map(|x| match b.devices.iter().find(|y| y.name == x.name) {
            Some(y) => {
                let (ox, oy) = (x.iops() * wa, y.iops() * wb);
                let ops = ox + oy;
                DeviceRates {
                    name: x.name.clone(),
                    read_iops: avg(x.read_iops, y.read_iops),
                    write_iops: avg(x.write_iops, y.write_iops),
                    read_mib_s: avg(x.read_mib_s, y.read_mib_s),
                    write_mib_s: avg(x.write_mib_s, y.write_mib_s),
                    avg_request_kib: if ops > 0.0 {
                        (x.avg_request_kib * ox + y.avg_request_kib * oy) / ops
                    } else {
                        0.0
                    },
                    avg_queue: avg(x.avg_queue, y.avg_queue),
                    busy_pct: avg(x.busy_pct, y.busy_pct),
                }
            }
            None => x.clone(),
        })
        .collect();
    let net = a
        .net
        .iter()
        .map(|x| match b.net.iter().find(|y| y.name == x.name) {
            Some(y) => NetRates {
                name: x.name.clone(),
                rx_mib_s: avg(x.rx_mib_s, y.rx_mib_s),
                tx_mib_s: avg(x.tx_mib_s, y.tx_mib_s),
                rx_packets_s: avg(x.rx_packets_s, y.rx_packets_s),
                tx_packets_s: avg(x.tx_packets_s, y.tx_packets_s),
            },
            None => x.clone(),
        })
        .collect();
    // NFS and SMB detail of a merged stretch: the later one's, which is
    // what a chart of a long run shows at that point anyway.
    CounterInterval {
        t_s: b.t_s,
        duration_s: total,
        phase: b.phase,
        cpu,
        devices,
        net,
        nfs: b.nfs.clone().or_else(|| a.nfs.clone()),
        smb: if b.smb.is_empty() {
            a.smb.clone()
        } else {
            b.smb.clone()
        },
    }
}

/// The counters of parts of one run being merged (`merge::merge_runs`).
/// The targets of one host share its counters: the first part's are kept,
/// with the devices the other targets sit on added. Parts from different
/// hosts have none in the merge; each host keeps its own.
pub(crate) fn merge<'a>(
    parts: impl Iterator<Item = Option<&'a RunCounters>>,
) -> Option<RunCounters> {
    let parts: Vec<&RunCounters> = parts.collect::<Option<Vec<_>>>()?;
    let first = *parts.first()?;
    if parts.iter().any(|p| p.host != first.host) {
        return None;
    }
    let mut out = first.clone();
    for p in &parts[1..] {
        for d in &p.devices {
            if !out.devices.iter().any(|x| x.name == d.name) {
                out.devices.push(d.clone());
            }
        }
        add_devices(out.summary.as_mut(), p.summary.as_ref());
        for (o, i) in out.intervals.iter_mut().zip(&p.intervals) {
            add_devices(Some(o), Some(i));
        }
    }
    Some(out)
}

fn add_devices(into: Option<&mut CounterInterval>, from: Option<&CounterInterval>) {
    let (Some(into), Some(from)) = (into, from) else {
        return;
    };
    for d in &from.devices {
        if !into.devices.iter().any(|x| x.name == d.name) {
            into.devices.push(d.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iv(t: f64, busy: f64, iops: f64) -> CounterInterval {
        CounterInterval {
            t_s: t,
            duration_s: 1.0,
            phase: PhaseName::Measure,
            cpu: Some(HostCpu {
                user_pct: busy,
                busiest_cpu_pct: busy,
                ..HostCpu::default()
            }),
            devices: vec![DeviceRates {
                name: "vda".into(),
                read_iops: iops,
                avg_request_kib: 4.0,
                busy_pct: busy,
                ..DeviceRates::default()
            }],
            ..CounterInterval::default()
        }
    }

    #[test]
    fn combined_stretches_are_time_weighted() {
        let mut b = iv(3.0, 100.0, 300.0);
        b.duration_s = 3.0;
        let c = combine(&iv(1.0, 20.0, 100.0), &b);
        assert_eq!(c.duration_s, 4.0);
        assert_eq!(c.t_s, 3.0);
        assert_eq!(c.devices[0].read_iops, 250.0);
        assert_eq!(c.devices[0].busy_pct, 80.0);
        assert_eq!(c.cpu.as_ref().map(|c| c.busiest_cpu_pct), Some(100.0));
    }

    #[test]
    fn the_series_stays_bounded() {
        let mut rc = RunCounters::default();
        for k in 0..(crate::result::MAX_INTERVALS * 2) {
            rc.push_interval(iv(k as f64, 50.0, 10.0));
        }
        assert!(rc.intervals.len() < crate::result::MAX_INTERVALS);
        let secs: f64 = rc.intervals.iter().map(|i| i.duration_s).sum();
        assert_eq!(secs, (crate::result::MAX_INTERVALS * 2) as f64);
    }

    #[test]
    fn hosts_are_never_mixed_in_a_merge() {
        let a = RunCounters {
            host: "a".into(),
            ..RunCounters::default()
        };
        let mut b = a.clone();
        assert!(merge([Some(&a), Some(&b)].into_iter()).is_some());
        b.host = "b".into();
        assert!(merge([Some(&a), Some(&b)].into_iter()).is_none());
        assert!(merge([Some(&a), None].into_iter()).is_none());
    }

    #[test]
    fn a_result_without_counters_reads() {
        let c: CounterInterval =
            serde_json::from_str(r#"{"t_s":1,"duration_s":1,"phase":"measure"}"#).unwrap();
        assert!(c.cpu.is_none() && c.devices.is_empty());
    }
}
