//! --journal: the per-block write counters kept in a file, so a later run or
//! `volbench verify` can tell lost, torn and stale data after a crash.
//!
//! Layout: a 4 KiB header (one line of JSON, space-padded: the set's layout,
//! its data format, and whether the journal was closed cleanly), then one
//! u32 per block, the counter of its last *acknowledged* write (stored
//! after the write completed), then one u32 per block, the counter of its
//! last *issued* write (stored before the write is issued). The entries are
//! a shared memory mapping of the file: updating them costs a store, not a
//! system call, and the kernel writes them back. A thread syncs them to
//! stable storage every second (msync); closing syncs them and marks the
//! header clean. So after a crash, every write acknowledged more than about
//! a second before is in the journal; a newer one may be missing from it.

use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use rustix::fs::{Mode, OFlags};
use serde::{Deserialize, Serialize};

use crate::error::{Result, VbError};
use crate::io::workload::Layout;
use crate::units::bounds;

const HEADER_BYTES: usize = 4096;
const MAGIC: &str = "volbench-journal/v1";
const SYNC_EVERY: Duration = Duration::from_secs(1);

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Header {
    pub journal: String,
    pub files: u32,
    pub file_size: u64,
    pub unit: u64,
    pub blocks: u64,
    /// The set's data format (`DataSpec::fill_tag`).
    pub format: String,
    /// Closed after every write it records had completed and been synced.
    pub clean: bool,
}

impl Header {
    pub fn layout(&self) -> Layout {
        Layout {
            nfiles: self.files,
            file_size: self.file_size,
        }
    }
}

/// How an open journal relates to the data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Opened {
    /// A new journal: every block starts at the given counter.
    Created,
    /// An existing journal of this set, closed cleanly.
    Continued,
}

pub struct Journal {
    fd: OwnedFd,
    path: PathBuf,
    ptr: *mut u8,
    len: usize,
    blocks: usize,
    header: Header,
    /// A worker gave up on I/Os still in flight: never mark the journal clean.
    dirty: AtomicBool,
    sync: std::sync::Mutex<Option<(mpsc::Sender<()>, std::thread::JoinHandle<()>)>>,
}

// SAFETY: the mapping is only accessed through atomic u32 loads and stores
// (entries) or while no other thread uses it (header rewrites in `close`).
unsafe impl Send for Journal {}
unsafe impl Sync for Journal {}

fn io_err(path: &Path, what: &str, e: impl Into<std::io::Error>) -> VbError {
    VbError::target(format!(
        "cannot {what} journal {}: {}",
        path.display(),
        e.into()
    ))
}

/// The file size a journal of `blocks` blocks has.
fn file_len(blocks: u64) -> Option<u64> {
    blocks.checked_mul(8)?.checked_add(HEADER_BYTES as u64)
}

/// Opens an existing journal file as a regular file reached without
/// following a symbolic link, and reads and checks its header.
pub fn read_header(path: &Path, write: bool) -> Result<Option<(OwnedFd, Header)>> {
    let access = if write { OFlags::RDWR } else { OFlags::RDONLY };
    let fd = match rustix::fs::open(
        path,
        access | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK,
        Mode::empty(),
    ) {
        Ok(fd) => fd,
        Err(rustix::io::Errno::NOENT) => return Ok(None),
        Err(rustix::io::Errno::ISDIR) => {
            return Err(VbError::refused(format!(
                "refusing journal {}: not a regular file",
                path.display()
            )));
        }
        Err(rustix::io::Errno::LOOP) => {
            return Err(VbError::refused(format!(
                "refusing journal {}: it is a symbolic link",
                path.display()
            )));
        }
        Err(e) => return Err(io_err(path, "open", e)),
    };
    let st = rustix::fs::fstat(&fd).map_err(|e| io_err(path, "inspect", e))?;
    if rustix::fs::FileType::from_raw_mode(st.st_mode) != rustix::fs::FileType::RegularFile {
        return Err(VbError::refused(format!(
            "refusing journal {}: not a regular file",
            path.display()
        )));
    }
    let refuse = |why: String| {
        VbError::refused(format!(
            "refusing journal {}: {why}; it is left as it is (give another --journal path)",
            path.display()
        ))
    };
    let mut buf = vec![0u8; HEADER_BYTES];
    let n = rustix::io::pread(&fd, &mut buf, 0).map_err(|e| io_err(path, "read", e))?;
    let text = std::str::from_utf8(&buf[..n])
        .ok()
        .map(|t| t.trim_end_matches([' ', '\n', '\0']))
        .unwrap_or("");
    let header: Header = serde_json::from_str(text)
        .ok()
        .filter(|h: &Header| h.journal == MAGIC)
        .ok_or_else(|| refuse("it is not a volbench journal".into()))?;
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
        return Err(refuse(format!(
            "its header claims {} blocks of {} bytes over {} files of {} bytes, which do not \
             add up or pass the {} block bound",
            header.blocks,
            header.unit,
            header.files,
            header.file_size,
            bounds::MAX_VERIFY_MAP_BYTES / 4
        )));
    }
    if file_len(header.blocks) != Some(st.st_size as u64) {
        return Err(refuse(format!(
            "it is {} bytes long, and its header needs {} (truncated or damaged)",
            st.st_size,
            file_len(header.blocks).unwrap_or(0)
        )));
    }
    Ok(Some((fd, header)))
}

