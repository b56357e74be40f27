//! The pipelined NFS client, in `io::engine`'s shape: `queue` a request in
//! a slot (never blocks: encoded into the call's room and put on a
//! connection's send queue, or, for NFSv4.1, held until a session slot is
//! free), then `poll` sends what is queued and reaps completions. `call`
//! is the blocking form, for set-up and metadata.
//!
//! Queue depth: at most `Options::depth` user requests, each split into
//! calls of at most rsize/wsize bytes; with NFSv4.1 the session's slots
//! bound the calls on the wire (`Client::max_in_flight` says how many), and
//! the rest wait in the client, which shows as execute time above
//! round-trip time.

use std::time::{Duration, Instant};

use super::error::NfsError;
use super::state::{CallExtra, Completion, INTERNAL, NO_SLOT, OpenFile, RAW, Session, State};
use super::types::{DirPage, Fh, OpKind, Reply, Request, Version};
use super::v3;
use super::v4::{self, Ctx, Stateid, patch_sequence, patch_stateid, reply as v4reply};
use crate::proto::rpc::RpcError;
use crate::proto::rpc::stats::ConnStats;
use crate::proto::rpc::transport::{Data, Transport};
use crate::proto::rpc::xdr::Enc;

pub struct Client {
    pub(super) rpc: Transport,
    pub(super) st: State,
    pub(super) rsize: u32,
    pub(super) wsize: u32,
    /// A blocking call's limit: every send's timeout and the reconnects.
    pub(super) call_limit: Duration,
    /// Inside `after_round`: its own blocking calls (a recovery, a reopen)
    /// must not start another.
    in_round: bool,
}

impl Client {
    pub(super) fn new(rpc: Transport, version: Version, depth: usize) -> Client {
        let max_calls = rpc.calls.capacity();
        let cfg = rpc.config();
        let call_limit = cfg.call_timeout * cfg.max_sends as u32 + cfg.reconnect_for;
        Client {
            st: State::new(version, depth + 1, max_calls),
            rpc,
            rsize: 64 * 1024,
            wsize: 64 * 1024,
            call_limit,
            in_round: false,
        }
    }

    /// The server address the connections reach.
    pub(crate) fn server_addr(&self) -> std::net::SocketAddr {
        self.rpc.addr()
    }

    pub(crate) fn version(&self) -> Version {
        self.st.version
    }

    /// The largest READ and WRITE sent (larger requests are split).
    pub fn rsize(&self) -> u32 {
        self.rsize
    }

    pub fn wsize(&self) -> u32 {
        self.wsize
    }

    /// What each connection saw.
    pub fn conn_stats(&self) -> impl Iterator<Item = &ConnStats> {
        self.rpc.conns.iter().map(|c| &c.stats)
    }

    /// Starts every connection's figures over (a run's measured phase).
    pub fn reset_stats(&mut self) {
        for c in &mut self.rpc.conns {
            c.stats = ConnStats::new();
        }
    }

    /// Connections the client keeps (the URL's `nconnect`).
    pub fn connections(&self) -> usize {
        self.rpc.conns.len()
    }

    /// Connections that are up now.
    pub fn connections_up(&self) -> usize {
        self.rpc.conns.iter().filter(|c| c.stream.is_some()).count()
    }

    /// The server is lost: every connection down and dialled again in
    /// vain for the URL's `reconnect=` (a run may leave its target out).
    pub fn server_lost(&self) -> bool {
        self.rpc.gone()
    }

    /// The last READDIR's entries.
    pub fn dir_page(&self) -> &DirPage {
        &self.st.page
    }

    /// Queues `req` in user slot `slot` (below `Options::depth`); its
    /// completion comes from a later `poll`. Returns an error at once when
    /// the request cannot be made (a bad name, a file not open, a slot in
    /// use, every call in flight).
    ///
    /// # Safety
    ///
    /// For a READ or WRITE, `Engine::queue`'s contract: `buf` points to
    /// `len` bytes that stay valid, and are neither read, written, moved
    /// nor freed by anyone else, until `poll` returns this slot's
    /// completion.
    pub unsafe fn queue(&mut self, slot: u32, req: Request) -> Result<(), NfsError> {
        if slot as usize >= self.st.user.len() - 1 {
            return Err(invalid(req.kind(), "a slot past the client's depth"));
        }
        self.start(slot as u64, req, false)
    }

