//! `capture --trace`, the kernel half: a tracefs instance of our own
//! (instances/volbench-PIDNS-PID, so another tracer's settings and buffer
//! are not touched) with block_rq_issue and block_rq_complete enabled and filtered
//! on one device, its `trace_pipe` read into a `trace::Recorder`, and the
//! instance removed at the end. Every write to tracefs goes through the
//! gate (`write_knob`, `mkdir`, `remove_empty_dir`).

use std::io::{ErrorKind, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::trace::{Line, Recorder, Totals, parse_line};
use crate::error::{Result, VbError};
use crate::io::gate;

pub(crate) const TRACEFS: &str = "/sys/kernel/tracing";
const EVENTS: [&str; 2] = ["block_rq_issue", "block_rq_complete"];
/// The fields the parse and the filter rely on, checked in each event's
/// `format` before anything is enabled.
const FIELDS: [&str; 3] = ["dev", "sector", "nr_sector"];
/// The instance's per-CPU buffer: at tens of thousands of requests a
/// second, a second or more of events between two reads.
const BUFFER_KB: &str = "4096";
/// How long the reader sleeps when the pipe is empty: the most a stop or
/// the end waits to be noticed.
const IDLE: Duration = Duration::from_millis(20);

/// The device to trace: its kernel name and its dev_t as the tracepoints
/// carry it (major << 20 | minor, the kernel's own encoding).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Device {
    pub(crate) name: String,
    pub(crate) dev: u64,
}

/// `--device` resolved like the counters' capture does, and its numbers
/// read from sysfs: a missing device or a path that is no block device is
/// bad input, found before tracefs is touched.
pub(crate) fn device(dev: &str) -> Result<Device> {
    let name = super::device_name(dev, Path::new("/sys"))?;
    let numbers = std::fs::read_to_string(format!("/sys/class/block/{name}/dev")).map_err(|e| {
        VbError::input(format!(
            "--device {dev}: no /sys/class/block/{name}/dev ({e})"
        ))
    })?;
    let (major, minor) = numbers
        .trim()
        .split_once(':')
        .and_then(|(a, b)| Some((a.parse::<u64>().ok()?, b.parse::<u64>().ok()?)))
        .ok_or_else(|| {
            VbError::input(format!(
                "--device {dev}: unreadable device numbers {numbers:?}"
            ))
        })?;
    Ok(Device {
        name,
        dev: (major << 20) | minor,
    })
}

#[cfg(unix)]
fn is_mounted(root: &Path) -> bool {
    root.join("instances").is_dir()
}

/// Windows has no tracefs: refused by name before anything is read.
#[cfg(windows)]
pub(crate) fn ensure_mounted() -> Result<()> {
    Err(VbError::input(
        "capture --trace reads Linux's block tracepoints (tracefs): it is not available on Windows",
    ))
}

/// tracefs at `TRACEFS`, mounted if it is not and we are root (said in
/// one line); otherwise an error naming what is missing.
#[cfg(unix)]
pub(crate) fn ensure_mounted() -> Result<()> {
    if !rustix::process::geteuid().is_root() {
        // tracefs is root's alone (mode 700): without root it would read as
        // not mounted, which is not what is missing.
        return Err(VbError::target(
            "capture --trace needs root: the block tracepoints are configured in tracefs, which only root may",
        ));
    }
    let root = Path::new(TRACEFS);
    if is_mounted(root) {
        return Ok(());
    }
    if !root.is_dir() {
        return Err(VbError::target(format!(
            "capture --trace: tracefs is not mounted on {TRACEFS} (as root: mount -t tracefs nodev {TRACEFS})"
        )));
    }
    let (src, dir, fs) = (c"nodev", c"/sys/kernel/tracing", c"tracefs");
    // SAFETY: the three strings are NUL-terminated literals and no data
    // is passed; mount(2) reads nothing else.
    let rc = unsafe { libc::mount(src.as_ptr(), dir.as_ptr(), fs.as_ptr(), 0, std::ptr::null()) };
    if rc != 0 || !is_mounted(root) {
        return Err(VbError::target(format!(
            "capture --trace: tracefs is not mounted on {TRACEFS} and mounting it failed: {}",
            std::io::Error::last_os_error()
        )));
    }
    crate::console::errln!("capture: tracefs was not mounted; mounted it on {TRACEFS}");
    Ok(())
}

