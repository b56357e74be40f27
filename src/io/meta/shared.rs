//! A tree shared by many hosts (`run --ops --hosts` with one target): the
//! shared root holds one part per host, `hostN`, each a volbench tree with
//! its own marker and lock. The root is made if missing; a root holding
//! anything but such parts is someone else's directory and refused, as a
//! single host's non-empty foreign directory is. `clean` on the root cleans
//! every part.

use std::path::Path;

use crate::io::sys::fs::FileType;
use crate::io::sys::io::Errno;

use super::{Cleaned, errno_text, open_root, read_marker, scan_dir, tree::Name};
use crate::error::{Result, VbError};

/// Matches `input::hosts::trees::PART_PREFIX` (io sits below input).
const PART_PREFIX: &[u8] = b"host";

/// `hostN`, N a plain decimal index.
fn is_part(name: &[u8]) -> bool {
    name.strip_prefix(PART_PREFIX).is_some_and(|d| {
        !d.is_empty()
            && d.len() <= 10
            && d.iter().all(u8::is_ascii_digit)
            && (d.len() == 1 || d[0] != b'0')
    })
}

/// Before a host prepares its part `ROOT/hostN`: makes ROOT if missing
/// (the other hosts may be making it at the same moment) and refuses a
/// ROOT that is a link, not a directory, or holds anything but parts.
pub(crate) fn prepare_root(part: &Path) -> Result<()> {
    let Some(root) = part.parent().filter(|p| !p.as_os_str().is_empty()) else {
        return Err(VbError::input(format!(
            "{} has no parent directory to share",
            part.display()
        )));
    };
    match crate::io::gate::mkdir(root, 0o755) {
        Ok(()) | Err(Errno::EXIST) => {}
        Err(e) => {
            return Err(VbError::target(format!(
                "cannot create {}: {}",
                root.display(),
                errno_text(e)
            )));
        }
    }
    let fd = open_root(root)?;
    let mut foreign = None;
    scan_dir(&fd, |name, _| {
        if name != b"." && name != b".." && !is_part(name) && foreign.is_none() {
            foreign = Some(String::from_utf8_lossy(name).into_owned());
        }
    })
    .map_err(|e| VbError::target(format!("cannot list {}: {}", root.display(), errno_text(e))))?;
    if let Some(f) = foreign {
        return Err(VbError::refused(format!(
            "refusing {}: it holds {f}, and a tree shared by many hosts holds only their parts \
             (host0, host1...); give an empty or new directory, or put {{host}} in --target \
             for a tree per host",
            root.display()
        )));
    }
    Ok(())
}

/// `clean` on a directory that is not itself a tree but holds hosts' parts
/// only: cleans each part, then removes each part's emptied directory.
/// None when `path` is not such a root (the caller cleans it as a tree).
pub(crate) fn clean_parts(path: &Path) -> Result<Option<Cleaned>> {
    let fd = open_root(path)?;
    if read_marker(&fd, path)?.is_some() {
        return Ok(None);
    }
    let mut parts: Vec<Vec<u8>> = Vec::new();
    let mut others = false;
    scan_dir(&fd, |name, ft| {
        if name == b"." || name == b".." {
            return;
        }
        if is_part(name) && matches!(ft, FileType::Directory | FileType::Unknown) {
            parts.push(name.to_vec());
        } else {
            others = true;
        }
    })
    .map_err(|e| VbError::target(format!("cannot list {}: {}", path.display(), errno_text(e))))?;
    if others || parts.is_empty() {
        return Ok(None);
    }
    parts.sort();
    let mut out = Cleaned::default();
    for p in &parts {
        let name = String::from_utf8_lossy(p).into_owned();
        let done = super::clean(&path.join(&name))?;
        out.files += done.files;
        out.dirs += done.dirs;
        let emptied = done.left.is_empty();
        out.left
            .extend(done.left.into_iter().map(|l| format!("{name}/{l}")));
        if emptied {
            let mut n = Name::default();
            n.push(p);
            match crate::io::gate::rmdir_at(&fd, n.as_cstr()) {
                Ok(()) => out.dirs += 1,
                // Something of someone else's in it: it stays, and is reported.
                Err(Errno::NOTEMPTY) => out.left.push(format!("{name}/")),
                Err(Errno::NOENT) => {}
                Err(e) => {
                    return Err(VbError::run(format!(
                        "cannot remove {}/{name}: {}",
                        path.display(),
                        errno_text(e)
                    )));
                }
            }
        }
    }
    Ok(Some(out))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn only_host_and_an_index_name_a_part() {
        assert!(is_part(b"host0"));
        assert!(is_part(b"host17"));
        assert!(!is_part(b"host"));
        assert!(!is_part(b"host01"));
        assert!(!is_part(b"hostx"));
        assert!(!is_part(b"d0"));
        assert!(!is_part(b".volbench-tree.json"));
    }

    #[test]
    fn a_shared_root_is_made_and_a_foreign_one_refused() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("shared");
        prepare_root(&root.join("host0")).unwrap();
        assert!(root.is_dir());
        std::fs::create_dir(root.join("host3")).unwrap();
        prepare_root(&root.join("host1")).unwrap();
        std::fs::write(root.join("notes.txt"), b"mine").unwrap();
        let e = prepare_root(&root.join("host1")).unwrap_err();
        assert_eq!(e.exit_code(), crate::error::exit::REFUSED);
        assert!(e.to_string().contains("notes.txt"), "{e}");
        let link = d.path().join("link");
        std::os::unix::fs::symlink(&root, &link).unwrap();
        let e = prepare_root(&link.join("host0")).unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
    }
}