    /// Splits, encodes and sends (or holds) the calls of one request.
    fn start(&mut self, tag: u64, req: Request, open: bool) -> Result<(), NfsError> {
        let kind = req.kind();
        req.check_names().map_err(|w| invalid(kind, w))?;
        let uslot = if tag == INTERNAL {
            self.st.user.len() - 1
        } else {
            tag as usize
        };
        if self.st.user[uslot].left > 0 {
            return Err(invalid(kind, "a slot whose request is still in flight"));
        }
        let (file, offset, len, max) = match req {
            Request::Read {
                file, offset, len, ..
            } => (file, offset, len, self.rsize),
            Request::Write {
                file, offset, len, ..
            } => (file, offset, len, self.wsize),
            Request::Commit { file, .. } => (file, 0, 0, u32::MAX),
            _ => (u32::MAX, 0, 0, u32::MAX),
        };
        if file != u32::MAX {
            match self.st.files.get(file as usize) {
                Some(f) if !f.closed => {}
                _ => return Err(invalid(kind, "a file number that is not open")),
            }
        }
        let parts = if len > max { len.div_ceil(max) } else { 1 };
        if self.rpc.calls.capacity() - self.rpc.in_flight() < parts as usize {
            return Err(NfsError::Rpc {
                op: kind,
                err: RpcError::Busy,
            });
        }
        self.st.user[uslot] = super::state::UserSlot {
            left: parts,
            ..self.st.user[uslot]
        };
        for p in 0..parts {
            let off = p.saturating_mul(max);
            let n = len.saturating_sub(off).min(max);
            let part = match req {
                Request::Read { buf, .. } => Request::Read {
                    file,
                    offset: offset + off as u64,
                    len: n,
                    // SAFETY: inside the caller's buffer of `len` bytes.
                    buf: unsafe { buf.add(off as usize) },
                },
                Request::Write { buf, stable, .. } => Request::Write {
                    file,
                    offset: offset + off as u64,
                    len: n,
                    // SAFETY: as above.
                    buf: unsafe { buf.add(off as usize) },
                    stable,
                },
                other => other,
            };
            if let Err(e) = self.start_call(tag, part, file, open) {
                let u = &mut self.st.user[uslot];
                if p == 0 {
                    u.left = 0;
                    return Err(e);
                }
                // The parts already out complete the slot, with this error.
                u.left -= parts - p;
                u.error.get_or_insert(e);
                return Ok(());
            }
        }
        Ok(())
    }

    fn start_call(
        &mut self,
        tag: u64,
        part: Request,
        file: u32,
        open: bool,
    ) -> Result<(), NfsError> {
        let kind = part.kind();
        let data = match part {
            Request::Read { buf, len, .. } => Data::Read(buf, len),
            Request::Write { buf, len, .. } => Data::Write(buf, len),
            _ => Data::None,
        };
        let f: Option<&OpenFile> = self.st.files.get(file as usize);
        let mut extra = CallExtra::NONE;
        extra.file = file;
        extra.open = open;
        let mut failed = None;
        let id =
            match self.st.version {
                Version::V3 => {
                    let fh = f.map(|f| &f.fh);
                    let proc_ = v3::proc_of(kind);
                    let id = self
                        .rpc
                        .begin(proc_, kind as u8, tag, kind.idempotent(), data, |e| {
                            if let Err(w) = v3::encode(e, &part, fh) {
                                failed = Some(w);
                            }
                        });
                    id.map_err(|err| NfsError::Rpc { op: kind, err })?
                }
                Version::V41 => {
                    let Some(s) = self.st.v4.as_ref() else {
                        return Err(invalid(kind, "no NFSv4.1 session"));
                    };
                    let ctx = Ctx {
                        clientid: s.clientid,
                        owner: &s.owner,
                        file: f.map(|f| (&f.fh, &f.stateid)),
                    };
                    let mut enc = v4::Encoded::default();
                    let proc_ = if kind == OpKind::Null {
                        0
                    } else {
                        v4::PROC_COMPOUND
                    };
                    let id =
                        self.rpc
                            .begin(proc_, kind as u8, tag, kind.idempotent(), data, |e| {
                                match v4::encode(e, &part, &ctx) {
                                    Ok(x) => enc = x,
                                    Err(w) => failed = Some(w),
                                }
                            });
                    let id = id.map_err(|err| NfsError::Rpc { op: kind, err })?;
                    extra.seq_at = enc.seq_at as u32;
                    extra.stateid_at = enc.stateid_at as u32;
                    id
                }
            };
        if let Some(w) = failed {
            self.rpc.calls.release(id);
            return Err(invalid(kind, w));
        }
        self.st.extra[id as usize] = extra;
        self.dispatch(id)
            .map_err(|err| NfsError::Rpc { op: kind, err })
    }

