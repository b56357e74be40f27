//! Facts about the machine that belong in every result.

use crate::result::HostInfo;

pub(crate) fn this_host() -> HostInfo {
    let platform = super::platform::platform();
    HostInfo {
        hostname: hostname(),
        kernel: kernel(),
        cpus: std::thread::available_parallelism()
            .map(|n| n.get() as u32)
            .unwrap_or(1),
        memory_bytes: memory_bytes().unwrap_or(0),
        cpu_model: cpu_model().unwrap_or_default(),
        machine: machine().unwrap_or_default(),
        os: os(),
        // The platform's word until the user names one (`--vm-size` wins).
        vm_size: platform.vm_size.clone(),
        net: super::platform::net_buffers(),
        platform,
    }
}

/// "Debian GNU/Linux 12 (bookworm)": os-release's PRETTY_NAME (else NAME
/// and VERSION_ID), printable and capped as a VM size is, as it ends up in
/// table titles.
#[cfg(unix)]
fn os() -> String {
    use std::io::Read;
    // A file of a few hundred bytes; a larger one is not read further.
    let read = |p: &str| {
        let mut t = String::new();
        let f = std::fs::File::open(p).ok()?;
        f.take(64 << 10).read_to_string(&mut t).ok()?;
        Some(t)
    };
    ["/etc/os-release", "/usr/lib/os-release"]
        .iter()
        .find_map(|p| read(p))
        .map_or_else(String::new, |t| os_name(&t))
}

/// Windows names itself in the kernel's version.
#[cfg(windows)]
fn os() -> String {
    kernel()
}

/// The name an os-release file gives, or empty.
#[cfg_attr(windows, allow(dead_code))]
fn os_name(text: &str) -> String {
    let field = |key: &str| {
        text.lines().find_map(|l| {
            let v = l.strip_prefix(key)?.strip_prefix('=')?;
            let v = v.trim().trim_matches(['"', '\'']).trim();
            (!v.is_empty()).then(|| v.to_string())
        })
    };
    let name = field("PRETTY_NAME").or_else(|| {
        let n = field("NAME")?;
        Some(match field("VERSION_ID") {
            Some(v) => format!("{n} {v}"),
            None => n,
        })
    });
    name.map(|n| {
        n.chars()
            .filter(|c| !c.is_control())
            .take(crate::units::bounds::MAX_VM_SIZE_LEN)
            .collect()
    })
    .unwrap_or_default()
}

/// This machine's name.
#[cfg(unix)]
pub(crate) fn hostname() -> String {
    rustix::system::uname()
        .nodename()
        .to_string_lossy()
        .into_owned()
}

/// The kernel's release ("6.1.0-18-amd64").
#[cfg(unix)]
fn kernel() -> String {
    rustix::system::uname()
        .release()
        .to_string_lossy()
        .into_owned()
}

#[cfg(windows)]
pub(crate) use win::{cpu_seconds, hostname, kernel, memory_bytes};

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
#[cfg(unix)]
pub(crate) fn memory_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// User and system CPU seconds this process has used so far.
#[cfg(unix)]
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

/// The same facts from Win32: the DNS host name, the NT version, the
/// physical memory and this process's CPU times.
#[cfg(windows)]
mod win {
    use windows_sys::Win32::Foundation::FILETIME;
    use windows_sys::Win32::System::SystemInformation::{
        ComputerNamePhysicalDnsHostname, GetComputerNameExW, GlobalMemoryStatusEx, MEMORYSTATUSEX,
        OSVERSIONINFOW,
    };
    use windows_sys::Win32::System::Threading::{GetCurrentProcess, GetProcessTimes};

    pub(crate) fn hostname() -> String {
        let mut buf = [0u16; 256];
        let mut len = buf.len() as u32;
        // SAFETY: the buffer and its length in characters are ours.
        let ok = unsafe {
            GetComputerNameExW(ComputerNamePhysicalDnsHostname, buf.as_mut_ptr(), &mut len)
        };
        if ok == 0 {
            return std::env::var("COMPUTERNAME").unwrap_or_default();
        }
        String::from_utf16_lossy(&buf[..(len as usize).min(buf.len())])
    }

    /// "Windows 10.0.20348": RtlGetVersion tells the truth that
    /// GetVersionExW hides from programs without a manifest.
    pub(crate) fn kernel() -> String {
        // SAFETY: the struct is zeroed and carries its own size, as asked.
        unsafe {
            let mut v: OSVERSIONINFOW = std::mem::zeroed();
            v.dwOSVersionInfoSize = std::mem::size_of::<OSVERSIONINFOW>() as u32;
            if windows_sys::Wdk::System::SystemServices::RtlGetVersion(&mut v) != 0 {
                return "Windows".to_string();
            }
            format!(
                "Windows {}.{}.{}",
                v.dwMajorVersion, v.dwMinorVersion, v.dwBuildNumber
            )
        }
    }

    pub(crate) fn memory_bytes() -> Option<u64> {
        // SAFETY: the struct is zeroed and carries its own size, as asked.
        unsafe {
            let mut m: MEMORYSTATUSEX = std::mem::zeroed();
            m.dwLength = std::mem::size_of::<MEMORYSTATUSEX>() as u32;
            (GlobalMemoryStatusEx(&mut m) != 0).then_some(m.ullTotalPhys)
        }
    }

    pub(crate) fn cpu_seconds() -> (f64, f64) {
        let zero = FILETIME {
            dwLowDateTime: 0,
            dwHighDateTime: 0,
        };
        let (mut c, mut e, mut k, mut u) = (zero, zero, zero, zero);
        // SAFETY: the pseudo-handle of this process and four FILETIMEs we own.
        if unsafe { GetProcessTimes(GetCurrentProcess(), &mut c, &mut e, &mut k, &mut u) } == 0 {
            return (0.0, 0.0);
        }
        (secs(u), secs(k))
    }

    /// A FILETIME duration (100 ns units) in seconds.
    fn secs(t: FILETIME) -> f64 {
        ((u64::from(t.dwHighDateTime) << 32) | u64::from(t.dwLowDateTime)) as f64 / 1e7
    }
}

#[cfg(test)]
mod tests {
    use super::os_name;

    #[test]
    fn the_os_is_named_as_os_release_names_it() {
        let debian = "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nNAME=\"Debian GNU/Linux\"\nVERSION_ID=\"12\"\n";
        assert_eq!(os_name(debian), "Debian GNU/Linux 12 (bookworm)");
        // Without PRETTY_NAME: NAME and VERSION_ID; quotes either way.
        assert_eq!(
            os_name("NAME='Rocky Linux'\nVERSION_ID=9.2\n"),
            "Rocky Linux 9.2"
        );
        assert_eq!(os_name("ID=x\n"), "");
        // Control characters go; the name is cut to a table title's length.
        let long = format!("PRETTY_NAME=\"A\u{7}{}\"", "b".repeat(500));
        let n = os_name(&long);
        assert!(n.starts_with("Ab") && n.chars().count() == crate::units::bounds::MAX_VM_SIZE_LEN);
    }
}
