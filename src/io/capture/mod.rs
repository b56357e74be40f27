//! `volbench capture`: the host's own counters sampled while production
//! runs, with no I/O of ours, into a `result::profile::Profile`. The kernel
//! formats are read by the same pure parsers the run's collector uses
//! (`io::counters`); this file only chooses what to watch and turns two
//! samples into a profile interval.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::counters::{block, cpu, net, nfs};
use crate::error::{Result, VbError};
use crate::result::profile::{
    CpuSummary, DeviceSample, DeviceSummary, MountSample, MountSummary, NetSummary, Profile,
    ProfileInterval,
};

pub(crate) mod trace;
pub(crate) mod tracefs;

const PROC: &str = "/proc";
const SYS: &str = "/sys";

/// What a capture watches, worked out once before it starts.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Watch {
    pub(crate) devices: Vec<String>,
    pub(crate) mounts: Vec<String>,
    pub(crate) interfaces: Vec<String>,
}

fn read(path: &str) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// The kernel name of the block device `dev`: a path to its node (any
/// symlink to it, as /dev/disk/by-id/ holds) or its name ("sdb").
fn device_name(dev: &str, sys: &Path) -> Result<String> {
    let bad = |why: &str| VbError::input(format!("--device {dev}: {why}"));
    let plain = !dev.contains('/');
    if plain && sys.join("class/block").join(dev).exists() {
        return Ok(dev.to_string());
    }
    let path = if plain {
        PathBuf::from("/dev").join(dev)
    } else {
        PathBuf::from(dev)
    };
    let (major, minor) = device_numbers(&path).map_err(|why| bad(&why))?;
    std::fs::canonicalize(sys.join(format!("dev/block/{major}:{minor}")))
        .ok()
        .and_then(|p| p.file_name()?.to_str().map(String::from))
        .ok_or_else(|| bad("not in sysfs (/sys/dev/block)"))
}

/// The major and minor numbers of the block device node at `path`.
#[cfg(unix)]
fn device_numbers(path: &Path) -> std::result::Result<(u32, u32), String> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let md = std::fs::metadata(path).map_err(|e| format!("no such block device ({e})"))?;
    if !md.file_type().is_block_device() {
        return Err("not a block device".into());
    }
    Ok((libc::major(md.rdev()), libc::minor(md.rdev())))
}

/// Block devices by number are Linux's (/dev, /sys/dev/block).
#[cfg(windows)]
fn device_numbers(_path: &Path) -> std::result::Result<(u32, u32), String> {
    Err("block devices under /dev are Linux's; --device is not available on Windows".into())
}

/// Whole devices that have done I/O since boot, when no --device or
/// --mount narrows the capture: partitions are in their disk's figures,
/// and a RAM disk or an unused loop device has nothing to say.
fn busy_devices(diskstats: &str, sys: &Path) -> Vec<String> {
    diskstats
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let name = *f.get(2)?;
            let n = |i: usize| f.get(i).and_then(|x| x.parse::<u64>().ok()).unwrap_or(0);
            let whole = sys.join("block").join(name).exists();
            (whole && !name.starts_with("ram") && n(3) + n(7) > 0).then(|| name.to_string())
        })
        .collect()
}

