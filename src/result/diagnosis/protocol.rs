//! What volbench's own protocol client saw (`runs[].protocol`: an `nfs://`
//! or `smb://` target), read for where the time went and how the load was
//! spread, the way a kernel client's `mountstats` is read (`clients`):
//!
//! - **client queueing**: a call's round trip (sent to reply: the server
//!   and the network) is the part of an I/O's latency the server answers
//!   for; the execute time (queued to completed) adds the wait in the
//!   client before the call could go (a session slot, the connection's send
//!   queue, a reconnect), and the I/O's latency as the engine measured it
//!   adds the wait for the I/O thread to take the completion; not judged
//!   on a client whose threads may have waited for a CPU instead;
//! - **server time**: a run at a ceiling whose latency is almost all round
//!   trip: more from this client would only queue at the server;
//! - **an idle connection**: the client spreads calls round robin over the
//!   connections that are up, so a thread's split is even within a call; a
//!   connection far below its share was down (or unanswered) most of the
//!   run, while another carried its calls.
//!
//! Each finder is tested on synthetic figures in `tests/e2e/diagnosis.rs`.

use super::counted::runs_text;
use super::cpu::{cpu_short, others_pct};
use super::{Confidence, Finding, Kind, measured, measured_secs, num, paced, saturation};
use crate::result::ResultDoc;
use crate::result::RunResult;
use crate::result::protocol::{ProtocolConn, ProtocolOp, ProtocolStats};

/// Calls of one type below this are too few to judge their timings on.
const MIN_CALLS: u64 = 100;
/// ...and so are fewer than this many a second (`clients::NFS_MIN_OPS_S`).
const MIN_CALLS_S: f64 = 10.0;
/// The client's share at least the round trip: the I/O took twice what
/// the server and the network answered in (the kernel client's rule,
/// `clients::NFS_QUEUE`)...
const QUEUE_RATIO: f64 = 2.0;
/// ...and at least this many µs more: on a fast network both are
/// fractions of a millisecond, and a ratio alone means nothing.
const QUEUE_US: f64 = 500.0;
/// Other work held at least this share of the client's CPUs (percent of
/// all of them, `cpu::others_pct`): an I/O thread that wakes then often
/// finds no CPU free and waits a scheduler slice (milliseconds) for one,
/// so its calls' wait before the send, or its completions' before they
/// are taken, is no measure of the connections or the slots. (A server
/// on the same host, as in a loopback test, is such work.)
const OTHERS_BUSY: f64 = 50.0;
/// A run at a ceiling with at least this share of its I/O latency in the
/// round trip: the client added little, the server (or the network) set it.
const SERVER_SHARE: f64 = 0.80;
/// A thread's connections judged once it made this many calls: an even
/// split is exact within one call, so a skew in thousands is no accident.
const MIN_THREAD_CALLS: u64 = 1000;
/// A connection under this share of its even part idled (down, or not
/// answered, most of the run)...
const IDLE_SHARE: f64 = 0.25;
/// ...while another carried at least this multiple of its part.
const BUSY_SHARE: f64 = 1.5;

/// One operation type's times, set beside the I/O latency the engine
/// measured where each I/O was one call.
struct Times<'a> {
    op: &'a ProtocolOp,
    /// The I/O's mean latency (from its issue), in µs, when each of the
    /// run's I/Os of that direction was exactly one such call.
    io_us: Option<f64>,
    calls_s: f64,
}

impl Times<'_> {
    /// The whole time one I/O took, as far as it was measured.
    fn whole_us(&self) -> f64 {
        self.io_us
            .unwrap_or(self.op.exec_us.mean)
            .max(self.op.exec_us.mean)
    }
    fn rtt_us(&self) -> f64 {
        self.op.rtt_us.mean
    }
    /// Waiting in the client before the call was sent.
    fn unsent_us(&self) -> f64 {
        (self.op.exec_us.mean - self.op.rtt_us.mean).max(0.0)
    }
    /// Waiting for the I/O thread to take the completion.
    fn untaken_us(&self) -> f64 {
        self.io_us
            .map_or(0.0, |io| (io - self.op.exec_us.mean).max(0.0))
    }
}

/// The operation types of a run's client that moved enough calls to judge.
fn times<'a>(r: &'a RunResult, p: &'a ProtocolStats) -> Vec<Times<'a>> {
    let secs = measured_secs(r);
    if secs <= 0.0 {
        return Vec::new();
    }
    p.ops
        .iter()
        .filter(|op| op.calls >= MIN_CALLS && op.calls as f64 / secs >= MIN_CALLS_S)
        .map(|op| {
            let dir = match op.op.as_str() {
                "READ" => Some(&r.totals.read),
                "WRITE" => Some(&r.totals.write),
                _ => None,
            };
            // A rate-held run's latency counts from when the I/O was due;
            // its service time from the issue, as the call's.
            let io_us = dir.filter(|d| d.ops == op.calls).map(|d| {
                d.service_lat_us
                    .as_ref()
                    .filter(|_| paced(r))
                    .map_or(d.lat_us.mean, |s| s.mean)
            });
            Times {
                op,
                io_us,
                calls_s: op.calls as f64 / secs,
            }
        })
        .collect()
}

