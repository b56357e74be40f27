//! --journal: the per-block write counters kept in a file, so a later run or
//! `volbench verify` can tell lost, torn and stale data after a crash.
//!
//! The file's layout and checks are `journal_file`'s. The counters live in
//! memory (one atomic store per write, and a per-chunk dirty flag checked
//! after it), and a thread writes the changed chunks to the file with
//! pwrite every second, then fdatasync; closing writes what is left and
//! marks the header clean with a checksum of both tables. So after a crash
//! every write acknowledged more than about a second before is in the
//! journal; a newer one may be missing from it.
//!
//! Why not a shared mapping of the file (which volbench used before): a
//! store to a mapping whose file was truncated, or whose page the file
//! system cannot allocate (a full disk, a copy-on-write file system), is a
//! SIGBUS that kills the run with nothing written. With pwrite the same
//! events are errors: the run stops, says why and keeps its results. The
//! file is allocated in full when created (fallocate, or zeros written) so
//! a full file system shows then, not mid-run, and its size is checked at
//! every sync, so a truncation or deletion is reported within a second.

use crate::io::sys::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Mutex, OnceLock, mpsc};
use std::time::Duration;

use super::journal_file::FORMED;
use super::journal_file::{
    HEADER_BYTES, MAGIC, allocate, create_new, creation_error, file_len, io_err, load_tables,
    pwrite_all, refuse, sum_hex,
};
pub(crate) use super::journal_file::{Header, read_header};
use crate::error::{Result, VbError};
use crate::io::gate::owner::SetIdentity;
use crate::io::workload::Layout;

const SYNC_EVERY: Duration = Duration::from_secs(1);
/// Blocks per dirty flag: 4 KiB of each table, a page of the file.
const CHUNK: usize = 1024;
/// Chunks written per pwrite, so a sync's buffer stays at 1 MiB.
const RUN: usize = 256;

/// How an open journal relates to the data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Opened {
    /// A new journal: every block starts at the given counter.
    Created,
    /// An existing journal of this set, closed cleanly.
    Continued,
}

/// The set a run's journal is for: what it is now and, when this job
/// refilled it, what it was before (a journal of that fill starts over).
pub(crate) struct Owner<'a> {
    pub(crate) now: &'a SetIdentity,
    pub(crate) before: Option<&'a SetIdentity>,
    pub(crate) refilled: bool,
}

type Alarm = Box<dyn Fn() + Send + Sync>;

pub(crate) struct Journal {
    fd: OwnedFd,
    path: PathBuf,
    len: u64,
    blocks: usize,
    header: Mutex<Header>,
    ack: Box<[AtomicU32]>,
    issued: Box<[AtomicU32]>,
    dirty: Box<[AtomicBool]>,
    /// A worker gave up on I/Os still in flight, or the file failed: never
    /// mark the journal clean.
    unclean: AtomicBool,
    /// Why the journal stopped recording (truncated, deleted, an I/O error).
    failure: OnceLock<String>,
    /// Told at once when it fails: ends the run in progress.
    alarm: Mutex<Option<Alarm>>,
    /// One writer of the file at a time (the sync thread, `close`).
    io: Mutex<()>,
    sync: Mutex<Option<(mpsc::Sender<()>, std::thread::JoinHandle<()>)>>,
}

fn atomics(v: impl IntoIterator<Item = u32>) -> Box<[AtomicU32]> {
    v.into_iter().map(AtomicU32::new).collect()
}

