//! A worker's engine over NFS: its own client (`nconnect` connections of
//! its own, the target's version, rsize and wsize), its files looked up
//! from the set's directory handle and proven the files prepared, and
//! `io::engine::Engine`'s shape over the client's: `queue` encodes a READ
//! or WRITE into a slot and puts it on a connection's send queue (never
//! blocks), `submit_and_wait` sends and reaps completions. The queue depth
//! is real: up to `--iodepth` calls in flight per worker (NFSv4.1's
//! session slots bound it too), spread over the connections.
//!
//! Nothing here allocates per I/O: completions land in a vector kept
//! between calls, and an error is a negative errno in the completion, as
//! the kernel engines report it.

use std::time::Duration;

use super::file::errno;
use super::{NfsDir, attr_of};
use crate::error::{Result, VbError};
use crate::io::backend::{Dir, IoOpen};
use crate::io::engine::{Completion, Engine, give_up};
use crate::io::workload::IoOp;
use crate::proto::nfs::{self, Client, FileType, OpKind, Reply, Request, Stable};
use crate::result::protocol::{ProtoOpSeen, ProtoSeen, ProtocolConn};
use crate::stats::live_links::{self, Carry, LINK_FIELDS, LinkKind, link, links_of};
use crate::stats::{LiveCounters, PROTO_FIELDS, proto};

/// How long one `submit_and_wait` waits for its first completion when
/// given no timeout, before it returns with none: the worker then looks at
/// the run's phase and waits again. While the server is away its calls
/// wait for the reconnect (up to `reconnect=`), and a stop must still
/// reach the worker within a moment (`Engine::abandon`). A healthy wait
/// ends at its first completion: this costs one wake-up per slice while
/// the server is silent, nothing per I/O.
const WAIT_SLICE: Duration = Duration::from_millis(100);

pub(super) struct NfsEngine {
    client: Client,
    /// The client's number of each of the worker's files, by `IoOp::file`.
    files: Vec<u32>,
    stable: Stable,
    /// Completions from the client, reused between calls.
    got: Vec<nfs::Completion>,
    /// Requests refused at queue time, completed at the next submit.
    refused: Vec<Completion>,
    /// The server, for the line that says it was lost.
    server: String,
    /// The first call that failed because the server was gone (not
    /// reached again within the URL's `reconnect=`, a connection lost with
    /// it too often, no reply within the call timeouts).
    lost: Option<String>,
    /// The live totals counted before the measured phase started the
    /// client's figures over, so what is published never goes back.
    carried: [u64; PROTO_FIELDS],
    /// The client's figures when the measured phase ended.
    ended: Option<ProtoSeen>,
    /// Each connection's live totals, carried over the figures' restart.
    links: Carry,
    /// The I/Os still in flight at the end were given up (`abandon`): the
    /// server is not asked for anything more.
    abandoned: bool,
}

// SAFETY: the client's raw pointers are the worker's buffers, used only on
// the worker's thread between queue and completion (`Engine::queue`'s
// contract); the engine moves to that thread once, before any I/O.
unsafe impl Send for NfsEngine {}

/// Opens a worker's files over a client of its own.
pub(super) fn open(dir: &NfsDir, files: &[(String, u64)], how: &IoOpen) -> Result<NfsEngine> {
    let shared = dir.shared();
    let mut opts = shared.opts.clone();
    opts.connections = shared.url.nconnect.unwrap_or(1);
    opts.depth = (how.depth as usize).max(1);
    opts.max_io = u32::try_from(how.max_io.max(4096)).unwrap_or(u32::MAX);
    let url = &shared.url;
    let mount = nfs::connect(url, &opts)
        .map_err(|e| VbError::target(format!("cannot reach the NFS target: {e}")))?;
    let mut client = mount.client;
    let mut numbers = Vec::with_capacity(files.len());
    for (name, id) in files {
        let path = || dir.path_of(name).display().to_string();
        let (fh, a) = client
            .lookup(dir.handle(), name.as_bytes())
            .map_err(|e| VbError::target(format!("cannot look up {}: {e}", path())))?;
        let same = a.kind == FileType::Regular
            && a.fileid == *id
            && attr_of(&a).dev == shared.dev
            && (!how.write || a.nlink == 1);
        if !same {
            return Err(VbError::refused(format!(
                "refusing to use {}: it was replaced after volbench prepared it",
                path()
            )));
        }
        let n = client
            .open(&fh)
            .map_err(|e| VbError::target(format!("cannot open {}: {e}", path())))?;
        numbers.push(n);
    }
    Ok(NfsEngine {
        client,
        files: numbers,
        stable: match how.sync {
            crate::spec::WriteSync::None => Stable::Unstable,
            crate::spec::WriteSync::Dsync => Stable::DataSync,
            crate::spec::WriteSync::Sync => Stable::FileSync,
        },
        got: Vec::with_capacity(opts.depth),
        refused: Vec::new(),
        server: url.to_string(),
        lost: None,
        carried: [0; PROTO_FIELDS],
        ended: None,
        links: Carry::new(opts.connections),
        abandoned: false,
    })
}

