//! One SMB connection (a channel) driven without blocking: requests are
//! staged into a buffer (`slots::Staged`), sent when credits allow, and
//! their replies matched by message id and turned into `Completion`s. A
//! thread may drive several channels at once (`wait::wait_all`).

pub mod channel;
pub(crate) mod queue;
pub(crate) mod rx;
pub(crate) mod rxbuf;
pub(crate) mod slots;
pub(crate) mod socket;
pub mod wait;

use super::consts::Command;
use super::msg::file::{CreateResponse, FileTimes};
use super::msg::info::{FileInfo, FsSize};

/// What a finished request produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// A command with nothing to report (or one that failed: see status).
    Done,
    /// READ: bytes placed in the buffer; WRITE: bytes the server wrote.
    Bytes(u32),
    Created(CreateResponse),
    Closed(FileTimes),
    Info(FileInfo),
    FsSize(FsSize),
    /// The reply is kept whole (`Channel::kept`).
    Kept,
}

/// One finished request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Completion {
    pub tag: u64,
    pub(crate) command: Command,
    /// The NT status (0 success).
    pub status: u32,
    pub outcome: Outcome,
    /// Send to reply, nanoseconds.
    pub(crate) latency_ns: u64,
}