impl Journal {
    /// Opens the journal at `path` for a set of `layout` in `unit`-byte
    /// blocks holding data of `format`, or creates it with every block at
    /// `init`. An existing journal of another set or format, or one not
    /// closed cleanly, is refused and left untouched; one of the fill this
    /// job just replaced starts over at `init`.
    pub(crate) fn open(
        path: &Path,
        layout: Layout,
        unit: u64,
        format: &str,
        init: u32,
        owner: Owner,
    ) -> Result<(Self, Opened)> {
        let blocks = layout.file_size.div_ceil(unit) * layout.nfiles as u64;
        let len = file_len(blocks).unwrap_or(0);
        let wanted = Header {
            journal: MAGIC.into(),
            files: layout.nfiles,
            file_size: layout.file_size,
            unit,
            blocks,
            format: format.into(),
            set: owner.now.clone(),
            high: 0,
            clean: false,
            sum: None,
        };
        let fresh = || (atomics(vec![init; blocks as usize]), 0);
        let (j, opened) = match read_header(path, true)? {
            Some((fd, h)) => {
                if (h.files, h.file_size, h.unit, &h.format)
                    != (wanted.files, wanted.file_size, unit, &wanted.format)
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
                let of_before = owner.before.is_some_and(|b| h.set.same_set(b));
                let opened = if owner.refilled && of_before {
                    Opened::Created
                } else if h.set.same_set(owner.now) && !owner.refilled {
                    Opened::Continued
                } else {
                    return Err(another_set(path, &h.set, owner.now));
                };
                if opened == Opened::Continued && !h.clean {
                    return Err(VbError::refused(format!(
                        "journal {} was not closed cleanly (a crash?): check the data against \
                         it first with `volbench verify --target DIR --journal {}`, which \
                         marks it clean when the data is right",
                        path.display(),
                        path.display()
                    )));
                }
                let ((ack, issued), high) = if opened == Opened::Continued {
                    let (a, i) = load_tables(&fd, path, &h)?;
                    ((atomics(a), atomics(i)), h.high)
                } else {
                    let (t, high) = fresh();
                    ((t, atomics(vec![init; blocks as usize])), high)
                };
                // An existing file may have holes (copied sparse): none may
                // be left for a write to find the disk full.
                allocate(&fd, len).map_err(|e| creation_error(path, len, e))?;
                let header = Header { high, ..wanted };
                (Self::new(fd, path, header, len, ack, issued), opened)
            }
            None => {
                let (fd, made) = create_new(path)?;
                if let Err(e) = allocate(&fd, len) {
                    made.remove();
                    return Err(creation_error(path, len, e));
                }
                let (ack, _) = fresh();
                let (issued, _) = fresh();
                let j = Self::new(fd, path, wanted, len, ack, issued);
                if let Err(e) = j.start(true) {
                    made.remove();
                    return Err(e);
                }
                return Ok((j, Opened::Created));
            }
        };
        j.start(opened == Opened::Created)?;
        Ok((j, opened))
    }

    /// Opens an existing journal to check data against (`volbench verify`):
    /// its header and every entry checked, loaded into memory.
    pub(crate) fn open_existing(path: &Path) -> Result<Self> {
        let (fd, h) = read_header(path, true)?
            .ok_or_else(|| VbError::input(format!("--journal {}: no such file", path.display())))?;
        let (ack, issued) = load_tables(&fd, path, &h)?;
        let len = file_len(h.blocks).unwrap_or(0);
        Ok(Self::new(fd, path, h, len, atomics(ack), atomics(issued)))
    }

    fn new(
        fd: OwnedFd,
        path: &Path,
        header: Header,
        len: u64,
        ack: Box<[AtomicU32]>,
        issued: Box<[AtomicU32]>,
    ) -> Self {
        let blocks = header.blocks as usize;
        Self {
            fd,
            path: path.to_path_buf(),
            len,
            blocks,
            header: Mutex::new(header),
            ack,
            issued,
            dirty: (0..blocks.div_ceil(CHUNK))
                .map(|_| AtomicBool::new(false))
                .collect(),
            unclean: AtomicBool::new(false),
            failure: OnceLock::new(),
            alarm: Mutex::new(None),
            io: Mutex::new(()),
            sync: Mutex::new(None),
        }
    }

    /// Writes the header (unclean from here until `close`: a crash leaves it
    /// so) and, for a journal starting over, every entry; then syncs.
    fn start(&self, all: bool) -> Result<()> {
        if all {
            for d in self.dirty.iter() {
                d.store(true, Ordering::Relaxed);
            }
        }
        let h = self.header_now();
        self.guarded(|| {
            pwrite_all(&self.fd, &h.bytes().map_err(|e| e.message)?, 0)
                .map_err(|e| self.io_text("write", e))
        })?;
        self.flush()
    }

    pub(crate) fn header(&self) -> Header {
        self.header_now()
    }

