//! Clock sync: each host's clock offset from the fastest of a few pings,
//! the notes when clocks are far apart or the network too slow to know
//! them well, and the common start time every host is released at.

use crate::events::Raise as _;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::super::protocol::ToAgent;
use super::host::Host;
use super::{Coordinator, PINGS, SKEW_WARN_MS};

/// The least time between deciding the common start and the start itself.
const START_MARGIN: Duration = Duration::from_millis(150);
/// Added per host in the run, for the start lines to reach them all.
const PER_HOST_MARGIN: Duration = Duration::from_micros(250);

/// A pong older than this answers no ping of ours.
const PONG_MAX_AGE_NS: u64 = 60_000_000_000;

pub(super) fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

/// Sends the first ping (after the host's hello).
pub(super) fn first_ping(h: &Host) {
    h.send(&ToAgent::Ping {
        id: 0,
        sent_ns: now_ns(),
    });
}

/// Takes in a pong: sends the next ping, or after the last one settles the
/// host's offset and round trip. An `Err` is a pong for no ping of ours.
pub(super) fn on_pong(
    h: &mut Host,
    id: u32,
    sent_ns: u64,
    agent_ns: u64,
) -> std::result::Result<(), String> {
    let now = now_ns();
    if id != h.clock.pings.len() as u32 || sent_ns > now || now - sent_ns > PONG_MAX_AGE_NS {
        return Err("answered a ping it was not sent".into());
    }
    let rtt = now - sent_ns;
    let offset = agent_ns as i128 - (sent_ns as i128 + now as i128) / 2;
    h.clock.pings.push((rtt, offset));
    if (h.clock.pings.len() as u32) < PINGS {
        h.send(&ToAgent::Ping {
            id: id + 1,
            sent_ns: now_ns(),
        });
    } else if let Some(&(rtt, off)) = h.clock.pings.iter().min_by_key(|p| p.0) {
        h.clock.rtt_ns = rtt.max(1);
        h.clock.offset_ns = off;
    }
    Ok(())
}

impl Coordinator<'_> {
    pub(super) fn clock_notes(&mut self) {
        let mut far = Vec::new();
        let mut unsure = 0.0f64;
        for h in &self.hosts {
            let off_ms = h.clock.offset_ns as f64 / 1e6;
            if off_ms.abs() > 1000.0 {
                far.push(format!("{} {:+.1}s", h.name(), off_ms / 1000.0));
            }
            unsure = unsure.max(h.clock.rtt_ns as f64 / 2e6);
        }
        if !far.is_empty() {
            let n = format!(
                "host clocks differ from this one's ({}); start times are corrected for it, \
                 but per-host timestamps are in each host's own clock",
                far.join(", ")
            );
            self.obs.note(&n);
            self.notes.push(n);
        }
        if unsure > SKEW_WARN_MS {
            let n = format!(
                "network round trips up to {:.0} ms: clock offsets, and so the common start, \
                 are only known to about +/-{unsure:.0} ms",
                unsure * 2.0
            );
            self.obs.note(&n);
            self.notes.push(n);
        }
    }

    /// Releases every live host in the run at one absolute start time, far enough ahead
    /// to reach every host, sent in each host's own clock. Returns the margin.
    pub(super) fn release(&mut self, index: u32) -> Duration {
        let max_rtt = self.hosts.iter().map(|h| h.clock.rtt_ns).max().unwrap_or(0);
        // The start must reach every host before its time, or that host
        // starts late: each start line goes out through its own writer
        // thread and is read by its own agent, so the time to reach them all
        // grows with their number (a thousand on one loaded machine).
        let n = self.hosts.iter().filter(|h| h.in_run()).count() as u64;
        let floor = START_MARGIN + PER_HOST_MARGIN * n as u32;
        let margin = Duration::from_nanos(max_rtt.saturating_mul(4)).max(floor);
        let at = now_ns() as i128 + margin.as_nanos() as i128;
        self.released_at = Some(at);
        for h in self.hosts.iter().filter(|h| h.in_run()) {
            h.send(&ToAgent::Start {
                index,
                at_ns: (at + h.clock.offset_ns).max(0) as u64,
            });
        }
        margin
    }
}
