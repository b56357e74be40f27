//! A production profile, schema `volbench.profile/v1`: what `volbench
//! capture` saw the host's block devices, NFS mounts, CPUs and interfaces
//! do while production ran, per interval and summed up (peak, p95 over
//! intervals, mean). `run --like` and `compare` read it back, so its
//! figures are the ones a person reads in `report`: each is defined once
//! here (docs/reference/profile-format.md).

use serde::{Deserialize, Serialize};

use super::counters::{HostCpu, NetRates, NfsRates};

mod read;
pub(crate) mod sizes;

pub const PROFILE_SCHEMA: &str = "volbench.profile/v1";

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    pub schema: String,
    /// The volbench that wrote it (`volbench --version`'s first word).
    pub volbench: String,
    pub host: String,
    /// Online CPUs: CPU percentages are of all of them.
    pub cpus: u32,
    /// When the capture started, seconds since the Unix epoch.
    pub started_unix_s: f64,
    /// The interval asked for, in seconds.
    pub interval_s: f64,
    /// The time the profile covers, first sample to last, in seconds.
    pub duration_s: f64,
    /// Why the capture ended before its --duration ("SIGINT"...), if it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
    /// The block devices watched (kernel names: "sda", "nvme0n1", "loop3").
    #[serde(default)]
    pub devices: Vec<String>,
    /// The NFS mounts watched (mount points).
    #[serde(default)]
    pub mounts: Vec<String>,
    /// One entry per interval, in time order.
    #[serde(default)]
    pub intervals: Vec<ProfileInterval>,
    /// One summary per device, in the order of `devices`.
    #[serde(default)]
    pub summary: Vec<DeviceSummary>,
    /// One summary per NFS mount, in the order of `mounts`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nfs_summary: Vec<MountSummary>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_summary: Option<CpuSummary>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub net_summary: Vec<NetSummary>,
}

/// What happened in one interval.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProfileInterval {
    /// End of the interval, seconds since the capture started.
    pub(crate) t_s: f64,
    pub(crate) duration_s: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) cpu: Option<HostCpu>,
    #[serde(default)]
    pub(crate) devices: Vec<DeviceSample>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) nfs: Vec<MountSample>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) net: Vec<NetRates>,
}

/// One block device over one stretch of time (from /proc/diskstats).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct DeviceSample {
    pub(crate) name: String,
    pub(crate) read_iops: f64,
    pub(crate) write_iops: f64,
    pub(crate) read_mib_s: f64,
    pub(crate) write_mib_s: f64,
    /// Mean request size of each direction, KiB (0 without requests).
    pub(crate) read_kib: f64,
    pub(crate) write_kib: f64,
    /// Requests in flight on average: the kernel's time-weighted queue
    /// counter (diskstats field 11) over the stretch.
    pub(crate) in_flight: f64,
    /// Mean time from a request's arrival at the block layer to its
    /// completion (iostat's r_await, w_await), milliseconds.
    pub(crate) read_await_ms: f64,
    pub(crate) write_await_ms: f64,
    /// Discards and flushes per second (kernels 4.18 and 5.5 on; 0 before).
    #[serde(default)]
    pub(crate) discard_iops: f64,
    #[serde(default)]
    pub(crate) flush_iops: f64,
    /// Time with at least one request in flight, percent.
    pub(crate) busy_pct: f64,
}

impl DeviceSample {
    pub(crate) fn iops(&self) -> f64 {
        self.read_iops + self.write_iops
    }
    pub(crate) fn mib_s(&self) -> f64 {
        self.read_mib_s + self.write_mib_s
    }
    /// Reads in percent of reads and writes (0 without either).
    pub(crate) fn read_pct(&self) -> f64 {
        ratio(self.read_iops, self.iops()) * 100.0
    }
    /// Mean request size of both directions together, KiB.
    pub(crate) fn request_kib(&self) -> f64 {
        ratio(self.mib_s() * 1024.0, self.iops())
    }
    /// Mean await of both directions, weighted by their requests.
    pub(crate) fn await_ms(&self) -> f64 {
        ratio(
            self.read_await_ms * self.read_iops + self.write_await_ms * self.write_iops,
            self.iops(),
        )
    }
}

fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 { a / b } else { 0.0 }
}

