//! Block-device checks: size, and whether something else is using it.

use crate::io::sys::fs::{FileTypeExt, MetadataExt};
use std::path::Path;

#[cfg(unix)]
use crate::io::sys::fs::{Mode, OFlags, SeekFrom};

use crate::error::{Result, VbError};

/// A disk's size: the length Windows reports for it (`fstat` of a disk
/// handle is `IOCTL_DISK_GET_LENGTH_INFO`'s).
#[cfg(windows)]
pub(super) fn size(path: &Path) -> Result<u64> {
    crate::io::sys::fs::metadata(path)
        .map(|m| m.len())
        .map_err(|e| VbError::target(format!("cannot size {}: {e}", path.display())))
}

#[cfg(unix)]
pub(super) fn size(path: &Path) -> Result<u64> {
    let fd = crate::io::sys::fs::open(path, OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty())
        .map_err(|e| {
            VbError::target(format!(
                "cannot open {}: {}",
                path.display(),
                std::io::Error::from(e)
            ))
        })?;
    crate::io::sys::fs::seek(&fd, SeekFrom::End(0)).map_err(|e| {
        VbError::target(format!(
            "cannot size {}: {}",
            path.display(),
            std::io::Error::from(e)
        ))
    })
}

/// Refuses a disk any volume lies on, named with its mount points: the
/// volumes' extents and mount points are Windows' answer to "is it
/// mounted" (`rawdisk::check_disk_write` decides).
#[cfg(windows)]
pub(super) fn refuse_if_in_use(path: &Path) -> Result<()> {
    let meta = crate::io::sys::fs::metadata(path)
        .map_err(|e| VbError::target(format!("cannot inspect {}: {e}", path.display())))?;
    if !meta.file_type().is_block_device() {
        return Ok(());
    }
    let volumes = crate::io::sys::fs::volumes().map_err(|e| {
        VbError::target(format!(
            "cannot list the volumes to check that none lies on {}: {}",
            path.display(),
            std::io::Error::from(e)
        ))
    })?;
    let volumes: Vec<super::rawdisk::VolumeOnDisks> = volumes
        .into_iter()
        .map(|(name, disks, mounts)| super::rawdisk::VolumeOnDisks {
            name,
            disks,
            mounts,
        })
        .collect();
    // st_rdev of a disk is its number (`sys::windows::disk::stat`).
    let disk = u32::try_from(meta.rdev()).unwrap_or(u32::MAX);
    super::rawdisk::check_disk_write(&path.display().to_string(), disk, &volumes)
        .map_err(VbError::refused)
}

/// Refuses a device that is mounted (itself or a partition of it) or held
/// by another kernel user such as LVM or RAID: writing would corrupt it.
#[cfg(unix)]
pub(super) fn refuse_if_in_use(path: &Path) -> Result<()> {
    let meta = crate::io::sys::fs::metadata(path)
        .map_err(|e| VbError::target(format!("cannot inspect {}: {e}", path.display())))?;
    if !meta.file_type().is_block_device() {
        return Ok(());
    }
    let rdev = meta.rdev();
    let (major, minor) = dev_numbers(rdev);
    if let Some(mount_point) = mounted_at(major, minor) {
        return Err(VbError::refused(format!(
            "refusing to write to {}: it is mounted at {mount_point}",
            path.display()
        )));
    }
    // The kernel's own answer: an exclusive open fails while the device (or
    // any partition of it) is mounted or claimed by another driver.
    match crate::io::sys::fs::open(
        path,
        OFlags::RDONLY | OFlags::EXCL | OFlags::CLOEXEC,
        Mode::empty(),
    ) {
        Ok(_) => Ok(()),
        Err(crate::io::sys::io::Errno::BUSY) => Err(VbError::refused(format!(
            "refusing to write to {}: it is in use (mounted, or held by LVM, RAID or another driver)",
            path.display()
        ))),
        Err(e) => Err(VbError::target(format!(
            "cannot open {}: {}",
            path.display(),
            std::io::Error::from(e)
        ))),
    }
}

/// Refuses a regular file that backs a loop device which is mounted or held:
/// writing the file writes that device under its file system's feet, as
/// surely as writing the device itself.
pub(super) fn refuse_if_backing_in_use(path: &Path, dev: u64, ino: u64) -> Result<()> {
    let Ok(entries) = std::fs::read_dir("/sys/block") else {
        return Ok(());
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.starts_with("loop") {
            continue;
        }
        let Ok(backing) = std::fs::read_to_string(entry.path().join("loop/backing_file")) else {
            continue;
        };
        // Compared by identity, not by name: the path may differ (bind
        // mounts, symlinks, a relative --target).
        let same = crate::io::sys::fs::metadata(backing.trim_end_matches('\n'))
            .is_ok_and(|m| m.dev() == dev && m.ino() == ino);
        if !same {
            continue;
        }
        let loop_dev = Path::new("/dev").join(&name);
        if let Err(e) = refuse_if_in_use(&loop_dev) {
            if e.kind == crate::error::Kind::Refused {
                return Err(VbError::refused(format!(
                    "refusing to write to {}: it is the backing file of {}, and {}",
                    path.display(),
                    loop_dev.display(),
                    e.message
                        .split_once(": ")
                        .map_or(e.message.as_str(), |(_, why)| why)
                )));
            }
        }
    }
    Ok(())
}

/// A device number's major and minor.
#[cfg(unix)]
fn dev_numbers(rdev: u64) -> (u32, u32) {
    (libc::major(rdev), libc::minor(rdev))
}

/// Looks up the device (or one of its partitions) in this process's mount table.
#[cfg(unix)]
fn mounted_at(major: u32, minor: u32) -> Option<String> {
    let table = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let whole = format!("{major}:{minor}");
    let sysfs_name = std::fs::read_link(format!("/sys/dev/block/{whole}"))
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()));
    let mut ids = vec![whole];
    if let Some(name) = sysfs_name {
        if let Ok(entries) = std::fs::read_dir(format!("/sys/class/block/{name}")) {
            for entry in entries.flatten() {
                let fname = entry.file_name().to_string_lossy().into_owned();
                if fname.starts_with(&name) {
                    if let Ok(dev) = std::fs::read_to_string(entry.path().join("dev")) {
                        ids.push(dev.trim().to_string());
                    }
                }
            }
        }
    }
    for line in table.lines() {
        let fields: Vec<&str> = line.split(' ').collect();
        if fields.len() > 4 && ids.iter().any(|id| id == fields[2]) {
            return Some(fields[4].to_string());
        }
    }
    None
}
