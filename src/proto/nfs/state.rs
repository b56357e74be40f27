//! What the client keeps between calls, and what it does with each reply
//! (the transport's `Sink`): the file table (handles and NFSv4.1 open
//! stateids), the user slots (an I/O larger than rsize or wsize is several
//! calls, one completion), the NFSv4.1 session's slots, and the
//! completions waiting to be reaped. Nothing here allocates per call.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use super::error::{NfsError, code};
use super::types::{DirPage, Fh, OpKind, Reply, Stable, Version};
use super::v3;
use super::v4::{SessionId, Stateid, reply as v4reply};
use crate::proto::rpc::RpcError;
use crate::proto::rpc::calls::Calls;
use crate::proto::rpc::conn::{Outcome, Sink};
use crate::proto::rpc::msg::Refusal;
use crate::proto::rpc::xdr::XdrError;

/// The tag of the client's own blocking calls (their results decoded).
pub(crate) const INTERNAL: u64 = u64::MAX;
/// The tag of raw blocking calls (their results kept as bytes).
pub(crate) const RAW: u64 = u64::MAX - 1;
/// No NFSv4.1 slot.
pub(crate) const NO_SLOT: u32 = u32::MAX;
/// DELAY or GRACE answers one call may get before it fails.
const MAX_DELAYS: u8 = 30;

/// One finished request: the slot it was queued in and what came back.
#[derive(Debug, Clone, Copy)]
pub struct Completion {
    pub slot: u32,
    pub result: Result<Reply, NfsError>,
}

/// An open file.
#[derive(Debug, Clone, Copy)]
pub(crate) struct OpenFile {
    pub(crate) fh: Fh,
    pub(crate) stateid: Stateid,
    /// NFSv4.1: the server forgot its stateid; opened again before use.
    pub(crate) stale: bool,
    pub(crate) closed: bool,
}

/// A user slot: the calls of one request still out, and what they sum to.
#[derive(Debug, Clone, Copy)]
pub(crate) struct UserSlot {
    pub(crate) left: u32,
    pub(crate) bytes: u32,
    pub(crate) eof: bool,
    pub(crate) committed: Stable,
    pub(crate) verf: [u8; 8],
    pub(crate) error: Option<NfsError>,
    pub(crate) reply: Option<Reply>,
    pub(crate) stateid: Option<Stateid>,
}

impl UserSlot {
    const IDLE: UserSlot = UserSlot {
        left: 0,
        bytes: 0,
        eof: false,
        committed: Stable::FileSync,
        verf: [0; 8],
        error: None,
        reply: None,
        stateid: None,
    };
}

/// Per call: what the client needs at its reply.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CallExtra {
    pub(crate) seq_at: u32,
    pub(crate) stateid_at: u32,
    pub(crate) file: u32,
    pub(crate) slot: u32,
    pub(crate) delays: u8,
    pub(crate) retry_at: Option<Instant>,
    pub(crate) open: bool,
}

impl CallExtra {
    pub(crate) const NONE: CallExtra = CallExtra {
        seq_at: 0,
        stateid_at: 0,
        file: u32::MAX,
        slot: NO_SLOT,
        delays: 0,
        retry_at: None,
        open: false,
    };
}

/// An NFSv4.1 session.
pub(crate) struct Session {
    pub(crate) clientid: u64,
    pub(crate) id: SessionId,
    pub(crate) owner: Vec<u8>,
    pub(crate) verifier: [u8; 8],
    /// Next sequence number per slot.
    pub(crate) seq: Vec<u32>,
    pub(crate) free: Vec<u32>,
    /// Slots not used again (their sequence is uncertain).
    pub(crate) retired: u32,
    /// The server's target highest slot: slots above are not handed out.
    pub(crate) target: u32,
    pub(crate) max_req: u32,
    pub(crate) max_resp: u32,
    /// The server forgot the session (restarted): set up again before use.
    pub(crate) lost: bool,
    pub(crate) lease: Duration,
    pub(crate) last_sequence: Instant,
    /// When it was made: a reply to a call sent before is the old
    /// session's (its slot is not this session's).
    pub(crate) created: Instant,
}

impl Session {
    pub(crate) fn take(&mut self) -> Option<(u32, u32)> {
        let slot = self.free.pop()?;
        let s = self.seq[slot as usize];
        self.seq[slot as usize] = s.wrapping_add(1);
        self.last_sequence = Instant::now();
        Some((slot, s))
    }

    pub(crate) fn give_back(&mut self, slot: u32) {
        if slot != NO_SLOT && (slot as usize) < self.seq.len() {
            if slot <= self.target {
                self.free.push(slot);
            } else {
                self.retired += 1;
            }
        }
    }