    /// Sends an encoded call, giving it an NFSv4.1 slot first (or holding
    /// it until one is free).
    fn dispatch(&mut self, id: u32) -> Result<(), RpcError> {
        let x = self.st.extra[id as usize];
        if x.seq_at > 0 {
            let Some(s) = self.st.v4.as_mut() else {
                return self.rpc.send(id);
            };
            if s.lost || !self.st.waiting.is_empty() {
                self.st.waiting.push_back(id);
                return Ok(());
            }
            let Some((slot, seq)) = s.take() else {
                self.st.waiting.push_back(id);
                return Ok(());
            };
            let (session, highest) = (s.id, s.highest());
            patch_sequence(
                self.rpc.header_mut(id),
                x.seq_at as usize,
                &session,
                seq,
                slot,
                highest,
            );
            self.st.extra[id as usize].slot = slot;
        }
        self.rpc.send(id)
    }

    /// Sends what is queued and waits up to `timeout` until at least `min`
    /// completions are in `out` (appended; fewer when nothing is left in
    /// flight or the time is up).
    pub fn poll(
        &mut self,
        min: usize,
        timeout: Duration,
        out: &mut Vec<Completion>,
    ) -> Result<(), NfsError> {
        let deadline = Instant::now() + timeout;
        let mut got = 0;
        let mut polled = false;
        loop {
            got += self.st.out.len();
            out.append(&mut self.st.out);
            if self.rpc.in_flight() == 0 || (polled && (got >= min || Instant::now() >= deadline)) {
                return Ok(());
            }
            // At least one round, so what was queued is sent; without
            // waiting when enough completions are in hand.
            let until = if got >= min { Instant::now() } else { deadline };
            self.rpc.poll(&mut self.st, until);
            self.after_round()?;
            polled = true;
        }
    }

    /// After each round: NFSv4.1's held calls get their slots, a lost
    /// session is set up again, calls kept for later are sent.
    fn after_round(&mut self) -> Result<(), NfsError> {
        if self.st.v4.is_none() || self.in_round {
            return Ok(());
        }
        self.in_round = true;
        let r = self.after_round_v4();
        self.in_round = false;
        r
    }

    fn after_round_v4(&mut self) -> Result<(), NfsError> {
        if self.st.v4.as_ref().is_some_and(|s| s.lost) {
            self.recover()?;
        }
        if !self.st.parked.is_empty() {
            let now = Instant::now();
            let due: Vec<u32> = self
                .st
                .parked
                .iter()
                .copied()
                .filter(|&id| self.st.extra[id as usize].retry_at.is_none_or(|t| t <= now))
                .collect();
            // Files the server forgot are opened again first; a failure
            // leaves the calls parked and ends this poll with the error.
            for &id in &due {
                let x = self.st.extra[id as usize];
                if x.stateid_at > 0 && self.st.files.get(x.file as usize).is_some_and(|f| f.stale) {
                    self.reopen(x.file)?;
                }
            }
            self.st.parked.retain(|id| !due.contains(id));
            for id in due {
                let x = self.st.extra[id as usize];
                if x.stateid_at > 0 {
                    if let Some(f) = self.st.files.get(x.file as usize) {
                        let st = f.stateid;
                        patch_stateid(self.rpc.header_mut(id), x.stateid_at as usize, &st);
                    }
                }
                self.st.waiting.push_back(id);
            }
        }
        while let Some(&id) = self.st.waiting.front() {
            let Some(s) = self.st.v4.as_mut() else { break };
            let Some((slot, seq)) = s.take() else { break };
            let (session, highest) = (s.id, s.highest());
            self.st.waiting.pop_front();
            let at = self.st.extra[id as usize].seq_at as usize;
            patch_sequence(self.rpc.header_mut(id), at, &session, seq, slot, highest);
            self.st.extra[id as usize].slot = slot;
            let sent_before = self.rpc.calls.get(id).sends > 0;
            let r = if sent_before {
                self.rpc.resend(id)
            } else {
                self.rpc.send(id)
            };
            if let Err(err) = r {
                self.rpc.abandon(id, err, &mut self.st);
            }
        }
        Ok(())
    }