impl NfsEngine {
    /// Every connection's figures summed, on top of what was carried: a
    /// few additions per operation type seen, no allocation.
    fn live_totals(&self) -> [u64; PROTO_FIELDS] {
        let mut t = self.carried;
        for c in self.client.conn_stats() {
            t[proto::RECONNECTS] += c.reconnects;
            for s in c.ops.iter().flatten() {
                t[proto::CALLS] += s.rtt.ops;
                t[proto::BYTES] += s.rtt.bytes;
                t[proto::RTT_NS] += s.rtt.lat_sum_ns.min(u64::MAX as u128) as u64;
                t[proto::EXEC_NS] += s.exec.lat_sum_ns.min(u64::MAX as u128) as u64;
                t[proto::ERRORS] += s.errors;
                t[proto::RETRANS] += s.retrans;
                t[proto::TIMEOUTS] += s.timeouts;
            }
        }
        t
    }

    fn refuse(&mut self, slot: u32, errno: i32) {
        self.refused.push(Completion {
            slot,
            result: -i64::from(errno),
        });
    }
}

impl Engine for NfsEngine {
    unsafe fn queue(&mut self, slot: u32, op: IoOp, buf: *mut u8) {
        let Some(&file) = self.files.get(op.file as usize) else {
            return self.refuse(slot, libc::EINVAL);
        };
        let req = if op.write {
            Request::Write {
                file,
                offset: op.offset,
                len: op.len,
                buf,
                stable: self.stable,
            }
        } else {
            Request::Read {
                file,
                offset: op.offset,
                len: op.len,
                buf,
            }
        };
        // SAFETY: `Engine::queue`'s contract is the client's: `buf` holds
        // `op.len` bytes left alone until this slot's completion.
        if let Err(e) = unsafe { self.client.queue(slot, req) } {
            self.refuse(slot, e.errno());
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
        self.got.clear();
        self.client
            .poll(min.saturating_sub(had), timeout, &mut self.got)
            .map_err(|e| std::io::Error::other(e.to_string()))?;
        for c in self.got.drain(..) {
            let result = match c.result {
                Ok(Reply::Read { count, .. }) | Ok(Reply::Write { count, .. }) => i64::from(count),
                Ok(_) => -i64::from(libc::EIO),
                Err(e) => {
                    if self.lost.is_none() && server_gone(&e) {
                        self.lost = Some(format!("{e} (the NFS server of {})", self.server));
                    }
                    -i64::from(errno(&e).raw_os_error())
                }
            };
            out.push(Completion {
                slot: c.slot,
                result,
            });
        }
        Ok(())
    }

    fn measure_started(&mut self) {
        self.carried = self.live_totals();
        for (i, c) in self.client.conn_stats().enumerate() {
            self.links.total(i, conn_figures(c));
        }
        self.links.restart();
        self.client.reset_stats();
    }

    fn measure_ended(&mut self) {
        self.ended = Some(seen(&self.client));
    }

    fn publish_live(&mut self, counters: &LiveCounters) {
        // The totals and the connections' as one publication: a live
        // line's connections' calls add up to its calls.
        let totals = self.live_totals();
        let (client, carry) = (&self.client, &mut self.links);
        live_links::publish(counters, &totals, |counters| {
            let links = links_of(counters, LinkKind::Connection, || {
                let server = client.server_addr().to_string();
                client.conn_stats().map(|_| server.clone()).collect()
            });
            for (i, c) in client.conn_stats().enumerate() {
                links.store(i, &carry.total(i, conn_figures(c)));
            }
        });
    }

    fn failure(&self) -> Option<String> {
        self.lost.clone()
    }

    fn server_lost(&self) -> bool {
        self.lost.is_some()
    }

    fn protocol(&mut self) -> Option<ProtoSeen> {
        Some(self.ended.take().unwrap_or_else(|| seen(&self.client)))
    }

    fn abandon(&mut self, waited: Duration, stopped: bool) -> bool {
        // The worker's buffers are touched only inside `poll`, which is not
        // called again: closing the connections (at drop) ends every call.
        // The server is away while a connection is down: the calls queued
        // on it wait for its return, up to `reconnect=`.
        let away = self.client.connections_up() < self.client.connections();
        self.abandoned |= give_up(waited, stopped, away);
        self.abandoned
    }
}

/// One connection's live figures (`stats::live_links::link`): calls
/// answered, the data they moved, errors, retransmissions; a few
/// additions per operation type, no allocation.
fn conn_figures(c: &crate::proto::rpc::stats::ConnStats) -> [u64; LINK_FIELDS] {
    let mut v = [0; LINK_FIELDS];
    for s in c.ops.iter().flatten() {
        v[link::REQUESTS] += s.rtt.ops;
        v[link::BYTES] += s.rtt.bytes;
        v[link::ERRORS] += s.errors;
        v[link::WAITS] += s.retrans;
    }
    v
}

/// The call failed because the server went away, not for what it asked.
fn server_gone(e: &nfs::NfsError) -> bool {
    use crate::proto::rpc::RpcError;
    matches!(
        e,
        nfs::NfsError::Rpc {
            err: RpcError::Unreachable { .. } | RpcError::Lost { .. } | RpcError::Timeout { .. },
            ..
        }
    )
}

/// What `client` saw since its figures last started over, per operation
/// type over its connections: a worker's part of `runs[].protocol` (the
/// block engine's and a metadata worker's alike).
pub(super) fn seen(client: &Client) -> ProtoSeen {
    let mut seen = ProtoSeen {
        protocol: crate::spec::EngineKind::Nfs.name(),
        version: client.version().to_string(),
        connections: client.conn_stats().count() as u32,
        reconnects: 0,
        ops: Vec::new(),
        smb: None,
        conns: Vec::new(),
        threads: 1,
    };
    for (i, c) in client.conn_stats().enumerate() {
        seen.reconnects += c.reconnects;
        let each = c.ops.iter().flatten();
        seen.conns.push(ProtocolConn {
            thread: 0,
            conn: i as u32,
            calls: c.total_ops(),
            bytes: each.clone().map(|s| s.rtt.bytes).sum(),
            errors: each.clone().map(|s| s.errors).sum(),
            retrans: each.clone().map(|s| s.retrans).sum(),
            timeouts: each.map(|s| s.timeouts).sum(),
            reconnects: c.reconnects,
        });
        for (k, s) in c.ops.iter().enumerate() {
            let (Some(s), Some(kind)) = (s, OpKind::from_index(k as u8)) else {
                continue;
            };
            let one = ProtoSeen {
                ops: vec![ProtoOpSeen {
                    op: kind.name(),
                    rtt: s.rtt.clone(),
                    exec: s.exec.clone(),
                    errors: s.errors,
                    retrans: s.retrans,
                    timeouts: s.timeouts,
                }],
                ..ProtoSeen::default()
            };
            seen.merge(one);
        }
    }
    seen
}

impl Drop for NfsEngine {
    /// What was written UNSTABLE is committed, and each file closed
    /// (NFSv4.1's open state), once the run's I/O is over: after the
    /// measured time, as a kernel client's close flushes.
    ///
    /// After the I/O in flight was given up (a server that went away),
    /// nothing: each call would wait for it again, up to `reconnect=`.
    fn drop(&mut self) {
        if self.abandoned {
            return;
        }
        for &file in &self.files {
            if self.stable != Stable::FileSync {
                let _ = self.client.call(Request::Commit {
                    file,
                    offset: 0,
                    len: 0,
                });
            }
            let _ = self.client.close(file);
        }
    }
}