fn direction(op: &str) -> String {
    match op {
        "READ" => "read".into(),
        "WRITE" => "write".into(),
        other => format!("{other} call"),
    }
}

/// Whether a run's client may have waited for a CPU: short of one
/// (`cpu::cpu_short`, which `client_cpu` says), or its CPUs shared with
/// other work. Its waits are then not read as queueing.
fn waited_for_cpu(r: &RunResult) -> bool {
    cpu_short(r).is_some() || others_pct(r).is_some_and(|p| p >= OTHERS_BUSY)
}

/// The I/Os waited in volbench's client, not at the server: the time past
/// the round trip at least the round trip itself, and half a millisecond,
/// on a client whose CPU was not the wait (`waited_for_cpu`).
pub(super) fn client_queueing(doc: &ResultDoc) -> Vec<Finding> {
    let mut hits = Vec::new();
    for r in measured(doc).filter(|r| !waited_for_cpu(r)) {
        let Some(p) = &r.protocol else { continue };
        for t in times(r, p) {
            let extra = t.whole_us() - t.rtt_us();
            if extra >= (QUEUE_RATIO - 1.0) * t.rtt_us() && extra >= QUEUE_US {
                hits.push((r, p, t));
            }
        }
    }
    let ratio = |t: &Times| t.whole_us() / t.rtt_us().max(1e-3);
    let Some((r, p, t)) = hits
        .iter()
        .max_by(|a, b| ratio(&a.2).total_cmp(&ratio(&b.2)))
    else {
        return Vec::new();
    };
    let unsent = t.unsent_us();
    let untaken = t.untaken_us();
    let what = direction(&t.op.op);
    let slot = if p.version.starts_with('4') {
        "a session slot or its connection's send queue"
    } else {
        "its connection's send queue"
    };
    let per_conn = r.littles_law.concurrency as f64 / f64::from(p.connections.max(1));
    let advice = if unsent >= untaken {
        format!(
            "about {} calls were in flight per connection: more connections (--nfs-connections) \
             or fewer in flight on each will send them sooner",
            num(per_conn)
        )
    } else {
        "the I/O threads were late to take their completions (their CPU): more threads, each \
         with fewer in flight, or a less busy client"
            .to_string()
    };
    let io = match t.io_us {
        Some(v) => format!("each {what} took {} µs as volbench measured it, ", num(v)),
        None => format!(
            "each {what} took {} µs to execute, ",
            num(t.op.exec_us.mean)
        ),
    };
    let message = format!(
        "{} client queueing in {}: {io}{:.1}x its round trip of {} µs (the server and the \
         network): {} µs it waited in the client for {slot} before it was sent, {} µs for its \
         I/O thread to take it. Not the server: {advice}.",
        p.protocol.to_uppercase(),
        runs_text(r, hits.len()),
        ratio(t),
        num(t.rtt_us()),
        num(unsent),
        num(untaken),
    );
    let sure = if ratio(t) >= 4.0 {
        Confidence::High
    } else {
        Confidence::Medium
    };
    let mut f = Finding::new(Kind::NfsQueueing, sure, message)
        .figure("rtt_us", t.rtt_us())
        .figure("exec_us", t.op.exec_us.mean)
        .figure("ratio", ratio(t))
        .figure("calls_s", t.calls_s)
        .figure("connections", f64::from(p.connections))
        .figure("in_flight_per_connection", per_conn);
    if let Some(io) = t.io_us {
        f = f.figure("io_us", io);
    }
    vec![f.runs(hits.iter().map(|h| h.0))]
}

/// A run at a ceiling whose I/O latency is almost all round trip: the
/// server (or the network to it) sets the level, not this client.
pub(super) fn server_time(doc: &ResultDoc) -> Vec<Finding> {
    let mut hits = Vec::new();
    for r in measured(doc).filter(|r| !paced(r)) {
        let Some(p) = &r.protocol else { continue };
        let Some(t) = times(r, p)
            .into_iter()
            .filter(|t| t.io_us.is_some())
            .max_by_key(|t| t.op.calls)
        else {
            continue;
        };
        let share = t.rtt_us() / t.whole_us().max(1e-3);
        if share < SERVER_SHARE {
            continue;
        }
        let Some(why) = saturation::ceiling(doc, r) else {
            continue;
        };
        hits.push((r, p, t, share, why));
    }
    let Some((r, p, t, share, why)) = hits.iter().max_by(|a, b| a.3.total_cmp(&b.3)) else {
        return Vec::new();
    };
    let message = format!(
        "server time: {} in {}, and {:.0}% of each {}'s {} µs was the round trip to the {} \
         server ({} µs), the client adding {} µs: the server, or the network to it, sets this \
         level. More threads or connections from this client will queue there; a faster server \
         or export, or spreading over more servers, will not.",
        why,
        runs_text(r, hits.len()),
        share * 100.0,
        direction(&t.op.op),
        num(t.whole_us()),
        p.protocol.to_uppercase(),
        num(t.rtt_us()),
        num(t.whole_us() - t.rtt_us()),
    );
    vec![
        Finding::new(Kind::ServerTime, Confidence::Medium, message)
            .figure("rtt_us", t.rtt_us())
            .figure("io_us", t.whole_us())
            .figure("rtt_share_pct", share * 100.0)
            .figure("calls_s", t.calls_s)
            .runs(hits.iter().map(|h| h.0)),
    ]
}

