//! The xid table: every call in flight, found from its reply's xid in one
//! step. A call's xid is its index in the table (low 16 bits) and a
//! generation that changes each time the index is reused (high 16 bits,
//! from a random start so a restarted client does not meet its old
//! replies in the server's duplicate-request cache). Each call keeps its
//! encoded header in its own room of one arena, allocated once: a
//! retransmission after a reconnect sends the same bytes, nothing is
//! allocated per call, and the protocol layer can patch a field (an
//! NFSv4.1 slot, a renewed stateid) in place.

use std::time::Instant;

/// Room for one call's header and arguments (the record mark, the RPC
/// header with an AUTH_SYS credential of at most 400 bytes, and arguments
/// of at most two file handles and two names of 255 bytes), its data aside.
pub(crate) const HDR_ROOM: usize = 2048;
/// The table's largest size: the index is 16 bits of the xid.
pub(crate) const MAX_CALLS: usize = 1 << 16;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum State {
    Free,
    /// Encoded and waiting (in a connection's send queue, or held by the
    /// protocol layer until an NFSv4.1 slot is free).
    Queued,
    /// Every byte written; its reply is awaited.
    Sent,
}

/// One call in flight.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Call {
    pub(crate) xid: u32,
    pub(crate) state: State,
    /// The connection it was sent or queued on.
    pub(crate) conn: u16,
    /// The protocol layer's operation type (stats index).
    pub(crate) kind: u8,
    /// Safe to send again after a connection was lost with it sent.
    pub(crate) idempotent: bool,
    /// Its reply carries bulk data into `data` (a READ).
    pub(crate) reads_data: bool,
    /// Times sent (1 after the first send).
    pub(crate) sends: u8,
    /// The protocol layer's own reference (a user slot, a file...).
    pub(crate) tag: u64,
    pub(crate) hdr_len: u32,
    /// A WRITE's source or a READ's destination; the caller keeps it alive
    /// and untouched until the call completes (`Engine::queue`'s contract).
    pub(crate) data: *mut u8,
    pub(crate) data_len: u32,
    pub(crate) queued: Instant,
    pub(crate) sent: Instant,
}

pub(crate) struct Calls {
    calls: Vec<Call>,
    arena: Vec<u8>,
    free: Vec<u32>,
    generation: Vec<u16>,
    in_use: usize,
}

impl Calls {
    pub(crate) fn new(capacity: usize) -> Calls {
        let capacity = capacity.clamp(1, MAX_CALLS);
        let now = Instant::now();
        let blank = Call {
            xid: 0,
            state: State::Free,
            conn: 0,
            kind: 0,
            idempotent: true,
            reads_data: false,
            sends: 0,
            tag: 0,
            hdr_len: 0,
            data: std::ptr::null_mut(),
            data_len: 0,
            queued: now,
            sent: now,
        };
        let start = fastrand::u16(..);
        Calls {
            calls: vec![blank; capacity],
            arena: vec![0; capacity * HDR_ROOM],
            // Popped from the end: lowest index first.
            free: (0..capacity as u32).rev().collect(),
            generation: (0..capacity)
                .map(|i| start.wrapping_add(i as u16))
                .collect(),
            in_use: 0,
        }
    }

    pub(crate) fn capacity(&self) -> usize {
        self.calls.len()
    }

    pub(crate) fn in_use(&self) -> usize {
        self.in_use
    }

    /// A free call with a fresh xid, or None when every one is in flight.
    pub(crate) fn alloc(&mut self, now: Instant) -> Option<u32> {
        let id = self.free.pop()?;
        let i = id as usize;
        self.generation[i] = self.generation[i].wrapping_add(1);
        let c = &mut self.calls[i];
        c.xid = (self.generation[i] as u32) << 16 | id;
        c.state = State::Queued;
        c.sends = 0;
        c.data = std::ptr::null_mut();
        c.data_len = 0;
        c.reads_data = false;
        c.queued = now;
        c.sent = now;
        self.in_use += 1;
        Some(id)
    }

    pub(crate) fn release(&mut self, id: u32) {
        let c = &mut self.calls[id as usize];
        if c.state != State::Free {
            c.state = State::Free;
            self.free.push(id);
            self.in_use -= 1;
        }
    }

    /// The call a reply's xid answers, if it is in flight on `conn`.
    #[inline]
    pub(crate) fn by_xid(&self, xid: u32, conn: u16) -> Option<u32> {
        let id = xid & 0xffff;
        let c = self.calls.get(id as usize)?;
        (c.xid == xid && c.state == State::Sent && c.conn == conn).then_some(id)
    }

    #[inline]
    pub(crate) fn get(&self, id: u32) -> &Call {
        &self.calls[id as usize]
    }

    #[inline]
    pub(crate) fn get_mut(&mut self, id: u32) -> &mut Call {
        &mut self.calls[id as usize]
    }

    /// The call's header room (all of it, for encoding).
    pub(crate) fn room(&mut self, id: u32) -> &mut [u8] {
        let at = id as usize * HDR_ROOM;
        &mut self.arena[at..at + HDR_ROOM]
    }

    /// The call's encoded header.
    #[inline]
    pub(crate) fn header(&self, id: u32) -> &[u8] {
        let at = id as usize * HDR_ROOM;
        &self.arena[at..at + self.calls[id as usize].hdr_len as usize]
    }

    /// Every call not free, by id.
    pub(crate) fn busy(&self) -> impl Iterator<Item = u32> + '_ {
        self.calls
            .iter()
            .enumerate()
            .filter(|(_, c)| c.state != State::Free)
            .map(|(i, _)| i as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reused_call_gets_a_new_xid_and_old_replies_miss() {
        let mut t = Calls::new(4);
        let now = Instant::now();
        let a = t.alloc(now).unwrap();
        let old = t.get(a).xid;
        t.get_mut(a).state = State::Sent;
        assert_eq!(t.by_xid(old, 0), Some(a));
        assert_eq!(
            t.by_xid(old, 1),
            None,
            "a reply on another connection is not this call's"
        );
        t.release(a);
        assert_eq!(t.by_xid(old, 0), None);
        let b = t.alloc(now).unwrap();
        assert_eq!(b, a);
        t.get_mut(b).state = State::Sent;
        assert_ne!(t.get(b).xid, old);
        assert_eq!(
            t.by_xid(old, 0),
            None,
            "a late reply to the old use does not match"
        );
    }

    #[test]
    fn the_table_runs_out_instead_of_growing() {
        let mut t = Calls::new(2);
        let now = Instant::now();
        assert!(t.alloc(now).is_some());
        assert!(t.alloc(now).is_some());
        assert!(t.alloc(now).is_none());
        assert_eq!(t.in_use(), 2);
    }
}
