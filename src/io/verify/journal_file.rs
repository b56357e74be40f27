//! The journal's file: its header (parsed and checked as untrusted input),
//! its counter tables read back and checked, and the few system calls that
//! make, allocate and (after a failed creation) remove it. Kept together so
//! the one place that creates files can take them over whole.
//!
//! Layout: a 4 KiB header (one line of JSON, space-padded), then one u32
//! per block (little-endian), the counter of its last *acknowledged* write,
//! then one u32 per block, the counter of its last *issued* write.

use crate::io::sys::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};

use crate::io::sys::fs::{AtFlags, FileType, Mode, OFlags};
use crate::io::sys::io::Errno;
use serde::{Deserialize, Serialize};

/// Counters with the top bit set are never written: it marks the special values.
pub(crate) const BUSY: u32 = 1 << 31;
/// A block whose content volbench does not know (a device, a foreign file):
/// not checked until written.
pub(crate) const UNKNOWN: u32 = BUSY - 1;
/// A block of volbench's sectors written by an earlier run whose counter is
/// not known: its sectors must be well formed and in place, any counter.
pub(crate) const FORMED: u32 = BUSY - 2;
use crate::error::{Result, VbError};
use crate::io::gate::owner::SetIdentity;
use crate::io::workload::Layout;
use crate::units::bounds;

pub(crate) const HEADER_BYTES: usize = 4096;
pub(crate) const MAGIC: &str = "volbench-journal/v2";
/// Journals of volbench before set identities were recorded.
const OLD_MAGIC: &str = "volbench-journal/v1";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Header {
    pub(crate) journal: String,
    pub(crate) files: u32,
    pub(crate) file_size: u64,
    pub(crate) unit: u64,
    pub(crate) blocks: u64,
    /// The set's data format (`DataSpec::fill_tag`).
    pub(crate) format: String,
    /// The set (one fill of it) whose writes the journal records.
    pub(crate) set: SetIdentity,
    /// The highest counter any write recorded here reached: no entry may
    /// exceed it. Stored before the entries that raise it reach the file.
    pub(crate) high: u32,
    /// Closed after every write it records had completed and been synced.
    pub(crate) clean: bool,
    /// With `clean`: the xxh3 of both tables, so a damaged entry is found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) sum: Option<String>,
}

impl Header {
    pub(crate) fn layout(&self) -> Layout {
        Layout {
            nfiles: self.files,
            file_size: self.file_size,
        }
    }

    /// The header as written: one line of JSON padded to HEADER_BYTES.
    pub(crate) fn bytes(&self) -> Result<Vec<u8>> {
        let mut text = serde_json::to_string(self).map_err(|e| VbError::run(e.to_string()))?;
        text.push('\n');
        if text.len() > HEADER_BYTES {
            return Err(VbError::run(format!(
                "a journal header of {} bytes does not fit in {HEADER_BYTES}",
                text.len()
            )));
        }
        let mut buf = vec![b' '; HEADER_BYTES];
        buf[..text.len()].copy_from_slice(text.as_bytes());
        Ok(buf)
    }
}

/// The file size a journal of `blocks` blocks has.
pub(crate) fn file_len(blocks: u64) -> Option<u64> {
    blocks.checked_mul(8)?.checked_add(HEADER_BYTES as u64)
}

/// Checks the first HEADER_BYTES of a journal file `len` bytes long: Ok
/// with its header, or why it is not a journal volbench can use.
pub(crate) fn parse_header(bytes: &[u8], len: u64) -> std::result::Result<Header, String> {
    let head = &bytes[..bytes.len().min(HEADER_BYTES)];
    let text = std::str::from_utf8(head)
        .ok()
        .map(|t| t.trim_end_matches([' ', '\n', '\0']))
        .unwrap_or("");
    let header: Header = match serde_json::from_str::<Header>(text) {
        Ok(h) if h.journal == MAGIC => h,
        _ if text.contains(OLD_MAGIC) => {
            return Err(
                "it was written by an older volbench (journal/v1 names no file set, \
                        so it cannot be told from another set's)"
                    .into(),
            );
        }
        _ => return Err("it is not a volbench journal".into()),
    };
    let expect_blocks = header
        .file_size
        .checked_div(header.unit)
        .map(|_| header.file_size.div_ceil(header.unit))
        .and_then(|b| b.checked_mul(header.files as u64));
    if header.unit < 512
        || header.files == 0
        || expect_blocks != Some(header.blocks)
        || header.blocks.saturating_mul(4) > bounds::MAX_VERIFY_MAP_BYTES
    {
        return Err(format!(
            "its header claims {} blocks of {} bytes over {} files of {} bytes, which do not \
             add up or pass the {} block bound",
            header.blocks,
            header.unit,
            header.files,
            header.file_size,
            bounds::MAX_VERIFY_MAP_BYTES / 4
        ));
    }
    if !plausible(header.high) || header.high >= FORMED {
        return Err(format!(
            "its header claims a highest counter of {:#x}, which no write makes",
            header.high
        ));
    }
    if file_len(header.blocks) != Some(len) {
        return Err(format!(
            "it is {len} bytes long, and its header needs {} (truncated or damaged)",
            file_len(header.blocks).unwrap_or(0)
        ));
    }
    Ok(header)
}

