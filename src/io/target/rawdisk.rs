//! Windows raw disks as targets: which device-namespace paths are disks and
//! which are volumes, and whether a disk may be written given the volumes
//! Windows reports on it. Pure decisions over what the Win32 calls found
//! (`io::sys::fs::volumes`), so they are tested on every platform.

// On Linux only the tests use it: these are Windows' device names.
#![cfg_attr(not(windows), allow(dead_code))]

/// What a path in Windows' device namespace names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Raw {
    /// `\\.\PhysicalDriveN`: a whole disk, with its number.
    Disk(u32),
    /// Anything else there (`\\.\C:`, `\\?\Volume{...}`, `\\?\GLOBALROOT\...`):
    /// a volume, which is mounted by definition, or a device volbench does
    /// not know.
    Other,
}

/// The disk number of `\\.\PhysicalDriveN` (`//./physicaldrive3` too:
/// Windows' device names ignore case), else `Other` for a device path.
/// Only meaningful for a path `winname::raw_device` accepted.
pub(crate) fn classify(path: &str) -> Raw {
    let p = path.replace('/', "\\");
    let rest = p
        .strip_prefix("\\\\.\\")
        .or_else(|| p.strip_prefix("\\\\?\\"))
        .unwrap_or(&p);
    const DRIVE: &str = "PHYSICALDRIVE";
    let upper = rest.to_ascii_uppercase();
    match upper.strip_prefix(DRIVE) {
        // Digits only, no sign or leading zero ("PhysicalDrive01" is no
        // device Windows makes): the number is the name.
        Some(n) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
            if n.len() > 1 && n.starts_with('0') {
                return Raw::Other;
            }
            n.parse().map_or(Raw::Other, Raw::Disk)
        }
        _ => Raw::Other,
    }
}

/// One volume Windows knows: its `\\?\Volume{GUID}\` name, the disks its
/// extents lie on, and where it is mounted (drive letters, folders).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct VolumeOnDisks {
    pub(crate) name: String,
    pub(crate) disks: Vec<u32>,
    pub(crate) mounts: Vec<String>,
}

/// May disk `disk` be written? Not if any volume lies on it: a mounted one
/// would have its file system destroyed under it, and one with no drive
/// letter or folder (a recovery or EFI partition) is still one Windows
/// mounts on first access and refuses raw writes into. The message names
/// the volume and where it is mounted.
pub(crate) fn check_disk_write(
    path: &str,
    disk: u32,
    volumes: &[VolumeOnDisks],
) -> Result<(), String> {
    let shown = crate::units::bounds::one_line(path);
    let Some(v) = volumes.iter().find(|v| v.disks.contains(&disk)) else {
        return Ok(());
    };
    let name = crate::units::bounds::one_line(&v.name);
    if v.mounts.is_empty() {
        return Err(format!(
            "refusing to write to {shown}: volume {name} lies on it (it has no drive letter, \
             but Windows mounts a file system on it when it is used); remove its partitions \
             first (diskpart: select disk {disk}, clean) if this disk is for benchmarking"
        ));
    }
    let at = v
        .mounts
        .iter()
        .map(|m| crate::units::bounds::one_line(m))
        .collect::<Vec<_>>()
        .join(", ");
    Err(format!(
        "refusing to write to {shown}: it holds volume {name}, mounted at {at}; writing the \
         disk would destroy that file system, even with --allow-overwrite"
    ))
}