    pub(crate) fn highest(&self) -> u32 {
        self.seq.len() as u32 - 1
    }
}

pub(crate) struct State {
    pub(crate) version: Version,
    pub(crate) files: Vec<OpenFile>,
    /// Numbers of closed files, given again to the next files opened, so a
    /// client that opens and closes millions (a metadata run) stays small.
    pub(crate) free_files: Vec<u32>,
    pub(crate) user: Vec<UserSlot>,
    pub(crate) extra: Vec<CallExtra>,
    pub(crate) out: Vec<Completion>,
    pub(crate) internal: Option<Result<(Reply, Option<Stateid>), NfsError>>,
    pub(crate) raw: Vec<u8>,
    pub(crate) page: DirPage,
    pub(crate) v4: Option<Session>,
    /// NFSv4.1 calls encoded and waiting for a slot, oldest first.
    pub(crate) waiting: VecDeque<u32>,
    /// NFSv4.1 calls kept to be sent again (after DELAY, a lost session,
    /// a forgotten stateid).
    pub(crate) parked: Vec<u32>,
}

impl State {
    pub(crate) fn new(version: Version, depth: usize, max_calls: usize) -> State {
        State {
            version,
            files: Vec::new(),
            free_files: Vec::new(),
            user: vec![UserSlot::IDLE; depth],
            extra: vec![CallExtra::NONE; max_calls],
            out: Vec::with_capacity(depth.max(1) * 2),
            internal: None,
            raw: Vec::new(),
            page: DirPage::default(),
            v4: None,
            waiting: VecDeque::with_capacity(max_calls),
            parked: Vec::with_capacity(max_calls),
        }
    }

    /// A call done: its user slot's sum, and the completion when it was
    /// the slot's last call.
    fn finish(
        &mut self,
        tag: u64,
        kind: OpKind,
        result: Result<(Reply, Option<Stateid>), NfsError>,
    ) {
        if tag == RAW {
            self.internal = Some(result);
            return;
        }
        let slot = if tag == INTERNAL {
            self.user.len() as u32 - 1
        } else {
            tag as u32
        };
        let Some(u) = self.user.get_mut(slot as usize) else {
            return;
        };
        match result {
            Err(e) => {
                u.error.get_or_insert(e);
            }
            Ok((r, st)) => match r {
                Reply::Read { count, eof } => {
                    u.bytes += count;
                    u.eof |= eof;
                }
                Reply::Write {
                    count,
                    committed,
                    verf,
                } => {
                    u.bytes += count;
                    if (committed as u32) < (u.committed as u32) {
                        u.committed = committed;
                    }
                    u.verf = verf;
                }
                other => {
                    u.reply = Some(other);
                    u.stateid = st;
                }
            },
        }
        u.left = u.left.saturating_sub(1);
        if u.left > 0 {
            return;
        }
        let u = std::mem::replace(u, UserSlot::IDLE);
        let result = match (u.error, kind) {
            (Some(e), _) => Err(e),
            (None, OpKind::Read) => Ok(Reply::Read {
                count: u.bytes,
                eof: u.eof,
            }),
            (None, OpKind::Write) => Ok(Reply::Write {
                count: u.bytes,
                committed: u.committed,
                verf: u.verf,
            }),
            (None, _) => Ok(u.reply.unwrap_or(Reply::Done)),
        };
        if tag == INTERNAL {
            self.internal = Some(result.map(|r| (r, u.stateid)));
        } else {
            self.out.push(Completion { slot, result });
        }
    }

    fn decode(
        &mut self,
        kind: OpKind,
        results: &[u8],
        data_len: usize,
    ) -> (Result<(Reply, Option<Stateid>), NfsError>, bool) {
        match self.version {
            Version::V3 => (
                v3::decode(kind, results, data_len, &mut self.page).map(|r| (r, None)),
                true,
            ),
            Version::V41 => {
                let mut seq = None;
                let r = v4reply::decode(kind, results, data_len, &mut self.page, &mut seq);
                if let (Some(s), Some(sess)) = (seq, self.v4.as_mut()) {
                    sess.target = s.target.min(sess.highest());
                }
                (r.map(|d| (d.reply, d.stateid)), seq.is_some())
            }
        }
    }
}

impl Sink for State {
    fn data_at(&mut self, _kind: u8, results: &[u8]) -> Result<Option<(usize, usize)>, XdrError> {
        match self.version {
            Version::V3 => v3::data_at(results),
            Version::V41 => v4reply::data_at(results),
        }
    }