/// A value a journal entry can hold: a counter (0 the fill, 1..FORMED), or
/// FORMED / UNKNOWN. The top bit is the block map's busy flag, never stored.
#[inline]
pub(crate) fn plausible(c: u32) -> bool {
    c <= UNKNOWN
}

/// Checks one entry against the header: why it cannot be, or None.
pub(crate) fn check_entry(c: u32, high: u32) -> Option<String> {
    if !plausible(c) {
        Some(format!("a counter of {c:#x}, which no write makes"))
    } else if c > high && c != FORMED && c != UNKNOWN {
        Some(format!(
            "a counter of {c}, beyond the {high} writes its header says any block had"
        ))
    } else {
        None
    }
}

/// The refusal of a journal file, left untouched.
pub(crate) fn refuse(path: &Path, why: &str) -> VbError {
    VbError::refused(format!(
        "refusing journal {}: {why}; it is left as it is (give another --journal path)",
        path.display()
    ))
}

pub(crate) fn io_err(path: &Path, what: &str, e: impl Into<std::io::Error>) -> VbError {
    VbError::target(format!(
        "cannot {what} journal {}: {}",
        path.display(),
        e.into()
    ))
}

/// Opens an existing journal file as a regular file reached without
/// following a symbolic link, and reads and checks its header.
pub(crate) fn read_header(path: &Path, write: bool) -> Result<Option<(OwnedFd, Header)>> {
    use crate::io::gate::{OwnFileError, setdir::Access};
    let access = if write {
        Access::ReadWrite
    } else {
        Access::Read
    };
    // Written into only when it is a journal of ours: regular, one link
    // (a hard link would carry the writes to a file elsewhere), this user's.
    let proof = |st: &crate::io::sys::fs::Stat| {
        if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
            Err("not a regular file")
        } else if write && st.st_nlink != 1 {
            Err("it has other hard links")
        } else if write && st.st_uid != crate::io::gate::owner::euid() {
            Err("another user owns it")
        } else {
            Ok(())
        }
    };
    let (fd, st) = match crate::io::gate::open_own_file(path, access, proof) {
        Ok(Some(x)) => x,
        Ok(None) => return Ok(None),
        Err(OwnFileError::Sys(Errno::ISDIR)) => return Err(refuse(path, "not a regular file")),
        Err(OwnFileError::Sys(Errno::LOOP)) => return Err(refuse(path, "it is a symbolic link")),
        Err(OwnFileError::Sys(e)) => return Err(io_err(path, "open", e)),
        Err(OwnFileError::NotOurs(why)) => return Err(refuse(path, why)),
    };
    let mut buf = vec![0u8; HEADER_BYTES];
    let n = pread_full(&fd, &mut buf, 0).map_err(|e| io_err(path, "read", e))?;
    let header = parse_header(&buf[..n], st.st_size as u64).map_err(|why| refuse(path, &why))?;
    Ok(Some((fd, header)))
}