/// One thread's connections, its busiest and idlest, if skewed.
struct Skew {
    thread: u32,
    busy: ProtocolConn,
    idle: ProtocolConn,
    n: usize,
    calls: u64,
}

impl Skew {
    fn idle_share(&self) -> f64 {
        self.idle.calls as f64 * self.n as f64 / self.calls.max(1) as f64
    }
}

/// Each thread whose busiest connection carried at least 1.5x its even
/// part while another carried under a quarter of its own.
fn skews(p: &ProtocolStats) -> Vec<Skew> {
    let mut threads: Vec<u32> = p.per_connection.iter().map(|c| c.thread).collect();
    threads.sort_unstable();
    threads.dedup();
    threads
        .into_iter()
        .filter_map(|thread| {
            let conns: Vec<&ProtocolConn> = p
                .per_connection
                .iter()
                .filter(|c| c.thread == thread)
                .collect();
            let n = conns.len();
            let calls: u64 = conns.iter().map(|c| c.calls).sum();
            if n < 2 || calls < MIN_THREAD_CALLS {
                return None;
            }
            let even = calls as f64 / n as f64;
            let busy = **conns.iter().max_by_key(|c| c.calls)?;
            let idle = **conns.iter().min_by_key(|c| c.calls)?;
            (busy.calls as f64 >= BUSY_SHARE * even && (idle.calls as f64) <= IDLE_SHARE * even)
                .then_some(Skew {
                    thread,
                    busy,
                    idle,
                    n,
                    calls,
                })
        })
        .collect()
}

/// A connection that idled while another of its thread carried the load:
/// the run measured fewer connections than it was given.
pub(super) fn idle_connection(doc: &ResultDoc) -> Vec<Finding> {
    let mut hits: Vec<(&RunResult, &ProtocolStats, Vec<Skew>)> = Vec::new();
    for r in measured(doc) {
        let Some(p) = &r.protocol else { continue };
        let s = skews(p);
        if !s.is_empty() {
            hits.push((r, p, s));
        }
    }
    let worst = |s: &[Skew]| s.iter().map(Skew::idle_share).fold(f64::INFINITY, f64::min);
    let Some((r, p, s)) = hits
        .iter()
        .min_by(|a, b| worst(&a.2).total_cmp(&worst(&b.2)))
    else {
        return Vec::new();
    };
    let Some(k) = s
        .iter()
        .min_by(|a, b| a.idle_share().total_cmp(&b.idle_share()))
    else {
        return Vec::new();
    };
    let pct = |c: &ProtocolConn| c.calls as f64 / k.calls.max(1) as f64 * 100.0;
    let threads: u32 = p
        .per_connection
        .iter()
        .map(|c| c.thread + 1)
        .max()
        .unwrap_or(1);
    let down = if k.idle.reconnects > 0 {
        format!(
            "it was made again {} time(s) after a loss, so it was down for much of the run",
            k.idle.reconnects
        )
    } else {
        "it was never reconnected, so the server left its calls unanswered or slow".into()
    };
    let message = format!(
        "idle connection in {}: of I/O thread {}'s {} {} connections, connection {} carried {} \
         calls ({:.0}%) and connection {} only {} ({:.0}%), in {} of {} threads. volbench spreads \
         calls round robin over the connections that are up, so an even split is exact; {down}. \
         The run measured fewer connections than it was given.",
        runs_text(r, hits.len()),
        k.thread,
        k.n,
        p.protocol.to_uppercase(),
        k.busy.conn,
        num(k.busy.calls as f64),
        pct(&k.busy),
        k.idle.conn,
        num(k.idle.calls as f64),
        pct(&k.idle),
        s.len(),
        threads,
    );
    let sure = if k.idle.calls == 0 {
        Confidence::High
    } else {
        Confidence::Medium
    };
    vec![
        Finding::new(Kind::IdleConnection, sure, message)
            .figure("busiest_calls", k.busy.calls as f64)
            .figure("idlest_calls", k.idle.calls as f64)
            .figure("even_calls", k.calls as f64 / k.n as f64)
            .figure("threads_skewed", s.len() as f64)
            .figure("idlest_reconnects", k.idle.reconnects as f64)
            .runs(hits.iter().map(|h| h.0)),
    ]
}
