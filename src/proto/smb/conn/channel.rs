//! A channel: one TCP connection of a session. Requests are staged without
//! blocking, sent when the credit window allows (signed or sealed as the
//! session wants, on their way out), and completed by `rx` as replies come
//! back. One thread owns a channel; the session's keys are copied into it.

use std::io::IoSlice;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use super::super::consts::{Command, flags};
use super::super::crypto::seal::Sealer;
use super::super::crypto::sign::Signer;
use super::super::error::{SmbError, SmbResult};
use super::super::header::{HEADER_LEN, Header, TRANSFORM_LEN, Transform, encode_frame_len};
use super::super::msg::session;
use super::super::stats::ChannelStats;
use super::Completion;
use super::slots::{InFlight, Sink, Slots, Staged};
use super::socket::Socket;

/// Bounds and wishes for a channel.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ChannelOptions {
    /// A request not answered within this fails the channel.
    pub(crate) request_timeout: Duration,
    /// After an interim STATUS_PENDING, the final reply must come within
    /// this (a server that answers "pending" forever gets one error).
    pub(crate) pending_timeout: Duration,
    /// The credits the channel asks the server to keep open: the most
    /// requests it can have in flight.
    pub(crate) credit_target: u16,
    /// The largest frame accepted (set from the negotiated maxima).
    pub(crate) max_frame: usize,
    /// Multi-credit requests (LARGE_MTU): reads and writes over 64 KiB.
    pub(crate) large_mtu: bool,
}

impl Default for ChannelOptions {
    fn default() -> Self {
        ChannelOptions {
            request_timeout: Duration::from_secs(60),
            pending_timeout: Duration::from_secs(300),
            credit_target: 512,
            max_frame: 1 << 20,
            large_mtu: true,
        }
    }
}

/// The keys a channel signs and seals with.
#[derive(Clone, Default)]
pub(crate) struct ChannelKeys {
    /// This channel's signing key (the session's on the first channel).
    pub(crate) signer: Option<Signer>,
    /// The session's key: a binding SESSION_SETUP is signed with it.
    pub(crate) session_signer: Option<Signer>,
    /// Sign every request (and require signed replies).
    pub(crate) sign: bool,
    pub(crate) seal_out: Option<Sealer>,
    pub(crate) seal_in: Option<Sealer>,
    /// Encrypt every request after session setup.
    pub(crate) encrypt: bool,
}

/// A segment of the bytes to send: our own (a range of `out`) or a WRITE's
/// data, sent from the caller's buffer.
#[derive(Clone, Copy)]
enum Seg {
    Own { start: usize, end: usize },
    Ext { ptr: *const u8, len: usize },
}

pub struct Channel {
    pub(super) sock: Socket,
    pub(crate) index: u16,
    pub(super) opts: ChannelOptions,
    pub(crate) keys: ChannelKeys,
    pub(crate) session_id: u64,
    pub(super) slots: Slots,
    staged: Vec<u8>,
    out: Vec<u8>,
    segs: Vec<Seg>,
    seg_at: usize,
    seg_off: usize,
    pub(super) rx: super::rxbuf::Rx,
    pub(super) stats: ChannelStats,
    /// Completions found while a synchronous call waited for its own.
    pub(super) backlog: Vec<Completion>,
    /// The last reply a `Sink::Keep` request got, and its request.
    pub(super) kept: Vec<u8>,
    pub(super) kept_request: Vec<u8>,
    nonce_counter: u64,
    nonce_salt: [u8; 2],
    /// ECHOs sent to ask for credits since a request last went out.
    pub(super) topups: u32,
    /// Once the connection failed, every call returns this again.
    pub(super) broken: Option<String>,
}

/// Tags of the synchronous calls and of the credit top-ups (the engine's
/// tags are slot numbers).
pub(crate) const CALL_TAG: u64 = u64::MAX - 1;
pub(crate) const TOPUP_TAG: u64 = u64::MAX - 2;