/// The two tables of a journal whose header is `h`, read back into memory
/// and checked: every entry a value volbench writes, none above the
/// header's highest counter, and for a journal closed cleanly the checksum.
pub(crate) fn load_tables(fd: &OwnedFd, path: &Path, h: &Header) -> Result<(Vec<u32>, Vec<u32>)> {
    let blocks = h.blocks as usize;
    let mut tables = (Vec::with_capacity(blocks), Vec::with_capacity(blocks));
    let mut hash = xxhash_rust::xxh3::Xxh3::new();
    let mut buf = vec![0u8; 1 << 20];
    let total = blocks * 8;
    let mut done = 0usize;
    while done < total {
        let n = (total - done).min(buf.len());
        let got = pread_full(fd, &mut buf[..n], (HEADER_BYTES + done) as u64)
            .map_err(|e| io_err(path, "read", e))?;
        if got < n {
            return Err(refuse(path, "it ended inside its tables (truncated)"));
        }
        hash.update(&buf[..n]);
        for (i, c) in buf[..n].chunks_exact(4).enumerate() {
            let v = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
            let at = done / 4 + i;
            if let Some(why) = check_entry(v, h.high) {
                let (table, block) = if at < blocks {
                    ("acknowledged", at)
                } else {
                    ("issued", at - blocks)
                };
                return Err(refuse(
                    path,
                    &format!("the {table} entry of block {block} holds {why} (damaged)"),
                ));
            }
            if at < blocks {
                tables.0.push(v);
            } else {
                tables.1.push(v);
            }
        }
        done += n;
    }
    if h.clean && h.sum.as_deref() != Some(sum_hex(hash.digest()).as_str()) {
        return Err(refuse(
            path,
            "its counters do not match the checksum written when it was closed (damaged)",
        ));
    }
    Ok(tables)
}

pub(crate) fn sum_hex(digest: u64) -> String {
    format!("{digest:016x}")
}

