//! One TCP connection to the server: its send queue (calls written with one
//! `writev` per flush, a WRITE's data straight from the caller's buffer)
//! and its receive side (one `readv` per readiness into a reused staging
//! buffer, replies parsed in place; a READ's data read straight into the
//! caller's buffer once its header has been seen).

use std::collections::VecDeque;
use std::io::{self, IoSlice, IoSliceMut, Read, Write};
use std::net::TcpStream;
use std::time::Instant;

use super::RpcError;
use super::calls::{Calls, State};
use super::msg::{self, Refusal};
use super::record::parse_mark;
use super::stats::ConnStats;
use super::xdr::{XdrError, pad};

/// What the protocol layer does with replies.
pub(crate) trait Sink {
    /// For a call that reads data (`Call::reads_data`): in its results (the
    /// reply after the RPC header, maybe only a prefix of it), where the
    /// data starts and how long it is; `None` when this reply carries none
    /// (an error status). `Short` asks for more bytes.
    fn data_at(&mut self, kind: u8, results: &[u8]) -> Result<Option<(usize, usize)>, XdrError>;

    /// A call's reply: its results (for a data reply, the part before the
    /// data, which is already in the caller's buffer, `data_len` bytes), or
    /// the server's refusal. Says what became of the call.
    fn reply(
        &mut self,
        id: u32,
        calls: &mut Calls,
        results: Result<&[u8], Refusal>,
        data_len: usize,
    ) -> Outcome;

    /// A call that ended without a reply (the transport's rule in
    /// `transport.rs`); the transport releases it afterwards.
    fn fail(&mut self, id: u32, calls: &mut Calls, err: RpcError);

    /// Connection `conn` is up again and `ids` are about to be sent on it
    /// again: a chance to patch them (a new session) or fail them (release).
    fn reconnected(&mut self, conn: u16, calls: &mut Calls, ids: &[u32]) {
        let _ = (conn, calls, ids);
    }
}

/// What a reply did to its call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Done, successfully.
    Ok,
    /// Done, with an error (counted).
    Failed,
    /// Not done: the protocol layer keeps the call to send again later
    /// (`Transport::resend`); the transport does not release it.
    Retry,
}

/// A reply header kept while its data arrives: the results before a READ's
/// data are at most this long (an RPC header, a post_op_attr or an NFSv4.1
/// SEQUENCE result), else the reply is refused.
const HDR_KEEP: usize = 1024;
/// While large READs are in flight, the staging buffer takes this much per
/// read: the next reply's header and a little of its data, the rest of
/// which then goes straight to the caller's buffer.
const PROBE: usize = 1024;
/// A READ at least this large has its data read straight into the caller's
/// buffer; below it, one read into the staging buffer takes many replies
/// at once and the copy costs less than the system calls it saves.
pub(crate) const DIRECT_MIN: u32 = 16 * 1024;

#[derive(Debug, Clone, Copy)]
enum Rx {
    /// A record mark is next.
    Mark,
    /// A one-fragment record of `len` bytes starts at `head`.
    Body { len: u32 },
    /// A READ's data is going straight to its buffer: `left` bytes of it,
    /// then `pad` bytes of padding.
    Direct {
        id: u32,
        placed: u32,
        left: u32,
        pad: u8,
        hdr: u16,
        results_at: u16,
    },
    /// A record of several fragments, joined in `assembly`.
    Frag { left: u32, last: bool },
}

/// What is in flight on a connection.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Load {
    /// Calls queued or sent here.
    pub(crate) outstanding: u32,
    /// READs of at least DIRECT_MIN among them.
    pub(crate) large_reads: u32,
}

pub(crate) struct Conn {
    /// Its index among the client's connections (calls record it).
    pub(crate) me: u16,
    pub(crate) stream: Option<TcpStream>,
    /// Calls to write, in order; the first may be partly written.
    pub(crate) send_q: VecDeque<u32>,
    send_off: usize,
    rx: Box<[u8]>,
    head: usize,
    tail: usize,
    state: Rx,
    assembly: Vec<u8>,
    keep: [u8; HDR_KEEP],
    /// The longest record accepted.
    max_record: u32,
    pub(crate) load: Load,
    pub(crate) stats: ConnStats,
    /// When the connection was lost, and when to try again.
    pub(crate) down_since: Option<Instant>,
    pub(crate) next_try: Instant,
    pub(crate) last_error: Option<io::ErrorKind>,
}

