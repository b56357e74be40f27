//! A worker's engine over SMB: its own session (the target's dialect,
//! signing and encryption, `channels=` channels bound to it), its files
//! opened from the set's directory and proven the files prepared, and
//! `io::engine::Engine`'s shape over the channels: `queue` stages a READ
//! or WRITE on the next channel in turn (never blocks), `submit_and_wait`
//! sends what the credits allow and reaps completions from every channel
//! in one poll. The queue depth is real: up to `--iodepth` requests in
//! flight per worker, spread over its channels, bounded by the credits
//! the server grants (waits for them are counted).
//!
//! Nothing here allocates per I/O: completions land in a vector kept
//! between calls, and an error is a negative errno in the completion, as
//! the kernel engines report it. A server that drops the session mid-run
//! is reconnected and the I/Os in flight sent again (`resume.rs`).

use std::time::{Duration, Instant};

use super::file::errno_of;
use super::resume::{self, Ended, Held, InFlight, Proof};
use super::{SmbDir, connect};
use crate::error::{Result, VbError};
use crate::io::backend::{Dir, IoOpen};
use crate::io::engine::{Completion, Engine, Stopping, give_up};
use crate::io::workload::IoOp;
use crate::proto::smb::conn::wait::wait_all;
use crate::proto::smb::conn::{self, Outcome};
use crate::proto::smb::consts::{Command, status};
use crate::proto::smb::error::{SmbError, ends_session};
use crate::proto::smb::msg::FileId;
use crate::proto::smb::session::client::Client;
use crate::proto::smb::session::ops::Open;
use crate::proto::smb::stats::ChannelStats;
use crate::result::protocol::{ProtoOpSeen, ProtoSeen};
use crate::result::smb::{SmbChannelSeen, SmbCommandSeen, SmbSeen};
use crate::stats::live_links::{self, Carry, LINK_FIELDS, LinkKind, link, links_of};
use crate::stats::{LiveCounters, OpStats, PROTO_FIELDS, proto};

/// How long one `submit_and_wait` waits when given no timeout, before it
/// returns with nothing: the worker then looks at the run's phase and
/// waits again, so a stop reaches it while the server is silent (the
/// channels' own request timeouts fail such a server only much later). A
/// healthy wait ends at its first completion: nothing per I/O.
const WAIT_SLICE: Duration = Duration::from_millis(100);

/// The most credits a channel asks the server to keep open (Samba grants
/// up to 8192 by default).
const MAX_CREDITS: u64 = 8192;

pub(super) struct SmbEngine {
    client: Client,
    tree: u32,
    /// The worker's files, by `IoOp::file`.
    files: Vec<FileId>,
    write_through: bool,
    /// The channel the next request goes on.
    next: usize,
    /// When each slot's request was queued, and whether it is a write:
    /// the execute time (queued to completion, credit waits included).
    queued_at: Vec<Instant>,
    writes: Vec<bool>,
    exec: [OpStats; 2],
    /// Completions from the channels, reused between calls.
    got: Vec<conn::Completion>,
    /// Requests refused at queue time, completed at the next submit.
    refused: Vec<Completion>,
    /// The live totals counted before the measured phase started the
    /// client's figures over, so what is published never goes back.
    carried: [u64; PROTO_FIELDS],
    /// Each channel's live totals, carried the same way.
    links: Carry,
    /// The client's figures when the measured phase ended.
    measured: Option<ProtoSeen>,
    /// What a reconnect needs: each file's path and id, how they open
    /// and are proven, how long a lost server is dialled again.
    held: Vec<Held>,
    proof: Proof,
    reconnect_for: Duration,
    /// Each slot's I/O from queue to completion: sent again after a
    /// reconnect.
    in_flight: Vec<Option<InFlight>>,
    /// READs and WRITEs sent again after a reconnect, since the measured
    /// phase began.
    resent: [u64; 2],
    /// Why the run can go no further (the server lost, a file no longer
    /// the set's): every I/O fails from then on. Or the run was stopped
    /// while the server was away: nothing more is asked of it.
    ended: Option<Ended>,
    /// The run's stop (`Engine::watch_stop`), which ends a reconnect.
    stopping: Option<Stopping>,
    /// The I/Os in flight at the end were given up (`abandon`): the
    /// server is not asked for anything more.
    abandoned: bool,
}