/// The CLOCK_MONOTONIC reading the instance's "mono" trace clock shares.
#[cfg(unix)]
fn mono_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    (t.tv_sec as u64) * 1_000_000_000 + t.tv_nsec as u64
}

/// Never reached on Windows (`ensure_mounted` refuses first): the type's clock.
#[cfg(windows)]
fn mono_ns() -> u64 {
    crate::io::phase::now_ns()
}

/// What `sweep_stale` did with each instance a capture no longer running
/// left behind, as a line for the user.
#[cfg(unix)]
pub(crate) fn sweep_stale() -> Vec<String> {
    sweep_stale_in(&Path::new(TRACEFS).join("instances"), pid_ns(), |pid| {
        pid_is_a_trace_capture(pid)
    })
}

/// Never reached on Windows (`ensure_mounted` refuses first): nothing to
/// sweep.
#[cfg(windows)]
pub(crate) fn sweep_stale() -> Vec<String> {
    Vec::new()
}

/// A capture killed with SIGKILL (or a machine that lost power mid-way)
/// cannot remove its instance, which then traces forever at a cost to every
/// I/O of the device. An instance is ours by its name
/// (`volbench-PIDNS-PID`) and stale when it was made in this pid namespace
/// and that process is no longer a `capture --trace` (gone, or the pid
/// reused): its events are disabled and it is removed. tracefs is one for
/// the whole kernel while /proc shows only this namespace, so an instance
/// of another container's capture, whose pid cannot be looked at from
/// here, is never taken for stale (an older volbench's `volbench-PID`
/// neither). One still in use by a live capture is left alone; one that
/// cannot be removed is named.
#[cfg(unix)]
fn sweep_stale_in(instances: &Path, ns: u64, live: impl Fn(u32) -> bool) -> Vec<String> {
    let mut said = Vec::new();
    let Ok(entries) = std::fs::read_dir(instances) else {
        return said;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some((their_ns, pid)) = name
            .to_str()
            .and_then(|n| n.strip_prefix("volbench-"))
            .and_then(|p| p.split_once('-'))
            .and_then(|(n, p)| Some((n.parse::<u64>().ok()?, p.parse::<u32>().ok()?)))
        else {
            continue;
        };
        if their_ns != ns {
            continue;
        }
        if pid == std::process::id() || live(pid) {
            continue;
        }
        let path = e.path();
        match remove_quietly(&path) {
            Ok(()) => said.push(format!(
                "capture: removed the tracefs instance {} that an earlier capture (pid {pid}, \
                 no longer running) left tracing",
                path.display()
            )),
            Err(why) => said.push(format!(
                "capture: the tracefs instance {} an earlier capture (pid {pid}) left could not \
                 be removed ({why}); it still traces: rmdir it as root",
                path.display()
            )),
        }
    }
    said
}

/// This process's pid namespace, by its inode (`/proc/self/ns/pid` reads
/// `pid:[4026531836]`); 0 where it cannot be read, a value no namespace
/// has, so that such a capture sweeps only what another such one left.
fn pid_ns() -> u64 {
    std::fs::read_link("/proc/self/ns/pid")
        .ok()
        .and_then(|l| {
            l.to_str()?
                .strip_prefix("pid:[")?
                .strip_suffix(']')?
                .parse()
                .ok()
        })
        .unwrap_or(0)
}

/// Whether `pid` is a running volbench `capture --trace` (its command line
/// read from /proc: the instance named for it may be in use).
#[cfg(unix)]
fn pid_is_a_trace_capture(pid: u32) -> bool {
    let Ok(cmd) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
        return false;
    };
    let args: Vec<&[u8]> = cmd.split(|b| *b == 0).collect();
    let named = args
        .first()
        .is_some_and(|a| a.ends_with(b"volbench") || a.ends_with(b"volbench.exe"));
    named && args.contains(&&b"capture"[..]) && args.contains(&&b"--trace"[..])
}

/// Our instance: made by `create`, removed by `remove` (or its Drop).
pub(crate) struct Instance {
    pub(crate) path: PathBuf,
}

