//! A profile read back (`run --like`, `--expect-from`, `compare`, `report`):
//! its schema named, then every figure within what a capture can measure
//! and every name printable, or the whole file refused (never clamped into
//! shape, and no name can reach a terminal as an escape sequence).

use serde::Deserialize;

use super::{
    DeviceSample, DeviceSummary, Figure, HostCpu, NetRates, NfsRates, PROFILE_SCHEMA, Profile,
};

impl Profile {
    /// A profile read back: refused (with what it is) unless it is one
    /// this volbench writes.
    pub(crate) fn from_json(text: &str, shown: &str) -> Result<Profile, String> {
        #[derive(Deserialize)]
        struct Head {
            schema: Option<String>,
        }
        let head: Head = serde_json::from_str(text)
            .map_err(|e| format!("{shown} is not a volbench profile (JSON: {e})"))?;
        match head.schema.as_deref() {
            Some(PROFILE_SCHEMA) => {}
            Some(s) if s.starts_with("volbench.profile/") => {
                return Err(format!(
                    "{shown} is a profile of schema {s}, newer than this volbench reads \
                     ({PROFILE_SCHEMA}); read it with the volbench that wrote it"
                ));
            }
            Some(s) => {
                return Err(format!(
                    "{shown} is a {s} file, not a profile ({PROFILE_SCHEMA}; `volbench capture` writes one)"
                ));
            }
            None => {
                return Err(format!(
                    "{shown} has no schema: not a volbench profile ({PROFILE_SCHEMA})"
                ));
            }
        }
        let p: Profile = serde_json::from_str(text)
            .map_err(|e| format!("{shown}: bad {PROFILE_SCHEMA}: {e}"))?;
        p.check()
            .map_err(|e| format!("{shown}: not a profile volbench wrote: {e}"))?;
        Ok(p)
    }

    /// Every figure a reader would act on (`run --like`, `--expect-from`,
    /// `compare`, `report`) within what a capture can measure, and every
    /// name printable: a profile outside them is refused whole, never
    /// clamped into shape, and no name can drive a terminal.
    pub(crate) fn check(&self) -> Result<(), String> {
        use crate::result::check::{MAX_CPU_PCT, MAX_IOPS, MAX_MIB_S, MAX_SECONDS, bounded};
        let max_intervals = crate::units::bounds::MAX_CAPTURE_INTERVALS as usize + 2;
        many("intervals", self.intervals.len(), max_intervals)?;
        for (what, n) in [
            ("devices", self.devices.len()),
            ("mounts", self.mounts.len()),
            ("device summaries", self.summary.len()),
            ("mount summaries", self.nfs_summary.len()),
            ("interface summaries", self.net_summary.len()),
        ] {
            many(what, n, MAX_NAMES)?;
        }
        for (what, s) in [
            ("host", self.host.as_str()),
            ("volbench", self.volbench.as_str()),
            ("stopped", self.stopped.as_deref().unwrap_or("")),
        ] {
            name(what, s)?;
        }
        for d in self.devices.iter().chain(&self.mounts) {
            name("device or mount", d)?;
        }
        if self.cpus > 1 << 20 {
            return Err(format!("{} CPUs", self.cpus));
        }
        bounded("started", self.started_unix_s, 1e11)?;
        bounded("interval", self.interval_s, MAX_SECONDS)?;
        bounded("duration", self.duration_s, MAX_SECONDS)?;
        let rates = Limits {
            iops: MAX_IOPS,
            mib_s: MAX_MIB_S,
            cpu: MAX_CPU_PCT,
        };
        for iv in &self.intervals {
            bounded("interval time", iv.t_s, MAX_SECONDS)?;
            bounded("interval duration", iv.duration_s, MAX_SECONDS)?;
            many("devices in an interval", iv.devices.len(), MAX_NAMES)?;
            many("mounts in an interval", iv.nfs.len(), MAX_NAMES)?;
            many("interfaces in an interval", iv.net.len(), MAX_NAMES)?;
            if let Some(c) = &iv.cpu {
                rates.cpu(c)?;
            }
            for d in &iv.devices {
                rates.device(d)?;
            }
            for m in &iv.nfs {
                name("mount", &m.mount)?;
                rates.nfs(&m.rates)?;
            }
            for n in &iv.net {
                rates.net(n)?;
            }
        }
        for d in &self.summary {
            rates.summary(d)?;
        }
        for m in &self.nfs_summary {
            name("mount", &m.mount)?;
            many("NFS operations", m.ops.len(), MAX_NAMES)?;
            for o in &m.ops {
                name("NFS operation", &o.op)?;
                figure_in("NFS ops/s", &o.ops_s, MAX_IOPS)?;
                for v in [o.avg_rtt_ms, o.avg_exe_ms] {
                    bounded("NFS time (ms)", v, MAX_SECONDS * 1e3)?;
                }
                bounded("NFS retransmissions/s", o.retrans_s, MAX_IOPS)?;
            }
        }
        if let Some(c) = &self.cpu_summary {
            for f in [&c.busy_pct, &c.iowait_pct, &c.busiest_cpu_pct] {
                figure_in("CPU %", f, PCT)?;
            }
        }
        for n in &self.net_summary {
            name("interface", &n.name)?;
            figure_in("interface MiB/s", &n.rx_mib_s, MAX_MIB_S)?;
            figure_in("interface MiB/s", &n.tx_mib_s, MAX_MIB_S)?;
        }
        Ok(())
    }
}