/// Why a volume path is no target for writes: it is a mounted file system.
pub(crate) fn volume_refusal(path: &str) -> String {
    format!(
        "target {} is a volume (a drive letter or volume name in the device namespace), a \
         mounted file system: volbench neither writes one (even with --allow-overwrite) nor \
         reads one raw; name a directory on it (volbench makes its own files there), or a disk \
         with no volumes (\\\\.\\PhysicalDriveN)",
        crate::units::bounds::one_line(path)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vol(name: &str, disks: &[u32], mounts: &[&str]) -> VolumeOnDisks {
        VolumeOnDisks {
            name: name.into(),
            disks: disks.to_vec(),
            mounts: mounts.iter().map(|m| m.to_string()).collect(),
        }
    }

    #[test]
    fn physical_drives_are_told_from_volumes_and_other_devices() {
        assert_eq!(classify(r"\\.\PhysicalDrive0"), Raw::Disk(0));
        assert_eq!(classify(r"\\.\physicaldrive12"), Raw::Disk(12));
        assert_eq!(classify("//./PhysicalDrive3"), Raw::Disk(3));
        assert_eq!(classify(r"\\?\PhysicalDrive2"), Raw::Disk(2));
        for p in [
            r"\\.\C:",
            r"\\?\Volume{0b1f2a3c-0000-0000-0000-100000000000}",
            r"\\?\GLOBALROOT\Device\Harddisk0\Partition1",
            r"\\.\PhysicalDrive",
            r"\\.\PhysicalDrive-1",
            r"\\.\PhysicalDrive01",
            r"\\.\PhysicalDrive1a",
            r"\\.\PhysicalDrive99999999999",
        ] {
            assert_eq!(classify(p), Raw::Other, "{p}");
        }
    }

    #[test]
    fn a_disk_with_no_volume_on_it_may_be_written() {
        let vols = [
            vol(r"\\?\Volume{a}\", &[0], &[r"C:\"]),
            vol(r"\\?\Volume{b}\", &[0, 2], &[r"D:\"]),
        ];
        assert_eq!(check_disk_write(r"\\.\PhysicalDrive1", 1, &vols), Ok(()));
        assert_eq!(check_disk_write(r"\\.\PhysicalDrive1", 1, &[]), Ok(()));
    }

    #[test]
    fn a_disk_holding_a_mounted_volume_is_refused_naming_the_volume_and_its_mounts() {
        // A volume spanning two disks (a spanned or striped dynamic volume)
        // holds both.
        let vols = [
            vol(r"\\?\Volume{a}\", &[0], &[r"C:\"]),
            vol(r"\\?\Volume{b}\", &[0, 2], &[r"D:\", r"C:\mnt\data\"]),
        ];
        let e = check_disk_write(r"\\.\PhysicalDrive2", 2, &vols).unwrap_err();
        assert!(
            e.contains(r"\\.\PhysicalDrive2")
                && e.contains(r"Volume{b}")
                && e.contains(r"D:\, C:\mnt\data\")
                && e.contains("--allow-overwrite"),
            "{e}"
        );
        let e = check_disk_write(r"\\.\PhysicalDrive0", 0, &vols).unwrap_err();
        assert!(e.contains(r"Volume{a}") && e.contains(r"C:\"), "{e}");
    }

    #[test]
    fn a_volume_without_a_mount_point_still_keeps_its_disk_from_writes() {
        let vols = [vol(r"\\?\Volume{efi}\", &[3], &[])];
        let e = check_disk_write(r"\\.\PhysicalDrive3", 3, &vols).unwrap_err();
        assert!(
            e.contains(r"Volume{efi}") && e.contains("no drive letter") && e.contains("disk 3"),
            "{e}"
        );
    }

    #[test]
    fn hostile_volume_names_stay_on_one_line() {
        let vols = [vol("\\\\?\\Volume{x}\n\u{1b}[2J", &[0], &["C:\\\nfake"])];
        let e = check_disk_write(r"\\.\PhysicalDrive0", 0, &vols).unwrap_err();
        assert!(!e.contains('\n') && !e.contains('\u{1b}'), "{e:?}");
    }

    #[test]
    fn a_volume_is_refused_with_what_to_name_instead() {
        let e = volume_refusal(r"\\.\C:");
        assert!(e.contains(r"\\.\C:") && e.contains("PhysicalDriveN"), "{e}");
    }
}