impl Instance {
    /// The instance's path for this process: its pid namespace and pid,
    /// which together name one process on this kernel.
    pub(crate) fn path_for_pid() -> PathBuf {
        Path::new(TRACEFS).join(format!(
            "instances/volbench-{}-{}",
            pid_ns(),
            std::process::id()
        ))
    }

    /// Checks the events exist with the fields we read, then makes the
    /// instance and sets it up: the mono clock, a larger buffer, both
    /// events filtered on `dev` and enabled.
    pub(crate) fn create(dev: &Device) -> Result<Instance> {
        let events = Path::new(TRACEFS).join("events/block");
        for ev in EVENTS {
            let format = std::fs::read_to_string(events.join(ev).join("format")).map_err(|e| {
                VbError::target(format!(
                    "capture --trace: this kernel has no block/{ev} tracepoint ({e})"
                ))
            })?;
            for f in FIELDS {
                if !format.contains(&format!(" {f};")) {
                    return Err(VbError::target(format!(
                        "capture --trace: block/{ev} has no field {f} on this kernel"
                    )));
                }
            }
        }
        let path = Self::path_for_pid();
        gate::mkdir(&path, 0o755).map_err(|e| {
            VbError::target(format!(
                "capture --trace: cannot make the tracefs instance {}: {e}{}",
                path.display(),
                if e == crate::io::sys::io::Errno::ACCESS || e == crate::io::sys::io::Errno::PERM {
                    " (tracing needs root)"
                } else {
                    ""
                }
            ))
        })?;
        let inst = Instance { path };
        inst.knob("trace_clock", "mono")?;
        inst.knob("buffer_size_kb", BUFFER_KB)?;
        for ev in EVENTS {
            inst.knob(
                &format!("events/block/{ev}/filter"),
                &format!("dev == {}", dev.dev),
            )?;
        }
        Ok(inst)
    }

    fn knob(&self, name: &str, value: &str) -> Result<()> {
        gate::write_knob(&self.path.join(name), value.as_bytes()).map_err(|e| {
            VbError::run(format!(
                "capture --trace: cannot write {value:?} to {}: {e}",
                self.path.join(name).display()
            ))
        })
    }

    fn enable(&self, on: bool) -> Result<()> {
        for ev in EVENTS {
            self.knob(
                &format!("events/block/{ev}/enable"),
                if on { "1" } else { "0" },
            )?;
        }
        Ok(())
    }

