//! One run at a time on a set over NFS: a lock file created exclusively
//! in the set's directory, holding who made it (host, pid), removed when
//! the run ends. NFS has no flock a user-space client can lean on (NLM is
//! a side protocol; NFSv4.1 byte-range locks die with the session, which
//! is what we want, but are not in the client yet), so the file's
//! existence is the lock: a second run finds it and is refused with the
//! holder's name. A run killed outright leaves it behind; the next run on
//! the same host finds its pid gone and takes the lock over (the file is
//! proven ours first), and a lock from another host is left for the user.
//! Its name differs from the local flock file's, which persists between
//! runs and would read as held here.

use std::sync::Arc;

use super::{NfsDir, Shared, attr_of};
use crate::error::{Result, VbError};
use crate::io::backend::{Dir, Entry, Held};
use crate::io::gate::owner::set_file_ours;
use crate::proto::nfs::Fh;

/// The lock file's name in a set's directory.
pub(crate) const NFS_LOCK_NAME: &str = ".volbench-nfs-lock";

/// The most a lock file holds.
const LOCK_CAP: usize = 4096;

#[derive(Debug)]
struct NfsLock {
    shared: Arc<Shared>,
    dir: Fh,
    id: u64,
}

impl Held for NfsLock {}

impl Drop for NfsLock {
    fn drop(&mut self) {
        let mut c = self.shared.client();
        if let Ok((_, a)) = c.lookup(&self.dir, NFS_LOCK_NAME.as_bytes()) {
            if a.fileid == self.id {
                let _ = c.remove(&self.dir, NFS_LOCK_NAME.as_bytes());
            }
        }
    }
}

fn holder() -> String {
    format!(
        "{} {}\n",
        crate::io::host::this_host().hostname,
        std::process::id()
    )
}

/// Whether the lock text names a process of this host that is gone.
fn stale(text: &str) -> bool {
    let mut w = text.split_whitespace();
    let (Some(host), Some(pid)) = (w.next(), w.next().and_then(|p| p.parse::<u32>().ok())) else {
        return false;
    };
    host == crate::io::host::this_host().hostname
        && pid != std::process::id()
        && !std::path::Path::new(&format!("/proc/{pid}")).exists()
}

/// Takes the set's lock, or says who holds it.
pub(super) fn take(dir: &NfsDir) -> Result<Box<dyn Held>> {
    for _ in 0..2 {
        // Made new, it is ours; else the name is taken (below).
        if let Some((f, a)) = dir.create_new_or_taken(NFS_LOCK_NAME)? {
            let text = holder();
            let mut done = 0;
            while done < text.len() {
                match f.write_at(&text.as_bytes()[done..], done as u64) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => done += n,
                }
            }
            let _ = f.settle();
            return Ok(Box::new(NfsLock {
                shared: dir.shared().clone(),
                dir: *dir.handle(),
                id: a.id,
            }));
        }
        let Entry::Regular(a) = dir.entry(NFS_LOCK_NAME)? else {
            continue;
        };
        let text = dir
            .read_capped(NFS_LOCK_NAME, LOCK_CAP)?
            .unwrap_or_default();
        let text = String::from_utf8_lossy(&text);
        let ours = set_file_ours(&a, dir.uid(), attr_of_dir(dir)?).is_ok();
        if stale(&text) && ours {
            dir.remove_if_ours(NFS_LOCK_NAME, a.id);
            continue;
        }
        return Err(VbError::refused(format!(
            "the file set at {} is in use by another run ({} holds {}); if no run uses it, \
             remove that file",
            dir.path().display(),
            crate::units::bounds::one_line(text.trim()),
            NFS_LOCK_NAME
        )));
    }
    Err(VbError::refused(format!(
        "cannot take the lock of {}: {NFS_LOCK_NAME} keeps changing",
        dir.path().display()
    )))
}

fn attr_of_dir(dir: &NfsDir) -> Result<u64> {
    let a =
        dir.shared().client().getattr(dir.handle()).map_err(|e| {
            VbError::target(format!("cannot inspect {}: {e}", dir.path().display()))
        })?;
    Ok(attr_of(&a).dev)
}