/// Why a connection must be dropped.
#[derive(Debug)]
pub(crate) enum ConnError {
    Io(io::Error),
    Closed,
    Protocol(&'static str),
}

enum Header {
    /// The header is not all here yet.
    NeedMore,
    /// The reply carries no data (an error status, a refusal).
    NoData,
    /// (where its results start, where its data starts, the data's length)
    Data(usize, usize, usize),
}

impl Conn {
    /// `staging` bounds every reply but a READ's data; `max_record` bounds
    /// every record.
    pub(crate) fn new(
        me: u16,
        stream: TcpStream,
        staging: usize,
        max_record: u32,
        depth: usize,
    ) -> Conn {
        Conn {
            me,
            stream: Some(stream),
            send_q: VecDeque::with_capacity(depth.max(16)),
            send_off: 0,
            rx: vec![0; staging.max(4 * PROBE)].into_boxed_slice(),
            head: 0,
            tail: 0,
            state: Rx::Mark,
            assembly: Vec::new(),
            keep: [0; HDR_KEEP],
            max_record,
            load: Load::default(),
            stats: ConnStats::new(),
            down_since: None,
            next_try: Instant::now(),
            last_error: None,
        }
    }

    /// Forgets everything received and unsent (the connection is gone).
    pub(crate) fn reset(&mut self) {
        self.stream = None;
        self.send_q.clear();
        self.send_off = 0;
        self.head = 0;
        self.tail = 0;
        self.state = Rx::Mark;
        self.assembly.clear();
        self.load = Load::default();
    }

    pub(crate) fn wants_write(&self) -> bool {
        !self.send_q.is_empty() && self.stream.is_some()
    }

    /// Queues a call to be written by the next flush.
    pub(crate) fn push(&mut self, calls: &mut Calls, id: u32) {
        let c = calls.get_mut(id);
        c.conn = self.me;
        c.state = State::Queued;
        self.load.outstanding += 1;
        if c.reads_data && c.data_len >= DIRECT_MIN {
            self.load.large_reads += 1;
        }
        self.send_q.push_back(id);
    }

    /// Writes what is queued, as far as the socket takes it, with one
    /// `writev` per batch of calls. Marks each call whose last byte went
    /// out as sent.
    pub(crate) fn flush(&mut self, calls: &mut Calls) -> Result<(), ConnError> {
        const MAX_IOV: usize = 64;
        static ZEROS: [u8; 4] = [0; 4];
        while !self.send_q.is_empty() {
            let Some(stream) = self.stream.as_mut() else {
                return Ok(());
            };
            let mut iov = [IoSlice::new(&[]); MAX_IOV];
            let mut n = 0;
            let mut skip = self.send_off;
            for &id in self.send_q.iter() {
                if n + 3 > MAX_IOV {
                    break;
                }
                let hdr = calls.header(id);
                let data = write_data(calls, id);
                let padding = &ZEROS[..if data.is_empty() { 0 } else { pad(data.len()) }];
                for part in [hdr, data, padding] {
                    if skip >= part.len() {
                        skip -= part.len();
                        continue;
                    }
                    iov[n] = IoSlice::new(&part[skip..]);
                    skip = 0;
                    n += 1;
                }
            }
            let offered: usize = iov[..n].iter().map(|s| s.len()).sum();
            let wrote = match stream.write_vectored(&iov[..n]) {
                Ok(0) => return Err(ConnError::Closed),
                Ok(w) => w,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(ConnError::Io(e)),
            };
            self.stats.bytes_sent += wrote as u64;
            let now = Instant::now();
            let mut left = self.send_off + wrote;
            while let Some(&id) = self.send_q.front() {
                let total = calls.header(id).len() + {
                    let d = write_data(calls, id).len();
                    d + pad(d)
                };
                if left < total {
                    break;
                }
                left -= total;
                let c = calls.get_mut(id);
                c.state = State::Sent;
                c.sent = now;
                c.sends = c.sends.saturating_add(1);
                self.stats.calls_sent += 1;
                self.send_q.pop_front();
            }
            self.send_off = left;
            if wrote < offered {
                return Ok(());
            }
        }
        Ok(())
    }