    fn reply(
        &mut self,
        id: u32,
        calls: &mut Calls,
        results: Result<&[u8], Refusal>,
        data_len: usize,
    ) -> Outcome {
        let c = *calls.get(id);
        let kind = OpKind::from_index(c.kind).unwrap_or(OpKind::Null);
        let x = self.extra[id as usize];
        if c.tag == RAW {
            if let Ok(b) = results {
                self.raw.clear();
                self.raw.extend_from_slice(b);
            }
            self.internal = Some(
                results
                    .map(|_| (Reply::Done, None))
                    .map_err(|r| NfsError::Rpc {
                        op: kind,
                        err: RpcError::Refused(r),
                    }),
            );
            return Outcome::Ok;
        }
        let (result, sequenced) = match results {
            Ok(b) => self.decode(kind, b, data_len),
            Err(r) => (
                Err(NfsError::Rpc {
                    op: kind,
                    err: RpcError::Refused(r),
                }),
                false,
            ),
        };
        if let Some(s) = self.v4.as_mut() {
            let old = c.sent < s.created;
            if old {
                // The old session's slot: nothing to give back.
            } else if sequenced {
                s.give_back(x.slot);
            } else if x.slot != NO_SLOT {
                // SEQUENCE itself failed: the server's sequence for this
                // slot may differ from ours; not used again.
                s.retired += 1;
            }
            if let Some(code) = result.as_ref().err().and_then(|e| e.status()) {
                let lost = matches!(
                    code,
                    code::BADSESSION | code::DEADSESSION | code::STALE_CLIENTID
                );
                if lost && !old {
                    s.lost = true;
                }
                if lost && !c.idempotent && c.sends > 1 {
                    // Sent before the server lost the session: it may
                    // have been done then.
                    let err = NfsError::Rpc {
                        op: kind,
                        err: RpcError::OutcomeUnknown,
                    };
                    self.finish(c.tag, kind, Err(err));
                    return Outcome::Failed;
                }
                if let Some(outcome) = self.v4_recover(id, code) {
                    return outcome;
                }
            }
        }
        let ok = result.is_ok();
        let result = match result {
            Ok((Reply::Handle { fh, attr }, st)) if x.open => {
                let file = self.add_file(OpenFile {
                    fh,
                    stateid: st.unwrap_or([0; 16]),
                    stale: false,
                    closed: false,
                });
                Ok((Reply::Opened { file, fh, attr }, st))
            }
            r => r,
        };
        self.finish(c.tag, kind, result);
        if ok { Outcome::Ok } else { Outcome::Failed }
    }

    fn fail(&mut self, id: u32, calls: &mut Calls, err: RpcError) {
        let c = *calls.get(id);
        let kind = OpKind::from_index(c.kind).unwrap_or(OpKind::Null);
        let x = self.extra[id as usize];
        if let Some(s) = self.v4.as_mut() {
            if x.slot != NO_SLOT && c.sent >= s.created {
                s.retired += 1;
            }
        }
        self.finish(c.tag, kind, Err(NfsError::Rpc { op: kind, err }));
    }
}

impl State {
    /// A file opened: its number, a closed file's when there is one.
    pub(crate) fn add_file(&mut self, f: OpenFile) -> u32 {
        match self.free_files.pop() {
            Some(n) => {
                self.files[n as usize] = f;
                n
            }
            None => {
                self.files.push(f);
                self.files.len() as u32 - 1
            }
        }
    }

    /// An NFSv4.1 error the client recovers from by sending the call again
    /// later: after DELAY or GRACE, after setting up a lost session, after
    /// opening a file whose stateid the server forgot.
    fn v4_recover(&mut self, id: u32, code: u32) -> Option<Outcome> {
        let x = &mut self.extra[id as usize];
        match code {
            code::DELAY | code::GRACE if x.delays < MAX_DELAYS => {
                x.delays += 1;
                x.retry_at = Some(Instant::now() + Duration::from_millis(100 << x.delays.min(4)));
            }
            code::BADSESSION | code::DEADSESSION | code::STALE_CLIENTID => {
                x.retry_at = None;
            }
            code::BAD_STATEID | code::STALE_STATEID | code::EXPIRED | code::ADMIN_REVOKED
                if x.file != u32::MAX && x.delays < MAX_DELAYS =>
            {
                x.delays += 1;
                if let Some(f) = self.files.get_mut(x.file as usize) {
                    f.stale = true;
                }
                x.retry_at = None;
            }
            _ => return None,
        }
        self.extra[id as usize].slot = NO_SLOT;
        self.parked.push(id);
        Some(Outcome::Retry)
    }
}