impl Watch {
    /// `--device` and `--mount` resolved, or everything busy when neither
    /// is given. A mount on NFS is watched through mountstats, any other
    /// through the block devices under it.
    pub(crate) fn resolve(devices: &[String], mounts: &[PathBuf]) -> Result<Watch> {
        let sys = Path::new(SYS);
        let mut w = Watch::default();
        for d in devices {
            let name = device_name(d, sys)?;
            if !w.devices.contains(&name) {
                w.devices.push(name);
            }
        }
        for m in mounts {
            let shown = m.display();
            let md = std::fs::metadata(m)
                .map_err(|e| VbError::input(format!("--mount {shown}: {e}")))?;
            if !md.is_dir() {
                return Err(VbError::input(format!("--mount {shown}: not a directory")));
            }
            let mount = super::mounts::for_path(m);
            match mount.filter(|x| x.fs_type.starts_with("nfs")) {
                Some(x) => {
                    if !w.mounts.contains(&x.mount_point) {
                        w.mounts.push(x.mount_point)
                    }
                }
                None => {
                    let under = block::under(m, sys);
                    if under.is_empty() {
                        return Err(VbError::input(format!(
                            "--mount {shown}: on no block device and not NFS: nothing to watch"
                        )));
                    }
                    for d in under {
                        if !w.devices.contains(&d.name) {
                            w.devices.push(d.name);
                        }
                    }
                }
            }
        }
        if devices.is_empty() && mounts.is_empty() {
            w.devices = busy_devices(&read(&format!("{PROC}/diskstats")), sys);
            w.mounts = nfs::mount_points(&read(&format!("{PROC}/self/mountstats")));
        }
        w.interfaces = net::interfaces(&read(&format!("{PROC}/net/dev")), sys)
            .into_iter()
            .map(|i| i.name)
            .collect();
        if w.devices.is_empty() && w.mounts.is_empty() {
            return Err(VbError::input(
                "capture: no block device has done I/O and no NFS mount is here: nothing to watch",
            ));
        }
        Ok(w)
    }
}

/// The cumulative counters at one moment.
#[derive(Clone)]
pub(crate) struct Sample {
    at: Instant,
    cpu: Option<cpu::CpuSample>,
    disks: Vec<(String, block::DiskStat)>,
    nfs: Vec<(String, nfs::NfsStat)>,
    net: Vec<(String, net::NetStat)>,
}

impl Watch {
    pub(crate) fn sample(&self) -> Sample {
        let nfs = if self.mounts.is_empty() {
            Vec::new()
        } else {
            let text = read(&format!("{PROC}/self/mountstats"));
            self.mounts
                .iter()
                .filter_map(|m| Some((m.clone(), nfs::parse(&text, m)?)))
                .collect()
        };
        Sample {
            at: Instant::now(),
            cpu: cpu::parse(&read(&format!("{PROC}/stat"))),
            disks: block::parse(&read(&format!("{PROC}/diskstats")), &self.devices),
            nfs,
            net: net::parse(&read(&format!("{PROC}/net/dev")))
                .into_iter()
                .filter(|(n, _)| self.interfaces.contains(n))
                .collect(),
        }
    }
}

/// One device between two samples `secs` apart.
pub(crate) fn device_sample(
    name: &str,
    a: &block::DiskStat,
    b: &block::DiskStat,
    secs: f64,
) -> DeviceSample {
    let d = |x: u64, y: u64| y.saturating_sub(x) as f64;
    let (reads, writes) = (d(a.reads, b.reads), d(a.writes, b.writes));
    let (rs, ws) = (
        d(a.read_sectors, b.read_sectors),
        d(a.write_sectors, b.write_sectors),
    );
    let per = |v: f64, n: f64| if n > 0.0 { v / n } else { 0.0 };
    DeviceSample {
        name: name.to_string(),
        read_iops: reads / secs,
        write_iops: writes / secs,
        // diskstats sectors are 512 bytes whatever the device's own.
        read_mib_s: rs * 512.0 / 1048576.0 / secs,
        write_mib_s: ws * 512.0 / 1048576.0 / secs,
        read_kib: per(rs * 0.5, reads),
        write_kib: per(ws * 0.5, writes),
        in_flight: d(a.queue_ms, b.queue_ms) / (secs * 1000.0),
        read_await_ms: per(d(a.read_ms, b.read_ms), reads),
        write_await_ms: per(d(a.write_ms, b.write_ms), writes),
        discard_iops: d(a.discards, b.discards) / secs,
        flush_iops: d(a.flushes, b.flushes) / secs,
        busy_pct: (d(a.io_ticks_ms, b.io_ticks_ms) / (secs * 10.0)).min(100.0),
    }
}

