//! Block devices: which ones lie under a target (sysfs), and what they did
//! (/proc/diskstats).
//!
//! The device a file lives on is often not the disk: a partition, an LVM
//! or dm-crypt volume, a loop device over a file on yet another disk. The
//! resolution follows sysfs (`partition` -> the parent disk, `slaves/` of a
//! device-mapper device, `loop/backing_file` -> the device that file is on)
//! and records each step, so a reader sees both the device the target uses
//! and the real disk that does the work.

#[cfg(unix)]
use std::os::unix::fs::MetadataExt;
use std::path::Path;
#[cfg(unix)]
use std::path::PathBuf;

#[cfg(unix)]
use crate::result::counters::DeviceRole;
use crate::result::counters::{DeviceInfo, DeviceRates};

/// Loop over dm over a partition over a loop... is never this deep; the
/// bound keeps a strange sysfs from looping.
#[cfg(unix)]
const MAX_DEPTH: usize = 8;

/// Cumulative counters of one device (the fields of a /proc/diskstats line
/// that the rates need).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct DiskStat {
    pub(crate) reads: u64,
    pub(crate) read_sectors: u64,
    pub(crate) writes: u64,
    pub(crate) write_sectors: u64,
    /// Milliseconds with at least one request in flight.
    pub(crate) io_ticks_ms: u64,
    /// Milliseconds of request time, summed over requests in flight.
    pub(crate) queue_ms: u64,
    /// Milliseconds spent by completed reads and writes, from arrival to
    /// completion (what iostat's r_await and w_await divide).
    pub(crate) read_ms: u64,
    pub(crate) write_ms: u64,
    /// Completed discards (Linux 4.18 on) and flushes (5.5 on); 0 before.
    pub(crate) discards: u64,
    pub(crate) flushes: u64,
}

/// The lines of /proc/diskstats for `names`, in that order (a name not
/// listed is left out).
pub(crate) fn parse(text: &str, names: &[String]) -> Vec<(String, DiskStat)> {
    let mut out = Vec::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        // major minor name, then at least the eleven fields of Linux 2.6.
        if f.len() < 14 || !names.iter().any(|n| n == f[2]) {
            continue;
        }
        let n = |i: usize| f[i].parse::<u64>().unwrap_or(0);
        out.push((
            f[2].to_string(),
            DiskStat {
                reads: n(3),
                read_sectors: n(5),
                writes: n(7),
                write_sectors: n(9),
                io_ticks_ms: n(12),
                queue_ms: n(13),
                read_ms: n(6),
                write_ms: n(10),
                discards: if f.len() > 14 { n(14) } else { 0 },
                flushes: if f.len() > 18 { n(18) } else { 0 },
            },
        ));
    }
    out.sort_by_key(|(name, _)| names.iter().position(|n| n == name));
    out
}

/// Rates between two samples `secs` apart (diskstats sectors are 512 bytes
/// whatever the device's own sector size).
pub(crate) fn rates(name: &str, a: &DiskStat, b: &DiskStat, secs: f64) -> DeviceRates {
    let d = |x: u64, y: u64| y.saturating_sub(x) as f64;
    let (reads, writes) = (d(a.reads, b.reads), d(a.writes, b.writes));
    let (rs, ws) = (
        d(a.read_sectors, b.read_sectors),
        d(a.write_sectors, b.write_sectors),
    );
    let ms = secs * 1000.0;
    let mib = |sectors: f64| sectors * 512.0 / 1048576.0 / secs;
    DeviceRates {
        name: name.to_string(),
        read_iops: reads / secs,
        write_iops: writes / secs,
        read_mib_s: mib(rs),
        write_mib_s: mib(ws),
        avg_request_kib: if reads + writes > 0.0 {
            (rs + ws) * 512.0 / 1024.0 / (reads + writes)
        } else {
            0.0
        },
        avg_queue: d(a.queue_ms, b.queue_ms) / ms,
        // The kernel counts ticks in jiffies: a little over 100% is rounding.
        busy_pct: (d(a.io_ticks_ms, b.io_ticks_ms) / ms * 100.0).min(100.0),
    }
}

#[cfg(unix)]
/// The devices under `path`: the one it is on (for a device node, the
/// device itself), then what that resolves to. Empty when the path is on
/// no block device (tmpfs, NFS, FUSE) or sysfs is not there.
pub(crate) fn under(path: &Path, sys: &Path) -> Vec<DeviceInfo> {
    let Ok(md) = std::fs::metadata(path) else {
        return Vec::new();
    };
    let ft = md.file_type();
    use std::os::unix::fs::FileTypeExt;
    let dev = if ft.is_block_device() {
        md.rdev()
    } else {
        md.dev()
    };
    let mut out = Vec::new();
    if let Some(dir) = dev_dir(dev, sys) {
        walk(&dir, DeviceRole::Target, String::new(), sys, 0, &mut out);
    }
    out
}

/// Windows has no sysfs: nothing is found this way there (a run's
/// counters find the target's disks in `windows.rs`).
#[cfg(windows)]
pub(crate) fn under(_path: &Path, _sys: &Path) -> Vec<DeviceInfo> {
    Vec::new()
}

#[cfg(unix)]
/// The sysfs directory of device number `dev`.
fn dev_dir(dev: u64, sys: &Path) -> Option<PathBuf> {
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    std::fs::canonicalize(sys.join(format!("dev/block/{major}:{minor}"))).ok()
}