    /// Sends `req` and waits for its reply (the client's own slot; user
    /// requests in flight go on and their completions wait for `poll`).
    pub fn call(&mut self, req: Request) -> Result<Reply, NfsError> {
        self.call_open(req, false).map(|(r, _)| r)
    }

    pub(super) fn call_open(
        &mut self,
        req: Request,
        open: bool,
    ) -> Result<(Reply, Option<Stateid>), NfsError> {
        let kind = req.kind();
        self.st.internal = None;
        self.start(INTERNAL, req, open)?;
        self.wait_internal(kind)
    }

    fn wait_internal(&mut self, kind: OpKind) -> Result<(Reply, Option<Stateid>), NfsError> {
        let deadline = Instant::now() + self.call_limit;
        loop {
            if let Some(r) = self.st.internal.take() {
                return r;
            }
            if Instant::now() >= deadline {
                return Err(NfsError::Rpc {
                    op: kind,
                    err: RpcError::Timeout {
                        sends: 1,
                        secs: self.call_limit.as_secs() as u32,
                    },
                });
            }
            self.rpc.poll(&mut self.st, deadline);
            if let Some(r) = self.st.internal.take() {
                return r;
            }
            self.after_round()?;
        }
    }

    /// A blocking call whose results are returned as bytes, for the
    /// session's own operations; with `sequenced`, it gets a slot like any
    /// other and gives it back (or retires it) by `seq_ok`.
    pub(super) fn raw(
        &mut self,
        proc_: u32,
        kind: OpKind,
        sequenced: bool,
        encode: impl FnOnce(&mut Enc) -> usize,
    ) -> Result<Vec<u8>, NfsError> {
        self.st.internal = None;
        let mut seq_at = 0;
        let id = self
            .rpc
            .begin(proc_, kind as u8, RAW, true, Data::None, |e| {
                seq_at = encode(e)
            })
            .map_err(|err| NfsError::Rpc { op: kind, err })?;
        let mut slot = NO_SLOT;
        if sequenced {
            let Some(s) = self.st.v4.as_mut() else {
                return Err(invalid(kind, "no NFSv4.1 session"));
            };
            // Set-up runs with nothing else in flight; a slot is free.
            let Some((sl, seq)) = s.take() else {
                self.rpc.calls.release(id);
                return Err(NfsError::Rpc {
                    op: kind,
                    err: RpcError::Busy,
                });
            };
            let (session, highest) = (s.id, s.highest());
            patch_sequence(self.rpc.header_mut(id), seq_at, &session, seq, sl, highest);
            slot = sl;
        }
        self.st.extra[id as usize] = CallExtra {
            slot,
            ..CallExtra::NONE
        };
        self.rpc
            .send(id)
            .map_err(|err| NfsError::Rpc { op: kind, err })?;
        self.wait_internal(kind)?;
        let bytes = std::mem::take(&mut self.st.raw);
        if let Some(s) = self.st.v4.as_mut() {
            if slot != NO_SLOT {
                // A reply whose SEQUENCE succeeded has at least its header,
                // tag, count, and SEQUENCE's op and status 0.
                if v4reply_sequenced(&bytes) {
                    s.give_back(slot);
                } else {
                    s.retired += 1;
                }
            }
        }
        Ok(bytes)
    }

    /// Opens `fh` for reading and writing (NFSv4.1: OPEN by handle; NFSv3:
    /// the handle is all it takes). Returns the file's number for READ,
    /// WRITE and COMMIT.
    pub fn open(&mut self, fh: &Fh) -> Result<u32, NfsError> {
        let stateid = match self.st.version {
            Version::V3 => [0; 16],
            Version::V41 => self.open_stateid(fh)?,
        };
        Ok(self.st.add_file(OpenFile {
            fh: *fh,
            stateid,
            stale: false,
            closed: false,
        }))
    }

    fn open_stateid(&mut self, fh: &Fh) -> Result<Stateid, NfsError> {
        let Some(s) = self.st.v4.as_ref() else {
            return Err(invalid(OpKind::Open, "no NFSv4.1 session"));
        };
        let (clientid, owner) = (s.clientid, s.owner.clone());
        let bytes = self.raw(v4::PROC_COMPOUND, OpKind::Open, true, |e| {
            let ctx = Ctx {
                clientid,
                owner: &owner,
                file: None,
            };
            v4::encode_open_fh(e, fh, &ctx)
        })?;
        let mut seq = None;
        v4reply::open_fh(&bytes, &mut seq).map(|(s, _)| s)
    }