/// One NFS mount over one interval (from /proc/self/mountstats).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct MountSample {
    pub(crate) mount: String,
    #[serde(flatten)]
    pub(crate) rates: NfsRates,
}

/// A figure over the capture: its mean over the whole capture (from the
/// counters at its two ends, not averaged from intervals), the 95th
/// percentile of its per-interval values (nearest rank) and its peak.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    pub mean: f64,
    pub p95: f64,
    pub peak: f64,
}

/// One device over the whole capture.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DeviceSummary {
    pub name: String,
    /// Intervals with at least one request: the ones the p95 and peak of
    /// the mix, request size and await are taken over.
    pub active_intervals: usize,
    pub iops: Figure,
    pub read_iops: Figure,
    pub write_iops: Figure,
    pub mib_s: Figure,
    pub read_pct: Figure,
    pub request_kib: Figure,
    /// The largest distance of an active interval's mean request size from
    /// the mean over them, as a fraction of it (`stats::mean_spread`).
    pub request_kib_spread: f64,
    pub read_kib: f64,
    pub write_kib: f64,
    pub in_flight: Figure,
    pub await_ms: Figure,
    pub read_await_ms: Figure,
    pub write_await_ms: Figure,
    pub discard_iops: f64,
    pub flush_iops: f64,
}

/// Nearest-rank percentile of `values` (0 when there are none).
fn percentile(values: &[f64], p: f64) -> f64 {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    let rank = ((p / 100.0) * v.len() as f64).ceil() as usize;
    v[rank.clamp(1, v.len()) - 1]
}

fn figure(whole: f64, values: &[f64]) -> Figure {
    Figure {
        mean: whole,
        p95: percentile(values, 95.0),
        peak: values.iter().copied().fold(0.0, f64::max),
    }
}

impl DeviceSummary {
    /// The summary of `name` from its intervals and `whole`, the rates
    /// between the capture's first and last sample.
    pub(crate) fn of(name: &str, intervals: &[ProfileInterval], whole: &DeviceSample) -> Self {
        let all: Vec<&DeviceSample> = intervals
            .iter()
            .flat_map(|iv| iv.devices.iter().filter(|d| d.name == name))
            .collect();
        let active: Vec<&DeviceSample> = all.iter().copied().filter(|d| d.iops() > 0.0).collect();
        let over = |v: &[&DeviceSample], f: fn(&DeviceSample) -> f64| -> Vec<f64> {
            v.iter().map(|d| f(d)).collect()
        };
        let sizes = over(&active, DeviceSample::request_kib);
        let reads: Vec<&DeviceSample> = active
            .iter()
            .copied()
            .filter(|d| d.read_iops > 0.0)
            .collect();
        let writes: Vec<&DeviceSample> = active
            .iter()
            .copied()
            .filter(|d| d.write_iops > 0.0)
            .collect();
        DeviceSummary {
            name: name.to_string(),
            active_intervals: active.len(),
            iops: figure(whole.iops(), &over(&all, DeviceSample::iops)),
            read_iops: figure(whole.read_iops, &over(&all, |d| d.read_iops)),
            write_iops: figure(whole.write_iops, &over(&all, |d| d.write_iops)),
            mib_s: figure(whole.mib_s(), &over(&all, DeviceSample::mib_s)),
            read_pct: figure(whole.read_pct(), &over(&active, DeviceSample::read_pct)),
            request_kib: figure(whole.request_kib(), &sizes),
            request_kib_spread: crate::stats::mean_spread(&sizes).map_or(0.0, |(_, s)| s),
            read_kib: whole.read_kib,
            write_kib: whole.write_kib,
            in_flight: figure(whole.in_flight, &over(&all, |d| d.in_flight)),
            await_ms: figure(whole.await_ms(), &over(&active, DeviceSample::await_ms)),
            read_await_ms: figure(whole.read_await_ms, &over(&reads, |d| d.read_await_ms)),
            write_await_ms: figure(whole.write_await_ms, &over(&writes, |d| d.write_await_ms)),
            discard_iops: whole.discard_iops,
            flush_iops: whole.flush_iops,
        }
    }
}