impl Channel {
    pub(crate) fn connect(
        addr: SocketAddr,
        timeout: Duration,
        index: u16,
        opts: ChannelOptions,
    ) -> SmbResult<Channel> {
        let sock = Socket::connect(addr, timeout).map_err(|e| SmbError::Io {
            what: format!("connecting to SMB server {addr}"),
            source: e,
        })?;
        let mut salt = [0u8; 2];
        let _ = getrandom::fill(&mut salt);
        Ok(Channel {
            sock,
            index,
            opts,
            keys: ChannelKeys::default(),
            session_id: 0,
            slots: Slots::new(
                usize::from(opts.credit_target) * 2,
                usize::from(opts.credit_target),
            ),
            staged: Vec::with_capacity(64 * 1024),
            out: Vec::with_capacity(256 * 1024),
            segs: Vec::with_capacity(1024),
            seg_at: 0,
            seg_off: 0,
            rx: super::rxbuf::Rx::new(opts.max_frame),
            stats: ChannelStats::default(),
            backlog: Vec::new(),
            kept: Vec::new(),
            kept_request: Vec::new(),
            nonce_counter: 0,
            nonce_salt: salt,
            topups: 0,
            broken: None,
        })
    }

    pub fn peer(&self) -> SocketAddr {
        self.sock.peer
    }

    pub fn index(&self) -> u16 {
        self.index
    }

    pub fn stats(&self) -> &ChannelStats {
        &self.stats
    }

    /// This channel replaces one that was lost (a reconnect): it takes in
    /// the old one's counters, so a channel's figures are its place's over
    /// the run, and counts the reconnect; the credits held are this
    /// connection's own.
    pub(crate) fn replaces(&mut self, old: &ChannelStats) {
        let credits_now = self.stats.credits_now;
        self.stats.merge(old);
        self.stats.credits_now = credits_now;
        self.stats.reconnects += 1;
    }

    /// Starts the counters over; the credits held are kept.
    pub(crate) fn reset_stats(&mut self) {
        let credits_now = self.stats.credits_now;
        self.stats = ChannelStats::default();
        self.stats.credits_now = credits_now;
    }

    pub fn in_flight(&self) -> u32 {
        self.slots.in_flight
    }

    pub fn credits(&self) -> u64 {
        self.slots.credits
    }

    /// Requests staged and not yet sent (waiting for credits).
    pub fn waiting(&self) -> usize {
        self.slots.waiting.len()
    }

    /// Sets the limits the negotiation decided (set-up time: may allocate).
    pub(crate) fn set_limits(&mut self, max_frame: usize, large_mtu: bool) {
        self.opts.max_frame = max_frame;
        self.opts.large_mtu = large_mtu;
        self.rx.resize(max_frame, self.keys.seal_in.is_some());
    }

    pub(crate) fn set_keys(&mut self, keys: ChannelKeys) {
        let sealed = keys.seal_in.is_some();
        self.keys = keys;
        self.rx.resize(self.opts.max_frame, sealed);
    }

    /// The credit charge of a payload of `len` bytes (3.1.5.2).
    pub(crate) fn charge_for(&self, len: usize) -> u16 {
        if self.opts.large_mtu {
            (len.saturating_sub(1) / 65536 + 1).min(u16::MAX as usize) as u16
        } else {
            1
        }
    }

