//! One run at a time on a set over SMB: a lock file created exclusively
//! (FILE_CREATE) in the set's directory, holding who made it (host, pid),
//! removed when the run ends. SMB's byte-range locks die with the session,
//! but a second client's open of the file would not see them as a held
//! set, so, as over NFS, the file's existence is the lock: a second run
//! finds it and is refused with the holder's name. A run killed outright
//! leaves it behind; the next run on the same host finds its pid gone and
//! takes the lock over (the file proven ours first), and a lock from
//! another host is left for the user. Its name differs from the local
//! flock file's, which persists between runs and would read as held here.

use std::sync::Arc;

use super::{Shared, SmbDir};
use crate::error::{Result, VbError};
use crate::io::backend::{Dir, Entry, Held};
use crate::io::gate::owner::set_file_ours;
use crate::proto::smb::session::ops::Open;

/// The lock file's name in a set's directory.
pub(crate) const SMB_LOCK_NAME: &str = ".volbench-smb-lock";

/// The most a lock file holds.
const LOCK_CAP: usize = 4096;

#[derive(Debug)]
struct SmbLock {
    shared: Arc<Shared>,
    /// The lock's path from the share's root.
    at: String,
    id: u64,
}

impl Held for SmbLock {}

impl Drop for SmbLock {
    fn drop(&mut self) {
        let mut c = self.shared.client();
        let r = match c.open(&self.at, Open::Change) {
            Ok(r) => r,
            // The server restarted since the lock was taken (the run's
            // sessions reconnected): this client learns it here, dials
            // once more, and removes the lock as ever, proven first.
            Err(e) if e.needs_reconnect() && c.reconnect().is_ok() => {
                match c.open(&self.at, Open::Change) {
                    Ok(r) => r,
                    Err(_) => return,
                }
            }
            Err(_) => return,
        };
        let same = c
            .file_info(r.file_id)
            .is_ok_and(|i| i.file_id == self.id && !i.directory && i.links == 1);
        if same {
            let _ = c.set_info(
                r.file_id,
                crate::proto::smb::msg::info::SetInfo::DeleteOnClose,
            );
        }
        let _ = c.close(r.file_id);
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
pub(super) fn take(dir: &SmbDir) -> Result<Box<dyn Held>> {
    for _ in 0..2 {
        // Made new, it is ours; else the name is taken (below).
        let mut c = dir.shared.client();
        let made = dir.create_or_taken(&mut c, SMB_LOCK_NAME)?;
        if let Some((f, a)) = made {
            // The owner the server gives what this session makes: whose a
            // tree's files are (`tree.rs`). A server that names none
            // leaves it unknown, which only a tree refuses.
            let me = c.owner(f).ok().flatten();
            *dir.shared.me.lock().unwrap_or_else(|e| e.into_inner()) = me;
            drop(c);
            let f = dir.file(f);
            let text = holder();
            let mut done = 0;
            while done < text.len() {
                match f.write_at(&text.as_bytes()[done..], done as u64) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => done += n,
                }
            }
            let _ = f.settle();
            let at = dir.at(SMB_LOCK_NAME)?;
            return Ok(Box::new(SmbLock {
                shared: dir.shared().clone(),
                at,
                id: a.id,
            }));
        }
        drop(c);
        let Entry::Regular(a) = dir.entry(SMB_LOCK_NAME)? else {
            continue;
        };
        let text = dir
            .read_capped(SMB_LOCK_NAME, LOCK_CAP)?
            .unwrap_or_default();
        let text = String::from_utf8_lossy(&text);
        let ours = set_file_ours(&a, dir.uid(), dir.shared().dev).is_ok();
        if stale(&text) && ours {
            dir.remove_if_ours(SMB_LOCK_NAME, a.id);
            continue;
        }
        return Err(VbError::refused(format!(
            "the file set at {} is in use by another run ({} holds {}); if no run uses it, \
             remove that file",
            dir.path().display(),
            crate::units::bounds::one_line(text.trim()),
            SMB_LOCK_NAME
        )));
    }
    Err(VbError::refused(format!(
        "cannot take the lock of {}: {SMB_LOCK_NAME} keeps changing",
        dir.path().display()
    )))
}
