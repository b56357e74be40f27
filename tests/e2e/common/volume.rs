//! An emulated cloud volume for end-to-end tests: a loop device over an
//! image file with a provisioned IOPS / bandwidth cap enforced by the
//! kernel's block throttling, so a test knows what the right answer is (a
//! volume capped at 500 read IOPS must read as 500).
//!
//! The cap lives in a cgroup (v1 `blkio.throttle.*`, or v2 `io.max` when v1
//! blkio is not mounted) and applies to the processes in it; `command` starts
//! a program already inside, so it is capped from its first I/O. Throttling
//! applies to direct I/O; buffered writes escape it (they are issued later by
//! the kernel's writeback, outside the cgroup on v1).
//!
//! Every volume has a unique name (process id and a counter), so tests can
//! run in parallel, and `Drop` undoes everything: unmount, detach, remove
//! the cgroup and the image.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// blk-throttle's slice: the grain at which it grants a cap's budget
/// (`DFL_THROTL_SLICE`, 100 ms).
const THROTTLE_SLICE_S: f64 = 0.1;

/// The share of a cap a window of `secs` may be off by: the throttle keeps
/// one slice of history when it trims its slice, so budget left unused
/// (a submitter starved of CPU) is spent later, up to two slices of it,
/// and a burst may pass two slices' budget over the cap (the kernel's
/// comment: "allowing deviation that is less than two slices").
pub fn throttle_grain(secs: f64) -> f64 {
    2.0 * THROTTLE_SLICE_S / secs
}

/// A run's measured phase's length, seconds, from its result.
pub fn measured_secs(run: &serde_json::Value) -> f64 {
    run["phases"]
        .as_array()
        .and_then(|ps| ps.iter().find(|p| p["name"] == "measure"))
        .and_then(|p| p["duration_s"].as_f64())
        .unwrap_or_else(|| panic!("no measured phase's duration in {run}"))
}

/// What to create. Caps of 0 mean "no cap".
#[derive(Debug, Clone, Default)]
pub struct VolumeSpec {
    pub size: u64,
    pub read_iops: u64,
    pub write_iops: u64,
    pub read_bps: u64,
    pub write_bps: u64,
    /// Make an ext4 file system and mount it (for directory targets).
    pub ext4: bool,
    /// Bytes of page cache (and memory) the capped programs may hold, 0
    /// for no limit: a file larger than this is read from the device on
    /// every pass unless readers share their passes.
    pub cache: u64,
    /// The image in memory (/dev/shm) instead of on the disk: the caps are
    /// then the device's only limit, whatever else is writing to the disk
    /// the image would share. For tests that compare two tools at the caps;
    /// not for those that measure a cache (the image's pages are memory).
    pub in_memory: bool,
}

impl VolumeSpec {
    pub fn new(size: u64) -> Self {
        Self {
            size,
            ..Self::default()
        }
    }
    pub fn read_iops(mut self, n: u64) -> Self {
        self.read_iops = n;
        self
    }
    pub fn write_iops(mut self, n: u64) -> Self {
        self.write_iops = n;
        self
    }
    pub fn read_bps(mut self, n: u64) -> Self {
        self.read_bps = n;
        self
    }
    pub fn write_bps(mut self, n: u64) -> Self {
        self.write_bps = n;
        self
    }
    pub fn ext4(mut self) -> Self {
        self.ext4 = true;
        self
    }
    pub fn cache(mut self, bytes: u64) -> Self {
        self.cache = bytes;
        self
    }
    pub fn in_memory(mut self) -> Self {
        self.in_memory = true;
        self
    }
}

/// Which cgroup interface carries the cap.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Throttle {
    /// cgroup v1 blkio controller mounted at this directory.
    V1(PathBuf),
    /// cgroup v2 hierarchy root with the io controller available.
    V2(PathBuf),
}

const V1_BLKIO: &str = "/sys/fs/cgroup/blkio";
const V1_MEMORY: &str = "/sys/fs/cgroup/memory";
const V2_ROOTS: [&str; 2] = ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"];

