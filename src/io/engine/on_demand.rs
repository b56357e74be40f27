//! A worker's files held open a few at a time (fio's `openfiles`): when a
//! set has more files than a thread may keep open, each file is opened
//! when an I/O first needs it and the least recently used idle one is
//! closed to make room.
//!
//! Written here rather than taken from an LRU crate: the table must never
//! close a file an I/O in flight was queued on (io_uring reads the number
//! at submission, and a reused number would send the I/O to another file),
//! which general caches cannot be told, and it sits on the hot path, where
//! a clock over a flat array costs a load and a store per hit.

use crate::io::sys::fd::OwnedFd;

/// Opens file `n` of the set, proven the file the set made (the gate's
/// rules, as opening the whole set does), with the worker's flags and
/// advice; Err is the one-line reason.
pub(crate) type Opener = Box<dyn FnMut(u32) -> crate::error::Result<OwnedFd> + Send>;

/// No slot (in `slot_of`) or no file (in a slot).
const NONE: u32 = u32::MAX;

struct Held {
    file: u32,
    fd: Option<OwnedFd>,
    /// I/Os queued or in flight on this descriptor: it is not closed
    /// before they complete.
    busy: u32,
    /// Used since the clock hand last passed (second chance).
    used: bool,
}

/// The open files of one worker, at most `cap` at a time.
pub(crate) struct OnDemand {
    open: Opener,
    /// Per file of the set: the slot holding it, or NONE.
    slot_of: Vec<u32>,
    held: Vec<Held>,
    hand: usize,
    error: Option<String>,
}

impl OnDemand {
    /// `files` in the set, at most `cap` open at once. The plan keeps `cap`
    /// at least the worker's depth: an I/O is queued only in a slot whose
    /// last I/O completed, so an idle file always exists then.
    pub(crate) fn new(open: Opener, files: u32, cap: u32) -> Self {
        let cap = cap.clamp(1, files.max(1));
        Self {
            open,
            slot_of: vec![NONE; files as usize],
            held: Vec::with_capacity(cap as usize),
            hand: 0,
            error: None,
        }
    }

    /// The most files open at once (io_uring's registered table).
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    pub(crate) fn capacity(&self) -> usize {
        self.held.capacity()
    }

    /// The slot holding `file`, opened if it was not (closing the least
    /// recently used idle file if the table is full), marked busy until
    /// `release`. None if it could not be opened: `failure` says why.
    #[inline]
    pub(crate) fn acquire(&mut self, file: u32) -> Option<(u32, bool)> {
        let known = *self.slot_of.get(file as usize)?;
        if known != NONE {
            let h = &mut self.held[known as usize];
            h.used = true;
            h.busy += 1;
            return Some((known, false));
        }
        let slot = self.free_slot()?;
        let fd = match (self.open)(file) {
            Ok(fd) => fd,
            Err(why) => {
                self.error.get_or_insert_with(|| why.to_string());
                return None;
            }
        };
        self.held[slot] = Held {
            file,
            fd: Some(fd),
            busy: 1,
            // Set by the next hit: a file used once goes before one used
            // again (second chance), so one pass over the set does not
            // push out the files a skewed run keeps coming back to.
            used: false,
        };
        self.slot_of[file as usize] = slot as u32;
        Some((slot as u32, true))
    }

    /// Opens each file of the set once and closes it again: the proof,
    /// before any I/O, that every one of them opens.
    pub(crate) fn open_each(&mut self) -> crate::error::Result<()> {
        for i in 0..self.slot_of.len() {
            drop((self.open)(i as u32)?);
        }
        Ok(())
    }

    /// An I/O on `slot` completed.
    #[inline]
    pub(crate) fn release(&mut self, slot: u32) {
        if let Some(h) = self.held.get_mut(slot as usize) {
            h.busy = h.busy.saturating_sub(1);
        }
    }

    /// The descriptor in `slot` (one `acquire` returned).
    #[inline]
    pub(crate) fn fd(&self, slot: u32) -> Option<&OwnedFd> {
        self.held.get(slot as usize)?.fd.as_ref()
    }

    /// Why a file could not be opened, once one could not.
    pub(crate) fn failure(&self) -> Option<String> {
        self.error.clone()
    }

