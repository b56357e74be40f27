//! What a protocol client saw during a run's measured phase, per
//! operation type: the figures a kernel client's `mountstats` gives (calls,
//! bytes, round-trip time from the call sent to its reply, execute time
//! from the call queued to its completion, so client queueing shows as the
//! difference; errors, retransmissions, timeouts), summed over the run's
//! I/O threads, each with a client of its own. `runs[].protocol` in
//! result.json, for a run on an `nfs://` or `smb://` target.

use serde::{Deserialize, Serialize};

use super::LatSummary;
use crate::stats::OpStats;
use crate::stats::live_links::{LINK_FIELDS, LinkKind, LinkSum, link};

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct ProtocolStats {
    /// "nfs".
    pub(crate) protocol: String,
    /// "3", "4.1".
    pub(crate) version: String,
    /// TCP connections the I/O threads' clients held (each thread its own).
    pub(crate) connections: u32,
    /// Connections made again after a loss.
    pub(crate) reconnects: u64,
    /// One entry per operation type seen, by name ("READ", "WRITE").
    pub(crate) ops: Vec<ProtocolOp>,
    /// An SMB session's negotiation and per-channel counters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) smb: Option<super::smb::SmbStats>,
    /// One entry per connection, I/O thread by thread (at most
    /// `bounds::MAX_PROTOCOL_CONNS_LISTED`; the sums above count them all):
    /// where a server restart was reconnected, one connection carrying the
    /// load while another idles.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) per_connection: Vec<ProtocolConn>,
}

/// What one TCP connection carried in the measured phase.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ProtocolConn {
    /// The I/O thread whose client held it, and its number there.
    pub(crate) thread: u32,
    pub(crate) conn: u32,
    /// Calls answered and the data they moved, every operation type.
    pub(crate) calls: u64,
    pub(crate) bytes: u64,
    pub(crate) errors: u64,
    pub(crate) retrans: u64,
    pub(crate) timeouts: u64,
    /// Times it was made again after a loss.
    pub(crate) reconnects: u64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct ProtocolOp {
    pub(crate) op: String,
    /// Calls answered, and the data they moved.
    pub(crate) calls: u64,
    pub(crate) bytes: u64,
    /// Call sent to reply read, in µs.
    pub(crate) rtt_us: LatSummary,
    /// Call queued to completion, in µs: above `rtt_us` by the time calls
    /// waited in the client (a session slot, a connection's send queue).
    pub(crate) exec_us: LatSummary,
    pub(crate) errors: u64,
    pub(crate) retrans: u64,
    pub(crate) timeouts: u64,
}

/// What a protocol client did in one interval, every I/O thread's client
/// summed: the live outputs' `protocol` (`--live` lines, the exporter's
/// `volbench_protocol_*` series).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub(crate) struct ProtocolInterval {
    /// Calls answered, and the data they moved.
    pub(crate) calls: u64,
    pub(crate) bytes: u64,
    /// Mean round-trip time (call sent to reply) and execute time (call
    /// queued to completion) of those calls, in µs; 0 without calls.
    pub(crate) rtt_us_mean: f64,
    pub(crate) exec_us_mean: f64,
    pub(crate) errors: u64,
    pub(crate) retrans: u64,
    pub(crate) timeouts: u64,
    /// Connections made again in the interval (a server restart).
    pub(crate) reconnects: u64,
    /// Per channel of an SMB session (channel K of every I/O thread's
    /// session added into K), or per connection of an NFS client: at most
    /// `stats::live_links::MAX_LINKS`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) channels: Vec<LinkInterval>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) connections: Vec<LinkInterval>,
}

/// What one channel (SMB) or connection (NFS) carried in an interval,
/// named in each protocol's words: a channel's `requests` sent and the
/// ones that waited for `credit_waits`, a connection's `calls` answered
/// and `retrans`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LinkInterval {
    pub(crate) kind: LinkKind,
    /// Its place in the client: channel or connection K.
    pub(crate) index: u32,
    /// The server address it is connected to.
    pub(crate) server: String,
    /// By `stats::live_links::link`.
    pub(crate) vals: [u64; LINK_FIELDS],
}