fn find_throttle() -> Result<Throttle, String> {
    let v1 = Path::new(V1_BLKIO);
    if v1.join("blkio.throttle.read_iops_device").exists() {
        return Ok(Throttle::V1(v1.into()));
    }
    for root in V2_ROOTS {
        let root = Path::new(root);
        // On a hybrid layout the io controller may be bound to v1 and then
        // absent from the v2 root's list: that root cannot throttle.
        if let Ok(list) = std::fs::read_to_string(root.join("cgroup.controllers")) {
            if list.split_whitespace().any(|c| c == "io") {
                return Ok(Throttle::V2(root.into()));
            }
        }
    }
    Err(
        "no block throttling: neither cgroup v1 blkio.throttle nor a cgroup v2 io controller"
            .into(),
    )
}

/// Why an emulated volume cannot be made here, or None if it can. Tests call
/// this first and `common::skip` with the reason.
pub fn unavailable() -> Option<String> {
    if !super::is_root() {
        return Some("needs root (loop devices and cgroups)".into());
    }
    if !Path::new("/dev/loop-control").exists() {
        return Some("no /dev/loop-control (loop module not loaded?)".into());
    }
    if which("losetup").is_none() {
        return Some("losetup not installed (package mount)".into());
    }
    find_throttle().err()
}