/// One NFS mount over the whole capture: each operation's rate (mean,
/// p95, peak) and its mean round trip and execution time over the whole
/// capture (from the counters at its two ends).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MountSummary {
    pub(crate) mount: String,
    pub(crate) ops: Vec<MountOpSummary>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct MountOpSummary {
    pub(crate) op: String,
    pub(crate) ops_s: Figure,
    pub(crate) avg_rtt_ms: f64,
    pub(crate) avg_exe_ms: f64,
    pub(crate) retrans_s: f64,
}

impl MountSummary {
    pub(crate) fn of(mount: &str, intervals: &[ProfileInterval], whole: &NfsRates) -> Self {
        let ops = whole
            .ops
            .iter()
            .map(|o| {
                let per: Vec<f64> = intervals
                    .iter()
                    .map(|iv| {
                        iv.nfs
                            .iter()
                            .filter(|m| m.mount == mount)
                            .flat_map(|m| m.rates.ops.iter().filter(|x| x.op == o.op))
                            .map(|x| x.ops_s)
                            .sum()
                    })
                    .collect();
                MountOpSummary {
                    op: o.op.clone(),
                    ops_s: figure(o.ops_s, &per),
                    avg_rtt_ms: o.avg_rtt_ms,
                    avg_exe_ms: o.avg_exe_ms,
                    retrans_s: o.retrans_s,
                }
            })
            .collect();
        MountSummary {
            mount: mount.to_string(),
            ops,
        }
    }
}

/// The host's CPUs over the capture, percent of all of them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuSummary {
    pub(crate) busy_pct: Figure,
    pub(crate) iowait_pct: Figure,
    pub(crate) busiest_cpu_pct: Figure,
}

impl CpuSummary {
    pub(crate) fn of(intervals: &[ProfileInterval], whole: &HostCpu) -> Self {
        let over = |f: fn(&HostCpu) -> f64| -> Vec<f64> {
            intervals
                .iter()
                .filter_map(|iv| iv.cpu.as_ref().map(f))
                .collect()
        };
        CpuSummary {
            busy_pct: figure(whole.busy_pct(), &over(HostCpu::busy_pct)),
            iowait_pct: figure(whole.iowait_pct, &over(|c| c.iowait_pct)),
            busiest_cpu_pct: figure(whole.busiest_cpu_pct, &over(|c| c.busiest_cpu_pct)),
        }
    }
}

/// One network interface over the capture.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NetSummary {
    pub(crate) name: String,
    pub(crate) rx_mib_s: Figure,
    pub(crate) tx_mib_s: Figure,
}

impl NetSummary {
    pub(crate) fn of(intervals: &[ProfileInterval], whole: &NetRates) -> Self {
        let over = |f: fn(&NetRates) -> f64| -> Vec<f64> {
            intervals
                .iter()
                .flat_map(|iv| iv.net.iter().filter(|n| n.name == whole.name).map(f))
                .collect()
        };
        NetSummary {
            name: whole.name.clone(),
            rx_mib_s: figure(whole.rx_mib_s, &over(|n| n.rx_mib_s)),
            tx_mib_s: figure(whole.tx_mib_s, &over(|n| n.tx_mib_s)),
        }
    }
}

