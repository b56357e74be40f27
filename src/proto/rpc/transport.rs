//! The client's connections to one server (nconnect-like: calls spread
//! over N TCP connections) and the one loop that drives them: flush what
//! was queued (one `writev` per connection), wait for replies (one
//! `poll`), read them (one `readv` per ready connection).
//!
//! Faults, and the rule for the calls in flight:
//! - a connection that closes, fails or breaks the protocol is dropped and
//!   dialled again with a growing pause, for at most `reconnect_for`; then
//!   its calls fail with `Unreachable` (one clear error, bounded time);
//! - a call without a reply after `call_timeout` is counted as a timeout
//!   and its connection is dropped and made again (over TCP a missing
//!   reply means the server lost the call);
//! - after a reconnect, a call is sent again if the server cannot have
//!   acted on it (not all of it was written), or if acting twice does no
//!   harm (`idempotent`: reads, writes, lookups); a call that changes the
//!   server's state and was wholly sent fails with `OutcomeUnknown`, for
//!   the layer above to settle (a LOOKUP says whether a REMOVE happened);
//! - a call is sent at most `max_sends` times after timeouts or a server
//!   that breaks the protocol, and at most LOST_SENDS times in all (a
//!   server that drops every connection a call is sent on).
//!
//! Every resend, timeout and reconnect is counted in the connection's stats.

use std::io;
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use super::RpcError;
use super::calls::{Calls, State};
use super::conn::{Conn, ConnError, Sink};
use super::msg::{self, Auth};
use super::record;
use super::xdr::{Enc, pad};

/// Sends of one call over connections that were then lost, before it fails.
const LOST_SENDS: u8 = 10;

/// What the transport is asked to do.
#[derive(Debug, Clone)]
pub(crate) struct Config {
    pub(crate) connections: usize,
    /// A call without a reply this long has timed out.
    pub(crate) call_timeout: Duration,
    /// Sends of one call before it fails (the first and the resends).
    pub(crate) max_sends: u8,
    /// How long a lost server is dialled again before its calls fail.
    pub(crate) reconnect_for: Duration,
    /// One dial's limit.
    pub(crate) connect_timeout: Duration,
    /// The bound of any reply but a READ's data (the staging buffer).
    pub(crate) staging: usize,
    /// The bound of any record (a READ of the largest size, with its header).
    pub(crate) max_record: u32,
    /// Calls in flight at most.
    pub(crate) max_calls: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            connections: 1,
            call_timeout: Duration::from_secs(60),
            max_sends: 3,
            reconnect_for: Duration::from_secs(60),
            connect_timeout: Duration::from_secs(10),
            staging: 256 * 1024,
            max_record: 1 << 20,
            max_calls: 256,
        }
    }
}

/// What a call moves besides its header.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Data {
    None,
    /// A WRITE's bytes, sent straight from the caller's buffer.
    Write(*const u8, u32),
    /// A READ's room: its reply's data lands straight there.
    Read(*mut u8, u32),
}

pub(crate) struct Transport {
    addr: SocketAddr,
    prog: u32,
    vers: u32,
    auth: Auth,
    pub(crate) conns: Vec<Conn>,
    pub(crate) calls: Calls,
    cfg: Config,
    rr: usize,
    pollfds: Vec<libc::pollfd>,
    next_check: Instant,
}

fn dial(addr: SocketAddr, timeout: Duration) -> io::Result<TcpStream> {
    let s = TcpStream::connect_timeout(&addr, timeout)?;
    s.set_nodelay(true)?;
    s.set_nonblocking(true)?;
    Ok(s)
}

impl Transport {
    /// The server every connection is made to.
    pub(crate) fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Dials `cfg.connections` connections to `addr` for RPC program `prog`,
    /// version `vers`.
    pub(crate) fn connect(
        addr: SocketAddr,
        prog: u32,
        vers: u32,
        auth: Auth,
        cfg: Config,
    ) -> Result<Transport, RpcError> {
        let n = cfg.connections.clamp(1, u16::MAX as usize);
        let mut conns = Vec::with_capacity(n);
        for i in 0..n {
            let s = dial(addr, cfg.connect_timeout).map_err(|e| RpcError::Unreachable {
                kind: e.kind(),
                secs: cfg.connect_timeout.as_secs() as u32,
            })?;
            conns.push(Conn::new(
                i as u16,
                s,
                cfg.staging,
                cfg.max_record,
                cfg.max_calls,
            ));
        }
        Ok(Transport {
            addr,
            prog,
            vers,
            auth,
            conns,
            calls: Calls::new(cfg.max_calls),
            next_check: Instant::now() + check_every(&cfg),
            pollfds: Vec::with_capacity(n),
            cfg,
            rr: 0,
        })
    }