pub(crate) fn pread_full(
    fd: &impl AsFd,
    buf: &mut [u8],
    off: u64,
) -> crate::io::sys::io::Result<usize> {
    let mut done = 0;
    while done < buf.len() {
        match crate::io::sys::io::pread(fd, &mut buf[done..], off + done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(Errno::INTR) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

pub(crate) fn pwrite_all(
    fd: &impl AsFd,
    mut buf: &[u8],
    mut off: u64,
) -> crate::io::sys::io::Result<()> {
    while !buf.is_empty() {
        match crate::io::sys::io::pwrite(fd, buf, off) {
            Ok(0) => return Err(Errno::IO),
            Ok(n) => {
                buf = &buf[n..];
                off += n as u64;
            }
            Err(Errno::INTR) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// A journal file this process just created: its directory and inode, so
/// that a failed creation removes exactly it and nothing put there since.
pub(crate) struct NewFile {
    dir: OwnedFd,
    name: PathBuf,
    ino: u64,
    dev: u64,
}

/// Creates the journal at `path` (never over an existing file, never
/// through a symbolic link at its name), relative to its directory.
pub(crate) fn create_new(path: &Path) -> Result<(OwnedFd, NewFile)> {
    let parent = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .ok_or_else(|| VbError::input(format!("--journal {}: not a file name", path.display())))?;
    let dir = crate::io::sys::fs::open(
        parent,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| io_err(path, "open the directory of", e))?;
    let fd =
        crate::io::gate::create_new_at(&dir, name, OFlags::RDWR, 0o644).map_err(|e| match e {
            Errno::EXIST => refuse(path, "it appeared while volbench was creating it"),
            e => io_err(path, "create", e),
        })?;
    let st = crate::io::sys::fs::fstat(&fd).map_err(|e| io_err(path, "inspect", e))?;
    Ok((
        fd,
        NewFile {
            dir,
            name: PathBuf::from(name),
            ino: st.st_ino,
            dev: st.st_dev,
        },
    ))
}

impl NewFile {
    /// Removes the file, only if its name still holds the file created.
    pub(crate) fn remove(&self) {
        if let Ok(st) = crate::io::sys::fs::statat(&self.dir, &self.name, AtFlags::SYMLINK_NOFOLLOW)
        {
            if FileType::from_raw_mode(st.st_mode) == FileType::RegularFile
                && (st.st_ino, st.st_dev) == (self.ino, self.dev)
            {
                let _ = crate::io::gate::unlink_at(&self.dir, &self.name);
            }
        }
    }
}

/// Gives the file `len` bytes of allocated space, so that no later write
/// to it can fail for want of room: fallocate, or where the file system
/// has none (NFS before 4.2, some FUSE), zeros written out in full.
pub(crate) fn allocate(fd: &OwnedFd, len: u64) -> crate::io::sys::io::Result<()> {
    match crate::io::gate::allocate(fd, len) {
        Ok(()) => return Ok(()),
        Err(Errno::OPNOTSUPP | Errno::NOSYS) => {}
        Err(e) => return Err(e),
    }
    let zeros = vec![0u8; 1 << 20];
    let mut off = 0u64;
    while off < len {
        let n = (len - off).min(zeros.len() as u64) as usize;
        pwrite_all(fd, &zeros[..n], off)?;
        off += n as u64;
    }
    Ok(())
}

/// Why creating a journal failed, as one line: a full file system is the
/// target's state (exit 4), said with the size that did not fit.
pub(crate) fn creation_error(path: &Path, len: u64, e: Errno) -> VbError {
    if e == Errno::NOSPC || e == Errno::DQUOT {
        VbError::target(format!(
            "no room for journal {} ({} of counters) on its file system; it was removed: free \
             some space or give a --journal path on another file system",
            path.display(),
            crate::units::format_size(len)
        ))
    } else {
        io_err(path, "allocate", e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn header(blocks: u64, high: u32, clean: bool) -> Header {
        Header {
            journal: MAGIC.into(),
            files: 1,
            file_size: blocks * 4096,
            unit: 4096,
            blocks,
            format: "s1".into(),
            set: SetIdentity {
                id: "ab".into(),
                ino: 7,
                dev: 1,
            },
            high,
            clean,
            sum: None,
        }
    }

    #[test]
    fn headers_are_checked_like_untrusted_input() {
        let h = header(4, 3, false);
        let len = file_len(4).unwrap();
        assert_eq!(parse_header(&h.bytes().unwrap(), len).unwrap(), h);
        let e = parse_header(&h.bytes().unwrap(), len - 1).unwrap_err();
        assert!(e.contains("truncated"), "{e}");
        let e = parse_header(&header(4, u32::MAX, false).bytes().unwrap(), len).unwrap_err();
        assert!(e.contains("no write makes"), "{e}");
        let old = br#"{"journal":"volbench-journal/v1","files":1}"#;
        assert!(
            parse_header(old, len)
                .unwrap_err()
                .contains("older volbench")
        );
        assert!(parse_header(b"", 0).unwrap_err().contains("not a volbench"));
    }

    #[test]
    fn entries_no_write_makes_are_named() {
        assert!(
            check_entry(0xFFFF_FFFF, 10)
                .unwrap()
                .contains("no write makes")
        );
        assert!(check_entry(11, 10).unwrap().contains("beyond the 10"));
        assert_eq!(check_entry(10, 10), None);
        assert_eq!(check_entry(FORMED, 0), None);
        assert_eq!(check_entry(UNKNOWN, 0), None);
        assert_eq!(check_entry(0, 0), None);
    }

    proptest! {
        /// Any bytes and any length: a header or a refusal, never a panic;
        /// an accepted header's numbers keep the bounds the loader trusts.
        #[test]
        fn any_bytes_parse_or_are_refused(
            bytes in proptest::collection::vec(any::<u8>(), 0..5000),
            len in any::<u64>(),
        ) {
            if let Ok(h) = parse_header(&bytes, len) {
                prop_assert!(h.blocks.saturating_mul(4) <= bounds::MAX_VERIFY_MAP_BYTES);
                prop_assert_eq!(file_len(h.blocks), Some(len));
                prop_assert!(h.high < FORMED);
            }
        }

        /// Headers shaped like volbench's, with any numbers.
        #[test]
        fn any_header_numbers_parse_or_are_refused(
            files in any::<u32>(),
            file_size in any::<u64>(),
            unit in any::<u64>(),
            blocks in any::<u64>(),
            high in any::<u32>(),
            clean in any::<bool>(),
        ) {
            let h = Header {
                files, file_size, unit, blocks, high, clean,
                ..header(1, 0, false)
            };
            let len = file_len(blocks).unwrap_or(0);
            if let Ok(back) = parse_header(&h.bytes().unwrap(), len) {
                prop_assert_eq!(back.blocks, blocks);
                prop_assert!(unit >= 512 && files > 0 && high < FORMED);
            }
        }

        /// Any entry: accepted only if a write could have stored it.
        #[test]
        fn any_entry_is_judged(c in any::<u32>(), high in 0u32..FORMED) {
            match check_entry(c, high) {
                None => prop_assert!(c <= high || c == FORMED || c == UNKNOWN),
                Some(why) => prop_assert!(!why.is_empty()),
            }
        }
    }
}
