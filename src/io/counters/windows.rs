//! Windows: the counters Perfmon shows, read from the calls Perfmon's own
//! providers use. CPU per processor from `NtQuerySystemInformation`
//! (`SystemProcessorPerformanceInformation`); the physical disks under the
//! target's volume (`IOCTL_VOLUME_GET_VOLUME_DISK_EXTENTS`) and their
//! `IOCTL_DISK_PERFORMANCE` (transfers, bytes, time in requests, idle
//! time); the network interfaces from `GetIfTable2`. `perf.rs` turns each
//! into the Linux sample, so the rates and the diagnosis are shared.
//!
//! A counter that cannot be read is named in `RunCounters::unavailable`
//! with the reason (Wine, for one, has no disk performance counters): it
//! is left out, never reported as a zero that would read as idle.

use std::path::Path;
use std::time::Instant;

use windows_sys::Win32::Foundation::{CloseHandle, HANDLE, INVALID_HANDLE_VALUE};
use windows_sys::Win32::NetworkManagement::IpHelper::{FreeMibTable, GetIfTable2, MIB_IF_TABLE2};
use windows_sys::Win32::Storage::FileSystem::{
    CreateFileW, FILE_SHARE_READ, FILE_SHARE_WRITE, GetVolumePathNameW, OPEN_EXISTING,
};
use windows_sys::Win32::System::IO::DeviceIoControl;
use windows_sys::Win32::System::Ioctl::{DISK_PERFORMANCE, IOCTL_DISK_PERFORMANCE};

use super::perf::{self, DiskPerformance, ProcessorTimes};
use super::windows_smb::{self, ShareCounters};
use super::{Sample, Sampler};
use crate::result::counters::{DeviceInfo, DeviceRole, InterfaceInfo, RunCounters};

/// CTL_CODE(IOCTL_VOLUME_BASE, 0, METHOD_BUFFERED, FILE_ANY_ACCESS).
const IOCTL_VOLUME_GET_VOLUME_DISK_EXTENTS: u32 = 0x0056_0000;
/// `SystemProcessorPerformanceInformation`.
const PROCESSOR_PERFORMANCE: i32 = 8;
/// IF_TYPE_SOFTWARE_LOOPBACK, and IfOperStatusUp.
const LOOPBACK: u32 = 24;
const UP: i32 = 1;
/// More processors than any Windows machine has (a processor group holds 64).
const MAX_PROCESSORS: usize = 2048;

/// The physical disks' open handles (queried, never read or written), and
/// the share's SMB client counters when the target is on a share.
pub(crate) struct Sources {
    disks: Vec<(String, usize)>,
    smb: Option<ShareCounters>,
}

impl Drop for Sources {
    fn drop(&mut self) {
        for (_, h) in &self.disks {
            // SAFETY: each handle was opened by `open_device` and is closed once.
            unsafe {
                CloseHandle(*h as HANDLE);
            }
        }
    }
}

impl Sampler {
    /// The disks and interfaces under `target`, and what cannot be read.
    pub(crate) fn for_target(target: &Path) -> Self {
        let host = super::super::host::this_host();
        let mut unavailable = Vec::new();
        if let Err(why) = processor_times() {
            unavailable.push(format!("cpu: {why}"));
        }
        let mut disks = Vec::new();
        match disks_under(target) {
            Ok(found) => {
                for n in found {
                    let name = format!("PhysicalDrive{n}");
                    let opened = open_device(&format!(r"\\.\{name}"))
                        .and_then(|h| disk_performance(h).map(|_| h).inspect_err(|_| close(h)));
                    match opened {
                        Ok(h) => disks.push((name, h as usize)),
                        Err(why) => unavailable.push(format!("disk {name}: {why}")),
                    }
                }
            }
            Err(why) => unavailable.push(format!("physical disks: {why}")),
        }
        let interfaces = match interface_rows() {
            Ok(rows) => rows
                .into_iter()
                .map(|r| InterfaceInfo {
                    name: r.name,
                    speed_mbit: r.speed_mbit,
                })
                .collect(),
            Err(why) => {
                unavailable.push(format!("network: {why}"));
                Vec::new()
            }
        };
        // A target on a share: the SMB client's figures for it (no disks
        // of ours lie under it).
        let smb = windows_smb::share_of(&target.to_string_lossy()).and_then(|share| {
            ShareCounters::open(&share)
                .inspect_err(|why| unavailable.push(format!("smb {share}: {why}")))
                .ok()
        });
        let devices = disks
            .iter()
            .enumerate()
            .map(|(i, (name, _))| DeviceInfo {
                name: name.clone(),
                role: if i == 0 {
                    DeviceRole::Target
                } else {
                    DeviceRole::Below
                },
                via: if i == 0 {
                    String::new()
                } else {
                    "the target's volume spans it too".to_string()
                },
            })
            .collect();
        Self {
            header: RunCounters {
                host: host.hostname,
                cpus: host.cpus,
                devices,
                interfaces,
                unavailable,
                ..RunCounters::default()
            },
            win: Sources { disks, smb },
        }
    }

