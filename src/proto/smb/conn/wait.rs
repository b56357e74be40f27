//! Waiting on the channels one thread drives: send, take replies, sleep in
//! one poll until a socket is ready or the next request's deadline, so a
//! silent server fails with one error and a busy one is never left idle.

use std::time::{Duration, Instant};

use super::super::consts::Command;
use super::super::error::{SmbError, SmbResult};
use super::Completion;
use super::channel::{CALL_TAG, Channel};
use super::slots::Sink;
use super::socket::{MAX_POLLED, Socket, poll};

impl Channel {
    /// Sends one request staged with `Sink::Keep` and waits for its reply;
    /// other completions met meanwhile wait in the backlog. Returns the
    /// status; the reply is in `kept`.
    pub(crate) fn call(&mut self) -> SmbResult<(Command, u32)> {
        if let Some(s) = self.slots.waiting.back_mut() {
            s.tag = CALL_TAG;
            s.sink = Sink::Keep;
        }
        let c = self.wait_for(CALL_TAG)?;
        Ok((c.command, c.status))
    }

    /// Waits for the completion of `tag` (staged last); completions of
    /// other tags met meanwhile are kept for the next `reap`. Bounded by
    /// the requests' own timeouts (`check_timeouts` names what failed),
    /// with a backstop past both of them.
    pub(crate) fn wait_for(&mut self, tag: u64) -> SmbResult<Completion> {
        let limit = self.opts.request_timeout + self.opts.pending_timeout + Duration::from_secs(1);
        let deadline = Instant::now() + limit;
        let mut got = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            wait_all(std::slice::from_mut(self), 1, left, &mut got)?;
            if let Some(i) = got.iter().position(|c| c.tag == tag) {
                let c = got.remove(i);
                self.backlog.append(&mut got);
                return Ok(c);
            }
            self.backlog.append(&mut got);
            let idle = self.slots.in_flight == 0 && self.slots.waiting.is_empty();
            if idle || Instant::now() >= deadline {
                return Err(self.fail(SmbError::Timeout {
                    what: format!("SMB server {}", self.sock.peer),
                    after: limit,
                }));
            }
        }
    }
}

/// Waits on several channels of one thread until `min` completions are in
/// `out` or `timeout` passes; every wait is bounded by the channels'
/// request timeouts, so a silent server fails with one error.
pub fn wait_all(
    chans: &mut [Channel],
    min: usize,
    timeout: Duration,
    out: &mut Vec<Completion>,
) -> SmbResult<usize> {
    let start = Instant::now();
    let deadline = start + timeout;
    let before = out.len();
    if chans.is_empty() {
        return Ok(0);
    }
    loop {
        for c in chans.iter_mut() {
            c.reap(out)?;
        }
        let got = out.len() - before;
        let idle = chans
            .iter()
            .all(|c| c.slots.in_flight == 0 && c.slots.waiting.is_empty());
        if got >= min || idle {
            return Ok(got);
        }
        let now = Instant::now();
        for c in chans.iter_mut() {
            c.check_timeouts(now)?;
            if c.slots.in_flight == 0 && !c.slots.waiting.is_empty() {
                // Nothing in flight, so no reply will bring credits: ask
                // for them with an ECHO while one credit is left, a few
                // times; then the server is starving the channel.
                if c.slots.credits >= 1 && c.topups < 4 {
                    c.topup();
                    continue;
                }
                let e = SmbError::Protocol(format!(
                    "SMB server {} left channel {} without the credits its next request needs",
                    c.sock.peer, c.index
                ));
                return Err(c.fail(e));
            }
        }
        if now >= deadline {
            return Ok(got);
        }
        let mut until = deadline;
        for c in chans.iter_mut() {
            if let Some(d) = c.next_deadline() {
                until = until.min(d + Duration::from_millis(1));
            }
        }
        let n = chans.len().min(MAX_POLLED);
        let mut list: [(&Socket, bool); MAX_POLLED] = [(&chans[0].sock, false); MAX_POLLED];
        for (slot, c) in list.iter_mut().zip(chans.iter()) {
            *slot = (&c.sock, c.has_output());
        }
        let wait = until.saturating_duration_since(Instant::now());
        poll(&list[..n], wait).map_err(|e| SmbError::Io {
            what: "waiting for SMB replies".into(),
            source: e,
        })?;
    }
}