    /// One read from the socket (into a READ's buffer first when its data
    /// is being read straight there), then every complete reply handed to
    /// `sink`. Returns whether the read filled all it offered (more may be
    /// waiting).
    pub(crate) fn receive(
        &mut self,
        calls: &mut Calls,
        sink: &mut impl Sink,
    ) -> Result<bool, ConnError> {
        if self.stream.is_none() {
            return Ok(false);
        }
        let (n, offered) = match self.state {
            Rx::Direct {
                id, placed, left, ..
            } if left > 0 => self.read_direct(calls, id, placed, left)?,
            _ => self.read_staging()?,
        };
        self.stats.bytes_received += n as u64;
        self.process(calls, sink)?;
        Ok(n > 0 && n == offered)
    }

    fn read_direct(
        &mut self,
        calls: &Calls,
        id: u32,
        placed: u32,
        left: u32,
    ) -> Result<(usize, usize), ConnError> {
        // The staging buffer is empty while data goes direct.
        self.head = 0;
        self.tail = 0;
        let c = calls.get(id);
        // SAFETY: the READ's buffer is the caller's, valid for `data_len`
        // bytes until the call completes; `placed + left` never exceeds it
        // (checked when the header was read).
        let dst =
            unsafe { std::slice::from_raw_parts_mut(c.data.add(placed as usize), left as usize) };
        let probe = PROBE.min(self.rx.len());
        let stream = self.stream.as_mut().ok_or(ConnError::Closed)?;
        let mut iov = [IoSliceMut::new(dst), IoSliceMut::new(&mut self.rx[..probe])];
        let n = read_retry(stream, &mut iov)?;
        let d = n.min(left as usize) as u32;
        if let Rx::Direct { placed, left, .. } = &mut self.state {
            *placed += d;
            *left -= d;
        }
        self.tail = n - d as usize;
        Ok((n, left as usize + probe))
    }

    fn read_staging(&mut self) -> Result<(usize, usize), ConnError> {
        if self.head == self.tail {
            self.head = 0;
            self.tail = 0;
        } else {
            let record_end = match self.state {
                Rx::Body { len } => self.head + len as usize,
                _ => self.tail,
            };
            if self.head > 0 && (self.tail + PROBE > self.rx.len() || record_end > self.rx.len()) {
                self.rx.copy_within(self.head..self.tail, 0);
                self.tail -= self.head;
                self.head = 0;
            }
        }
        let room = self.rx.len() - self.tail;
        let want = if self.load.large_reads > 0 {
            room.min(PROBE)
        } else {
            room
        };
        let stream = self.stream.as_mut().ok_or(ConnError::Closed)?;
        let mut iov = [IoSliceMut::new(&mut self.rx[self.tail..self.tail + want])];
        let n = read_retry(stream, &mut iov)?;
        self.tail += n;
        Ok((n, want))
    }