    pub(crate) fn sample(&self) -> Sample {
        let disks = self
            .win
            .disks
            .iter()
            .filter_map(|(n, h)| {
                let p = disk_performance(*h as HANDLE).ok()?;
                Some((n.clone(), perf::disk_stat(&p)))
            })
            .collect();
        let net = interface_rows()
            .unwrap_or_default()
            .into_iter()
            .filter(|r| self.header.interfaces.iter().any(|i| i.name == r.name))
            .map(|r| (r.name, r.stat))
            .collect();
        Sample {
            at: Instant::now(),
            cpu: processor_times().ok().and_then(|t| perf::cpu_sample(&t)),
            disks,
            net,
            nfs: None,
            smb: self
                .win
                .smb
                .as_ref()
                .and_then(|c| Some(vec![(c.share.clone(), c.sample()?)]))
                .unwrap_or_default(),
        }
    }
}

/// The raw layout of SYSTEM_PROCESSOR_PERFORMANCE_INFORMATION, with the
/// fields windows-sys calls `Reserved1` named (DPC and interrupt time).
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct RawProcessor {
    idle: i64,
    kernel: i64,
    user: i64,
    dpc: i64,
    interrupt: i64,
    interrupt_count: u32,
}

fn processor_times() -> Result<Vec<ProcessorTimes>, String> {
    let mut buf = vec![RawProcessor::default(); MAX_PROCESSORS];
    let mut len = 0u32;
    // SAFETY: the buffer is ours, its size in bytes given; the call writes
    // whole entries and says how many bytes it wrote.
    let status = unsafe {
        windows_sys::Wdk::System::SystemInformation::NtQuerySystemInformation(
            PROCESSOR_PERFORMANCE,
            buf.as_mut_ptr().cast(),
            (buf.len() * std::mem::size_of::<RawProcessor>()) as u32,
            &mut len,
        )
    };
    if status != 0 {
        return Err(format!(
            "NtQuerySystemInformation(SystemProcessorPerformanceInformation) failed (NTSTATUS {status:#x})"
        ));
    }
    let n = (len as usize / std::mem::size_of::<RawProcessor>()).min(buf.len());
    let ticks = |v: i64| v.max(0) as u64;
    Ok(buf[..n]
        .iter()
        .map(|r| ProcessorTimes {
            idle: ticks(r.idle),
            kernel: ticks(r.kernel),
            user: ticks(r.user),
            dpc: ticks(r.dpc),
            interrupt: ticks(r.interrupt),
        })
        .collect())
}

fn wide(s: &str) -> Vec<u16> {
    s.encode_utf16().chain(std::iter::once(0)).collect()
}

fn last_error(call: &str) -> String {
    format!("{call} failed ({})", std::io::Error::last_os_error())
}

/// Opens a device for queries only (no read or write access), following
/// nothing and creating nothing (OPEN_EXISTING).
fn open_device(path: &str) -> Result<HANDLE, String> {
    let p = wide(path);
    // SAFETY: a NUL-terminated path we own; no security attributes, no template.
    let h = unsafe {
        CreateFileW(
            p.as_ptr(),
            0,
            FILE_SHARE_READ | FILE_SHARE_WRITE,
            std::ptr::null(),
            OPEN_EXISTING,
            0,
            std::ptr::null_mut(),
        )
    };
    if h == INVALID_HANDLE_VALUE {
        return Err(last_error(&format!("opening {path}")));
    }
    Ok(h)
}

fn close(h: HANDLE) {
    // SAFETY: a handle `open_device` returned, closed once.
    unsafe {
        CloseHandle(h);
    }
}

