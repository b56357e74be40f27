//! What volbench's SMB client counted per channel (`runs[].protocol.smb`),
//! read as Windows' "SMB Client Shares" counters are:
//!
//! - **credit starvation**: a request goes only when the server has
//!   granted a credit for it; a notable share of a channel's requests that
//!   had to wait means the server's credit window, not its storage, held
//!   the I/Os back;
//! - **an idle channel**: the engine sends each session's READs and WRITEs
//!   on its channels in turn, so channel K of every session carries an
//!   even share within a request; a channel far below it was lost or
//!   unanswered while the others carried the load (the SMB side of
//!   `protocol::idle_connection`, whose per-connection list SMB leaves to
//!   its channels).
//!
//! Each finder is tested on synthetic figures in `tests/e2e/diagnosis.rs`.

use super::counted::runs_text;
use super::{Confidence, Finding, Kind, measured, measured_secs, num};
use crate::result::ResultDoc;
use crate::result::RunResult;
use crate::result::smb::{SmbChannel, SmbStats};

/// A channel judged once it carried this many requests...
const MIN_REQUESTS: u64 = 1000;
/// ...at this many a second at least (`protocol::MIN_CALLS_S`).
const MIN_REQUESTS_S: f64 = 10.0;
/// Requests that waited for a credit, as a share of the channel's: a few
/// wait while the server's window opens after the session is set up, or
/// when a burst passes it; a tenth is the window holding the load back...
const STARVED_SHARE: f64 = 0.10;
/// ...and from half of them on, the window set the pace.
const STARVED_SURE: f64 = 0.50;
/// A channel under this share of its even part idled...
const IDLE_SHARE: f64 = 0.25;
/// ...while another carried at least this multiple of its part.
const BUSY_SHARE: f64 = 1.5;

fn smb(r: &RunResult) -> Option<&SmbStats> {
    r.protocol.as_ref()?.smb.as_ref()
}

fn requests(c: &SmbChannel) -> u64 {
    c.commands.iter().map(|x| x.requests).sum()
}

/// The READ and WRITE requests, which alone go round robin (set-up and
/// synchronous calls go on the first channel).
fn data_requests(c: &SmbChannel) -> u64 {
    c.commands
        .iter()
        .filter(|x| matches!(x.command.as_str(), "read" | "write"))
        .map(|x| x.requests)
        .sum()
}

fn waited(c: &SmbChannel) -> f64 {
    c.credit_waits as f64 / requests(c).max(1) as f64
}

/// A notable share of a channel's requests waited for credits.
pub(super) fn credit_starvation(doc: &ResultDoc) -> Vec<Finding> {
    let mut hits: Vec<(&RunResult, &SmbStats, &SmbChannel)> = Vec::new();
    for r in measured(doc) {
        let Some(s) = smb(r) else { continue };
        let secs = measured_secs(r);
        let worst = s
            .channels
            .iter()
            .filter(|c| {
                let n = requests(c);
                n >= MIN_REQUESTS && n as f64 / secs >= MIN_REQUESTS_S
            })
            .filter(|c| waited(c) >= STARVED_SHARE)
            .max_by(|a, b| waited(a).total_cmp(&waited(b)));
        if let Some(c) = worst {
            hits.push((r, s, c));
        }
    }
    let Some(&(r, s, c)) = hits
        .iter()
        .max_by(|a, b| waited(a.2).total_cmp(&waited(b.2)))
    else {
        return Vec::new();
    };
    let share = waited(c);
    let wait_us = c.credit_wait_ms * 1000.0 / c.credit_waits.max(1) as f64;
    let more_channels = match s.channels_per_session {
        0 | 1 => "more channels per session (--smb-channels)".to_string(),
        n => format!("more channels per session (--smb-channels; it had {n})"),
    };
    let message = format!(
        "SMB credit starvation in {}: on channel {} ({}), {} of its {} requests ({:.0}%) waited \
         for the server to grant a credit, {} µs each on average; it granted {} credits in all \
         and at most {} requests were in flight on one session's channel. The server's credit \
         window, not its storage, held these I/Os back: fewer I/Os in flight per session \
         (--iodepth, or more --threads each with less), {more_channels}, each with a credit window of its own, or a larger grant on \
         the server (Samba's `smb2 max credits`, Windows' Smb2CreditsMax).",
        runs_text(r, hits.len()),
        c.channel,
        c.server,
        num(c.credit_waits as f64),
        num(requests(c) as f64),
        share * 100.0,
        num(wait_us),
        num(c.credits_granted as f64),
        c.max_in_flight,
    );
    let sure = if share >= STARVED_SURE {
        Confidence::High
    } else {
        Confidence::Medium
    };
    vec![
        Finding::new(Kind::CreditStarvation, sure, message)
            .figure("channel", f64::from(c.channel))
            .figure("requests", requests(c) as f64)
            .figure("credit_waits", c.credit_waits as f64)
            .figure("waited_pct", share * 100.0)
            .figure("mean_credit_wait_us", wait_us)
            .figure("credits_granted", c.credits_granted as f64)
            .figure("max_in_flight", f64::from(c.max_in_flight))
            .runs(hits.iter().map(|h| h.0)),
    ]
}