    /// A slot to open a file into: an unused one while the table grows,
    /// then the first idle one the clock hand finds not used since it last
    /// passed (closed here).
    fn free_slot(&mut self) -> Option<usize> {
        let cap = self.held.capacity();
        if self.held.len() < cap {
            self.held.push(Held {
                file: NONE,
                fd: None,
                busy: 0,
                used: false,
            });
            return Some(self.held.len() - 1);
        }
        // Two turns clear every used bit; a third finds nothing only when
        // every slot is busy, which the plan's capacity rules out.
        for _ in 0..cap.saturating_mul(3) {
            let i = self.hand;
            self.hand = (self.hand + 1) % cap;
            let h = &mut self.held[i];
            if h.busy > 0 {
                continue;
            }
            if h.used {
                h.used = false;
                continue;
            }
            if h.file != NONE {
                self.slot_of[h.file as usize] = NONE;
            }
            h.file = NONE;
            h.fd = None; // closes it
            return Some(i);
        }
        self.error.get_or_insert_with(|| {
            format!("all {cap} open files of this thread have I/O in flight (a bug: the plan keeps at least as many files open as I/Os in flight)")
        });
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// A cache over `files` files of a temporary directory, with the files
    /// opened so far (in order) recorded.
    fn cache(files: u32, cap: u32) -> (OnDemand, Arc<Mutex<Vec<u32>>>, tempfile::TempDir) {
        let t = tempfile::tempdir().unwrap();
        for i in 0..files {
            std::fs::write(t.path().join(i.to_string()), [i as u8]).unwrap();
        }
        let log = Arc::new(Mutex::new(Vec::new()));
        let (dir, seen) = (t.path().to_path_buf(), log.clone());
        let open: Opener = Box::new(move |i| {
            seen.lock().unwrap().push(i);
            std::fs::File::open(dir.join(i.to_string()))
                .map(OwnedFd::from)
                .map_err(|e| crate::error::VbError::target(e.to_string()))
        });
        (OnDemand::new(open, files, cap), log, t)
    }

    fn first_byte(c: &OnDemand, slot: u32) -> u8 {
        let mut b = [0u8; 1];
        crate::io::sys::io::pread(c.fd(slot).unwrap(), &mut b, 0).unwrap();
        b[0]
    }

    #[test]
    fn each_file_is_reached_through_its_own_descriptor() {
        let (mut c, _, _t) = cache(10, 3);
        for f in [0u32, 7, 3, 9, 0, 5] {
            let (slot, _) = c.acquire(f).unwrap();
            assert_eq!(first_byte(&c, slot), f as u8, "file {f}");
            c.release(slot);
        }
    }

    #[test]
    fn a_hit_opens_nothing_and_at_most_cap_files_are_open() {
        let (mut c, log, _t) = cache(10, 3);
        for f in [1u32, 2, 1, 2, 1] {
            let (s, _) = c.acquire(f).unwrap();
            c.release(s);
        }
        assert_eq!(*log.lock().unwrap(), vec![1, 2], "hits reopen nothing");
        for f in 0..10 {
            let (s, _) = c.acquire(f).unwrap();
            c.release(s);
        }
        let open = c.held.iter().filter(|h| h.fd.is_some()).count();
        assert_eq!(open, 3, "never more than the capacity open");
        assert_eq!(c.capacity(), 3);
    }

    #[test]
    fn a_file_with_io_in_flight_is_never_closed() {
        let (mut c, _, _t) = cache(10, 2);
        let (busy, _) = c.acquire(4).unwrap(); // not released: in flight
        for f in [0u32, 1, 2, 3, 5, 6] {
            let (s, _) = c.acquire(f).unwrap();
            c.release(s);
        }
        assert_eq!(first_byte(&c, busy), 4, "the busy file kept its slot");
        // With both slots busy, a third file cannot be opened, and says why.
        let (other, _) = c.acquire(0).unwrap();
        assert!(c.acquire(9).is_none());
        assert!(c.failure().unwrap().contains("in flight"));
        c.release(other);
    }

    #[test]
    fn the_recently_used_file_outlives_one_used_once() {
        let (mut c, log, _t) = cache(10, 2);
        for f in [0u32, 1, 0, 2, 0] {
            let (s, _) = c.acquire(f).unwrap();
            c.release(s);
        }
        // 0 was used again before 2 came: 1 made room, 0 stayed.
        assert_eq!(*log.lock().unwrap(), vec![0, 1, 2]);
    }

    #[test]
    fn a_file_that_will_not_open_fails_its_io_with_the_reason() {
        let (mut c, _, t) = cache(4, 2);
        std::fs::remove_file(t.path().join("3")).unwrap();
        assert!(c.acquire(3).is_none());
        assert!(
            c.failure().unwrap().contains("No such file"),
            "{:?}",
            c.failure()
        );
        assert!(c.acquire(99).is_none(), "a file past the set is refused");
    }
}