/// The interval from `a` to `b`, ending `t_s` seconds into the capture. A
/// device or mount missing from either sample is left out of it.
pub(crate) fn between(a: &Sample, b: &Sample, t_s: f64) -> ProfileInterval {
    let secs = (b.at - a.at).as_secs_f64().max(1e-6);
    let pair =
        |n: &str, v: &[(String, block::DiskStat)]| v.iter().find(|(m, _)| m == n).map(|x| x.1);
    ProfileInterval {
        t_s,
        duration_s: secs,
        cpu: match (&a.cpu, &b.cpu) {
            (Some(x), Some(y)) => cpu::rates(x, y),
            _ => None,
        },
        devices: b
            .disks
            .iter()
            .filter_map(|(n, y)| Some(device_sample(n, &pair(n, &a.disks)?, y, secs)))
            .collect(),
        nfs: b
            .nfs
            .iter()
            .filter_map(|(m, y)| {
                let (_, x) = a.nfs.iter().find(|(k, _)| k == m)?;
                Some(MountSample {
                    mount: m.clone(),
                    rates: nfs::rates(x, y, secs),
                })
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
    }
}

/// How a capture goes: its length, its tick, and what stops it early.
pub(crate) struct Capture<'a> {
    pub(crate) watch: &'a Watch,
    pub(crate) duration: Duration,
    pub(crate) interval: Duration,
    pub(crate) stop: &'a AtomicBool,
}

/// The longest a stop waits to be noticed: the sleeps between samples are
/// cut into slices this long.
const STOP_SLICE: Duration = Duration::from_millis(100);

impl Capture<'_> {
    /// Samples every `interval` until `duration` has passed or `stop` is
    /// set, calling `progress` with each interval; returns the profile,
    /// the stretch up to a stop included.
    pub(crate) fn run(&self, progress: &mut dyn FnMut(&ProfileInterval)) -> Profile {
        let started_unix_s = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        let first = self.watch.sample();
        let mut last = first.clone();
        let mut intervals = Vec::new();
        let mut tick = 1u32;
        let stopped = loop {
            let due = self.interval.saturating_mul(tick).min(self.duration);
            while first.at.elapsed() < due && !self.stop.load(Ordering::Relaxed) {
                std::thread::sleep(STOP_SLICE.min(due.saturating_sub(first.at.elapsed())));
            }
            let stopped = self.stop.load(Ordering::Relaxed);
            let now = self.watch.sample();
            // A stop just after a sample leaves no stretch worth a line.
            if (now.at - last.at) >= Duration::from_millis(10) {
                let iv = between(&last, &now, (now.at - first.at).as_secs_f64());
                progress(&iv);
                intervals.push(iv);
                last = now;
            }
            if stopped || due >= self.duration {
                break stopped;
            }
            tick = tick.saturating_add(1);
        };
        let whole = between(&first, &last, 0.0);
        let summary = self
            .watch
            .devices
            .iter()
            .map(|n| {
                let w = whole
                    .devices
                    .iter()
                    .find(|d| &d.name == n)
                    .cloned()
                    .unwrap_or_default();
                DeviceSummary::of(n, &intervals, &w)
            })
            .collect();
        let host = super::host::this_host();
        Profile {
            schema: crate::result::profile::PROFILE_SCHEMA.into(),
            volbench: env!("CARGO_PKG_VERSION").into(),
            host: host.hostname,
            cpus: host.cpus,
            started_unix_s,
            interval_s: self.interval.as_secs_f64(),
            duration_s: (last.at - first.at).as_secs_f64(),
            stopped: stopped.then(|| "stopped by a signal".to_string()),
            devices: self.watch.devices.clone(),
            mounts: self.watch.mounts.clone(),
            nfs_summary: whole
                .nfs
                .iter()
                .map(|m| MountSummary::of(&m.mount, &intervals, &m.rates))
                .collect(),
            cpu_summary: whole.cpu.as_ref().map(|c| CpuSummary::of(&intervals, c)),
            net_summary: whole
                .net
                .iter()
                .map(|n| NetSummary::of(&intervals, n))
                .collect(),
            intervals,
            summary,
        }
    }
}

#[cfg(test)]
mod tests;