impl Journal {
    /// Opens the journal at `path` for a set of `layout` in `unit`-byte
    /// blocks holding data of `format`, or creates it with every block at
    /// `init`. An existing journal of another set or format, or one not
    /// closed cleanly, is refused and left untouched. `reset`: the set was
    /// just refilled, so an existing journal of it starts over at `init`.
    pub fn open(
        path: &Path,
        layout: Layout,
        unit: u64,
        format: &str,
        init: u32,
        reset: bool,
    ) -> Result<(Self, Opened)> {
        let blocks = layout.file_size.div_ceil(unit) * layout.nfiles as u64;
        let wanted = Header {
            journal: MAGIC.into(),
            files: layout.nfiles,
            file_size: layout.file_size,
            unit,
            blocks,
            format: format.into(),
            clean: false,
        };
        let (fd, opened) = match read_header(path, true)? {
            Some((fd, h)) => {
                if (Header {
                    clean: false,
                    ..h.clone()
                }) != wanted
                {
                    return Err(VbError::refused(format!(
                        "refusing journal {}: it belongs to another file set ({} files of {} \
                         bytes, {}-byte blocks, data {}; this one: {} files of {} bytes, \
                         {}-byte blocks, data {})",
                        path.display(),
                        h.files,
                        h.file_size,
                        h.unit,
                        h.format,
                        layout.nfiles,
                        layout.file_size,
                        unit,
                        format
                    )));
                }
                if !h.clean && !reset {
                    return Err(VbError::refused(format!(
                        "journal {} was not closed cleanly (a crash?): check the data against \
                         it first with `volbench verify --target DIR --journal {}`, which \
                         marks it clean when the data is right",
                        path.display(),
                        path.display()
                    )));
                }
                (
                    fd,
                    if reset {
                        Opened::Created
                    } else {
                        Opened::Continued
                    },
                )
            }
            None => {
                let fd = crate::io::gate::create_new(path, OFlags::RDWR, 0o644)
                    .map_err(|e| io_err(path, "create", e))?;
                (fd, Opened::Created)
            }
        };
        let len = file_len(blocks).unwrap_or(0) as usize;
        if opened == Opened::Created {
            crate::io::gate::truncate(&fd, len as u64).map_err(|e| io_err(path, "size", e))?;
        }
        let j = Self::map(fd, path, wanted, len)?;
        if opened == Opened::Created {
            for i in 0..j.blocks {
                j.acknowledge(i, init);
                j.issue(i, init);
            }
        }
        // Unclean from here until `close`: a crash leaves it so.
        j.write_header(false)?;
        j.flush()?;
        Ok((j, opened))
    }

    /// Opens an existing journal to check data against (`volbench verify`).
    pub fn open_existing(path: &Path) -> Result<Self> {
        let (fd, h) = read_header(path, true)?
            .ok_or_else(|| VbError::input(format!("--journal {}: no such file", path.display())))?;
        let len = file_len(h.blocks).unwrap_or(0) as usize;
        Self::map(fd, path, h, len)
    }