impl LinkInterval {
    pub(crate) fn requests(&self) -> u64 {
        self.vals[link::REQUESTS]
    }
    pub(crate) fn bytes(&self) -> u64 {
        self.vals[link::BYTES]
    }
    pub(crate) fn errors(&self) -> u64 {
        self.vals[link::ERRORS]
    }
    pub(crate) fn waits(&self) -> u64 {
        self.vals[link::WAITS]
    }
}

impl Serialize for LinkInterval {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let (place, requests, waits) = match self.kind {
            LinkKind::Channel => ("channel", "requests", "credit_waits"),
            LinkKind::Connection => ("connection", "calls", "retrans"),
        };
        let mut m = s.serialize_map(Some(6))?;
        m.serialize_entry(place, &self.index)?;
        m.serialize_entry("server", &self.server)?;
        m.serialize_entry(requests, &self.requests())?;
        m.serialize_entry("bytes", &self.bytes())?;
        m.serialize_entry("errors", &self.errors())?;
        m.serialize_entry(waits, &self.waits())?;
        m.end()
    }
}

impl ProtocolInterval {
    /// From the difference of two readings of `stats::LiveCounters::proto`.
    pub(crate) fn from_delta(d: &[u64; crate::stats::PROTO_FIELDS]) -> ProtocolInterval {
        use crate::stats::proto;
        let calls = d[proto::CALLS];
        let mean = |ns: u64| {
            if calls == 0 {
                0.0
            } else {
                ns as f64 / calls as f64 / 1000.0
            }
        };
        ProtocolInterval {
            calls,
            bytes: d[proto::BYTES],
            rtt_us_mean: mean(d[proto::RTT_NS]),
            exec_us_mean: mean(d[proto::EXEC_NS]),
            errors: d[proto::ERRORS],
            retrans: d[proto::RETRANS],
            timeouts: d[proto::TIMEOUTS],
            reconnects: d[proto::RECONNECTS],
            channels: Vec::new(),
            connections: Vec::new(),
        }
    }

    /// With each channel's or connection's figures since `earlier`.
    pub(crate) fn with_links(mut self, now: &LinkSum, earlier: &LinkSum) -> ProtocolInterval {
        let Some(kind) = now.kind else {
            return self;
        };
        let links = now
            .since(earlier)
            .into_iter()
            .zip(&now.servers)
            .enumerate()
            .map(|(i, (vals, server))| LinkInterval {
                kind,
                index: i as u32,
                server: server.clone(),
                vals,
            })
            .collect();
        match kind {
            LinkKind::Channel => self.channels = links,
            LinkKind::Connection => self.connections = links,
        }
        self
    }
}

/// One operation type as the client counts it, mergeable over threads.
#[derive(Debug, Clone)]
pub(crate) struct ProtoOpSeen {
    pub(crate) op: &'static str,
    pub(crate) rtt: OpStats,
    pub(crate) exec: OpStats,
    pub(crate) errors: u64,
    pub(crate) retrans: u64,
    pub(crate) timeouts: u64,
}

/// What one I/O thread's client saw, mergeable over threads.
#[derive(Debug, Clone, Default)]
pub(crate) struct ProtoSeen {
    pub(crate) protocol: &'static str,
    pub(crate) version: String,
    pub(crate) connections: u32,
    pub(crate) reconnects: u64,
    pub(crate) ops: Vec<ProtoOpSeen>,
    /// Per connection; `thread` counts from 0 in each part merged.
    pub(crate) conns: Vec<ProtocolConn>,
    /// I/O threads merged in.
    pub(crate) threads: u32,
    pub(crate) smb: Option<super::smb::SmbSeen>,
}