/// Names and entries per list a capture writes at most: devices, mounts,
/// interfaces, NFS operations.
const MAX_NAMES: usize = 4096;
/// A name's length at most (a mount point is a path).
const MAX_NAME: usize = 4096;
/// A percentage, with room for the last digit of a division.
const PCT: f64 = 100.001;

fn many(what: &str, n: usize, max: usize) -> Result<(), String> {
    if n > max {
        return Err(format!("{n} {what}, more than {max}"));
    }
    Ok(())
}

/// A name a capture read from the kernel: printable and of bounded length.
fn name(what: &str, s: &str) -> Result<(), String> {
    if s.len() > MAX_NAME {
        return Err(format!("a {what} name of {} bytes", s.len()));
    }
    if s.chars().any(char::is_control) {
        return Err(format!(
            "a {what} name holding a control character ({})",
            crate::units::bounds::one_line(s)
        ));
    }
    Ok(())
}

fn figure_in(what: &str, f: &Figure, max: f64) -> Result<(), String> {
    for v in [f.mean, f.p95, f.peak] {
        crate::result::check::bounded(what, v, max)?;
    }
    Ok(())
}

/// The bounds of a profile's rates.
struct Limits {
    iops: f64,
    mib_s: f64,
    cpu: f64,
}

impl Limits {
    fn device(&self, d: &DeviceSample) -> Result<(), String> {
        use crate::result::check::bounded;
        name("device", &d.name)?;
        let kib = (crate::units::bounds::MAX_BS / 1024) as f64;
        for (w, v, max) in [
            ("read IOPS", d.read_iops, self.iops),
            ("write IOPS", d.write_iops, self.iops),
            ("discard IOPS", d.discard_iops, self.iops),
            ("flush IOPS", d.flush_iops, self.iops),
            ("read MiB/s", d.read_mib_s, self.mib_s),
            ("write MiB/s", d.write_mib_s, self.mib_s),
            ("read KiB", d.read_kib, kib),
            ("write KiB", d.write_kib, kib),
            ("in flight", d.in_flight, self.iops),
            ("read await (ms)", d.read_await_ms, 3.6e6),
            ("write await (ms)", d.write_await_ms, 3.6e6),
            ("busy %", d.busy_pct, PCT),
        ] {
            bounded(&format!("device {}: {w}", d.name), v, max)?;
        }
        Ok(())
    }

    fn summary(&self, d: &DeviceSummary) -> Result<(), String> {
        use crate::result::check::bounded;
        name("device", &d.name)?;
        let kib = (crate::units::bounds::MAX_BS / 1024) as f64;
        for (w, f, max) in [
            ("IOPS", &d.iops, self.iops),
            ("read IOPS", &d.read_iops, self.iops),
            ("write IOPS", &d.write_iops, self.iops),
            ("MiB/s", &d.mib_s, self.mib_s),
            ("read %", &d.read_pct, PCT),
            ("request KiB", &d.request_kib, kib),
            ("in flight", &d.in_flight, self.iops),
            ("await (ms)", &d.await_ms, 3.6e6),
            ("read await (ms)", &d.read_await_ms, 3.6e6),
            ("write await (ms)", &d.write_await_ms, 3.6e6),
        ] {
            figure_in(&format!("device {}: {w}", d.name), f, max)?;
        }
        for (w, v, max) in [
            ("request size spread", d.request_kib_spread, 1e6),
            ("read KiB", d.read_kib, kib),
            ("write KiB", d.write_kib, kib),
            ("discard IOPS", d.discard_iops, self.iops),
            ("flush IOPS", d.flush_iops, self.iops),
        ] {
            bounded(&format!("device {}: {w}", d.name), v, max)?;
        }
        if d.active_intervals > crate::units::bounds::MAX_CAPTURE_INTERVALS as usize + 2 {
            return Err(format!(
                "device {}: {} active intervals",
                d.name, d.active_intervals
            ));
        }
        Ok(())
    }

    fn cpu(&self, c: &HostCpu) -> Result<(), String> {
        for v in [
            c.user_pct,
            c.system_pct,
            c.iowait_pct,
            c.steal_pct,
            c.idle_pct,
            c.busiest_cpu_pct,
        ] {
            crate::result::check::bounded("CPU %", v, self.cpu.min(PCT))?;
        }
        Ok(())
    }

    fn nfs(&self, r: &NfsRates) -> Result<(), String> {
        use crate::result::check::bounded;
        many("NFS operations", r.ops.len(), MAX_NAMES)?;
        bounded("NFS sends/s", r.sends_s, self.iops)?;
        bounded("NFS backlog", r.avg_backlog, self.iops)?;
        for o in &r.ops {
            name("NFS operation", &o.op)?;
            bounded("NFS ops/s", o.ops_s, self.iops)?;
            bounded("NFS round trip (ms)", o.avg_rtt_ms, 3.6e6)?;
            bounded("NFS execution (ms)", o.avg_exe_ms, 3.6e6)?;
            bounded("NFS retransmissions/s", o.retrans_s, self.iops)?;
        }
        Ok(())
    }

    fn net(&self, n: &NetRates) -> Result<(), String> {
        use crate::result::check::bounded;
        name("interface", &n.name)?;
        for v in [n.rx_mib_s, n.tx_mib_s] {
            bounded(&format!("interface {}: MiB/s", n.name), v, self.mib_s)?;
        }
        for v in [n.rx_packets_s, n.tx_packets_s] {
            bounded(&format!("interface {}: packets/s", n.name), v, self.iops)?;
        }
        Ok(())
    }
}