fn which(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/sbin:/usr/bin:/sbin:/bin".into());
    std::env::split_paths(&path)
        .chain(["/usr/sbin".into(), "/sbin".into()])
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

static COUNTER: AtomicU32 = AtomicU32::new(0);

pub struct Volume {
    pub name: String,
    /// The loop device, e.g. /dev/loop3.
    pub device: PathBuf,
    /// "major:minor" of the device, as the throttle files want it.
    pub majmin: String,
    /// The cgroup directory holding the cap.
    pub cgroup: PathBuf,
    /// Where the file system is mounted, with `ext4`.
    pub mountpoint: Option<PathBuf>,
    /// cgroup v1's separate memory cgroup holding `cache`, when asked for.
    memory: Option<PathBuf>,
    pub image: PathBuf,
    // Holds the image and the mount point; removed last.
    dir: Option<tempfile::TempDir>,
    attached: bool,
    cgroup_made: bool,
    // One capped volume at a time per test binary: two I/O-heavy runs on a
    // 2-core machine starve each other's rate generators and loop workers,
    // and the answers these tests check are exact. Released on drop, after
    // the fields above (Rust drops fields in declaration order, after Drop).
    _serial: std::sync::MutexGuard<'static, ()>,
}

static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn run_tool(cmd: &mut Command) -> Result<String, String> {
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{cmd:?} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

impl Volume {
    /// Creates the volume. `tag` names it in cgroup and file names (letters,
    /// digits, `-`, `_`), so a leftover after a crash says which test made it.
    pub fn create(tag: &str, spec: &VolumeSpec) -> Result<Volume, String> {
        let throttle = find_throttle()?;
        let tag: String = tag
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .take(40)
            .collect();
        let name = format!(
            "volbench-test-{}-{}-{tag}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        // The image goes on a real disk file system (not tmpfs) so the loop
        // device can use direct I/O on it and skip a second page cache; an
        // in-memory one is tmpfs's own pages, cached once.
        let shm = Path::new("/dev/shm");
        let place = if spec.in_memory && shm.is_dir() {
            shm.to_path_buf()
        } else {
            std::env::var_os("VOLBENCH_VOLUME_DIR").map_or_else(std::env::temp_dir, PathBuf::from)
        };
        let dir = tempfile::Builder::new()
            .prefix(&format!("{name}-"))
            .tempdir_in(&place)
            .map_err(|e| format!("cannot make a temporary directory: {e}"))?;
        let image = dir.path().join("volume.img");
        let mut vol = Volume {
            name,
            device: PathBuf::new(),
            majmin: String::new(),
            cgroup: PathBuf::new(),
            mountpoint: None,
            memory: None,
            image: image.clone(),
            dir: Some(dir),
            attached: false,
            cgroup_made: false,
            // A test that panicked while holding the lock leaves it poisoned;
            // the volume it guarded was cleaned up by its own Drop.
            _serial: SERIAL.lock().unwrap_or_else(|p| p.into_inner()),
        };
        // From here on, an early return drops `vol`, which cleans up what
        // was made so far.
        let f = std::fs::File::create(&image)
            .map_err(|e| format!("create {}: {e}", image.display()))?;
        f.set_len(spec.size)
            .map_err(|e| format!("size {}: {e}", image.display()))?;
        drop(f);
        let direct = if place == shm {
            "--direct-io=off"
        } else {
            "--direct-io=on"
        };
        let dev = run_tool(
            Command::new("losetup")
                .args(["-f", "--show", direct])
                .arg(&image),
        )?;
        vol.device = PathBuf::from(dev);
        vol.attached = true;
        let rdev = std::fs::metadata(&vol.device)
            .map_err(|e| format!("stat {}: {e}", vol.device.display()))?
            .rdev();
        vol.majmin = format!("{}:{}", libc::major(rdev), libc::minor(rdev));

        if spec.ext4 {
            run_tool(
                Command::new("mkfs.ext4")
                    .args(["-q", "-F"])
                    .arg(&vol.device),
            )?;
            let mnt = vol
                .dir
                .as_ref()
                .map(|d| d.path().join("mnt"))
                .unwrap_or_default();
            std::fs::create_dir(&mnt).map_err(|e| format!("mkdir {}: {e}", mnt.display()))?;
            run_tool(Command::new("mount").arg(&vol.device).arg(&mnt))?;
            vol.mountpoint = Some(mnt);
        }

        vol.cgroup = match &throttle {
            Throttle::V1(root) | Throttle::V2(root) => root.join(&vol.name),
        };
        std::fs::create_dir(&vol.cgroup)
            .map_err(|e| format!("mkdir {}: {e}", vol.cgroup.display()))?;
        vol.cgroup_made = true;
        vol.set_caps(&throttle, spec)?;
        if spec.cache > 0 {
            vol.limit_cache(&throttle, spec.cache)?;
        }
        Ok(vol)
    }

    fn set_caps(&self, throttle: &Throttle, spec: &VolumeSpec) -> Result<(), String> {
        let write = |file: &str, value: String| {
            let path = self.cgroup.join(file);
            std::fs::write(&path, &value)
                .map_err(|e| format!("write '{value}' to {}: {e}", path.display()))
        };
        let mm = &self.majmin;
        match throttle {
            Throttle::V1(_) => {
                let caps = [
                    ("blkio.throttle.read_iops_device", spec.read_iops),
                    ("blkio.throttle.write_iops_device", spec.write_iops),
                    ("blkio.throttle.read_bps_device", spec.read_bps),
                    ("blkio.throttle.write_bps_device", spec.write_bps),
                ];
                for (file, v) in caps {
                    if v > 0 {
                        write(file, format!("{mm} {v}"))?;
                    }
                }
            }
            Throttle::V2(root) => {
                // The parent must delegate the io controller to its children;
                // it may already do so, in which case the write is a no-op.
                let _ = std::fs::write(root.join("cgroup.subtree_control"), "+io");
                let mut line = mm.clone();
                for (key, v) in [
                    ("riops", spec.read_iops),
                    ("wiops", spec.write_iops),
                    ("rbps", spec.read_bps),
                    ("wbps", spec.write_bps),
                ] {
                    if v > 0 {
                        line.push_str(&format!(" {key}={v}"));
                    }
                }
                write("io.max", line)?;
            }
        }
        Ok(())
    }

    /// The page cache limit: v1 has a memory hierarchy of its own, v2
    /// limits the volume's cgroup itself.
    fn limit_cache(&mut self, throttle: &Throttle, bytes: u64) -> Result<(), String> {
        let (dir, file) = match throttle {
            Throttle::V1(_) => {
                let dir = Path::new(V1_MEMORY).join(&self.name);
                std::fs::create_dir(&dir).map_err(|e| format!("mkdir {}: {e}", dir.display()))?;
                self.memory = Some(dir.clone());
                (dir, "memory.limit_in_bytes")
            }
            Throttle::V2(root) => {
                let _ = std::fs::write(root.join("cgroup.subtree_control"), "+memory");
                (self.cgroup.clone(), "memory.max")
            }
        };
        std::fs::write(dir.join(file), bytes.to_string())
            .map_err(|e| format!("write {bytes} to {}: {e}", dir.join(file).display()))
    }

    /// A command that runs `program` inside the volume's cgroup (and its
    /// memory cgroup, with a cache limit on v1): a shell moves itself in,
    /// then execs the program, so no I/O escapes the cap.
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut cmd = Command::new("sh");
        let memory = self.memory.as_ref().map(|m| m.join("cgroup.procs"));
        cmd.arg("-c")
            .arg(r#"echo $$ > "$0" && { [ "$1" = - ] || echo $$ > "$1"; } && shift && exec "$@""#)
            .arg(self.cgroup.join("cgroup.procs"))
            .arg(memory.unwrap_or_else(|| PathBuf::from("-")))
            .arg(program);
        cmd
    }

    /// The volbench binary under test, inside the cap.
    pub fn volbench(&self) -> Command {
        self.command(env!("CARGO_BIN_EXE_volbench"))
    }

    pub fn device_str(&self) -> &str {
        self.device.to_str().unwrap_or_default()
    }
}

/// Retries `f` until it succeeds or `limit` has passed; returns the last error.
fn retry(limit: Duration, mut f: impl FnMut() -> Result<(), String>) -> Result<(), String> {
    let deadline = Instant::now() + limit;
    loop {
        match f() {
            Ok(()) => return Ok(()),
            Err(e) if Instant::now() >= deadline => return Err(e),
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

impl Drop for Volume {
    fn drop(&mut self) {
        // Order matters: the file system holds the device, the device holds
        // the image. Failures are reported, not raised: Drop may run while a
        // test is already panicking.
        //
        // The capped program has exited and been reaped by now, but the
        // kernel finishes some of its teardown afterwards: an io_uring
        // instance drops its registered files from a work queue, and its
        // worker threads leave the cgroup asynchronously. So the mount can be
        // busy and the cgroup non-empty for a moment: retry for a bounded
        // time, then fall back to a lazy unmount that completes on its own.
        if let Some(mnt) = self.mountpoint.take() {
            let umount = || run_tool(Command::new("umount").arg(&mnt)).map(drop);
            if let Err(e) = retry(Duration::from_secs(5), umount) {
                eprintln!("volume {}: {e}; unmounting lazily", self.name);
                let _ = run_tool(Command::new("umount").arg("-l").arg(&mnt));
            }
        }
        // On a device still open, -d sets autoclear: the kernel detaches it
        // when the last user closes it.
        if self.attached {
            if let Err(e) = run_tool(Command::new("losetup").arg("-d").arg(&self.device)) {
                eprintln!("volume {}: {e}", self.name);
            }
        }
        if self.cgroup_made {
            let rmdir = || {
                std::fs::remove_dir(&self.cgroup)
                    .map_err(|e| format!("rmdir {}: {e}", self.cgroup.display()))
            };
            if let Err(e) = retry(Duration::from_secs(5), rmdir) {
                eprintln!("volume {}: {e}", self.name);
            }
        }
        if let Some(memory) = self.memory.take() {
            let rmdir = || {
                std::fs::remove_dir(&memory).map_err(|e| format!("rmdir {}: {e}", memory.display()))
            };
            if let Err(e) = retry(Duration::from_secs(5), rmdir) {
                eprintln!("volume {}: {e}", self.name);
            }
        }
        // The image and mount point go with the temporary directory.
        drop(self.dir.take());
    }
}

/// The volume for `test`, or None after a loud skip when this machine
/// cannot make one (no root, no loop devices, no block throttling).
pub fn create_or_skip(test: &str, spec: VolumeSpec) -> Option<Volume> {
    if let Some(why) = unavailable() {
        crate::common::skip(test, &why);
        return None;
    }
    match Volume::create(test, &spec) {
        Ok(v) => Some(v),
        Err(e) => panic!("{test}: cannot create the emulated volume: {e}"),
    }
}
