//! What volbench's own SMB client saw in a run's measured phase, beside
//! the per-operation figures every protocol client gives
//! (`runs[].protocol.smb`): what the session negotiated (dialect, signing,
//! encryption, the READ/WRITE size) and, per channel, the counters Windows
//! shows as "SMB Client Shares": requests, bytes, errors and latency per
//! command, the credits granted and the requests that waited for them.
//! Each I/O thread has its own session; channel K of every session is
//! added into channel K here (`sessions` says how many), so the spread of
//! the traffic over the channels is what the user reads. Hosts' figures
//! merge the same way (`merge::merge_smb`).

use serde::{Deserialize, Serialize};

use super::LatSummary;
use crate::stats::OpStats;

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct SmbStats {
    /// "2.1", "3.0", "3.0.2", "3.1.1".
    pub(crate) dialect: String,
    /// Whether READ and WRITE requests were signed, and how.
    pub(crate) signing: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) signing_algorithm: Option<String>,
    /// The cipher every message was sealed with, when the session
    /// encrypted ("AES-128-GCM").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) encryption: Option<String>,
    /// Channels bound to each I/O thread's session.
    pub(crate) channels_per_session: u32,
    /// The largest READ or WRITE the session allowed, in bytes.
    pub(crate) max_io: u32,
    pub(crate) channels: Vec<SmbChannel>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct SmbChannel {
    /// The channel's place in its session (0: the one set up first).
    pub(crate) channel: u32,
    /// The server's address it was connected to.
    pub(crate) server: String,
    /// Sessions (I/O threads, hosts) whose channel of this place is added in.
    pub(crate) sessions: u32,
    pub(crate) credits_granted: u64,
    /// Requests that could not go at once for want of credits, and the
    /// time they waited, in ms.
    pub(crate) credit_waits: u64,
    pub(crate) credit_wait_ms: f64,
    pub(crate) max_in_flight: u32,
    /// Times the channel was made again after the server was lost (a
    /// restart mid-run), summed over its sessions.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub(crate) reconnects: u64,
    pub(crate) commands: Vec<SmbCommand>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct SmbCommand {
    /// "read", "write", "echo"...
    pub(crate) command: String,
    pub(crate) requests: u64,
    /// Data moved: written for WRITE, read for READ.
    pub(crate) bytes: u64,
    pub(crate) errors: u64,
    /// Request sent to final reply, in µs.
    pub(crate) latency_us: LatSummary,
}

/// One command on one channel as the client counts it, mergeable.
#[derive(Debug, Clone)]
pub(crate) struct SmbCommandSeen {
    pub(crate) command: &'static str,
    pub(crate) requests: u64,
    pub(crate) bytes: u64,
    pub(crate) errors: u64,
    pub(crate) latency: OpStats,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct SmbChannelSeen {
    pub(crate) channel: u32,
    pub(crate) server: String,
    pub(crate) sessions: u32,
    pub(crate) credits_granted: u64,
    pub(crate) credit_waits: u64,
    pub(crate) credit_wait_ns: u64,
    pub(crate) max_in_flight: u32,
    pub(crate) reconnects: u64,
    pub(crate) commands: Vec<SmbCommandSeen>,
}

/// What one I/O thread's session saw, mergeable over threads.
#[derive(Debug, Clone, Default)]
pub(crate) struct SmbSeen {
    pub(crate) dialect: &'static str,
    pub(crate) signing: bool,
    pub(crate) signing_algorithm: Option<&'static str>,
    pub(crate) encryption: Option<&'static str>,
    pub(crate) channels_per_session: u32,
    pub(crate) max_io: u32,
    pub(crate) channels: Vec<SmbChannelSeen>,
}

impl SmbSeen {
    /// Adds another session's figures, channel K into channel K.
    pub(crate) fn merge(&mut self, o: SmbSeen) {
        if self.dialect.is_empty() {
            self.dialect = o.dialect;
            self.signing = o.signing;
            self.signing_algorithm = o.signing_algorithm;
            self.encryption = o.encryption;
            self.channels_per_session = o.channels_per_session;
            self.max_io = o.max_io;
        }
        for ch in o.channels {
            let Some(c) = self.channels.iter_mut().find(|c| c.channel == ch.channel) else {
                self.channels.push(ch);
                continue;
            };
            c.sessions += ch.sessions;
            c.credits_granted += ch.credits_granted;
            c.credit_waits += ch.credit_waits;
            c.credit_wait_ns += ch.credit_wait_ns;
            c.max_in_flight = c.max_in_flight.max(ch.max_in_flight);
            c.reconnects += ch.reconnects;
            for cmd in ch.commands {
                match c.commands.iter_mut().find(|x| x.command == cmd.command) {
                    Some(x) => {
                        x.requests += cmd.requests;
                        x.bytes += cmd.bytes;
                        x.errors += cmd.errors;
                        x.latency.merge(&cmd.latency);
                    }
                    None => c.commands.push(cmd),
                }
            }
        }
        self.channels.sort_by_key(|c| c.channel);
    }

    /// The figures as result.json states them.
    pub(crate) fn stats(&self) -> SmbStats {
        SmbStats {
            dialect: self.dialect.to_string(),
            signing: self.signing,
            signing_algorithm: self.signing_algorithm.map(str::to_string),
            encryption: self.encryption.map(str::to_string),
            channels_per_session: self.channels_per_session,
            max_io: self.max_io,
            channels: self
                .channels
                .iter()
                .map(|c| SmbChannel {
                    channel: c.channel,
                    server: c.server.clone(),
                    sessions: c.sessions,
                    credits_granted: c.credits_granted,
                    credit_waits: c.credit_waits,
                    credit_wait_ms: c.credit_wait_ns as f64 / 1e6,
                    max_in_flight: c.max_in_flight,
                    reconnects: c.reconnects,
                    commands: c
                        .commands
                        .iter()
                        .filter(|x| x.requests + x.errors > 0)
                        .map(|x| SmbCommand {
                            command: x.command.to_string(),
                            requests: x.requests,
                            bytes: x.bytes,
                            errors: x.errors,
                            latency_us: LatSummary::from_stats(&x.latency),
                        })
                        .collect(),
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(reads: &[(u32, u64)]) -> SmbSeen {
        SmbSeen {
            dialect: "3.1.1",
            signing: true,
            signing_algorithm: Some("AES-GMAC"),
            encryption: None,
            channels_per_session: reads.len() as u32,
            max_io: 1 << 20,
            channels: reads
                .iter()
                .map(|&(k, n)| {
                    let mut lat = OpStats::new();
                    for _ in 0..n {
                        lat.record(100_000, 4096);
                    }
                    SmbChannelSeen {
                        channel: k,
                        server: "127.0.0.1:445".into(),
                        sessions: 1,
                        credit_waits: 1,
                        commands: vec![SmbCommandSeen {
                            command: "read",
                            requests: n,
                            bytes: n * 4096,
                            errors: 0,
                            latency: lat,
                        }],
                        ..SmbChannelSeen::default()
                    }
                })
                .collect(),
        }
    }

    #[test]
    fn sessions_merge_channel_by_channel() {
        let mut a = session(&[(0, 3), (1, 5)]);
        a.merge(session(&[(1, 2), (0, 1)]));
        let s = a.stats();
        assert_eq!((s.dialect.as_str(), s.channels_per_session), ("3.1.1", 2));
        let got: Vec<(u32, u32, u64, u64)> = s
            .channels
            .iter()
            .map(|c| {
                (
                    c.channel,
                    c.sessions,
                    c.commands[0].requests,
                    c.credit_waits,
                )
            })
            .collect();
        assert_eq!(got, [(0, 2, 4, 2), (1, 2, 7, 2)]);
        assert!((s.channels[0].commands[0].latency_us.mean - 100.0).abs() < 1e-9);
        let back: SmbStats = serde_json::from_str(&serde_json::to_string(&s).unwrap()).unwrap();
        assert_eq!(back.channels.len(), 2);
    }
}