    /// Parses what the staging buffer holds.
    fn process(&mut self, calls: &mut Calls, sink: &mut impl Sink) -> Result<(), ConnError> {
        loop {
            let avail = self.tail - self.head;
            match self.state {
                Rx::Mark => {
                    if avail < 4 {
                        return Ok(());
                    }
                    let m = parse_mark(&self.rx[self.head..self.tail], self.max_record)
                        .map_err(protocol)?;
                    self.head += 4;
                    self.state = if m.last {
                        Rx::Body { len: m.len }
                    } else {
                        self.assembly.clear();
                        Rx::Frag {
                            left: m.len,
                            last: false,
                        }
                    };
                }
                Rx::Body { len } => {
                    let len = len as usize;
                    if avail >= len {
                        let rec = &self.rx[self.head..self.head + len];
                        let id = self.call_of(calls, rec)?;
                        complete(rec, id, calls, sink, &mut self.stats, &mut self.load)?;
                        self.head += len;
                        self.state = Rx::Mark;
                        continue;
                    }
                    if avail < 4 {
                        return Ok(());
                    }
                    let rec = &self.rx[self.head..self.tail];
                    let id = self.call_of(calls, rec)?;
                    let too_long = len + 4 > self.rx.len();
                    if !calls.get(id).reads_data {
                        if too_long {
                            return Err(ConnError::Protocol(
                                "a reply longer than this client's bound for its kind of call",
                            ));
                        }
                        return Ok(());
                    }
                    // A READ still arriving: once its header is here, its
                    // data goes straight to the caller's buffer.
                    let (at, data_at, dlen) = match read_header(rec, calls, id, sink)? {
                        Header::Data(at, data_at, dlen) => (at, data_at, dlen),
                        Header::NoData if too_long => {
                            return Err(ConnError::Protocol(
                                "a READ reply without data longer than this client's bound",
                            ));
                        }
                        Header::NeedMore if avail >= HDR_KEEP => {
                            return Err(ConnError::Protocol(
                                "a READ reply whose header runs past any real server's",
                            ));
                        }
                        Header::NoData | Header::NeedMore => return Ok(()),
                    };
                    if data_at > HDR_KEEP || data_at + dlen + pad(dlen) != len {
                        return Err(ConnError::Protocol(
                            "a READ reply whose data does not fill its record",
                        ));
                    }
                    self.keep[..data_at].copy_from_slice(&rec[..data_at]);
                    let have = (avail - data_at).min(dlen);
                    let c = calls.get(id);
                    // SAFETY: as in `read_direct`; dlen <= data_len (read_header).
                    unsafe {
                        std::ptr::copy_nonoverlapping(rec[data_at..].as_ptr(), c.data, have);
                    }
                    // avail < len: what is left here is padding at most.
                    let padding = avail - data_at - have;
                    self.head = self.tail;
                    self.state = Rx::Direct {
                        id,
                        placed: have as u32,
                        left: (dlen - have) as u32,
                        pad: (pad(dlen) - padding) as u8,
                        hdr: data_at as u16,
                        results_at: at as u16,
                    };
                }
                Rx::Direct {
                    id,
                    placed,
                    left,
                    pad: p,
                    hdr,
                    results_at,
                } => {
                    if left > 0 {
                        return Ok(());
                    }
                    let eat = (p as usize).min(avail);
                    self.head += eat;
                    if eat < p as usize {
                        self.state = Rx::Direct {
                            id,
                            placed,
                            left,
                            pad: p - eat as u8,
                            hdr,
                            results_at,
                        };
                        return Ok(());
                    }
                    let results = &self.keep[results_at as usize..hdr as usize];
                    let data = placed as usize;
                    deliver(
                        id,
                        Ok(results),
                        data,
                        calls,
                        sink,
                        &mut self.stats,
                        &mut self.load,
                    );
                    self.state = Rx::Mark;
                }
                Rx::Frag { left, last } => {
                    let take = (left as usize).min(avail);
                    if self.assembly.len() + take > self.max_record as usize {
                        return Err(ConnError::Protocol(
                            "a record of many fragments longer than any reply this client asked for",
                        ));
                    }
                    self.assembly
                        .extend_from_slice(&self.rx[self.head..self.head + take]);
                    self.head += take;
                    let left = left - take as u32;
                    if left > 0 {
                        self.state = Rx::Frag { left, last };
                        return Ok(());
                    }
                    if last {
                        let rec = std::mem::take(&mut self.assembly);
                        let done = self.call_of(calls, &rec).and_then(|id| {
                            complete(&rec, id, calls, sink, &mut self.stats, &mut self.load)
                        });
                        self.assembly = rec;
                        done?;
                        self.state = Rx::Mark;
                        continue;
                    }
                    if self.tail - self.head < 4 {
                        self.state = Rx::Frag {
                            left: 0,
                            last: false,
                        };
                        return Ok(());
                    }
                    let m = parse_mark(&self.rx[self.head..self.tail], self.max_record)
                        .map_err(protocol)?;
                    self.head += 4;
                    self.state = Rx::Frag {
                        left: m.len,
                        last: m.last,
                    };
                }
            }
        }
    }