// SAFETY: the channels' raw pointers are the worker's buffers, used only
// on the worker's thread between queue and completion (`Engine::queue`'s
// contract); the engine moves to that thread once, before any I/O.
unsafe impl Send for SmbEngine {}

/// Logs a worker on with its own session and opens its files.
pub(super) fn open(dir: &SmbDir, files: &[(String, u64)], how: &IoOpen) -> Result<SmbEngine> {
    let url = &dir.shared().url;
    let channels = url.channels.unwrap_or(1);
    let depth = u64::from(how.depth.max(1));
    let mut opts = connect::options_of(url);
    let charge = how.max_io.max(1).div_ceil(65536);
    opts.credit_target = (depth * charge).clamp(16, MAX_CREDITS) as u16;
    opts.max_io = u32::try_from(how.max_io.max(4096)).unwrap_or(u32::MAX);
    let mut client = connect::connect(url, opts, channels)?;
    let max_io = client.negotiated().max_io;
    if how.max_io > u64::from(max_io) {
        client.logoff();
        return Err(VbError::input(format!(
            "{}: a {} byte I/O is larger than the {max_io} bytes the server takes in one READ \
             or WRITE; use a smaller --bs",
            dir.path().display(),
            how.max_io
        )));
    }
    let mut ids = Vec::with_capacity(files.len());
    let how_open = if how.write {
        Open::WriteExisting
    } else {
        Open::Read
    };
    let proof = Proof {
        dev: dir.shared().dev,
        how: how_open,
        owner: dir.shared().me(),
    };
    let mut held = Vec::with_capacity(files.len());
    for (name, id) in files {
        let f = Held {
            at: dir.at(name)?,
            shown: dir.path_of(name).display().to_string(),
            id: *id,
        };
        let opened = resume::open_proven(&mut client, &f, proof)
            .map_err(|u| u.into_error(&f, "after volbench prepared it"))?;
        ids.push(opened);
        held.push(f);
    }
    let slots = depth as usize;
    Ok(SmbEngine {
        tree: client.tree_id(),
        client,
        files: ids,
        write_through: how.sync != crate::spec::WriteSync::None,
        next: 0,
        queued_at: vec![Instant::now(); slots],
        writes: vec![false; slots],
        exec: [OpStats::new(), OpStats::new()],
        got: Vec::with_capacity(slots),
        refused: Vec::new(),
        carried: [0; PROTO_FIELDS],
        links: Carry::new(channels),
        held,
        proof,
        reconnect_for: Duration::from_secs(
            url.reconnect
                .unwrap_or(crate::units::bounds::DEFAULT_SMB_RECONNECT_SECS),
        ),
        in_flight: vec![None; slots],
        resent: [0; 2],
        measured: None,
        ended: None,
        stopping: None,
        abandoned: false,
    })
}

impl SmbEngine {
    /// Every channel's figures summed (the replaced ones' too), on top of
    /// what was carried: a few additions per command, no allocation.
    /// Calls are the replies (as `protocol` counts them); a READ's or
    /// WRITE's execute time is the engine's, queued to completion.
    fn live_totals(&self) -> [u64; PROTO_FIELDS] {
        let mut t = self.carried;
        // The session's count, never started over: not carried.
        t[proto::RECONNECTS] = u64::from(self.client.reconnects());
        let chans = self.client.channels().iter().map(|c| c.stats());
        for st in chans.chain([self.client.retired_stats()]) {
            for cmd in Command::ALL {
                let s = st.command(cmd);
                t[proto::ERRORS] += s.errors;
                let Some(l) = s.latency.as_deref() else {
                    continue;
                };
                t[proto::CALLS] += l.ops;
                t[proto::BYTES] += l.bytes;
                let ns = l.lat_sum_ns.min(u64::MAX as u128) as u64;
                t[proto::RTT_NS] += ns;
                if !matches!(cmd, Command::Read | Command::Write) {
                    t[proto::EXEC_NS] += ns;
                }
            }
        }
        for e in &self.exec {
            t[proto::EXEC_NS] += e.lat_sum_ns.min(u64::MAX as u128) as u64;
        }
        t
    }