    /// Stages a request: its header (filled at send time) and body.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn stage(
        &mut self,
        command: Command,
        tag: u64,
        tree_id: u32,
        sink: Sink,
        charge: u16,
        payload: u32,
        body: impl FnOnce(&mut Vec<u8>),
    ) -> &mut Staged {
        let start = self.staged.len();
        self.staged.resize(start + HEADER_LEN, 0);
        body(&mut self.staged);
        let len = self.staged.len() - start;
        self.slots.waiting.push_back(Staged {
            tag,
            command,
            sink,
            start,
            len,
            ext: std::ptr::null(),
            ext_len: 0,
            charge,
            tree_id,
            payload,
            class: 0,
            keep_request: false,
            plain: false,
            sign_override: false,
            session_flags: 0,
            waiting_since: None,
        });
        // Just pushed: the queue is not empty.
        let n = self.slots.waiting.len() - 1;
        &mut self.slots.waiting[n]
    }

    /// Puts an ECHO before the waiting requests: its reply brings credits.
    pub(super) fn topup(&mut self) {
        self.topups += 1;
        self.stage(
            Command::Echo,
            TOPUP_TAG,
            0,
            Sink::None,
            1,
            0,
            session::encode_empty,
        );
        if let Some(e) = self.slots.waiting.pop_back() {
            self.slots.waiting.push_front(e);
        }
    }

    /// How many credits to ask for with a request of `charge`: enough to
    /// keep `credit_target` open.
    fn credit_request(&self, charge: u16) -> u16 {
        let held = self.slots.credits + self.slots.charged;
        // Enough for the largest request waiting, whatever the target.
        let biggest = self
            .slots
            .waiting
            .iter()
            .map(|w| u64::from(w.charge))
            .max()
            .unwrap_or(1);
        let target = u64::from(self.opts.credit_target).max(biggest * 2);
        let want = target.saturating_sub(held);
        (u64::from(charge.max(1)) + want).min(u64::from(u16::MAX)) as u16
    }

    /// Sends what the credits allow, signing or sealing each request.
    fn dispatch(&mut self) {
        let now = Instant::now();
        while let Some(s) = self.slots.waiting.front().copied() {
            if !self
                .slots
                .can_send(s.charge, u64::from(self.opts.credit_target))
            {
                if s.waiting_since.is_none() {
                    self.stats.credit_waits += 1;
                    if let Some(f) = self.slots.waiting.front_mut() {
                        f.waiting_since = Some(now);
                    }
                }
                break;
            }
            self.slots.waiting.pop_front();
            if let Some(t) = s.waiting_since {
                self.stats.credit_wait_ns += now.duration_since(t).as_nanos() as u64;
            }
            let credits = self.credit_request(s.charge);
            let mid = self.slots.take(s.charge);
            if s.tag != TOPUP_TAG {
                self.topups = 0;
            }
            let wire = self.emit(&s, mid, credits);
            self.slots.insert(InFlight {
                mid,
                tag: s.tag,
                command: s.command,
                sink: s.sink,
                sent_at: now,
                payload: s.payload,
                class: s.class,
                charge: s.charge,
                async_id: 0,
                interim_at: None,
            });
            let st = self.stats.command_mut(s.command);
            st.requests += 1;
            st.wire_sent += wire as u64;
            if s.command == Command::Write {
                st.bytes += u64::from(s.payload);
            }
            self.stats.max_in_flight = self.stats.max_in_flight.max(self.slots.in_flight);
        }
        if self.slots.waiting.is_empty() {
            self.staged.clear();
        }
    }

    /// Writes one request's frame into `out`: header completed, then signed
    /// (its data hashed where it lies) or sealed (data copied in, encrypted
    /// in place). Returns the frame's length on the wire.
    fn emit(&mut self, s: &Staged, mid: u64, credits: u16) -> usize {
        let encrypt = self.keys.encrypt && !s.plain && self.keys.seal_out.is_some();
        let sign = !encrypt && !s.plain && (self.keys.sign || s.sign_override);
        let h = Header {
            credit_charge: s.charge,
            status: 0,
            command: s.command as u16,
            credits,
            flags: s.session_flags | if sign { flags::SIGNED } else { 0 },
            next_command: 0,
            message_id: mid,
            async_id: 0,
            tree_id: s.tree_id,
            session_id: if s.command == Command::Negotiate {
                0
            } else {
                self.session_id
            },
            signature: [0; 16],
        };
        let mut hb = [0u8; HEADER_LEN];
        h.encode(&mut hb);
        self.staged[s.start..s.start + HEADER_LEN].copy_from_slice(&hb);
        let msg_len = s.len + s.ext_len;
        // SAFETY: queue_write's contract keeps `ext` valid and unchanged
        // until the completion, which comes after this send.
        let ext: &[u8] = if s.ext_len == 0 {
            &[]
        } else {
            unsafe { std::slice::from_raw_parts(s.ext, s.ext_len) }
        };
        if encrypt {
            let start = self.out.len();
            self.out
                .extend_from_slice(&encode_frame_len(TRANSFORM_LEN + msg_len));
            let th = self.out.len();
            self.out.resize(th + TRANSFORM_LEN, 0);
            self.out
                .extend_from_slice(&self.staged[s.start..s.start + s.len]);
            self.out.extend_from_slice(ext);
            let nonce = self.next_nonce();
            let mut t = Transform {
                signature: [0; 16],
                nonce,
                original_size: msg_len as u32,
                flags: 1,
                session_id: self.session_id,
            };
            let mut tb = [0u8; TRANSFORM_LEN];
            t.encode(&mut tb);
            if let Some(sealer) = &self.keys.seal_out {
                t.signature = sealer.seal(&nonce, &tb[20..], &mut self.out[th + TRANSFORM_LEN..]);
            }
            t.encode(&mut tb);
            self.out[th..th + TRANSFORM_LEN].copy_from_slice(&tb);
            let end = self.out.len();
            self.push_own(start, end);
            return end - start;
        }
        if sign {
            let signer = if s.sign_override {
                self.keys.session_signer.as_ref()
            } else {
                self.keys.signer.as_ref()
            };
            if let Some(signer) = signer {
                let mut run = signer.start(&hb, false, s.command == Command::Cancel);
                run.update(&self.staged[s.start + HEADER_LEN..s.start + s.len]);
                run.update(ext);
                let sig = run.finish();
                self.staged[s.start + 48..s.start + 64].copy_from_slice(&sig);
            }
        }
        if s.keep_request {
            self.kept_request.clear();
            self.kept_request
                .extend_from_slice(&self.staged[s.start..s.start + s.len]);
            self.kept_request.extend_from_slice(ext);
        }
        let start = self.out.len();
        self.out.extend_from_slice(&encode_frame_len(msg_len));
        self.out
            .extend_from_slice(&self.staged[s.start..s.start + s.len]);
        let end = self.out.len();
        self.push_own(start, end);
        if !ext.is_empty() {
            self.segs.push(Seg::Ext {
                ptr: s.ext,
                len: s.ext_len,
            });
        }
        4 + msg_len
    }

    fn push_own(&mut self, start: usize, end: usize) {
        if let Some(Seg::Own { end: e, .. }) = self.segs.last_mut() {
            if *e == start {
                *e = end;
                return;
            }
        }
        self.segs.push(Seg::Own { start, end });
    }

    /// A nonce never used before with this session's key: a counter, the
    /// channel's index (channels share the key) and a random salt.
    fn next_nonce(&mut self) -> [u8; 16] {
        self.nonce_counter += 1;
        let mut n = [0u8; 16];
        n[..8].copy_from_slice(&self.nonce_counter.to_le_bytes());
        n[8..10].copy_from_slice(&self.index.to_le_bytes());
        n[10] = self.nonce_salt[0];
        // GCM uses 12 bytes, CCM 11: byte 11 only for GCM.
        if self
            .keys
            .seal_out
            .as_ref()
            .is_some_and(|s| s.nonce_len() == 12)
        {
            n[11] = self.nonce_salt[1];
        }
        n
    }

    /// Writes as much of the queued bytes as the socket takes now.
    fn flush(&mut self) -> SmbResult<()> {
        const MAX_IOV: usize = 64;
        while self.seg_at < self.segs.len() {
            let mut iov: [IoSlice<'_>; MAX_IOV] = [IoSlice::new(&[]); MAX_IOV];
            let mut n = 0;
            for (k, seg) in self.segs[self.seg_at..].iter().take(MAX_IOV).enumerate() {
                let skip = if k == 0 { self.seg_off } else { 0 };
                let bytes: &[u8] = match *seg {
                    Seg::Own { start, end } => &self.out[start + skip..end],
                    // SAFETY: as in `emit`: the caller keeps WRITE data alive.
                    Seg::Ext { ptr, len } => unsafe {
                        std::slice::from_raw_parts(ptr.add(skip), len - skip)
                    },
                };
                iov[k] = IoSlice::new(bytes);
                n = k + 1;
            }
            match self.sock.write_vectored(&iov[..n]) {
                Ok(0) => return Err(self.fail_io("sending", std::io::ErrorKind::WriteZero.into())),
                Ok(mut w) => {
                    while w > 0 && self.seg_at < self.segs.len() {
                        let len = match self.segs[self.seg_at] {
                            Seg::Own { start, end } => end - start,
                            Seg::Ext { len, .. } => len,
                        } - self.seg_off;
                        if w >= len {
                            w -= len;
                            self.seg_at += 1;
                            self.seg_off = 0;
                        } else {
                            self.seg_off += w;
                            w = 0;
                        }
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) => return Err(self.fail_io("sending", e)),
            }
        }
        self.segs.clear();
        self.out.clear();
        self.seg_at = 0;
        self.seg_off = 0;
        Ok(())
    }

    pub(super) fn has_output(&self) -> bool {
        self.seg_at < self.segs.len()
    }

    /// Marks the channel broken by a socket error.
    pub(super) fn fail_io(&mut self, doing: &str, e: std::io::Error) -> SmbError {
        let what = format!(
            "SMB channel {} to {} ({doing}, {} requests in flight lost)",
            self.index, self.sock.peer, self.slots.in_flight
        );
        self.broken = Some(format!("{what}: {e}"));
        self.sock.shutdown();
        SmbError::Io { what, source: e }
    }

    /// Marks the channel broken by anything else (a hostile reply, a
    /// timeout): it is not used again.
    pub(super) fn fail(&mut self, e: SmbError) -> SmbError {
        self.broken = Some(e.to_string());
        self.sock.shutdown();
        e
    }

    /// Whether the connection failed: nothing is sent on it again.
    pub(crate) fn is_broken(&self) -> bool {
        self.broken.is_some()
    }

    pub(super) fn check_broken(&self) -> SmbResult<()> {
        match &self.broken {
            Some(m) => Err(SmbError::Protocol(format!(
                "channel unusable after an earlier error: {m}"
            ))),
            None => Ok(()),
        }
    }

    /// Sends what can be sent now. Never blocks.
    pub(crate) fn submit(&mut self) -> SmbResult<()> {
        self.check_broken()?;
        self.dispatch();
        self.flush()
    }

    /// Sends, then takes every reply already here. Never blocks.
    pub(crate) fn reap(&mut self, out: &mut Vec<Completion>) -> SmbResult<usize> {
        let before = out.len();
        out.append(&mut self.backlog);
        self.submit()?;
        self.pump(out)?;
        // Replies bring credits: send what waited for them.
        self.submit()?;
        Ok(out.len() - before)
    }

    /// The reply the last synchronous call kept, and its request.
    pub(crate) fn kept(&self) -> (&[u8], &[u8]) {
        (&self.kept, &self.kept_request)
    }

    /// The last staged request (to set its send-time options).
    pub(crate) fn last_staged(&mut self) -> Option<&mut Staged> {
        self.slots.waiting.back_mut()
    }

    /// Fails the channel when its oldest request waited too long.
    pub(super) fn check_timeouts(&mut self, now: Instant) -> SmbResult<()> {
        let Some(f) = self.slots.oldest() else {
            return Ok(());
        };
        let (since, limit, how) = match f.interim_at {
            Some(t) => (
                t,
                self.opts.pending_timeout,
                "answered STATUS_PENDING, then nothing",
            ),
            None => (f.sent_at, self.opts.request_timeout, "no reply"),
        };
        if now.duration_since(since) > limit {
            let what = format!(
                "SMB server {} on channel {}: {} ({how})",
                self.sock.peer,
                self.index,
                f.command.name()
            );
            return Err(self.fail(SmbError::Timeout { what, after: limit }));
        }
        Ok(())
    }

    /// When the next request would time out (the longest a wait may sleep).
    pub(super) fn next_deadline(&mut self) -> Option<Instant> {
        let f = self.slots.oldest()?;
        Some(match f.interim_at {
            Some(t) => t + self.opts.pending_timeout,
            None => f.sent_at + self.opts.request_timeout,
        })
    }
}
