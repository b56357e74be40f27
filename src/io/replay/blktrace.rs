//! blktrace's binary events (`struct blk_io_trace`, include/uapi/linux/
//! blktrace_api.h): 48 bytes each, in the byte order of the machine that
//! traced, followed by `pdu_len` bytes of payload. The queue events (`Q`)
//! are the requests as the file system asked for them; a trace without
//! them (a `-a issue` trace) uses the issue events (`D`). Completions and
//! every other event are read past: the replay measures its own.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::io::Read;
use std::path::{Path, PathBuf};

use super::{ReqOp, Request, bad};
use crate::error::Result;

/// BLK_IO_TRACE_MAGIC; the low byte is the version.
const MAGIC: u32 = 0x6561_7400;
const VERSION: u32 = 0x07;
const EVENT_BYTES: usize = 48;
/// Action codes (the low 16 bits, less the cgroup flag).
const TA_QUEUE: u32 = 1;
const TA_ISSUE: u32 = 7;
const TA_CGROUP: u32 = 1 << 8;
/// Category bits (the high 16 bits of `action`).
const TC_WRITE: u32 = 1 << 1;
const TC_FLUSH: u32 = 1 << 2;
const TC_NOTIFY: u32 = 1 << 10;
const TC_DISCARD: u32 = 1 << 13;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Order {
    Little,
    Big,
}

/// blktrace's byte order, if `head` starts with its magic in either.
pub(crate) fn detect(head: &[u8]) -> Option<Order> {
    let b: [u8; 4] = head.get(..4)?.try_into().ok()?;
    if u32::from_le_bytes(b) & !0xff == MAGIC {
        Some(Order::Little)
    } else if u32::from_be_bytes(b) & !0xff == MAGIC {
        Some(Order::Big)
    } else {
        None
    }
}

/// One event's fields that a replay uses.
struct Event {
    time: u64,
    sector: u64,
    bytes: u32,
    action: u32,
}

pub(crate) struct BlkReader<R> {
    reader: R,
    path: PathBuf,
    order: Order,
    /// 'Q' or 'D': the event that marks a request.
    event: char,
    /// The first request's time: times are counted from it.
    base: Option<u64>,
    events: u64,
}

impl<R: Read> BlkReader<R> {
    pub(crate) fn new(reader: R, path: &Path, order: Order, event: char) -> Self {
        Self {
            reader,
            path: path.to_path_buf(),
            order,
            event,
            base: None,
            events: 0,
        }
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    fn u32_at(&self, b: &[u8; EVENT_BYTES], at: usize) -> u32 {
        let mut w = [0u8; 4];
        w.copy_from_slice(b.get(at..at + 4).unwrap_or(&[0; 4]));
        match self.order {
            Order::Little => u32::from_le_bytes(w),
            Order::Big => u32::from_be_bytes(w),
        }
    }

    fn u64_at(&self, b: &[u8; EVENT_BYTES], at: usize) -> u64 {
        let mut w = [0u8; 8];
        w.copy_from_slice(b.get(at..at + 8).unwrap_or(&[0; 8]));
        match self.order {
            Order::Little => u64::from_le_bytes(w),
            Order::Big => u64::from_be_bytes(w),
        }
    }

    /// The next event; None at a clean end, an error inside one.
    fn next_event(&mut self) -> Result<Option<Event>> {
        let mut b = [0u8; EVENT_BYTES];
        let mut got = 0;
        while got < EVENT_BYTES {
            match self.reader.read(b.get_mut(got..).unwrap_or_default()) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(bad(&self.path, e)),
            }
        }
        if got == 0 {
            return Ok(None);
        }
        self.events += 1;
        let n = self.events;
        if got < EVENT_BYTES {
            return Err(bad(
                &self.path,
                format!("event {n}: the file ends inside it (a truncated trace)"),
            ));
        }
        let magic = self.u32_at(&b, 0);
        if magic & !0xff != MAGIC {
            return Err(bad(
                &self.path,
                format!(
                    "event {n}: no blktrace magic (0x{magic:08x}): not a blktrace file past here"
                ),
            ));
        }
        if magic & 0xff != VERSION {
            return Err(bad(
                &self.path,
                format!(
                    "event {n}: blktrace version {} (volbench reads version {VERSION})",
                    magic & 0xff
                ),
            ));
        }
        // The payload (a process name, a remap) is read past, a u16 at most.
        let pdu = match self.order {
            Order::Little => u16::from_le_bytes([b[46], b[47]]),
            Order::Big => u16::from_be_bytes([b[46], b[47]]),
        } as u64;
        let skipped = std::io::copy(&mut (&mut self.reader).take(pdu), &mut std::io::sink())
            .map_err(|e| bad(&self.path, e))?;
        if skipped < pdu {
            return Err(bad(
                &self.path,
                format!("event {n}: the file ends inside its payload (a truncated trace)"),
            ));
        }
        Ok(Some(Event {
            time: self.u64_at(&b, 8),
            sector: self.u64_at(&b, 16),
            bytes: self.u32_at(&b, 24),
            action: self.u32_at(&b, 28),
        }))
    }

