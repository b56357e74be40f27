//! Reading the small text files users hand us (suites, hosts files): a
//! regular file or a pipe, at most a stated size, UTF-8, without a BOM.
//! Anything else (a device such as /dev/zero, a directory, a socket) is
//! refused up front, so a careless path can neither hang nor exhaust memory.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use crate::io::sys::fd::OwnedFd;
use std::io::Read;
use std::path::Path;

use crate::io::sys::fs::{FileType, Mode, OFlags};

use crate::error::{Result, VbError};
use crate::units::format_size;

/// Reads `path` as text for `what` (e.g. "suite file"), at most `cap` bytes.
pub(crate) fn read_text(path: &Path, what: &str, cap: u64) -> Result<String> {
    let shown = path.display();
    let fail = |e: String| VbError::input(format!("cannot read {what} {shown}: {e}"));
    // O_NONBLOCK: opening a FIFO without a writer must not wait forever; it
    // is cleared again before reading so a pipe with a writer reads normally.
    let fd: OwnedFd = crate::io::sys::fs::open(
        path,
        OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY,
        Mode::empty(),
    )
    .map_err(|e| fail(std::io::Error::from(e).to_string()))?;
    let st =
        crate::io::sys::fs::fstat(&fd).map_err(|e| fail(std::io::Error::from(e).to_string()))?;
    let kind = FileType::from_raw_mode(st.st_mode);
    // A regular file's length, to read it into one allocation: growing
    // the buffer by doubling would hold up to twice a 256 MiB result.
    let mut expected = 0usize;
    match kind {
        FileType::RegularFile => {
            let len = u64::try_from(st.st_size).unwrap_or(0);
            expected = usize::try_from(len.min(cap)).unwrap_or(0);
            if len > cap {
                return Err(VbError::input(format!(
                    "{what} {shown} is {}; at most {} is read",
                    format_size(len),
                    format_size(cap)
                )));
            }
        }
        FileType::Fifo => {}
        other => {
            return Err(VbError::input(format!(
                "{what} {shown} is a {}, not a regular file or a pipe",
                describe(other)
            )));
        }
    }
    crate::io::sys::fs::fcntl_setfl(&fd, OFlags::empty())
        .map_err(|e| fail(std::io::Error::from(e).to_string()))?;
    let mut bytes = Vec::with_capacity(expected.saturating_add(1));
    // One byte past the cap tells a stream that is too long (or a file that
    // grew since fstat) from one that fits.
    std::fs::File::from(fd)
        .take(cap.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| fail(e.to_string()))?;
    if bytes.len() as u64 > cap {
        return Err(VbError::input(format!(
            "{what} {shown} is longer than {}, the most that is read",
            format_size(cap)
        )));
    }
    let mut text = String::from_utf8(bytes).map_err(|e| {
        VbError::input(format!(
            "{what} {shown} is not UTF-8 text (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        ))
    })?;
    // In place: a copy would hold the file twice.
    let bom = text.len() - strip_bom(&text).len();
    text.drain(..bom);
    Ok(text)
}

/// Editors on some systems start UTF-8 files with a byte-order mark; it is
/// not part of the first name or key.
pub(crate) fn strip_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

fn describe(kind: FileType) -> &'static str {
    match kind {
        FileType::Directory => "directory",
        FileType::CharacterDevice => "character device",
        FileType::BlockDevice => "block device",
        FileType::Socket => "socket",
        FileType::Symlink => "symbolic link",
        _ => "special file",
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    #[test]
    fn devices_and_directories_are_refused_without_reading() {
        let e = read_text(Path::new("/dev/zero"), "suite file", 1 << 20).unwrap_err();
        assert!(e.to_string().contains("character device"), "{e}");
        let e = read_text(Path::new("/"), "hosts file", 1 << 20).unwrap_err();
        assert!(e.to_string().contains("directory"), "{e}");
    }

    #[test]
    fn a_file_over_the_cap_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("big");
        std::fs::write(&p, vec![b'a'; 2000]).unwrap();
        let e = read_text(&p, "suite file", 1000).unwrap_err();
        assert!(e.to_string().contains("at most 1000B"), "{e}");
        std::fs::write(&p, "\u{feff}vm1\n").unwrap();
        assert_eq!(read_text(&p, "hosts file", 1000).unwrap(), "vm1\n");
        std::fs::write(&p, b"\xff\xfe").unwrap();
        assert!(
            read_text(&p, "hosts file", 1000)
                .unwrap_err()
                .to_string()
                .contains("UTF-8")
        );
    }

    #[test]
    fn a_fifo_without_a_writer_does_not_hang() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("fifo");
        crate::io::sys::fs::mknodat(
            crate::io::sys::fs::CWD,
            &p,
            FileType::Fifo,
            Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        // No writer: reads as empty at once instead of blocking in open().
        assert_eq!(read_text(&p, "hosts file", 1000).unwrap(), "");
    }
}