    fn header_now(&self) -> Header {
        match self.header.lock() {
            Ok(h) => h.clone(),
            Err(p) => p.into_inner().clone(),
        }
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    pub(crate) fn blocks(&self) -> usize {
        self.blocks
    }

    /// The counter of the last acknowledged write of `block`.
    pub(crate) fn ack(&self, block: usize) -> u32 {
        self.ack.get(block).map_or(0, |e| e.load(Ordering::Relaxed))
    }

    #[cfg(test)]
    /// The counter of the last write issued to `block`.
    pub(crate) fn issued(&self, block: usize) -> u32 {
        self.issued
            .get(block)
            .map_or(0, |e| e.load(Ordering::Relaxed))
    }

    #[inline]
    pub(crate) fn issue(&self, block: usize, counter: u32) {
        if let Some(e) = self.issued.get(block) {
            e.store(counter, Ordering::SeqCst);
            self.touch(block);
        }
    }

    #[inline]
    pub(crate) fn acknowledge(&self, block: usize, counter: u32) {
        if let Some(e) = self.ack.get(block) {
            e.store(counter, Ordering::SeqCst);
            self.touch(block);
        }
    }

    /// Marks `block`'s chunk for the next sync. The entry's store and this
    /// load, and the sync's clearing swap and its loads, are all SeqCst:
    /// either this load sees the flag cleared (and sets it again) or the
    /// sync's load sees the new entry, so no store is left unwritten. The
    /// flag is only written when clear: one store per chunk per second.
    #[inline]
    fn touch(&self, block: usize) {
        if let Some(d) = self.dirty.get(block / CHUNK) {
            if !d.load(Ordering::SeqCst) {
                d.store(true, Ordering::SeqCst);
            }
        }
    }

    /// Some I/O never completed: the journal must not claim it is clean.
    pub(crate) fn mark_dirty(&self) {
        self.unclean.store(true, Ordering::Relaxed);
    }

    #[cfg(test)]
    /// Why the journal stopped recording, if it did.
    pub(crate) fn failure(&self) -> Option<String> {
        self.failure.get().cloned()
    }

    /// Calls `alarm` (and drops the previous one) when the journal fails
    /// from now on; at once if it already has.
    pub(crate) fn on_failure(&self, alarm: Option<Alarm>) {
        if let Ok(mut slot) = self.alarm.lock() {
            *slot = alarm;
            if self.failure.get().is_some() {
                if let Some(a) = slot.as_ref() {
                    a();
                }
            }
        }
    }

    fn io_text(&self, what: &str, e: crate::io::sys::io::Errno) -> String {
        io_err(&self.path, what, e).message
    }

    /// Runs one write of the file; its failure is the journal's, for good.
    fn guarded(&self, f: impl FnOnce() -> std::result::Result<(), String>) -> Result<()> {
        if let Some(why) = self.failure.get() {
            return Err(VbError::run(why.clone()));
        }
        f().map_err(|why| {
            let _ = self.failure.set(why.clone());
            self.unclean.store(true, Ordering::Relaxed);
            if let Ok(slot) = self.alarm.lock() {
                if let Some(a) = slot.as_ref() {
                    a();
                }
            }
            VbError::run(why)
        })
    }

    /// The file must still be the journal: its full length, still linked.
    fn check_file(&self) -> std::result::Result<(), String> {
        let st = crate::io::sys::fs::fstat(&self.fd).map_err(|e| self.io_text("inspect", e))?;
        if st.st_nlink == 0 {
            return Err(format!(
                "journal {} was deleted while in use: it no longer records the writes",
                self.path.display()
            ));
        }
        if st.st_size as u64 != self.len {
            return Err(format!(
                "journal {} was truncated or resized while in use ({} bytes, it must be {}): \
                 it no longer records the writes",
                self.path.display(),
                st.st_size,
                self.len
            ));
        }
        Ok(())
    }

    /// Writes the chunks changed since the last sync and puts them on stable
    /// storage; a header whose highest counter must rise is written (and
    /// synced) first, so the file never holds an entry above it.
    pub(crate) fn flush(&self) -> Result<()> {
        let _one = self.io.lock().unwrap_or_else(|p| p.into_inner());
        self.guarded(|| {
            self.check_file()?;
            let chunks: Vec<usize> = (0..self.dirty.len())
                .filter(|&i| {
                    self.dirty[i].load(Ordering::Relaxed)
                        && self.dirty[i].swap(false, Ordering::SeqCst)
                })
                .collect();
            // Runs of consecutive chunks, at most RUN long: (first, end) blocks.
            let mut runs: Vec<(usize, usize)> = Vec::new();
            for &c in &chunks {
                match runs.last_mut() {
                    Some((first, end))
                        if *end == c * CHUNK && (c * CHUNK - *first) < RUN * CHUNK =>
                    {
                        *end = ((c + 1) * CHUNK).min(self.blocks)
                    }
                    _ => runs.push((c * CHUNK, ((c + 1) * CHUNK).min(self.blocks))),
                }
            }
            let mut high = self.header_now().high;
            let mut bufs = Vec::with_capacity(runs.len());
            for &(first, end) in &runs {
                let snap = |t: &[AtomicU32]| -> Vec<u8> {
                    t[first..end]
                        .iter()
                        .flat_map(|e| e.load(Ordering::SeqCst).to_le_bytes())
                        .collect()
                };
                let (a, i) = (snap(&self.ack), snap(&self.issued));
                for c in a.chunks_exact(4).chain(i.chunks_exact(4)) {
                    let v = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
                    if v < FORMED {
                        high = high.max(v);
                    }
                }
                bufs.push((first, a, i));
            }
            if high > self.header_now().high {
                let h = {
                    let mut g = self.header.lock().unwrap_or_else(|p| p.into_inner());
                    g.high = high;
                    g.clone()
                };
                pwrite_all(&self.fd, &h.bytes().map_err(|e| e.message)?, 0)
                    .and_then(|()| crate::io::sys::fs::fdatasync(&self.fd))
                    .map_err(|e| self.io_text("write", e))?;
            }
            let table =
                |t: usize, first: usize| (HEADER_BYTES + 4 * (t * self.blocks + first)) as u64;
            for (first, a, i) in &bufs {
                pwrite_all(&self.fd, a, table(0, *first))
                    .and_then(|()| pwrite_all(&self.fd, i, table(1, *first)))
                    .map_err(|e| self.io_text("write", e))?;
            }
            crate::io::sys::fs::fdatasync(&self.fd).map_err(|e| self.io_text("sync", e))?;
            // A truncation during the writes above re-extended the file with
            // a hole: caught here, not at the next sync.
            self.check_file()
        })
    }

    /// Syncs the journal every second from a thread of its own until
    /// `close`: acknowledgements reach stable storage within about a second.
    pub(crate) fn start_sync(self: &std::sync::Arc<Self>) {
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
                        // A failure is recorded and raised by `flush` itself.
                        Some(j) if j.flush().is_ok() => {}
                        _ => return,
                    }
                }
            });
        if let Ok(h) = spawned {
            *slot = Some((tx, h));
        }
    }

    /// Stops the sync thread, syncs, and marks the journal clean (with the
    /// checksum of its tables) if every write it recorded completed
    /// (`all_done`) and nothing failed.
    pub(crate) fn close(&self, all_done: bool) -> Result<()> {
        if let Ok(mut slot) = self.sync.lock() {
            if let Some((tx, h)) = slot.take() {
                drop(tx);
                let _ = h.join();
            }
        }
        self.flush()?;
        if !all_done || self.unclean.load(Ordering::Relaxed) {
            return Ok(());
        }
        let mut hash = xxhash_rust::xxh3::Xxh3::new();
        for t in [&self.ack, &self.issued] {
            for part in t.chunks(RUN * CHUNK) {
                let bytes: Vec<u8> = part
                    .iter()
                    .flat_map(|e| e.load(Ordering::SeqCst).to_le_bytes())
                    .collect();
                hash.update(&bytes);
            }
        }
        let h = {
            let mut g = self.header.lock().unwrap_or_else(|p| p.into_inner());
            g.clean = true;
            g.sum = Some(sum_hex(hash.digest()));
            g.clone()
        };
        let _one = self.io.lock().unwrap_or_else(|p| p.into_inner());
        self.guarded(|| {
            self.check_file()?;
            pwrite_all(&self.fd, &h.bytes().map_err(|e| e.message)?, 0)
                .and_then(|()| crate::io::sys::fs::fdatasync(&self.fd))
                .map_err(|e| self.io_text("write", e))
        })
    }
}

/// The refusal of a journal that records another set (or another fill of
/// this one): its counters say nothing about this data.
pub(crate) fn another_set(path: &Path, journal: &SetIdentity, set: &SetIdentity) -> VbError {
    refuse(
        path,
        &format!(
            "the journal belongs to another file set (it records {journal}; this is {set}, \
             filled since or elsewhere)"
        ),
    )
}

#[cfg(test)]
mod tests;