    fn refuse(&mut self, slot: u32, errno: i32) {
        if let Some(f) = self.in_flight.get_mut(slot as usize) {
            *f = None;
        }
        self.refused.push(Completion {
            slot,
            result: -i64::from(errno),
        });
    }

    /// The session was lost (`cause`): made again, the files reopened and
    /// proven, every I/O in flight sent again; or, when that cannot be,
    /// every I/O in flight failed and the run's reason kept (`failure`).
    fn resume(&mut self, cause: &str) {
        let stopping = self.stopping.clone();
        let stopped = || stopping.as_ref().is_some_and(|s| s());
        let got = resume::resume(
            &mut self.client,
            &self.held,
            self.proof,
            self.reconnect_for,
            cause,
            &stopped,
        );
        match got {
            Ok(ids) => {
                self.files = ids;
                self.tree = self.client.tree_id();
                for slot in 0..self.in_flight.len() {
                    if let Some(f) = self.in_flight[slot] {
                        self.resent[usize::from(f.op.write)] += 1;
                        // SAFETY: the buffer is the one queued with this
                        // slot, still left alone by the worker: the slot
                        // has not completed.
                        unsafe { self.stage(slot as u32, f.op, f.buf) };
                    }
                }
            }
            Err(Ended::Stopped) => {
                // The I/Os in flight stay as they are, given up at the
                // drain that follows (`abandon`), not failed: the run was
                // stopped, not lost.
                self.ended = Some(Ended::Stopped);
            }
            Err(e) => {
                let errno = match e {
                    Ended::Lost(_) => libc::ENOTCONN,
                    Ended::Refused(_) | Ended::Stopped => libc::ESTALE,
                };
                self.ended = Some(e);
                for slot in 0..self.in_flight.len() {
                    if self.in_flight[slot].is_some() {
                        self.refuse(slot as u32, errno);
                    }
                }
            }
        }
    }

    /// Stages `op` on the next channel in turn.
    ///
    /// # Safety
    /// `Engine::queue`'s contract: `buf` holds `op.len` bytes left alone
    /// until this slot's completion.
    unsafe fn stage(&mut self, slot: u32, op: IoOp, buf: *mut u8) {
        let Some(&file) = self.files.get(op.file as usize) else {
            return self.refuse(slot, libc::EINVAL);
        };
        let chans = self.client.channels_mut();
        let k = self.next % chans.len().max(1);
        self.next = k + 1;
        let Some(ch) = chans.get_mut(k) else {
            return self.refuse(slot, libc::EIO);
        };
        // SAFETY: `Engine::queue`'s contract is the channel's: `buf` holds
        // `op.len` bytes left alone until this slot's completion.
        unsafe {
            if op.write {
                ch.queue_write(
                    u64::from(slot),
                    self.tree,
                    file,
                    op.offset,
                    op.len,
                    buf,
                    self.write_through,
                );
            } else {
                ch.queue_read(u64::from(slot), self.tree, file, op.offset, op.len, buf);
            }
        }
    }
}

impl Engine for SmbEngine {
    unsafe fn queue(&mut self, slot: u32, op: IoOp, buf: *mut u8) {
        if self.ended.is_some() {
            return self.refuse(slot, libc::EIO);
        }
        if let Some(f) = self.in_flight.get_mut(slot as usize) {
            *f = Some(InFlight { op, buf });
        }
        // SAFETY: the caller's contract, passed on.
        unsafe { self.stage(slot, op, buf) };
        if let Some(t) = self.queued_at.get_mut(slot as usize) {
            *t = Instant::now();
        }
        if let Some(w) = self.writes.get_mut(slot as usize) {
            *w = op.write;
        }
    }

    fn submit_and_wait(&mut self, min: usize, out: &mut Vec<Completion>) -> std::io::Result<()> {
        self.submit_and_wait_for(min, WAIT_SLICE, out)
    }