#[cfg(unix)]
fn walk(
    dir: &Path,
    role: DeviceRole,
    via: String,
    sys: &Path,
    depth: usize,
    out: &mut Vec<DeviceInfo>,
) {
    let Some(name) = dir.file_name().and_then(|n| n.to_str()) else {
        return;
    };
    if depth > MAX_DEPTH || out.iter().any(|d| d.name == name) {
        return;
    }
    out.push(DeviceInfo {
        name: name.to_string(),
        role,
        via,
    });
    if dir.join("partition").exists() {
        if let Some(parent) = dir.parent() {
            walk(
                parent,
                DeviceRole::Below,
                format!("partition {name} is on it"),
                sys,
                depth + 1,
                out,
            );
        }
        return;
    }
    if let Ok(slaves) = std::fs::read_dir(dir.join("slaves")) {
        let mut found: Vec<PathBuf> = slaves
            .flatten()
            .filter_map(|e| std::fs::canonicalize(e.path()).ok())
            .collect();
        found.sort();
        for s in found {
            walk(
                &s,
                DeviceRole::Below,
                format!("{name} is mapped onto it"),
                sys,
                depth + 1,
                out,
            );
        }
    }
    if let Ok(file) = std::fs::read_to_string(dir.join("loop/backing_file")) {
        let file = file.trim_end_matches('\n');
        // A loop device over a file: the file's own device does the work.
        if let Ok(md) = std::fs::metadata(file) {
            if let Some(d) = dev_dir(md.dev(), sys) {
                walk(
                    &d,
                    DeviceRole::Below,
                    format!("{name}'s backing file {file} is on it"),
                    sys,
                    depth + 1,
                    out,
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Linux 5.5+ (17 fields after the name: discards and flushes), and a
    // 2.6-era line with 11.
    const T0: &str = "   7       3 loop3 1000 0 8000 500 200 0 1600 100 0 400 600 0 0 0 0 0 0
 254       0 vda 5000 10 80000 2000 1000 20 16000 900 1 3000 2900 0 0 0 0 40 12
 254       1 vda1 4000 10 64000 1500 900 20 14000 800 0 2500 2300
";
    const T1: &str = "   7       3 loop3 1500 0 12000 700 200 0 1600 100 0 900 1600 0 0 0 0 0 0
 254       0 vda 5400 10 83200 2300 1100 20 17600 1000 2 3990 4900 0 0 0 0 41 12
 254       1 vda1 4400 10 67200 1800 1000 20 15600 900 0 3490 4300
";

    #[test]
    fn diskstats_rates_like_iostat() {
        let names = vec!["vda".to_string(), "loop3".to_string()];
        let (a, b) = (parse(T0, &names), parse(T1, &names));
        assert_eq!(a.len(), 2);
        assert_eq!(a[0].0, "vda", "in the order asked for");
        let vda = rates("vda", &a[0].1, &b[0].1, 1.0);
        assert_eq!(vda.read_iops, 400.0);
        assert_eq!(vda.write_iops, 100.0);
        // 3200 + 1600 sectors of 512 bytes in 500 requests: 4.8 KiB each.
        assert_eq!(vda.avg_request_kib, 4.8);
        assert_eq!(vda.read_mib_s, 3200.0 * 512.0 / 1048576.0);
        assert_eq!(vda.avg_queue, 2.0);
        assert_eq!(vda.busy_pct, 99.0);
        let lp = rates("loop3", &a[1].1, &b[1].1, 0.5);
        assert_eq!(lp.read_iops, 1000.0);
        assert_eq!(lp.busy_pct, 100.0, "jiffy rounding is clamped");
        assert_eq!(lp.avg_queue, 2.0);
    }

    #[test]
    fn short_or_foreign_lines_are_skipped() {
        let names = vec!["vda1".to_string(), "sdz".to_string()];
        let got = parse("garbage\n 8 0 sdz 1 2 3\n", &names);
        assert!(got.is_empty());
        assert_eq!(parse(T0, &names)[0].1.reads, 4000);
    }

    /// A fake sysfs: dm-0 over partition vdb1 of vdb, loop0 over a file
    /// whose device is not in this sysfs (so the walk stops there).
    #[test]
    fn resolution_follows_partitions_dm_slaves_and_stops_cleanly() {
        let root = std::env::temp_dir().join(format!("vb-sysfs-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let devs = root.join("devices");
        let vdb = devs.join("pci0/block/vdb");
        let vdb1 = vdb.join("vdb1");
        let dm = devs.join("virtual/block/dm-0");
        for d in [&vdb1, &dm.join("slaves")] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(vdb1.join("partition"), "1\n").unwrap();
        std::os::unix::fs::symlink(&vdb1, dm.join("slaves/vdb1")).unwrap();
        let mut out = Vec::new();
        walk(&dm, DeviceRole::Target, String::new(), &root, 0, &mut out);
        let names: Vec<&str> = out.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["dm-0", "vdb1", "vdb"]);
        assert_eq!(out[0].role, DeviceRole::Target);
        assert_eq!(out[2].role, DeviceRole::Below);
        assert!(out[1].via.contains("dm-0"), "{:?}", out[1]);
        let _ = std::fs::remove_dir_all(&root);
    }
}
