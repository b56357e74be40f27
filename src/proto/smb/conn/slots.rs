//! The bookkeeping of requests: those waiting for credits (staged, in
//! order), those in flight (a ring indexed by message id), and the credit
//! window itself. SMB2 message ids are the credits: a request of charge C
//! takes the next C ids, and the server's grants open the window again.
//! All storage is sized when the channel is made.

use std::collections::VecDeque;
use std::time::Instant;

use super::super::consts::Command;

/// Where a reply's payload goes.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Sink {
    /// Nothing beyond the typed outcome.
    None,
    /// A READ's data (or another command's output buffer) is written to
    /// `ptr`, at most `cap` bytes: the caller's buffer, kept alive and
    /// untouched until the completion (the engine's contract).
    Buffer { ptr: *mut u8, cap: usize },
    /// The whole reply is kept for the caller (set-up commands, whose
    /// bytes also feed the preauth hash).
    Keep,
}

/// A request encoded but not yet sent (no message id yet).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Staged {
    pub(crate) tag: u64,
    pub(crate) command: Command,
    pub(crate) sink: Sink,
    /// Where its header and body sit in the staging buffer.
    pub(crate) start: usize,
    pub(crate) len: usize,
    /// WRITE data in the caller's buffer, sent from there.
    pub(crate) ext: *const u8,
    pub(crate) ext_len: usize,
    pub(crate) charge: u16,
    pub(crate) tree_id: u32,
    /// Payload bytes for the statistics.
    pub(crate) payload: u32,
    /// The information class a QUERY_INFO asks for.
    pub(crate) class: u8,
    /// Keep the request's final bytes (the preauth hash needs them).
    pub(crate) keep_request: bool,
    /// Sent unsigned and unencrypted whatever the session does (NEGOTIATE,
    /// the first SESSION_SETUP).
    pub(crate) plain: bool,
    /// Sign with this key instead of the channel's (a binding request is
    /// signed with the session's key).
    pub(crate) sign_override: bool,
    pub(crate) session_flags: u32,
    pub(crate) waiting_since: Option<Instant>,
}

/// A request in flight.
#[derive(Debug, Clone, Copy)]
pub(crate) struct InFlight {
    pub(crate) mid: u64,
    pub(crate) tag: u64,
    pub(crate) command: Command,
    pub(crate) sink: Sink,
    pub(crate) sent_at: Instant,
    pub(crate) payload: u32,
    pub(crate) class: u8,
    pub(crate) charge: u16,
    pub(crate) async_id: u64,
    pub(crate) interim_at: Option<Instant>,
}

pub(crate) struct Slots {
    ring: Vec<Option<InFlight>>,
    mask: u64,
    /// The lowest message id that may still be in flight.
    low: u64,
    pub(crate) next_mid: u64,
    pub(crate) credits: u64,
    /// Requests in flight now.
    pub(crate) in_flight: u32,
    /// The credits the sum of in-flight charges holds.
    pub(crate) charged: u64,
    pub(crate) waiting: VecDeque<Staged>,
}

/// The most credits this client keeps; a server granting more (a hostile
/// one granting 65535 each time) is held to this, so nothing overflows.
pub(crate) const MAX_CREDITS: u64 = 8192;

impl Slots {
    /// `ring` is rounded up to a power of two; `queue` is the most staged
    /// requests expected at once (it can grow past that, off the I/O path).
    pub(crate) fn new(ring: usize, queue: usize) -> Slots {
        let n = ring.next_power_of_two().max(64);
        Slots {
            ring: vec![None; n],
            mask: n as u64 - 1,
            low: 0,
            next_mid: 0,
            credits: 1,
            in_flight: 0,
            charged: 0,
            waiting: VecDeque::with_capacity(queue.max(16)),
        }
    }

    /// Whether a request of `charge` credits can go now: the server granted
    /// the credits, and the credits in flight stay within `cap` (the queue
    /// depth asked for; a request larger than it goes alone).
    pub(crate) fn can_send(&mut self, charge: u16, cap: u64) -> bool {
        let c = u64::from(charge.max(1));
        self.advance_low();
        self.credits >= c
            && (self.charged + c <= cap || self.charged == 0)
            && self.next_mid + c - self.low <= self.ring.len() as u64
            && self.next_mid.checked_add(c).is_some()
    }

    /// Takes the next message id for a request of `charge`.
    pub(crate) fn take(&mut self, charge: u16) -> u64 {
        let c = u64::from(charge.max(1));
        let mid = self.next_mid;
        self.next_mid += c;
        self.credits -= c;
        self.charged += c;
        mid
    }

    pub(crate) fn insert(&mut self, f: InFlight) {
        let i = (f.mid & self.mask) as usize;
        self.ring[i] = Some(f);
        self.in_flight += 1;
    }

    pub(crate) fn get_mut(&mut self, mid: u64) -> Option<&mut InFlight> {
        let i = (mid & self.mask) as usize;
        self.ring[i].as_mut().filter(|f| f.mid == mid)
    }

    /// Removes the request answered by `mid`, returning the charge it held.
    pub(crate) fn remove(&mut self, mid: u64) -> Option<InFlight> {
        let i = (mid & self.mask) as usize;
        let f = self.ring[i].filter(|f| f.mid == mid)?;
        self.ring[i] = None;
        self.in_flight -= 1;
        self.charged = self.charged.saturating_sub(u64::from(f.charge.max(1)));
        Some(f)
    }

    pub(crate) fn grant(&mut self, n: u16) {
        self.credits = (self.credits + u64::from(n)).min(MAX_CREDITS);
    }

    fn advance_low(&mut self) {
        while self.low < self.next_mid && self.ring[(self.low & self.mask) as usize].is_none() {
            self.low += 1;
        }
    }

    /// The oldest request in flight (for the timeout check).
    pub(crate) fn oldest(&mut self) -> Option<InFlight> {
        self.advance_low();
        if self.low < self.next_mid {
            self.ring[(self.low & self.mask) as usize]
        } else {
            None
        }
    }
}
