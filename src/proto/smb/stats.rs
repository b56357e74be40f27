//! Per-channel, per-command statistics in the spirit of Windows' "SMB
//! Client Shares" counters: requests, bytes each way, errors and latency
//! (a mergeable `crate::stats::OpStats` histogram) per command, and the
//! credits granted, waited for and the time spent waiting. Owned by the
//! channel's thread; merged by addition.

use crate::stats::OpStats;

use super::consts::{COMMANDS, Command};

/// One command's counters on one channel.
#[derive(Clone, Debug, Default)]
pub struct CommandStats {
    pub requests: u64,
    /// Payload bytes: written for WRITE, read for READ, listed for
    /// QUERY_DIRECTORY; 0 for commands that move no data.
    pub bytes: u64,
    /// Whole frames on the wire, both ways (headers, signatures included).
    pub(crate) wire_sent: u64,
    pub(crate) wire_received: u64,
    pub errors: u64,
    /// Interim STATUS_PENDING replies (the server went asynchronous).
    pub(crate) pending: u64,
    /// Latency from send to final reply; allocated on the first reply, so
    /// a command never sent costs nothing.
    pub latency: Option<Box<OpStats>>,
}

impl CommandStats {
    pub(crate) fn merge(&mut self, o: &CommandStats) {
        self.requests += o.requests;
        self.bytes += o.bytes;
        self.wire_sent += o.wire_sent;
        self.wire_received += o.wire_received;
        self.errors += o.errors;
        self.pending += o.pending;
        if let Some(l) = &o.latency {
            self.latency
                .get_or_insert_with(|| Box::new(OpStats::new()))
                .merge(l);
        }
    }
}

/// Everything one channel counts.
#[derive(Clone, Debug)]
pub struct ChannelStats {
    pub(crate) commands: [CommandStats; COMMANDS],
    /// Credits the server granted, summed over replies.
    pub(crate) credits_granted: u64,
    /// Requests that could not be sent at once for want of credits (or of
    /// a free message-id slot).
    pub credit_waits: u64,
    pub(crate) credit_wait_ns: u64,
    /// The most requests in flight at once.
    pub max_in_flight: u32,
    /// The credits the channel held at the last reply.
    pub(crate) credits_now: u32,
    /// Times this channel was made again after its session was lost
    /// (`Client::reconnect_until`).
    pub reconnects: u64,
}

impl Default for ChannelStats {
    fn default() -> Self {
        ChannelStats {
            commands: std::array::from_fn(|_| CommandStats::default()),
            credits_granted: 0,
            credit_waits: 0,
            credit_wait_ns: 0,
            max_in_flight: 0,
            credits_now: 0,
            reconnects: 0,
        }
    }
}

impl ChannelStats {
    pub fn command(&self, c: Command) -> &CommandStats {
        &self.commands[c as usize]
    }

    pub fn command_mut(&mut self, c: Command) -> &mut CommandStats {
        &mut self.commands[c as usize]
    }

    /// Adds another channel's counters (the client's totals).
    pub(crate) fn merge(&mut self, o: &ChannelStats) {
        for (a, b) in self.commands.iter_mut().zip(&o.commands) {
            a.merge(b);
        }
        self.credits_granted += o.credits_granted;
        self.credit_waits += o.credit_waits;
        self.credit_wait_ns += o.credit_wait_ns;
        self.max_in_flight = self.max_in_flight.max(o.max_in_flight);
        self.credits_now += o.credits_now;
        self.reconnects += o.reconnects;
    }
}