impl Profile {
    /// The summary of the device named `name`, else of the busiest device.
    pub(crate) fn device(&self, name: Option<&str>) -> Option<&DeviceSummary> {
        match name {
            Some(n) => self.summary.iter().find(|d| d.name == n),
            None => self
                .summary
                .iter()
                .max_by(|a, b| a.iops.mean.total_cmp(&b.iops.mean)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dev(r: f64, w: f64, kib: f64, await_ms: f64) -> DeviceSample {
        DeviceSample {
            name: "vdb".into(),
            read_iops: r,
            write_iops: w,
            read_mib_s: r * kib / 1024.0,
            write_mib_s: w * kib / 1024.0,
            read_kib: kib,
            write_kib: kib,
            in_flight: (r + w) * await_ms / 1000.0,
            read_await_ms: await_ms,
            write_await_ms: await_ms,
            ..Default::default()
        }
    }

    #[test]
    fn summary_is_mean_of_the_whole_p95_and_peak_of_intervals() {
        // 20 intervals: 19 at 1,000 IOPS 70/30 8 KiB, one idle; a burst of 2,000.
        let mut ivs: Vec<ProfileInterval> = (0..20)
            .map(|i| ProfileInterval {
                t_s: i as f64 + 1.0,
                duration_s: 1.0,
                devices: vec![dev(700.0, 300.0, 8.0, 2.0)],
                ..Default::default()
            })
            .collect();
        ivs[5].devices = vec![dev(0.0, 0.0, 0.0, 0.0)];
        ivs[9].devices = vec![dev(1400.0, 600.0, 8.0, 3.0)];
        let whole = dev(700.0 * 0.95 + 35.0, 300.0 * 0.95 + 15.0, 8.0, 2.05);
        let s = DeviceSummary::of("vdb", &ivs, &whole);
        assert_eq!(s.active_intervals, 19);
        assert_eq!(s.iops.peak, 2000.0);
        assert_eq!(s.iops.p95, 1000.0, "the 19th of 20 sorted values");
        assert_eq!(s.iops.mean, 1000.0);
        assert!((s.read_pct.mean - 70.0).abs() < 1e-9);
        assert!(
            (s.read_pct.p95 - 70.0).abs() < 1e-9,
            "idle intervals have no mix"
        );
        assert_eq!(s.request_kib.peak, 8.0);
        assert_eq!(s.request_kib_spread, 0.0);
        assert_eq!(s.await_ms.peak, 3.0);
        assert!(
            (s.in_flight.peak - 6.0).abs() < 1e-9,
            "Little: 2,000/s x 3 ms"
        );
    }

    #[test]
    fn a_newer_or_foreign_schema_is_named() {
        let e = Profile::from_json(r#"{"schema":"volbench.profile/v9"}"#, "p.json").unwrap_err();
        assert!(
            e.contains("volbench.profile/v9") && e.contains("newer"),
            "{e}"
        );
        let e = Profile::from_json(r#"{"schema":"volbench.result/v1"}"#, "r.json").unwrap_err();
        assert!(e.contains("not a profile"), "{e}");
        let e = Profile::from_json("[1,2", "x").unwrap_err();
        assert!(e.contains("not a volbench profile"), "{e}");
        let p = Profile {
            schema: PROFILE_SCHEMA.into(),
            ..Default::default()
        };
        let text = serde_json::to_string(&p).unwrap();
        assert_eq!(Profile::from_json(&text, "p").unwrap(), p);
    }

    /// A profile of one device over two intervals, as a capture writes it.
    fn captured() -> Profile {
        let ivs: Vec<ProfileInterval> = (0..2)
            .map(|i| ProfileInterval {
                t_s: i as f64 + 1.0,
                duration_s: 1.0,
                devices: vec![dev(700.0, 300.0, 8.0, 2.0)],
                ..Default::default()
            })
            .collect();
        let summary = DeviceSummary::of("vdb", &ivs, &dev(700.0, 300.0, 8.0, 2.0));
        Profile {
            schema: PROFILE_SCHEMA.into(),
            volbench: "0.1.0".into(),
            host: "db1".into(),
            cpus: 4,
            interval_s: 1.0,
            duration_s: 2.0,
            devices: vec!["vdb".into()],
            intervals: ivs,
            summary: vec![summary],
            ..Default::default()
        }
    }

    #[test]
    fn a_hostile_profile_is_refused_whole_not_clamped() {
        let read = |p: &Profile| Profile::from_json(&serde_json::to_string(p).unwrap(), "p.json");
        assert!(read(&captured()).is_ok());
        let mut escape = captured();
        escape.summary[0].name = "vdb\u{1b}]0;owned\u{7}".into();
        let e = read(&escape).unwrap_err();
        assert!(e.contains("control character"), "{e}");
        assert!(
            !e.contains('\u{1b}'),
            "the escape reached the message: {e:?}"
        );
        let mut huge = captured();
        huge.summary[0].iops.peak = 1e30;
        assert!(read(&huge).unwrap_err().contains("IOPS"));
        let mut pct = captured();
        pct.summary[0].read_pct.mean = 150.0;
        assert!(read(&pct).unwrap_err().contains("read %"));
        let mut negative = captured();
        negative.intervals[1].devices[0].read_await_ms = -1.0;
        assert!(read(&negative).unwrap_err().contains("await"));
        let mut many = captured();
        many.devices = vec!["d".into(); 4097];
        assert!(read(&many).unwrap_err().contains("devices"));
    }
}