    /// Q when the trace has queue events, else D; reads the whole trace.
    pub(crate) fn choose_event(&mut self) -> Result<char> {
        let mut issue = false;
        while let Some(e) = self.next_event()? {
            if e.action >> 16 & TC_NOTIFY != 0 {
                continue;
            }
            match (e.action & 0xffff) & !TA_CGROUP {
                TA_QUEUE => return Ok('Q'),
                TA_ISSUE => issue = true,
                _ => {}
            }
        }
        if issue {
            Ok('D')
        } else {
            Err(bad(
                &self.path,
                "the trace has no queue (Q) or issue (D) events to replay",
            ))
        }
    }

    pub(crate) fn next_request(&mut self) -> Result<Option<Request>> {
        let want = if self.event == 'Q' {
            TA_QUEUE
        } else {
            TA_ISSUE
        };
        while let Some(e) = self.next_event()? {
            let category = e.action >> 16;
            if category & TC_NOTIFY != 0 || (e.action & 0xffff) & !TA_CGROUP != want {
                continue;
            }
            let op = if category & TC_DISCARD != 0 {
                ReqOp::Discard
            } else if e.bytes == 0 {
                if category & TC_FLUSH == 0 {
                    // No data and no flush: nothing a replay can issue.
                    continue;
                }
                ReqOp::Flush
            } else if category & TC_WRITE != 0 {
                ReqOp::Write
            } else {
                ReqOp::Read
            };
            let base = *self.base.get_or_insert(e.time);
            let Some(at_ns) = e.time.checked_sub(base) else {
                return Err(bad(
                    &self.path,
                    format!(
                        "event {}: its time is before the first request's; events must be in time order (blkparse -d merges a trace's CPUs into one)",
                        self.events
                    ),
                ));
            };
            let Some(offset) = e.sector.checked_mul(512) else {
                return Err(bad(
                    &self.path,
                    format!(
                        "event {}: sector {} is beyond any volume",
                        self.events, e.sector
                    ),
                ));
            };
            return Ok(Some(Request {
                at_ns,
                op,
                offset,
                len: e.bytes as u64,
            }));
        }
        Ok(None)
    }
}

/// One event in blktrace's layout, for the tests (they build traces from
/// the format's documentation, not from a blktrace binary).
#[cfg(test)]
pub(crate) fn encode(order: Order, time: u64, sector: u64, bytes: u32, action: u32) -> Vec<u8> {
    let mut v = Vec::with_capacity(EVENT_BYTES);
    let w32 = |v: &mut Vec<u8>, x: u32| match order {
        Order::Little => v.extend_from_slice(&x.to_le_bytes()),
        Order::Big => v.extend_from_slice(&x.to_be_bytes()),
    };
    let w64 = |v: &mut Vec<u8>, x: u64| match order {
        Order::Little => v.extend_from_slice(&x.to_le_bytes()),
        Order::Big => v.extend_from_slice(&x.to_be_bytes()),
    };
    w32(&mut v, MAGIC | VERSION);
    w32(&mut v, 0);
    w64(&mut v, time);
    w64(&mut v, sector);
    w32(&mut v, bytes);
    w32(&mut v, action);
    for _ in 0..3 {
        w32(&mut v, 0);
    }
    v.extend_from_slice(&[0, 0, 0, 0]);
    v
}