    fn submit_and_wait_for(
        &mut self,
        min: usize,
        timeout: Duration,
        out: &mut Vec<Completion>,
    ) -> std::io::Result<()> {
        let had = self.refused.len();
        out.append(&mut self.refused);
        if self.ended.is_some() {
            // Every I/O in flight was failed with the reason; the lost
            // channels are not waited on.
            return Ok(());
        }
        self.got.clear();
        let waited = wait_all(
            self.client.channels_mut(),
            min.saturating_sub(had),
            timeout,
            &mut self.got,
        );
        // Completions taken before a channel failed are good.
        let mut lost: Option<String> = None;
        let now = Instant::now();
        for c in self.got.drain(..) {
            let slot = c.tag as u32;
            if ends_session(c.status) {
                // The server no longer knows the session, the tree or the
                // handle (it restarted): sent again once they are made anew.
                lost.get_or_insert_with(|| {
                    SmbError::status(Command::Read, c.status, "an I/O").to_string()
                });
                continue;
            }
            if let Some(f) = self.in_flight.get_mut(slot as usize) {
                *f = None;
            }
            let result = match (c.status, c.outcome) {
                (status::SUCCESS, Outcome::Bytes(n)) => i64::from(n),
                (status::END_OF_FILE, _) => 0,
                (status::SUCCESS, _) => -i64::from(libc::EIO),
                (st, _) => -i64::from(errno_of(&crate::proto::smb::error::SmbError::Status {
                    command: Command::Read,
                    status: st,
                    context: String::new(),
                })),
            };
            if let (Some(t), Some(&w)) = (
                self.queued_at.get(slot as usize),
                self.writes.get(slot as usize),
            ) {
                let ns = now.saturating_duration_since(*t).as_nanos() as u64;
                self.exec[usize::from(w)].record(ns, result.max(0) as u64);
            }
            out.push(Completion { slot, result });
        }
        match waited {
            Ok(_) => {}
            Err(e) if e.needs_reconnect() => lost = Some(e.to_string()),
            Err(e) => return Err(std::io::Error::other(e.to_string())),
        }
        if let Some(cause) = lost {
            self.resume(&cause);
            out.append(&mut self.refused);
        }
        Ok(())
    }

    fn measure_started(&mut self) {
        self.carried = self.live_totals();
        for (i, ch) in self.client.channels().iter().enumerate() {
            self.links.total(i, channel_figures(ch.stats()));
        }
        self.links.restart();
        self.client.reset_stats();
        self.exec = [OpStats::new(), OpStats::new()];
        self.resent = [0; 2];
    }

    fn measure_ended(&mut self) {
        self.measured = Some(seen(&self.client, Some(&self.exec)));
    }

    fn publish_live(&mut self, counters: &LiveCounters) {
        // The totals and the channels' as one publication: a live line's
        // are of one instant (the channels count requests as sent).
        let totals = self.live_totals();
        let (chans, carry) = (self.client.channels(), &mut self.links);
        live_links::publish(counters, &totals, |counters| {
            let links = links_of(counters, LinkKind::Channel, || {
                chans.iter().map(|c| c.peer().to_string()).collect()
            });
            for (i, ch) in chans.iter().enumerate() {
                links.store(i, &carry.total(i, channel_figures(ch.stats())));
            }
        });
    }

    fn protocol(&mut self) -> Option<ProtoSeen> {
        let mut s = self
            .measured
            .take()
            .unwrap_or_else(|| seen(&self.client, Some(&self.exec)));
        for o in &mut s.ops {
            if o.op == Command::Read.wire_name() {
                o.retrans = self.resent[0];
            } else if o.op == Command::Write.wire_name() {
                o.retrans = self.resent[1];
            }
        }
        Some(s)
    }

    fn failure(&self) -> Option<String> {
        match &self.ended {
            Some(Ended::Lost(m) | Ended::Refused(m)) => Some(m.clone()),
            Some(Ended::Stopped) | None => None,
        }
    }

    fn server_lost(&self) -> bool {
        matches!(self.ended, Some(Ended::Lost(_)))
    }

    fn watch_stop(&mut self, stopping: Stopping) {
        self.stopping = Some(stopping);
    }

    fn abandon(&mut self, waited: Duration, stopped: bool) -> bool {
        // The worker's buffers are touched only inside `submit_and_wait`,
        // which is not called again: closing the channels (at drop) ends
        // every request. The server is away once the session could not be
        // made again (`ended`); a lost channel is made again inside
        // `submit_and_wait`, or ends the session.
        let away = self.ended.is_some();
        self.abandoned |=
            matches!(self.ended, Some(Ended::Stopped)) || give_up(waited, stopped, away);
        self.abandoned
    }
}