    pub(crate) fn config(&self) -> &Config {
        &self.cfg
    }

    /// Allocates a call and encodes it: the RPC header, then `args`. The
    /// call is not sent until `send`.
    pub(crate) fn begin(
        &mut self,
        proc_: u32,
        kind: u8,
        tag: u64,
        idempotent: bool,
        data: Data,
        args: impl FnOnce(&mut Enc),
    ) -> Result<u32, RpcError> {
        let id = self.calls.alloc(Instant::now()).ok_or(RpcError::Busy)?;
        let xid = self.calls.get(id).xid;
        let (prog, vers) = (self.prog, self.vers);
        let room = self.calls.room(id);
        let mut e = Enc::new(room);
        msg::call_header(&mut e, xid, prog, vers, proc_, &self.auth);
        args(&mut e);
        let (ptr, len, reads) = match data {
            Data::None => (std::ptr::null_mut(), 0, false),
            Data::Write(p, n) => (p as *mut u8, n, false),
            Data::Read(p, n) => (p, n, true),
        };
        let Some(hdr_len) = e.finish() else {
            self.calls.release(id);
            return Err(RpcError::TooLarge);
        };
        let body = hdr_len - 4
            + if reads {
                0
            } else {
                len as usize + pad(len as usize)
            };
        let room = self.calls.room(id);
        room[..4].copy_from_slice(&record::mark(body).to_be_bytes());
        let c = self.calls.get_mut(id);
        c.hdr_len = hdr_len as u32;
        c.kind = kind;
        c.tag = tag;
        c.idempotent = idempotent;
        c.data = ptr;
        c.data_len = len;
        c.reads_data = reads;
        Ok(id)
    }

    /// The call's encoded bytes, for a patch in place before it is sent.
    pub(crate) fn header_mut(&mut self, id: u32) -> &mut [u8] {
        let len = self.calls.get(id).hdr_len as usize;
        &mut self.calls.room(id)[..len]
    }

    /// Queues a call on the next connection that is up (round robin). With
    /// every connection lost past `reconnect_for`, fails it at once.
    pub(crate) fn send(&mut self, id: u32) -> Result<(), RpcError> {
        let n = self.conns.len();
        for i in 0..n {
            let c = (self.rr + i) % n;
            if self.conns[c].stream.is_some() {
                self.rr = (c + 1) % n;
                self.conns[c].push(&mut self.calls, id);
                return Ok(());
            }
        }
        // Every connection is down: wait for the first that comes back,
        // unless all have been down too long.
        let now = Instant::now();
        let waiting = self.conns.iter().position(|c| {
            c.down_since
                .is_some_and(|t| now - t < self.cfg.reconnect_for)
        });
        match waiting {
            Some(c) => {
                let call = self.calls.get_mut(id);
                call.conn = c as u16;
                call.state = State::Queued;
                Ok(())
            }
            None => {
                self.calls.release(id);
                Err(self.unreachable(0))
            }
        }
    }

    /// Sends again a call its protocol layer kept (`Outcome::Retry`),
    /// counted as a resend.
    pub(crate) fn resend(&mut self, id: u32) -> Result<(), RpcError> {
        let c = *self.calls.get(id);
        let r = self.send(id);
        if r.is_ok() {
            let conn = self.calls.get(id).conn as usize;
            self.conns[conn].stats.op(c.kind).retrans += 1;
        }
        r
    }

    /// Fails a call its protocol layer kept, through the sink as any other.
    pub(crate) fn abandon(&mut self, id: u32, err: RpcError, sink: &mut impl Sink) {
        self.fail(id, err, sink);
    }

    /// Calls in flight (queued or sent).
    pub(crate) fn in_flight(&self) -> usize {
        self.calls.in_use()
    }

    /// The server is lost: no connection is up, and every one has been
    /// dialled again for `reconnect_for` in vain (its calls have failed
    /// with `Unreachable`, or will at the next `poll`).
    pub(crate) fn gone(&self) -> bool {
        let now = Instant::now();
        !self.conns.is_empty()
            && self.conns.iter().all(|c| {
                c.stream.is_none()
                    && c.down_since
                        .is_some_and(|t| now.saturating_duration_since(t) >= self.cfg.reconnect_for)
            })
    }

    fn unreachable(&self, conn: usize) -> RpcError {
        RpcError::Unreachable {
            kind: self
                .conns
                .get(conn)
                .and_then(|c| c.last_error)
                .unwrap_or(io::ErrorKind::ConnectionRefused),
            secs: self.cfg.reconnect_for.as_secs() as u32,
        }
    }