    fn reopen(&mut self, file: u32) -> Result<(), NfsError> {
        let fh = self.st.files[file as usize].fh;
        let st = self.open_stateid(&fh)?;
        let f = &mut self.st.files[file as usize];
        f.stateid = st;
        f.stale = false;
        Ok(())
    }

    /// Closes an open file (NFSv4.1: CLOSE); its number may name the next
    /// file opened.
    pub fn close(&mut self, file: u32) -> Result<(), NfsError> {
        let Some(f) = self.st.files.get(file as usize).copied() else {
            return Err(invalid(OpKind::Close, "a file number that is not open"));
        };
        if f.closed {
            return Ok(());
        }
        if self.st.version == Version::V41 && !f.stale {
            let bytes = self.raw(v4::PROC_COMPOUND, OpKind::Close, true, |e| {
                v4::encode_close(e, &f.fh, &f.stateid)
            })?;
            let mut page = DirPage::default();
            let mut seq = None;
            v4reply::decode(OpKind::Close, &bytes, 0, &mut page, &mut seq)?;
        }
        self.st.files[file as usize].closed = true;
        self.st.free_files.push(file);
        Ok(())
    }

    /// A lost NFSv4.1 session set up again (the server restarted): a new
    /// client id and session, and every open file opened again. Calls
    /// waiting for it are then sent on the new session.
    fn recover(&mut self) -> Result<(), NfsError> {
        let Some(s) = self.st.v4.as_mut() else {
            return Ok(());
        };
        s.lost = false;
        let (verifier, owner, slots) = (s.verifier, s.owner.clone(), s.seq.len() as u32);
        let (max_req, max_resp) = (s.max_req, s.max_resp);
        self.start_session(verifier, owner, slots, max_req, max_resp)?;
        for i in 0..self.st.files.len() {
            if !self.st.files[i].closed {
                self.st.files[i].stale = true;
            }
        }
        // Calls held with an old slot are given new ones.
        for id in self.st.waiting.iter().copied().collect::<Vec<_>>() {
            self.st.extra[id as usize].slot = NO_SLOT;
        }
        Ok(())
    }

    /// A new NFSv4.1 client id and session (also after the server lost them).
    pub(super) fn start_session(
        &mut self,
        verifier: [u8; 8],
        owner: Vec<u8>,
        slots: u32,
        max_req: u32,
        max_resp: u32,
    ) -> Result<(), NfsError> {
        let bytes = self.raw(v4::PROC_COMPOUND, OpKind::Session, false, |e| {
            v4::encode_exchange_id(e, &verifier, &owner);
            0
        })?;
        let (clientid, seq) = v4reply::exchange_id(&bytes)?;
        let bytes = self.raw(v4::PROC_COMPOUND, OpKind::Session, false, |e| {
            v4::encode_create_session(e, clientid, seq, slots, max_req, max_resp);
            0
        })?;
        let g = v4reply::create_session(&bytes)?;
        let n = g.slots.min(1024);
        self.set_session(Session {
            clientid,
            id: g.id,
            owner,
            verifier,
            seq: vec![1; n as usize],
            free: (0..n).rev().collect(),
            retired: 0,
            target: n - 1,
            max_req: g.max_req,
            max_resp: g.max_resp,
            lost: false,
            lease: self
                .st
                .v4
                .as_ref()
                .map_or(Duration::from_secs(60), |s| s.lease),
            last_sequence: Instant::now(),
            created: Instant::now(),
        });
        let bytes = self.raw(
            v4::PROC_COMPOUND,
            OpKind::Session,
            true,
            v4::encode_reclaim_complete,
        )?;
        v4reply::reclaim_complete(&bytes)
    }

    /// The session, for set-up.
    pub(super) fn set_session(&mut self, s: Session) {
        self.st.v4 = Some(s);
    }
}

/// Whether an NFSv4.1 reply's SEQUENCE succeeded.
fn v4reply_sequenced(results: &[u8]) -> bool {
    let mut d = crate::proto::rpc::xdr::Dec::new(results);
    (|| {
        d.u32()?;
        d.opaque(1024)?;
        d.u32()?;
        Ok::<bool, crate::proto::rpc::xdr::XdrError>(d.u32()? == v4::op::SEQUENCE && d.u32()? == 0)
    })()
    .unwrap_or(false)
}

pub(super) fn invalid(op: OpKind, what: &'static str) -> NfsError {
    NfsError::Invalid { op, what }
}
