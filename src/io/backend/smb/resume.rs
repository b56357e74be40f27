//! A worker's engine when its SMB server goes away mid-run: the session
//! made again within the URL's `reconnect=` seconds
//! (`Client::reconnect_until`: a new connection, NEGOTIATE, SESSION_SETUP
//! with the credentials already held, the channels bound again, the
//! share connected), then every file the worker had open reopened by its
//! path and proven the file prepared exactly as the first open proved it
//! (`open_proven`: regular, no reparse point, the file id the marker
//! lists, one link for a writer), and the READs and WRITEs that were in
//! flight sent again. A server not back in time is lost (one line,
//! `--on-host-loss`); a file that no longer proves the set's fails the
//! run with its reason and is never written.
//!
//! Why the requests in flight are sent again rather than failed: each is
//! a READ or WRITE of a whole buffer at an offset, which the worker leaves
//! alone until its completion (`Engine::queue`'s contract), so sending it
//! twice writes the same bytes at the same place, or reads them again; a
//! failed one would end the run that a reconnect was meant to keep. The
//! result says it: `retrans` of READ and WRITE in `runs[].protocol.ops`,
//! the channels' `reconnects`, and "sent again" in the summary line.

use std::time::{Duration, Instant};

use super::attr_of;
use crate::error::VbError;
use crate::io::gate::owner::Kind;
use crate::io::workload::IoOp;
use crate::proto::smb::error::SmbError;
use crate::proto::smb::msg::FileId;
use crate::proto::smb::msg::security::Sid;
use crate::proto::smb::session::client::Client;
use crate::proto::smb::session::ops::Open;

/// One file of the worker's, as it is opened again.
pub(super) struct Held {
    /// From the share's root, '/'-separated.
    pub(super) at: String,
    /// The URL of the file, for messages.
    pub(super) shown: String,
    /// The file id the marker lists (`Attr::id`).
    pub(super) id: u64,
}

/// How every file of a worker is opened and what proves it the set's.
#[derive(Clone, Copy)]
pub(super) struct Proof {
    /// The share's stand-in file system id (`attr_of`).
    pub(super) dev: u64,
    pub(super) how: Open,
    /// Who this session's files belong to (the owner the server gave the
    /// run's lock file, `lock::take`): a file written must name it as its
    /// owner. Unknown when the server named none; then the id, kind and
    /// link count prove it alone, as they do a read.
    pub(super) owner: Option<Sid>,
}

/// Why a file could not be opened as the set's.
pub(super) enum Unproven {
    /// The server failed the open or the query.
    Smb(String, SmbError),
    /// Something else is at the name now.
    Replaced,
    /// The file is the set's, but another user owns it now.
    Foreign,
}

impl Unproven {
    pub(super) fn into_error(self, f: &Held, when: &str) -> VbError {
        match self {
            Unproven::Smb(what, e) => VbError::target(format!("cannot {what} {}: {e}", f.shown)),
            Unproven::Replaced => VbError::refused(format!(
                "refusing to use {}: it was replaced {when}",
                f.shown
            )),
            Unproven::Foreign => VbError::refused(format!(
                "refusing to write {}: another user owns it (its owner changed {when})",
                f.shown
            )),
        }
    }
}

/// Opens `f` as `p.how` and proves it the file prepared: a regular file
/// (never a reparse point, never one being deleted) whose id is the one
/// recorded, of one link and of this session's owner when it is written.
/// The first open and every reopen after a reconnect alike; an unproven
/// handle is closed unused.
pub(super) fn open_proven(client: &mut Client, f: &Held, p: Proof) -> Result<FileId, Unproven> {
    let r = client
        .open(&f.at, p.how)
        .map_err(|e| Unproven::Smb("open".into(), e))?;
    let proof = prove(client, r.file_id, f, p);
    if proof.is_err() {
        let _ = client.close(r.file_id);
    }
    proof.map(|()| r.file_id)
}

fn prove(client: &mut Client, id: FileId, f: &Held, p: Proof) -> Result<(), Unproven> {
    let info = client
        .file_info(id)
        .map_err(|e| Unproven::Smb("inspect".into(), e))?;
    let a = attr_of(&info, p.dev);
    let write = p.how != Open::Read;
    if a.kind != Kind::Regular || a.id != f.id || (write && a.links != 1) {
        return Err(Unproven::Replaced);
    }
    if !write {
        return Ok(());
    }
    match super::owner::stamp(client, id, a, p.owner) {
        Ok(a) if a.uid == super::OWNER => Ok(()),
        Ok(_) => Err(Unproven::Foreign),
        Err(e) => Err(Unproven::Smb("read the owner of".into(), e)),
    }
}

/// An I/O handed to the engine and not yet completed: what is sent again
/// after a reconnect.
#[derive(Clone, Copy)]
pub(super) struct InFlight {
    pub(super) op: IoOp,
    pub(super) buf: *mut u8,
}

/// How a run on a lost session ended.
pub(super) enum Ended {
    /// The server did not come back within `reconnect=`.
    Lost(String),
    /// It came back, and a file is no longer the set's (or the server
    /// refused what a reopen asked).
    Refused(String),
    /// The run was stopped while the server was away: the I/Os in flight
    /// are given up (`Engine::abandon`), not failed.
    Stopped,
}

/// Makes the session again and reopens every file of `files` as `how`,
/// proven; the ids to use from now on, in `files`' order. Bounded by
/// `within` from the start: a server that answers and then drops again
/// while the files are reopened is dialled again until then, or until
/// `stopped` says the run was stopped (then `Ended::Stopped`).
pub(super) fn resume(
    client: &mut Client,
    files: &[Held],
    proof: Proof,
    within: Duration,
    cause: &str,
    stopped: &dyn Fn() -> bool,
) -> Result<Vec<FileId>, Ended> {
    let deadline = Instant::now() + within;
    let server = client.target().addr;
    loop {
        if let Err(e) = client.reconnect_until(deadline, stopped) {
            if stopped() {
                return Err(Ended::Stopped);
            }
            return Err(Ended::Lost(format!(
                "the SMB server {server} was lost ({cause}) and did not come back within {} s: {e}",
                within.as_secs()
            )));
        }
        let mut ids = Vec::with_capacity(files.len());
        let mut again = false;
        for f in files {
            match open_proven(client, f, proof) {
                Ok(id) => ids.push(id),
                Err(Unproven::Smb(_, e)) if e.needs_reconnect() && Instant::now() < deadline => {
                    again = true;
                    break;
                }
                Err(u) => {
                    let why = u.into_error(f, "while the SMB server was away (after a reconnect)");
                    return Err(Ended::Refused(why.to_string()));
                }
            }
        }
        if !again {
            return Ok(ids);
        }
    }
}