    /// One round: flush, wait for replies until `until` at the latest (not
    /// at all when `until` has passed), read and hand them to `sink`, then
    /// the timeouts and reconnects that are due.
    pub(crate) fn poll(&mut self, sink: &mut impl Sink, until: Instant) {
        for i in 0..self.conns.len() {
            if self.conns[i].wants_write() {
                if let Err(e) = self.conns[i].flush(&mut self.calls) {
                    self.lose(i, e, sink);
                }
            }
        }
        let now = Instant::now();
        let mut wake = until.min(self.next_check);
        self.pollfds.clear();
        for c in &self.conns {
            if let Some(s) = &c.stream {
                if c.load.outstanding > 0 {
                    let mut events = libc::POLLIN;
                    if c.wants_write() {
                        events |= libc::POLLOUT;
                    }
                    self.pollfds.push(libc::pollfd {
                        fd: fd_of(s),
                        events,
                        revents: 0,
                    });
                }
            } else if c.down_since.is_some() {
                wake = wake.min(c.next_try);
            }
        }
        let wait = wake.saturating_duration_since(now);
        if self.pollfds.is_empty() {
            if wait > Duration::ZERO && self.calls.in_use() > 0 {
                std::thread::sleep(wait.min(Duration::from_millis(50)));
            }
        } else {
            // Round up: a wait cut to 0 ms would spin.
            let ms = (wait.as_micros().div_ceil(1000)).min(i32::MAX as u128) as i32;
            // SAFETY: a valid array of `len` pollfd structures.
            let r = unsafe {
                libc::poll(
                    self.pollfds.as_mut_ptr(),
                    self.pollfds.len() as libc::nfds_t,
                    ms,
                )
            };
            if r > 0 {
                self.service(sink);
            }
        }
        if Instant::now() >= self.next_check {
            self.maintain(sink);
        }
    }

    /// Reads from (and writes to) every connection poll found ready.
    fn service(&mut self, sink: &mut impl Sink) {
        for k in 0..self.pollfds.len() {
            let p = self.pollfds[k];
            if p.revents == 0 {
                continue;
            }
            let Some(i) = self
                .conns
                .iter()
                .position(|c| c.stream.as_ref().is_some_and(|s| fd_of(s) == p.fd))
            else {
                continue;
            };
            if p.revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0 {
                // A read that filled all it offered may have left more.
                let mut rounds = 0;
                loop {
                    match self.conns[i].receive(&mut self.calls, sink) {
                        Ok(true) if rounds < 8 => rounds += 1,
                        Ok(_) => break,
                        Err(e) => {
                            self.lose(i, e, sink);
                            break;
                        }
                    }
                }
            }
            if p.revents & libc::POLLOUT != 0 && self.conns[i].wants_write() {
                if let Err(e) = self.conns[i].flush(&mut self.calls) {
                    self.lose(i, e, sink);
                }
            }
        }
    }

    /// Drops connection `i`; its calls wait for the reconnect or fail, by
    /// the rule in this module's comment.
    fn lose(&mut self, i: usize, e: ConnError, sink: &mut impl Sink) {
        let now = Instant::now();
        let conn = &mut self.conns[i];
        conn.last_error = Some(match &e {
            ConnError::Io(e) => e.kind(),
            ConnError::Closed => io::ErrorKind::ConnectionReset,
            ConnError::Protocol(_) => io::ErrorKind::InvalidData,
        });
        conn.reset();
        if conn.down_since.is_none() {
            conn.down_since = Some(now);
        }
        conn.next_try = now;
        let protocol = match e {
            ConnError::Protocol(m) => Some(m),
            _ => None,
        };
        let max_sends = self.cfg.max_sends;
        let ids: Vec<u32> = self
            .calls
            .busy()
            .filter(|&id| self.calls.get(id).conn as usize == i)
            .collect();
        for id in ids {
            let c = *self.calls.get(id);
            let err = if c.state == State::Sent && !c.idempotent {
                Some(protocol.map_or(RpcError::OutcomeUnknown, RpcError::Protocol))
            } else if c.sends >= LOST_SENDS || (protocol.is_some() && c.sends >= max_sends) {
                Some(protocol.map_or(
                    RpcError::Lost {
                        sends: c.sends,
                        kind: self.conns[i].last_error.unwrap_or(io::ErrorKind::Other),
                    },
                    RpcError::Protocol,
                ))
            } else {
                None
            };
            match err {
                Some(err) => self.fail(id, err, sink),
                None => {
                    self.calls.get_mut(id).state = State::Queued;
                    // Another connection that is up takes it now.
                    if let Some(j) = self.up_other_than(i) {
                        if c.sends > 0 {
                            self.conns[j].stats.op(c.kind).retrans += 1;
                        }
                        self.conns[j].push(&mut self.calls, id);
                    }
                }
            }
        }
        self.next_check = self.next_check.min(now);
    }

