//! Facts about the machine that belong in every result.

use crate::result::HostInfo;

pub(crate) fn this_host() -> HostInfo {
    let uname = rustix::system::uname();
    let platform = super::platform::platform();
    HostInfo {
        hostname: uname.nodename().to_string_lossy().into_owned(),
        kernel: uname.release().to_string_lossy().into_owned(),
        cpus: std::thread::available_parallelism()
            .map(|n| n.get() as u32)
            .unwrap_or(1),
        memory_bytes: memory_bytes().unwrap_or(0),
        cpu_model: cpu_model().unwrap_or_default(),
        machine: machine().unwrap_or_default(),
        // The platform's word until the user names one (`--vm-size` wins).
        vm_size: platform.vm_size.clone(),
        net: super::platform::net_buffers(),
        platform,
    }
}

/// "Amazon EC2 m6i.4xlarge", "Microsoft Corporation Virtual Machine": the
/// DMI vendor and product name, which is all a closed network leaves to
/// tell machines apart (no metadata service is asked). Printable ASCII
/// only and capped, as it ends up in tables.
pub(crate) fn machine() -> Option<String> {
    let read = |f: &str| {
        std::fs::read_to_string(format!("/sys/class/dmi/id/{f}"))
            .ok()
            .map(|s| s.split_whitespace().collect::<Vec<_>>().join(" "))
            .filter(|s| !s.is_empty())
    };
    let v: Vec<String> = [read("sys_vendor"), read("product_name")]
        .into_iter()
        .flatten()
        .collect();
    let s: String = v
        .join(" ")
        .chars()
        .filter(|c| c.is_ascii_graphic() || *c == ' ')
        .take(128)
        .collect();
    (!s.is_empty()).then_some(s)
}

/// The processor's name, for `compare` to say when two results ran on
/// different hardware. The first "model name" line: hosts have one model.
pub(crate) fn cpu_model() -> Option<String> {
    let text = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("model name"))?;
    let name = line
        .split_once(':')?
        .1
        .split_whitespace()
        .collect::<Vec<_>>();
    (!name.is_empty()).then(|| name.join(" "))
}

/// Physical memory, from /proc/meminfo.
pub(crate) fn memory_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// User and system CPU seconds this process has used so far.
pub(crate) fn cpu_seconds() -> (f64, f64) {
    // SAFETY: getrusage fills the zeroed struct we pass and reads nothing else.
    let usage = unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        if libc::getrusage(libc::RUSAGE_SELF, &mut u) != 0 {
            return (0.0, 0.0);
        }
        u
    };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (secs(usage.ru_utime), secs(usage.ru_stime))
}
