//! Where a target may be: under `/dev`, `/proc` or `/sys` only an existing
//! block device, and never a file set or tree on a kernel file system
//! (devtmpfs is the host's memory among its device nodes).

use std::path::{Component, Path, PathBuf};

use crate::error::{Result, VbError};
#[cfg(unix)]
use crate::io::mounts::{self, Backing};

const KERNEL_ROOTS: [&str; 3] = ["/dev", "/proc", "/sys"];
/// tmpfs by convention: a target there is memory, run and named as such.
const MEMORY_UNDER_DEV: &str = "/dev/shm";

/// `path` made absolute and its `.` and `..` resolved by its text alone:
/// what the user typed, judged before anything is looked up.
pub fn normalise(path: &Path) -> PathBuf {
    let mut out = if path.is_absolute() {
        PathBuf::new()
    } else {
        std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"))
    };
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// The kernel root (`/dev`, `/proc`, `/sys`) a path lies in, by its text.
pub fn kernel_root(path: &Path) -> Option<&'static str> {
    let p = normalise(path);
    if p.starts_with(MEMORY_UNDER_DEV) {
        return None;
    }
    KERNEL_ROOTS.into_iter().find(|r| p.starts_with(r))
}

/// Refuses a target in a kernel root unless it is an existing block
/// device: a mistyped device name must not become a directory in `/dev`.
pub(super) fn check_target_path(path: &Path, existing_block_device: bool) -> Result<()> {
    if existing_block_device {
        return Ok(());
    }
    let Some(root) = kernel_root(path) else {
        return Ok(());
    };
    let shown = crate::units::bounds::one_line(&path.display().to_string());
    if std::fs::symlink_metadata(path).is_err() {
        return Err(VbError::target(format!(
            "no such device: {shown} does not exist, and volbench makes no files or directories \
             under {root}; check the name (lsblk lists the block devices)"
        )));
    }
    Err(VbError::target(format!(
        "no such device: {shown} is not a block device, and a file set under {root} would \
         live among the kernel's files, not on storage; name a block device, or a directory on the \
         storage"
    )))
}

/// Refuses a file set or tree whose directory (or, before it exists, its
/// nearest parent) is on a kernel file system, judged by the file system
/// itself: a link into `/dev` is caught too. Checked when planning and
/// again when preparing.
#[cfg(unix)]
pub fn refuse_kernel_fs(dir: &Path) -> Result<()> {
    if let Some(Backing::Pseudo(fs)) = mounts::backing(dir) {
        return Err(VbError::target(format!(
            "no such device: {} is on {fs}, a kernel file system, not storage; volbench makes \
             no file set there (name a block device, or a directory on the storage)",
            crate::units::bounds::one_line(&dir.display().to_string())
        )));
    }
    Ok(())
}

/// Windows: a path cannot reach Linux's kernel file systems (`/dev`,
/// `/proc`, `/sys` are refused by name as Linux paths before this), and the
/// device namespace (`\\.\`) is refused as a raw device.
#[cfg(windows)]
pub fn refuse_kernel_fs(_dir: &Path) -> Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_roots_are_found_by_text() {
        assert_eq!(kernel_root(Path::new("/dev/nvme9n1")), Some("/dev"));
        assert_eq!(kernel_root(Path::new("/dev")), Some("/dev"));
        assert_eq!(kernel_root(Path::new("/proc/self/x")), Some("/proc"));
        assert_eq!(kernel_root(Path::new("/sys")), Some("/sys"));
        assert_eq!(kernel_root(Path::new("/mnt/../dev/x")), Some("/dev"));
        assert_eq!(kernel_root(Path::new("/dev/../mnt/x")), None);
        assert_eq!(kernel_root(Path::new("/device/x")), None);
        assert_eq!(kernel_root(Path::new("/dev/shm/vb")), None);
        assert_eq!(kernel_root(Path::new("/mnt/data")), None);
    }

    #[test]
    fn only_an_existing_block_device_passes_in_dev() {
        let e = check_target_path(Path::new("/dev/nvme9n1-no-such"), false).unwrap_err();
        assert_eq!(e.kind, crate::error::Kind::Target);
        assert!(e.message.starts_with("no such device"), "{e}");
        assert!(check_target_path(Path::new("/dev"), false).is_err());
        assert!(check_target_path(Path::new("/dev/null"), false).is_err());
        assert!(check_target_path(Path::new("/dev/sda"), true).is_ok());
        assert!(check_target_path(Path::new("/mnt/data"), false).is_ok());
    }

    #[test]
    fn a_set_on_proc_or_sys_is_refused_by_file_system() {
        assert!(refuse_kernel_fs(Path::new("/proc/no-such-dir")).is_err());
        assert!(refuse_kernel_fs(Path::new("/sys/kernel")).is_err());
        assert!(refuse_kernel_fs(&std::env::temp_dir()).is_ok());
    }
}