    fn map(fd: OwnedFd, path: &Path, header: Header, len: usize) -> Result<Self> {
        // SAFETY: a fresh shared mapping of `len` bytes of a regular file
        // just checked (or made) to be that long; nothing else is mapped
        // there. Another process truncating the file would make accesses
        // fault: the journal is volbench's own file.
        let ptr = unsafe {
            rustix::mm::mmap(
                std::ptr::null_mut(),
                len,
                rustix::mm::ProtFlags::READ | rustix::mm::ProtFlags::WRITE,
                rustix::mm::MapFlags::SHARED,
                fd.as_fd(),
                0,
            )
        }
        .map_err(|e| io_err(path, "map", e))?;
        Ok(Self {
            fd,
            path: path.to_path_buf(),
            ptr: ptr.cast(),
            len,
            blocks: header.blocks as usize,
            header,
            dirty: AtomicBool::new(false),
            sync: std::sync::Mutex::new(None),
        })
    }

    pub fn header(&self) -> &Header {
        &self.header
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn blocks(&self) -> usize {
        self.blocks
    }

    #[inline]
    fn entry(&self, table: usize, block: usize) -> Option<&AtomicU32> {
        if block >= self.blocks {
            return None;
        }
        let at = HEADER_BYTES + 4 * (table * self.blocks + block);
        // SAFETY: `at + 4 <= len` (block < blocks), 4-aligned (the mapping
        // is page-aligned and HEADER_BYTES a multiple of 4), and the
        // mapping lives as long as `self`.
        Some(unsafe { &*(self.ptr.add(at) as *const AtomicU32) })
    }

    /// The counter of the last acknowledged write of `block`.
    pub fn ack(&self, block: usize) -> u32 {
        self.entry(0, block)
            .map_or(0, |e| e.load(Ordering::Relaxed))
    }

    /// The counter of the last write issued to `block`.
    pub fn issued(&self, block: usize) -> u32 {
        self.entry(1, block)
            .map_or(0, |e| e.load(Ordering::Relaxed))
    }

    #[inline]
    pub fn issue(&self, block: usize, counter: u32) {
        if let Some(e) = self.entry(1, block) {
            e.store(counter, Ordering::Relaxed);
        }
    }

    #[inline]
    pub fn acknowledge(&self, block: usize, counter: u32) {
        if let Some(e) = self.entry(0, block) {
            e.store(counter, Ordering::Relaxed);
        }
    }

    /// Some I/O never completed: the journal must not claim it is clean.
    pub fn mark_dirty(&self) {
        self.dirty.store(true, Ordering::Relaxed);
    }

    fn write_header(&self, clean: bool) -> Result<()> {
        let h = Header {
            clean,
            ..self.header.clone()
        };
        let mut text = serde_json::to_string(&h).map_err(|e| VbError::run(e.to_string()))?;
        text.push('\n');
        let mut buf = vec![b' '; HEADER_BYTES];
        buf[..text.len().min(HEADER_BYTES)]
            .copy_from_slice(&text.as_bytes()[..text.len().min(HEADER_BYTES)]);
        rustix::io::pwrite(&self.fd, &buf, 0).map_err(|e| io_err(&self.path, "write", e))?;
        Ok(())
    }

    /// Puts the entries and the header on stable storage.
    pub fn flush(&self) -> Result<()> {
        // SAFETY: the range is exactly this journal's live mapping.
        unsafe { rustix::mm::msync(self.ptr.cast(), self.len, rustix::mm::MsyncFlags::SYNC) }
            .map_err(|e| io_err(&self.path, "sync", e))?;
        rustix::fs::fdatasync(&self.fd).map_err(|e| io_err(&self.path, "sync", e))
    }

    /// Syncs the journal every second from a thread of its own until
    /// `close`: acknowledgements reach stable storage within about a second.
    pub fn start_sync(self: &std::sync::Arc<Self>) {
        let Ok(mut slot) = self.sync.lock() else {
            return;
        };
        if slot.is_some() {
            return;
        }
        let (tx, rx) = mpsc::channel::<()>();
        let me = std::sync::Arc::downgrade(self);
        let spawned = std::thread::Builder::new()
            .name("vb-journal".into())
            .spawn(move || {
                while let Err(mpsc::RecvTimeoutError::Timeout) = rx.recv_timeout(SYNC_EVERY) {
                    match me.upgrade() {
                        Some(j) => {
                            let _ = j.flush();
                        }
                        None => return,
                    }
                }
            });
        if let Ok(h) = spawned {
            *slot = Some((tx, h));
        }
    }

    /// Stops the sync thread, syncs, and marks the journal clean if every
    /// write it recorded completed (`all_done`).
    pub fn close(&self, all_done: bool) -> Result<()> {
        if let Ok(mut slot) = self.sync.lock()
            && let Some((tx, h)) = slot.take()
        {
            drop(tx);
            let _ = h.join();
        }
        self.flush()?;
        if all_done && !self.dirty.load(Ordering::Relaxed) {
            self.write_header(true)?;
            rustix::fs::fdatasync(&self.fd).map_err(|e| io_err(&self.path, "sync", e))?;
        }
        Ok(())
    }
}

impl Drop for Journal {
    fn drop(&mut self) {
        // SAFETY: unmapping this journal's own mapping, which no reference
        // outlives (entries borrow `self`).
        let _ = unsafe { rustix::mm::munmap(self.ptr.cast(), self.len) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const L: Layout = Layout {
        nfiles: 2,
        file_size: 16384,
    };

    #[test]
    fn a_journal_round_trips_and_refuses_other_sets() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("j");
        let (j, how) = Journal::open(&p, L, 4096, "s1", 0, false).unwrap();
        assert_eq!(how, Opened::Created);
        j.issue(3, 7);
        j.acknowledge(3, 7);
        // Not closed: a crash. Reopening for a run is refused.
        drop(j);
        let e = Journal::open(&p, L, 4096, "s1", 0, false).err().unwrap();
        assert!(e.message.contains("not closed cleanly"), "{}", e.message);
        let j = Journal::open_existing(&p).unwrap();
        assert_eq!((j.ack(3), j.issued(3), j.header().clean), (7, 7, false));
        j.close(true).unwrap();
        drop(j);
        let (j, how) = Journal::open(&p, L, 4096, "s1", 0, false).unwrap();
        assert_eq!((how, j.ack(3)), (Opened::Continued, 7));
        j.close(true).unwrap();
        drop(j);
        let other = Layout {
            nfiles: 1,
            file_size: 16384,
        };
        let e = Journal::open(&p, other, 4096, "s1", 0, false)
            .err()
            .unwrap();
        assert!(e.message.contains("another file set"), "{}", e.message);
        let e = Journal::open(&p, L, 4096, "s1c2", 0, false).err().unwrap();
        assert!(e.message.contains("another file set"), "{}", e.message);
    }

    #[test]
    fn hostile_journals_are_refused_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("j");
        std::fs::write(&p, b"precious data").unwrap();
        let e = Journal::open(&p, L, 4096, "s1", 0, false).err().unwrap();
        assert!(
            e.message.contains("not a volbench journal"),
            "{}",
            e.message
        );
        assert_eq!(std::fs::read(&p).unwrap(), b"precious data");
        // A header claiming a huge count.
        let mut h = format!(
            r#"{{"journal":"{MAGIC}","files":1,"file_size":{},"unit":512,"blocks":{},"format":"s1","clean":true}}"#,
            1u64 << 50,
            1u64 << 41
        )
        .into_bytes();
        h.resize(HEADER_BYTES, b' ');
        std::fs::write(&p, &h).unwrap();
        let e = Journal::open_existing(&p).err().unwrap();
        assert!(e.message.contains("block bound"), "{}", e.message);
        // A truncated one.
        let (j, _) = Journal::open(&dir.path().join("k"), L, 4096, "s1", 0, false).unwrap();
        j.close(true).unwrap();
        drop(j);
        let k = dir.path().join("k");
        let f = std::fs::OpenOptions::new().write(true).open(&k).unwrap();
        f.set_len(4096 + 10).unwrap();
        let e = Journal::open_existing(&k).err().unwrap();
        assert!(e.message.contains("truncated"), "{}", e.message);
        // A symbolic link.
        std::os::unix::fs::symlink(&k, dir.path().join("l")).unwrap();
        let e = Journal::open_existing(&dir.path().join("l")).err().unwrap();
        assert!(e.message.contains("symbolic link"), "{}", e.message);
    }
}
