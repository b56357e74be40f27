//! What the client saw, per connection and per operation type (the figures
//! a kernel client's `mountstats` gives): operations, bytes, round-trip
//! time (the call's last byte sent to its reply read) and execute time (the
//! call queued to its completion, so client queueing shows as the
//! difference), errors, retransmissions, timeouts and reconnects. Plain
//! counters and the project's mergeable histograms; an operation type's
//! histograms are made the first time it is seen on a connection, never
//! per call.

use crate::stats::OpStats;

/// Operation types are the protocol layer's small numbers, below this.
pub(crate) const OP_KINDS: usize = 40;

/// One operation type on one connection.
#[derive(Clone, Debug, Default)]
pub struct OpSeen {
    /// Send to reply; `ops` and `bytes` (data moved) are counted here.
    pub rtt: OpStats,
    /// Queued to completion.
    pub(crate) exec: OpStats,
    /// Calls that completed with an error (the server's or the transport's).
    pub(crate) errors: u64,
    /// Calls sent again, after a reconnect or a timeout.
    pub(crate) retrans: u64,
    /// Calls that waited past the call timeout.
    pub(crate) timeouts: u64,
}

impl OpSeen {
    #[cfg(test)]
    pub(crate) fn merge(&mut self, o: &OpSeen) {
        self.rtt.merge(&o.rtt);
        self.exec.merge(&o.exec);
        self.errors += o.errors;
        self.retrans += o.retrans;
        self.timeouts += o.timeouts;
    }
}

/// One connection's figures.
#[derive(Clone, Debug, Default)]
pub struct ConnStats {
    pub(crate) ops: Vec<Option<Box<OpSeen>>>,
    /// Connections made again after the first.
    pub reconnects: u64,
    pub(crate) bytes_sent: u64,
    pub(crate) bytes_received: u64,
    /// Calls sent, replies read (retransmissions counted as calls).
    pub(crate) calls_sent: u64,
    pub(crate) replies: u64,
}

impl ConnStats {
    pub(crate) fn new() -> Self {
        ConnStats {
            ops: (0..OP_KINDS).map(|_| None).collect(),
            ..Default::default()
        }
    }

    #[inline]
    pub(crate) fn op(&mut self, kind: u8) -> &mut OpSeen {
        self.ops[kind as usize % OP_KINDS].get_or_insert_with(Default::default)
    }

    pub fn get(&self, kind: u8) -> Option<&OpSeen> {
        self.ops.get(kind as usize).and_then(|o| o.as_deref())
    }

    #[cfg(test)]
    pub(crate) fn merge(&mut self, o: &ConnStats) {
        if self.ops.len() < OP_KINDS {
            self.ops.resize_with(OP_KINDS, || None);
        }
        for (k, seen) in o.ops.iter().enumerate() {
            if let Some(seen) = seen {
                self.op(k as u8).merge(seen);
            }
        }
        self.reconnects += o.reconnects;
        self.bytes_sent += o.bytes_sent;
        self.bytes_received += o.bytes_received;
        self.calls_sent += o.calls_sent;
        self.replies += o.replies;
    }

    /// Operations of every type.
    pub fn total_ops(&self) -> u64 {
        self.ops.iter().flatten().map(|s| s.rtt.ops).sum()
    }

    #[cfg(test)]
    pub(crate) fn total_timeouts(&self) -> u64 {
        self.ops.iter().flatten().map(|s| s.timeouts).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_merge_by_addition() {
        let mut a = ConnStats::new();
        a.op(3).rtt.record(1000, 4096);
        a.reconnects = 1;
        let mut b = ConnStats::new();
        b.op(3).rtt.record(3000, 4096);
        b.op(5).timeouts = 2;
        a.merge(&b);
        assert_eq!(a.get(3).map(|s| s.rtt.ops), Some(2));
        assert_eq!(a.get(3).map(|s| s.rtt.bytes), Some(8192));
        assert_eq!(a.total_timeouts(), 2);
        assert_eq!(a.reconnects, 1);
    }
}