impl ProtoSeen {
    /// Adds another thread's figures.
    pub(crate) fn merge(&mut self, o: ProtoSeen) {
        if self.protocol.is_empty() {
            self.protocol = o.protocol;
            self.version = o.version.clone();
        }
        self.connections += o.connections;
        self.reconnects += o.reconnects;
        let cap = crate::units::bounds::MAX_PROTOCOL_CONNS_LISTED;
        for c in o.conns {
            if self.conns.len() < cap {
                self.conns.push(ProtocolConn {
                    thread: self.threads + c.thread,
                    ..c
                });
            }
        }
        self.threads += o.threads;
        if let Some(smb) = o.smb {
            self.smb.get_or_insert_with(Default::default).merge(smb);
        }
        for op in o.ops {
            match self.ops.iter_mut().find(|s| s.op == op.op) {
                Some(s) => {
                    s.rtt.merge(&op.rtt);
                    s.exec.merge(&op.exec);
                    s.errors += op.errors;
                    s.retrans += op.retrans;
                    s.timeouts += op.timeouts;
                }
                None => self.ops.push(op),
            }
        }
    }

    /// The figures as result.json states them.
    pub(crate) fn stats(&self) -> ProtocolStats {
        ProtocolStats {
            protocol: self.protocol.to_string(),
            version: self.version.clone(),
            connections: self.connections,
            reconnects: self.reconnects,
            ops: self
                .ops
                .iter()
                .filter(|s| s.rtt.ops + s.errors > 0)
                .map(|s| ProtocolOp {
                    op: s.op.to_string(),
                    calls: s.rtt.ops,
                    bytes: s.rtt.bytes,
                    rtt_us: LatSummary::from_stats(&s.rtt),
                    exec_us: LatSummary::from_stats(&s.exec),
                    errors: s.errors,
                    retrans: s.retrans,
                    timeouts: s.timeouts,
                })
                .collect(),
            per_connection: self.conns.clone(),
            smb: self.smb.as_ref().map(super::smb::SmbSeen::stats),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(op: &'static str, lat_ns: &[u64]) -> ProtoSeen {
        let mut rtt = OpStats::new();
        for &l in lat_ns {
            rtt.record(l, 4096);
        }
        ProtoSeen {
            protocol: "nfs",
            version: "3".into(),
            connections: 2,
            reconnects: 0,
            conns: vec![
                ProtocolConn {
                    conn: 0,
                    calls: lat_ns.len() as u64,
                    ..ProtocolConn::default()
                },
                ProtocolConn {
                    conn: 1,
                    reconnects: 1,
                    ..ProtocolConn::default()
                },
            ],
            threads: 1,
            ops: vec![ProtoOpSeen {
                op,
                exec: rtt.clone(),
                rtt,
                errors: 0,
                retrans: 1,
                timeouts: 0,
            }],
            smb: None,
        }
    }

    #[test]
    fn threads_merge_by_operation_type() {
        let mut a = seen("READ", &[1000, 3000]);
        a.merge(seen("READ", &[2000]));
        a.merge(seen("WRITE", &[5000]));
        let s = a.stats();
        assert_eq!(s.connections, 6);
        assert_eq!(s.ops.len(), 2);
        assert_eq!((s.ops[0].op.as_str(), s.ops[0].calls), ("READ", 3));
        assert_eq!(s.ops[0].bytes, 3 * 4096);
        assert!((s.ops[0].rtt_us.mean - 2.0).abs() < 1e-9, "{:?}", s.ops[0]);
        assert_eq!(s.ops[0].retrans, 2);
        // Each thread's connections listed under its own number.
        let ids: Vec<(u32, u32, u64)> = s
            .per_connection
            .iter()
            .map(|c| (c.thread, c.conn, c.calls))
            .collect();
        assert_eq!(
            ids,
            [
                (0, 0, 2),
                (0, 1, 0),
                (1, 0, 1),
                (1, 1, 0),
                (2, 0, 1),
                (2, 1, 0)
            ]
        );
        assert_eq!(s.per_connection[3].reconnects, 1);
    }
}