    /// Reads the pipe into `rec` until `duration` has passed or `stop` is
    /// set, then disables the events and reads what is left. `tracing` is
    /// called once the events are enabled (not before: a user, or a test,
    /// who starts the workload on that word must find every request of it
    /// traced). Returns the totals and whether a stop ended it.
    pub(crate) fn record<W: Write>(
        &self,
        device: &str,
        duration: Duration,
        stop: &AtomicBool,
        out: W,
        limit: usize,
        tracing: impl FnOnce(),
    ) -> Result<(Totals, bool)> {
        // Not the gate's business: trace_pipe exists and is only read.
        let mut pipe = crate::io::sys::fs::open(
            self.path.join("trace_pipe"),
            crate::io::sys::fs::OFlags::RDONLY
                | crate::io::sys::fs::OFlags::NONBLOCK
                | crate::io::sys::fs::OFlags::CLOEXEC,
            crate::io::sys::fs::Mode::empty(),
        )
        .map(std::fs::File::from)
        .map_err(|e| VbError::run(format!("capture --trace: cannot open trace_pipe: {e}")))?;
        let start_ns = mono_ns();
        let start_unix_ns = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let werr =
            |e: std::io::Error| VbError::run(format!("capture --trace: writing the trace: {e}"));
        let mut rec = Recorder::new(out, device, start_ns, start_unix_ns, limit).map_err(werr)?;
        self.enable(true)?;
        tracing();
        let began = Instant::now();
        let mut buf = vec![0u8; 1 << 16];
        let mut tail = Vec::new();
        let mut ending = false;
        let stopped = loop {
            let done = stop.load(Ordering::Relaxed) || began.elapsed() >= duration;
            if done && !ending {
                // Nothing new is recorded from here; what the buffer holds
                // is still read.
                self.enable(false)?;
                ending = true;
            }
            match pipe.read(&mut buf) {
                Ok(0) => {}
                Ok(n) => {
                    tail.extend_from_slice(&buf[..n]);
                    feed(&mut rec, &mut tail).map_err(werr)?;
                    continue;
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => {
                    return Err(VbError::run(format!(
                        "capture --trace: reading trace_pipe: {e}"
                    )));
                }
            }
            if ending {
                break stop.load(Ordering::Relaxed);
            }
            std::thread::sleep(IDLE);
        };
        tail.push(b'\n');
        feed(&mut rec, &mut tail).map_err(werr)?;
        Ok((rec.finish().map_err(werr)?, stopped))
    }
}

/// Hands the complete lines of `tail` to the recorder and keeps the rest.
fn feed<W: Write>(rec: &mut Recorder<W>, tail: &mut Vec<u8>) -> std::io::Result<()> {
    let Some(last) = tail.iter().rposition(|b| *b == b'\n') else {
        return Ok(());
    };
    for line in tail[..last].split(|b| *b == b'\n') {
        // The kernel writes ASCII; a line that is not UTF-8 is no event.
        let Ok(line) = std::str::from_utf8(line) else {
            continue;
        };
        match parse_line(line) {
            Line::Event(e) => rec.event(&e)?,
            Line::Lost(n) => rec.totals.lost += n,
            Line::Other => {}
        }
    }
    tail.drain(..=last);
    Ok(())
}

/// Disables the events and removes the instance at `path`. The kernel
/// refuses (EBUSY) while a file of it is open, as when a second signal
/// comes while the reader still holds trace_pipe: retried for a second.
#[cfg(unix)]
const EBUSY: i32 = libc::EBUSY;
/// ERROR_BUSY (never reached: no instance is made on Windows).
#[cfg(windows)]
const EBUSY: i32 = 170;

pub(crate) fn remove(path: &Path) {
    if let Err(why) = remove_quietly(path) {
        crate::console::errln!(
            "capture: cannot remove the tracefs instance {}: {why}; remove it with rmdir",
            path.display()
        );
    }
}

/// `remove`, the failure returned instead of said.
fn remove_quietly(path: &Path) -> std::result::Result<(), String> {
    for ev in EVENTS {
        let _ = gate::write_knob(&path.join(format!("events/block/{ev}/enable")), b"0");
    }
    for _ in 0..50 {
        match gate::remove_empty_dir(path) {
            Ok(()) => return Ok(()),
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(()),
            Err(e) if e.raw_os_error() == Some(EBUSY) => std::thread::sleep(IDLE),
            Err(e) => return Err(e.to_string()),
        }
    }
    Err("it is busy".into())
}

impl Drop for Instance {
    fn drop(&mut self) {
        remove(&self.path);
    }
}

#[cfg(test)]
#[cfg(unix)]
mod tests {
    use super::*;

    #[test]
    fn stale_instances_of_ours_are_removed_and_live_or_foreign_ones_kept() {
        let d = tempfile::tempdir().unwrap();
        for n in [
            "volbench-77-4000000001",
            "volbench-77-4000000002",
            // Another pid namespace's (a container's): its pid cannot be
            // looked at from here, so it is never taken for stale.
            "volbench-78-4000000003",
            // An older volbench's name, whose namespace is not known.
            "volbench-4000000004",
            "volbench-x",
            "other-7",
        ] {
            std::fs::create_dir(d.path().join(n)).unwrap();
        }
        let said = sweep_stale_in(d.path(), 77, |pid| pid == 4_000_000_002);
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(said[0].contains("pid 4000000001"), "{said:?}");
        assert!(!d.path().join("volbench-77-4000000001").exists());
        for kept in [
            "volbench-77-4000000002",
            "volbench-78-4000000003",
            "volbench-4000000004",
            "volbench-x",
            "other-7",
        ] {
            assert!(d.path().join(kept).exists(), "{kept}");
        }
    }

    #[test]
    fn the_pid_namespace_is_read() {
        assert_ne!(pid_ns(), 0, "/proc/self/ns/pid");
    }

    #[test]
    fn this_test_is_no_trace_capture() {
        assert!(!pid_is_a_trace_capture(std::process::id()));
        assert!(!pid_is_a_trace_capture(u32::MAX));
    }
}
