//! A channel's receive buffer and where its receiving stands (between
//! frames, or inside a READ reply whose data goes straight to the caller's
//! buffer): the state `channel` holds and `rx` drives, in a leaf both use.

use super::super::crypto::sign::Running;
use super::super::header::Header;

/// Unsealed channels need the buffer only for replies that are not READ
/// data: metadata, listings, interface lists.
const PLAIN_BUFFER: usize = 512 * 1024;

// One per channel, switched per large READ: kept inline (no box), so
// entering the direct state allocates nothing.
#[allow(clippy::large_enum_variant)]
pub(super) enum State {
    /// Between frames, or inside one that is being buffered whole.
    Frame,
    /// Receiving a READ reply's data into the caller's buffer.
    Direct(Direct),
}

pub(super) struct Direct {
    pub(super) header: Header,
    pub(super) dst: *mut u8,
    pub(super) got: usize,
    pub(super) data_len: usize,
    /// Frame bytes after the data (padding), read and discarded.
    pub(super) trailing: usize,
    pub(super) run: Option<Running>,
    pub(super) wire: usize,
}

pub(crate) struct Rx {
    pub(super) buf: Vec<u8>,
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) state: State,
}

impl Rx {
    pub(crate) fn new(max_frame: usize) -> Rx {
        Rx {
            buf: vec![0; (max_frame + 4).min(PLAIN_BUFFER)],
            start: 0,
            end: 0,
            state: State::Frame,
        }
    }

    /// Sizes the buffer for the negotiated frames: whole frames when sealed
    /// (a sealed frame is opened in one piece).
    pub(crate) fn resize(&mut self, max_frame: usize, sealed: bool) {
        let want = if sealed {
            max_frame + 4
        } else {
            (max_frame + 4).min(PLAIN_BUFFER)
        };
        if want > self.buf.len() {
            self.buf.resize(want, 0);
        }
    }
}