    fn up_other_than(&mut self, i: usize) -> Option<usize> {
        let n = self.conns.len();
        (1..n)
            .map(|k| (self.rr + k) % n)
            .find(|&j| j != i && self.conns[j].stream.is_some())
            .inspect(|&j| self.rr = (j + 1) % n)
    }

    fn fail(&mut self, id: u32, err: RpcError, sink: &mut impl Sink) {
        let c = *self.calls.get(id);
        if let Some(conn) = self.conns.get_mut(c.conn as usize) {
            conn.stats.op(c.kind).errors += 1;
        }
        sink.fail(id, &mut self.calls, err);
        self.calls.release(id);
    }

    /// Timeouts and reconnects that are due.
    fn maintain(&mut self, sink: &mut impl Sink) {
        let now = Instant::now();
        self.next_check = now + check_every(&self.cfg);
        // Timeouts: the connection of a call without a reply is dropped.
        let timeout = self.cfg.call_timeout;
        let mut late = None;
        for id in self.calls.busy() {
            let c = self.calls.get(id);
            if c.state == State::Sent && now.saturating_duration_since(c.sent) >= timeout {
                late = Some(c.conn as usize);
                break;
            }
        }
        if let Some(i) = late {
            let ids: Vec<u32> = self
                .calls
                .busy()
                .filter(|&id| {
                    let c = self.calls.get(id);
                    c.conn as usize == i
                        && c.state == State::Sent
                        && now.saturating_duration_since(c.sent) >= timeout
                })
                .collect();
            for &id in &ids {
                let c = *self.calls.get(id);
                self.conns[i].stats.op(c.kind).timeouts += 1;
                if c.sends >= self.cfg.max_sends || !c.idempotent {
                    let secs = timeout.as_secs() as u32;
                    self.fail(
                        id,
                        RpcError::Timeout {
                            sends: c.sends,
                            secs,
                        },
                        sink,
                    );
                }
            }
            self.lose(i, ConnError::Io(io::ErrorKind::TimedOut.into()), sink);
        }
        for i in 0..self.conns.len() {
            let Some(since) = self.conns[i].down_since else {
                continue;
            };
            if self.conns[i].stream.is_some() || now < self.conns[i].next_try {
                continue;
            }
            match dial(self.addr, self.cfg.connect_timeout) {
                Ok(s) => self.back(i, s, sink),
                Err(e) => {
                    let conn = &mut self.conns[i];
                    conn.last_error = Some(e.kind());
                    let down = now.saturating_duration_since(since);
                    // 50 ms, doubling to 1 s.
                    let pause = Duration::from_millis(50)
                        .saturating_mul(1 << (down.as_millis() / 200).min(5) as u32)
                        .min(Duration::from_secs(1));
                    conn.next_try = Instant::now() + pause;
                    if down >= self.cfg.reconnect_for {
                        let err = self.unreachable(i);
                        let ids: Vec<u32> = self
                            .calls
                            .busy()
                            .filter(|&id| self.calls.get(id).conn as usize == i)
                            .collect();
                        for id in ids {
                            self.fail(id, err, sink);
                        }
                    }
                }
            }
            self.next_check = self.next_check.min(self.conns[i].next_try);
        }
    }

    /// Connection `i` is up again: its waiting calls are queued on it,
    /// counted as resends when they had been sent before.
    fn back(&mut self, i: usize, s: TcpStream, sink: &mut impl Sink) {
        let conn = &mut self.conns[i];
        conn.stream = Some(s);
        conn.down_since = None;
        conn.stats.reconnects += 1;
        let mut ids: Vec<u32> = self
            .calls
            .busy()
            .filter(|&id| {
                let c = self.calls.get(id);
                c.conn as usize == i && c.state == State::Queued
            })
            .collect();
        // The oldest first, as they were sent.
        ids.sort_by_key(|&id| self.calls.get(id).queued);
        sink.reconnected(i as u16, &mut self.calls, &ids);
        for id in ids {
            if self.calls.get(id).state == State::Free {
                continue;
            }
            let c = *self.calls.get(id);
            if c.sends > 0 {
                self.conns[i].stats.op(c.kind).retrans += 1;
            }
            self.conns[i].push(&mut self.calls, id);
        }
    }
}

fn check_every(cfg: &Config) -> Duration {
    (cfg.call_timeout / 4).clamp(Duration::from_millis(10), Duration::from_secs(1))
}

#[cfg(unix)]
fn fd_of(s: &TcpStream) -> i32 {
    use std::os::fd::AsRawFd;
    s.as_raw_fd()
}