    /// The call a record answers; a reply that answers no call sent on
    /// this connection is the server breaking the protocol.
    fn call_of(&self, calls: &Calls, rec: &[u8]) -> Result<u32, ConnError> {
        let xid =
            msg::xid_of(rec).ok_or(ConnError::Protocol("a reply too short to hold its xid"))?;
        calls.by_xid(xid, self.me).ok_or(ConnError::Protocol(
            "a reply whose xid matches no call in flight on this connection",
        ))
    }
}

/// A WRITE's data (empty for any other call).
#[inline]
fn write_data(calls: &Calls, id: u32) -> &[u8] {
    let c = calls.get(id);
    if c.reads_data || c.data_len == 0 {
        return &[];
    }
    // SAFETY: `Engine::queue`'s contract: the caller keeps a WRITE's buffer
    // valid and untouched until the call completes.
    unsafe { std::slice::from_raw_parts(c.data, c.data_len as usize) }
}

fn protocol(e: XdrError) -> ConnError {
    match e {
        XdrError::Short => ConnError::Protocol("a reply that ends in the middle of a value"),
        XdrError::Bad(m) => ConnError::Protocol(m),
    }
}

fn read_retry(stream: &mut TcpStream, iov: &mut [IoSliceMut<'_>]) -> Result<usize, ConnError> {
    loop {
        return match stream.read_vectored(iov) {
            Ok(0) => Err(ConnError::Closed),
            Ok(n) => Ok(n),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(0),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => Err(ConnError::Io(e)),
        };
    }
}

/// A READ reply's header from a prefix of its record: (where its results
/// start, where its data starts, the data's length), or None when more
/// bytes are needed or the reply has no data.
fn read_header(
    rec: &[u8],
    calls: &Calls,
    id: u32,
    sink: &mut impl Sink,
) -> Result<Header, ConnError> {
    let head = match msg::parse_reply(rec) {
        Ok(h) => h,
        Err(XdrError::Short) => return Ok(Header::NeedMore),
        Err(e) => return Err(protocol(e)),
    };
    let Ok(at) = head.outcome else {
        return Ok(Header::NoData);
    };
    let c = calls.get(id);
    match sink.data_at(c.kind, &rec[at..]) {
        Ok(Some((off, dlen))) => {
            if dlen > c.data_len as usize {
                return Err(ConnError::Protocol(
                    "a READ reply with more data than the call asked for",
                ));
            }
            Ok(Header::Data(at, at + off, dlen))
        }
        Ok(None) => Ok(Header::NoData),
        Err(XdrError::Short) => Ok(Header::NeedMore),
        Err(e) => Err(protocol(e)),
    }
}

/// A whole record: its header decoded, a READ's data copied to the
/// caller's buffer, the reply handed on.
fn complete(
    rec: &[u8],
    id: u32,
    calls: &mut Calls,
    sink: &mut impl Sink,
    stats: &mut ConnStats,
    load: &mut Load,
) -> Result<(), ConnError> {
    let head = msg::parse_reply(rec).map_err(protocol)?;
    let at = match head.outcome {
        Ok(at) => at,
        Err(refusal) => {
            deliver(id, Err(refusal), 0, calls, sink, stats, load);
            return Ok(());
        }
    };
    let c = *calls.get(id);
    if c.reads_data {
        match read_header(rec, calls, id, sink)? {
            Header::Data(_, data_at, dlen) => {
                if data_at + dlen + pad(dlen) != rec.len() {
                    return Err(ConnError::Protocol(
                        "a READ reply whose data does not fill its record",
                    ));
                }
                // SAFETY: as in `Conn::read_direct`; dlen <= data_len (read_header).
                unsafe { std::ptr::copy_nonoverlapping(rec[data_at..].as_ptr(), c.data, dlen) };
                deliver(id, Ok(&rec[at..data_at]), dlen, calls, sink, stats, load);
                return Ok(());
            }
            Header::NeedMore => {
                return Err(ConnError::Protocol("a READ reply cut short"));
            }
            Header::NoData => {}
        }
    }
    deliver(id, Ok(&rec[at..]), 0, calls, sink, stats, load);
    Ok(())
}

/// Counts a reply and hands it to the protocol layer, which releases the call.
fn deliver(
    id: u32,
    results: Result<&[u8], Refusal>,
    data_len: usize,
    calls: &mut Calls,
    sink: &mut impl Sink,
    stats: &mut ConnStats,
    load: &mut Load,
) {
    let now = Instant::now();
    let c = *calls.get(id);
    stats.replies += 1;
    load.outstanding = load.outstanding.saturating_sub(1);
    if c.reads_data && c.data_len >= DIRECT_MIN {
        load.large_reads = load.large_reads.saturating_sub(1);
    }
    let outcome = sink.reply(id, calls, results, data_len);
    if outcome == Outcome::Retry {
        calls.get_mut(id).state = State::Queued;
        return;
    }
    calls.release(id);
    let seen = stats.op(c.kind);
    let bytes = if c.reads_data {
        data_len
    } else {
        c.data_len as usize
    } as u64;
    seen.rtt.record(ns(now, c.sent), bytes);
    seen.exec.record(ns(now, c.queued), bytes);
    if outcome == Outcome::Failed {
        seen.errors += 1;
    }
}

#[inline]
pub(crate) fn ns(later: Instant, earlier: Instant) -> u64 {
    later.saturating_duration_since(earlier).as_nanos() as u64
}
