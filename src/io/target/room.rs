//! Room for several file sets, checked before the first is filled: each
//! set's own check comes only when its turn to fill comes, so without this
//! a job whose second set cannot fit would learn it after the first fill.
//! It only looks (lstat, statvfs): nothing is created or opened for writing.

use crate::io::sys::fs::MetadataExt;
use std::path::Path;

use super::marker::FILE_PREFIX;
use crate::error::{Result, VbError};
use crate::units::format_size;

/// One set to check: its subdirectory of the target, file count and size.
pub(super) type SetNeed<'a> = (&'a str, u32, u64);

/// Refuses (exit 4) when the sets need more than the target's file system
/// has free. What files already sit at a set's names counts as room: a
/// reused set needs nothing, a set refilled in place reuses its blocks.
pub(crate) fn check_room_for_sets(target: &Path, sets: &[SetNeed]) -> Result<()> {
    let mut need = 0u64;
    let mut shown = Vec::new();
    for &(name, files, file_size) in sets {
        let total = file_size.saturating_mul(u64::from(files));
        let dir = target.join(name);
        let held = held_bytes(&dir, files);
        need = need.saturating_add(total.saturating_sub(held));
        shown.push(format!("{name}: {files} x {}", format_size(file_size)));
    }
    let Some(free) = free_bytes(target) else {
        return Ok(());
    };
    if need > free {
        return Err(VbError::target(format!(
            "the file sets ({}) need {} more on the file system of {}, and only {} is free; \
             use smaller sizes",
            shown.join(", "),
            format_size(need),
            target.display(),
            format_size(free)
        )));
    }
    Ok(())
}

/// Bytes already allocated to regular files at the set's names. A link at
/// the directory or a file counts as nothing (the prepare refuses it).
fn held_bytes(dir: &Path, files: u32) -> u64 {
    match crate::io::sys::fs::symlink_metadata(dir) {
        Ok(m) if m.is_dir() => {}
        _ => return 0,
    }
    (0..files)
        .filter_map(|i| {
            crate::io::sys::fs::symlink_metadata(dir.join(format!("{FILE_PREFIX}{i}.dat"))).ok()
        })
        .filter(|m| m.is_file())
        .map(|m| m.blocks().saturating_mul(512))
        .fold(0u64, u64::saturating_add)
}

/// Free space for the target, or the nearest directory above it that
/// exists (the target itself is created by the prepare).
fn free_bytes(target: &Path) -> Option<u64> {
    let at = target.ancestors().find(|p| {
        let p = if p.as_os_str().is_empty() {
            Path::new(".")
        } else {
            p
        };
        p.is_dir()
    })?;
    let at = if at.as_os_str().is_empty() {
        Path::new(".")
    } else {
        at
    };
    let vfs = crate::io::sys::fs::statvfs(at).ok()?;
    Some(vfs.f_bavail.saturating_mul(vfs.f_frsize))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn sets_beyond_the_free_space_are_refused_naming_each_set() {
        let t = tempfile::tempdir().unwrap();
        check_room_for_sets(t.path(), &[("files-1", 1, 4096)]).unwrap();
        let huge = 1u64 << 52;
        let e = check_room_for_sets(
            t.path(),
            &[("files-4", 4, 4096), ("files-1-size-4PiB", 1, huge)],
        )
        .unwrap_err();
        assert_eq!(e.kind, crate::error::Kind::Target);
        assert!(e.message.contains("files-1-size-4PiB: 1 x 4PiB"), "{e}");
        assert!(e.message.contains("only"), "{e}");
    }

    #[test]
    fn files_already_at_a_sets_names_count_as_room() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("files-1");
        std::fs::create_dir(&d).unwrap();
        std::fs::write(d.join("volbench.0.dat"), vec![1u8; 1 << 16]).unwrap();
        assert!(held_bytes(&d, 1) >= 1 << 16);
        assert_eq!(held_bytes(&t.path().join("missing"), 1), 0);
    }
}