/// What `client` saw since its figures last started over, as a run's
/// `protocol` records it: per command the requests and their round trip,
/// and the execute time `exec` measured for READ and WRITE (queued to
/// completion; a blocking call's is its round trip); the negotiation and
/// each channel's counters. The engine's and a tree's (`tree.rs`) alike.
pub(super) fn seen(client: &Client, exec: Option<&[OpStats; 2]>) -> ProtoSeen {
    let n = negotiated_seen(client);
    let mut seen = ProtoSeen {
        protocol: crate::spec::EngineKind::Smb.name(),
        version: n.dialect.to_string(),
        connections: client.channels().len() as u32,
        // Each channel made again counts (a session remade with its
        // channels: one each), as NFS counts its connections.
        reconnects: client.total_stats().reconnects,
        ops: Vec::new(),
        smb: None,
        // Its channels are listed in `smb` instead.
        conns: Vec::new(),
        threads: 1,
    };
    let total = client.total_stats();
    for cmd in Command::ALL {
        let s = total.command(cmd);
        let Some(rtt) = s.latency.as_deref() else {
            continue;
        };
        let exec = match (cmd, exec) {
            (Command::Read, Some(e)) => e[0].clone(),
            (Command::Write, Some(e)) => e[1].clone(),
            _ => rtt.clone(),
        };
        seen.ops.push(ProtoOpSeen {
            op: cmd.wire_name(),
            rtt: rtt.clone(),
            exec,
            errors: s.errors,
            retrans: 0,
            timeouts: 0,
        });
    }
    seen.smb = Some(n);
    seen
}

/// One channel's live figures (`stats::live_links::link`): requests sent,
/// the data moved, errors, and the requests that waited for credits, as
/// the result's `smb.channels` counts them; no allocation.
fn channel_figures(st: &ChannelStats) -> [u64; LINK_FIELDS] {
    let mut v = [0; LINK_FIELDS];
    for cmd in Command::ALL {
        let s = st.command(cmd);
        v[link::REQUESTS] += s.requests;
        v[link::BYTES] += s.bytes;
        v[link::ERRORS] += s.errors;
    }
    v[link::WAITS] = st.credit_waits;
    v
}

/// The session's negotiation and each channel's counters.
fn negotiated_seen(client: &Client) -> SmbSeen {
    let n = client.negotiated();
    let chans = client.channels();
    SmbSeen {
        dialect: n.dialect.name(),
        signing: n.signing,
        signing_algorithm: n.signing_algo.map(|a| a.name()),
        encryption: n.cipher.map(|c| c.name()),
        channels_per_session: chans.len() as u32,
        max_io: n.max_io,
        channels: chans
            .iter()
            .map(|ch| {
                let st = ch.stats();
                SmbChannelSeen {
                    channel: u32::from(ch.index()),
                    server: ch.peer().to_string(),
                    sessions: 1,
                    credits_granted: st.credits_granted,
                    credit_waits: st.credit_waits,
                    credit_wait_ns: st.credit_wait_ns,
                    max_in_flight: st.max_in_flight,
                    reconnects: st.reconnects,
                    commands: Command::ALL
                        .into_iter()
                        .filter_map(|cmd| {
                            let s = st.command(cmd);
                            (s.requests + s.errors > 0).then(|| SmbCommandSeen {
                                command: cmd.name(),
                                requests: s.requests,
                                bytes: s.bytes,
                                errors: s.errors,
                                latency: s.latency.as_deref().cloned().unwrap_or_default(),
                            })
                        })
                        .collect(),
                }
            })
            .collect(),
    }
}

impl Drop for SmbEngine {
    /// Each file closed, then the session logged off, once the run's I/O
    /// is over (a kernel client's close flushes nothing more here: every
    /// WRITE went to the server).
    ///
    /// After the I/O in flight was given up (a server that went away),
    /// nothing: each request would wait for it again.
    fn drop(&mut self) {
        if self.abandoned {
            return;
        }
        for &f in &self.files {
            let _ = self.client.close(f);
        }
        self.client.logoff();
    }
}
