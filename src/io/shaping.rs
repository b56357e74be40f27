//! What a worker does between I/Os when the run asks for it: sync the files
//! it wrote every N writes (fio fsync=N / fdatasync=N) and at the end
//! (end_fsync), and pause after each completion (think time). The worker
//! takes this path only when the run uses one of them, so plain runs pay
//! nothing for it (see `worker::run`).

use crate::io::sys::fd::{AsRawFd, OwnedFd, RawFd};

use crate::spec::shape::{Shape, SyncCall};

/// A descriptor's raw value, kept beside the engine that owns it. On
/// Windows a handle's pointer is not Send, so its address is kept instead.
#[cfg(unix)]
type Raw = RawFd;
#[cfg(windows)]
type Raw = usize;

#[cfg(unix)]
fn raw(f: &OwnedFd) -> Raw {
    f.as_raw_fd()
}

#[cfg(windows)]
fn raw(f: &OwnedFd) -> Raw {
    f.as_raw_fd() as usize
}

pub(crate) struct Shaper {
    every: u32,
    /// Writes completed since the last sync.
    since: u32,
    datasync: bool,
    end_fsync: bool,
    pub(crate) think_ns: u64,
    /// When the pause after the last completion ends (0: no pause).
    pub(crate) think_until: u64,
    fds: Vec<Raw>,
    dirty: Vec<bool>,
    /// A sync is due: the worker issues nothing until its I/O has drained.
    pub(crate) sync_due: bool,
    pub(crate) syncs: u64,
}

impl Shaper {
    /// None when the run's shape asks for nothing a worker does.
    pub(crate) fn new(shape: &Shape) -> Option<Self> {
        let think_ns = shape.think_time_s.map_or(0, |s| (s * 1e9) as u64);
        if shape.fsync_every.is_none() && !shape.end_fsync && think_ns == 0 {
            return None;
        }
        Some(Self {
            every: shape.fsync_every.unwrap_or(0),
            since: 0,
            datasync: shape.sync_call == SyncCall::Fdatasync,
            end_fsync: shape.end_fsync,
            think_ns,
            think_until: 0,
            fds: Vec::new(),
            dirty: Vec::new(),
            sync_due: false,
            syncs: 0,
        })
    }

    /// Nothing to do: what an unshaped loop holds in its place.
    pub(crate) fn none() -> Self {
        Self {
            every: 0,
            since: 0,
            datasync: false,
            end_fsync: false,
            think_ns: 0,
            think_until: 0,
            fds: Vec::new(),
            dirty: Vec::new(),
            sync_due: false,
            syncs: 0,
        }
    }

    /// The worker's files, as the engine will use them (the descriptors
    /// stay open as long as the engine that owns them).
    pub(crate) fn attach(&mut self, files: &[OwnedFd]) {
        self.fds = files.iter().map(raw).collect();
        self.dirty = vec![false; files.len()];
    }

    #[inline]
    pub(crate) fn write_done(&mut self, file: u32) {
        if let Some(d) = self.dirty.get_mut(file as usize) {
            *d = true;
        }
        if self.every > 0 {
            self.since += 1;
            if self.since >= self.every {
                self.sync_due = true;
            }
        }
    }

    /// Syncs every file written since the last sync; the caller has drained
    /// its I/O, so the sync covers every write it counted.
    pub(crate) fn sync(&mut self) -> Result<(), String> {
        self.sync_due = false;
        self.since = 0;
        for (fd, dirty) in self.fds.iter().zip(self.dirty.iter_mut()) {
            if !*dirty {
                continue;
            }
            *dirty = false;
            #[cfg(unix)]
            // SAFETY: `fd` belongs to an OwnedFd the engine holds open for
            // the whole loop; fsync/fdatasync touch no memory of ours.
            let rc = unsafe {
                if self.datasync {
                    libc::fdatasync(*fd)
                } else {
                    libc::fsync(*fd)
                }
            };
            // Windows has one flush, FlushFileBuffers, for both.
            #[cfg(windows)]
            // SAFETY: `fd` belongs to an OwnedFd the engine holds open for
            // the whole loop.
            let rc = match crate::io::sys::fs::fdatasync(unsafe {
                crate::io::sys::fd::BorrowedFd::borrow_raw(*fd as RawFd)
            }) {
                Ok(()) => 0,
                Err(_) => -1,
            };
            if rc != 0 {
                let call = if self.datasync { "fdatasync" } else { "fsync" };
                return Err(format!(
                    "{call} failed: {}",
                    std::io::Error::last_os_error()
                ));
            }
            self.syncs += 1;
        }
        Ok(())
    }

    /// At the end of the run, once every I/O completed (fio end_fsync).
    pub(crate) fn finish(&mut self) -> Result<(), String> {
        if self.end_fsync { self.sync() } else { Ok(()) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sync_falls_due_every_n_writes_and_covers_only_written_files() {
        let dir = tempfile::tempdir().expect("temp dir");
        let files: Vec<OwnedFd> = (0..3)
            .map(|i| {
                let f = std::fs::File::create(dir.path().join(format!("f{i}"))).expect("create");
                OwnedFd::from(f)
            })
            .collect();
        let shape = Shape {
            fsync_every: Some(4),
            end_fsync: true,
            ..Shape::default()
        };
        let mut s = Shaper::new(&shape).expect("a shaper");
        s.attach(&files);
        for _ in 0..3 {
            s.write_done(1);
        }
        assert!(!s.sync_due, "three writes of four");
        s.write_done(2);
        assert!(s.sync_due);
        s.sync().expect("sync");
        // Files 1 and 2 were written, file 0 was not.
        assert_eq!((s.syncs, s.sync_due), (2, false));
        s.write_done(0);
        s.finish().expect("end sync");
        assert_eq!(s.syncs, 3, "the end sync covers what was written since");
        assert!(
            Shaper::new(&Shape::default()).is_none(),
            "plain runs get none"
        );
    }
}