/// The numbers of the physical disks the target's volume lies on. A
/// target on a share (`\\server\share`) has none: it is the network's.
fn disks_under(target: &Path) -> Result<Vec<u32>, String> {
    let t = target.to_string_lossy();
    if t.starts_with(r"\\") && !t.starts_with(r"\\?\") && !t.starts_with(r"\\.\") {
        return Ok(Vec::new());
    }
    let p = wide(&t);
    let mut root = [0u16; 1024];
    // SAFETY: a NUL-terminated path and a buffer with its length in characters.
    if unsafe { GetVolumePathNameW(p.as_ptr(), root.as_mut_ptr(), root.len() as u32) } == 0 {
        return Err(last_error("GetVolumePathNameW"));
    }
    let root = String::from_utf16_lossy(&root[..root.iter().position(|&c| c == 0).unwrap_or(0)]);
    // "C:\" -> "\\.\C:": the volume itself, not its root directory.
    let volume = format!(r"\\.\{}", root.trim_end_matches('\\'));
    let h = open_device(&volume)?;
    // The answer: a u32 count, then 24-byte extents from offset 8 whose
    // first u32 is the disk number.
    let mut buf = [0u64; 1 + 3 * 64];
    let mut got = 0u32;
    // SAFETY: an output buffer we own with its size in bytes; no input.
    let ok = unsafe {
        DeviceIoControl(
            h,
            IOCTL_VOLUME_GET_VOLUME_DISK_EXTENTS,
            std::ptr::null(),
            0,
            buf.as_mut_ptr().cast(),
            std::mem::size_of_val(&buf) as u32,
            &mut got,
            std::ptr::null_mut(),
        )
    };
    let err = last_error("IOCTL_VOLUME_GET_VOLUME_DISK_EXTENTS");
    close(h);
    if ok == 0 {
        return Err(format!("{volume}: {err}"));
    }
    let count = (buf[0] as u32 as usize).min(64);
    let mut disks: Vec<u32> = (0..count).map(|i| buf[1 + 3 * i] as u32).collect();
    disks.dedup();
    Ok(disks)
}

fn disk_performance(h: HANDLE) -> Result<DiskPerformance, String> {
    // SAFETY: zeroed plain data, filled by the call with its own size.
    let mut p: DISK_PERFORMANCE = unsafe { std::mem::zeroed() };
    let mut got = 0u32;
    // SAFETY: an output struct we own with its size; no input.
    let ok = unsafe {
        DeviceIoControl(
            h,
            IOCTL_DISK_PERFORMANCE,
            std::ptr::null(),
            0,
            (&mut p as *mut DISK_PERFORMANCE).cast(),
            std::mem::size_of::<DISK_PERFORMANCE>() as u32,
            &mut got,
            std::ptr::null_mut(),
        )
    };
    if ok == 0 {
        return Err(last_error("IOCTL_DISK_PERFORMANCE"));
    }
    let u = |v: i64| v.max(0) as u64;
    Ok(DiskPerformance {
        bytes_read: u(p.BytesRead),
        bytes_written: u(p.BytesWritten),
        read_time: u(p.ReadTime),
        write_time: u(p.WriteTime),
        idle_time: u(p.IdleTime),
        read_count: u64::from(p.ReadCount),
        write_count: u64::from(p.WriteCount),
        query_time: u(p.QueryTime),
    })
}

struct IfRow {
    name: String,
    speed_mbit: Option<f64>,
    stat: super::net::NetStat,
}

/// The interfaces worth watching, as on Linux: not loopback, up, and not
/// a filter driver's copy of another (each name once).
fn interface_rows() -> Result<Vec<IfRow>, String> {
    let mut table: *mut MIB_IF_TABLE2 = std::ptr::null_mut();
    // SAFETY: the call allocates the table and stores its address in ours.
    let err = unsafe { GetIfTable2(&mut table) };
    if err != 0 || table.is_null() {
        return Err(format!(
            "GetIfTable2 failed ({})",
            std::io::Error::from_raw_os_error(err as i32)
        ));
    }
    let mut out: Vec<IfRow> = Vec::new();
    // SAFETY: the table holds NumEntries rows from its first, and is freed
    // once, after the last read.
    unsafe {
        let n = (*table).NumEntries as usize;
        let rows = std::slice::from_raw_parts((*table).Table.as_ptr(), n);
        for r in rows {
            let filter = r.InterfaceAndOperStatusFlags._bitfield & 0b10 != 0;
            if r.Type == LOOPBACK || r.OperStatus != UP || filter {
                continue;
            }
            let len = r
                .Alias
                .iter()
                .position(|&c| c == 0)
                .unwrap_or(r.Alias.len());
            let name = String::from_utf16_lossy(&r.Alias[..len]);
            if name.is_empty() || out.iter().any(|o| o.name == name) {
                continue;
            }
            out.push(IfRow {
                name,
                speed_mbit: perf::speed_mbit(r.ReceiveLinkSpeed.max(r.TransmitLinkSpeed)),
                stat: perf::net_stat(
                    r.InOctets,
                    [r.InUcastPkts, r.InNUcastPkts],
                    r.OutOctets,
                    [r.OutUcastPkts, r.OutNUcastPkts],
                ),
            });
        }
        FreeMibTable(table.cast());
    }
    Ok(out)
}