/// A run's busiest and idlest channel, if skewed.
struct Skew<'a> {
    busy: &'a SmbChannel,
    idle: &'a SmbChannel,
    n: usize,
    total: u64,
}

impl Skew<'_> {
    fn idle_share(&self) -> f64 {
        data_requests(self.idle) as f64 * self.n as f64 / self.total.max(1) as f64
    }
}

fn skew(s: &SmbStats) -> Option<Skew<'_>> {
    let n = s.channels.len();
    let total: u64 = s.channels.iter().map(data_requests).sum();
    if n < 2 || total < MIN_REQUESTS {
        return None;
    }
    let even = total as f64 / n as f64;
    let busy = s.channels.iter().max_by_key(|c| data_requests(c))?;
    let idle = s.channels.iter().min_by_key(|c| data_requests(c))?;
    (data_requests(busy) as f64 >= BUSY_SHARE * even
        && data_requests(idle) as f64 <= IDLE_SHARE * even)
        .then_some(Skew {
            busy,
            idle,
            n,
            total,
        })
}

/// An SMB channel that idled while the others carried its requests.
pub(super) fn idle_channel(doc: &ResultDoc) -> Vec<Finding> {
    let hits: Vec<(&RunResult, &SmbStats, Skew)> = measured(doc)
        .filter(|r| measured_secs(r) > 0.0)
        .filter_map(|r| {
            let s = smb(r)?;
            Some((r, s, skew(s)?))
        })
        .collect();
    let Some((r, s, k)) = hits
        .iter()
        .min_by(|a, b| a.2.idle_share().total_cmp(&b.2.idle_share()))
    else {
        return Vec::new();
    };
    let pct = |c: &SmbChannel| data_requests(c) as f64 * 100.0 / k.total.max(1) as f64;
    let failed: u64 = k.idle.commands.iter().map(|x| x.errors).sum();
    let why = if failed > 0 {
        format!("{} of its requests failed", num(failed as f64))
    } else {
        "none of its requests failed, so it was lost or unanswered for much of the run".into()
    };
    let message = format!(
        "idle connection in {}: of the {} SMB channels of each session ({} sessions added per \
         channel), channel {} ({}) carried {} READ and WRITE requests ({:.0}%) and channel {} \
         ({}) only {} ({:.0}%). volbench sends a session's requests on its channels in turn, so \
         an even split is exact; {why}. The run measured fewer channels than it was given: \
         check the server's interface the channel was bound to, and the network path to it.",
        runs_text(r, hits.len()),
        k.n,
        k.busy.sessions.max(1),
        k.busy.channel,
        k.busy.server,
        num(data_requests(k.busy) as f64),
        pct(k.busy),
        k.idle.channel,
        k.idle.server,
        num(data_requests(k.idle) as f64),
        pct(k.idle),
    );
    let sure = if data_requests(k.idle) == 0 {
        Confidence::High
    } else {
        Confidence::Medium
    };
    vec![
        Finding::new(Kind::IdleConnection, sure, message)
            .figure("busiest_calls", data_requests(k.busy) as f64)
            .figure("idlest_calls", data_requests(k.idle) as f64)
            .figure("even_calls", k.total as f64 / k.n as f64)
            .figure("idlest_channel", f64::from(k.idle.channel))
            .figure("channels", s.channels.len() as f64)
            .runs(hits.iter().map(|h| h.0)),
    ]
}
