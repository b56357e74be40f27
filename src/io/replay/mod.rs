//! Traces replayed onto a target (`run --replay FILE`): the formats read as
//! streams of requests (`text.rs`: volbench's trace and fio's iolog;
//! `blktrace.rs`: blktrace's binary events), the scan that checks and
//! counts a whole trace before any I/O, and the worker that issues the
//! requests at their times (`worker.rs`). Nothing here holds more than one
//! line or event of a trace, so a trace of any size costs the same memory.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

pub(crate) mod blktrace;
pub(crate) mod split;
pub(crate) mod text;
pub(crate) mod worker;

use std::io::{BufReader, Read};
use std::path::Path;

use crate::error::{Result, VbError};
use crate::spec::replay::{ReplayMap, TraceFormat, TraceSummary};
use crate::units::bounds;

/// What a request does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReqOp {
    Read,
    Write,
    Flush,
    Discard,
}

/// One request of a trace, as recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Request {
    /// Issue time, ns from the trace's start.
    pub(crate) at_ns: u64,
    pub(crate) op: ReqOp,
    pub(crate) offset: u64,
    pub(crate) len: u64,
}

/// A trace read one request at a time.
pub(crate) struct Trace {
    inner: Inner,
    pub(crate) format: TraceFormat,
    last_ns: u64,
    count: u64,
    /// fio's replay options, applied to each request as it is read (none
    /// for a host's part: the coordinator applied them when it dealt it).
    map: ReplayMap,
}

enum Inner {
    Text(text::TextReader<BufReader<std::fs::File>>),
    Blk(blktrace::BlkReader<BufReader<std::fs::File>>),
    /// A host's part of a multi-host replay, sent by the coordinator.
    Mem(text::TextReader<std::io::Cursor<std::sync::Arc<[u8]>>>),
}

/// The one-line error of a bad trace, naming the file.
pub(crate) fn bad(path: &Path, what: impl std::fmt::Display) -> VbError {
    VbError::input(format!("--replay {}: {what}", path.display()))
}

impl Trace {
    /// The trace a run replays: its part in memory on one host of many,
    /// else the file.
    pub(crate) fn of(spec: &crate::spec::replay::ReplaySpec) -> Result<Trace> {
        match (&spec.text, &spec.part) {
            (Some(t), _) => Ok(Trace {
                inner: Inner::Mem(text::TextReader::new(
                    std::io::Cursor::new(t.clone()),
                    &spec.path,
                    TraceFormat::Volbench,
                )),
                format: TraceFormat::Volbench,
                last_ns: 0,
                count: 0,
                map: ReplayMap::default(),
            }),
            (None, Some(_)) => Err(bad(
                &spec.path,
                "this host's part of the trace never arrived from the coordinator",
            )),
            (None, None) => Trace::open_mapped(&spec.path, spec.summary.blk_event, spec.map),
        }
    }

    /// Opens `path` (a regular file: it is read twice, and a pipe or a
    /// device could not be) and tells its format from its first bytes.
    /// `blk_event` is the blktrace event that marks an issue, once a scan
    /// has chosen it.
    #[cfg(test)]
    pub(crate) fn open(path: &Path, blk_event: Option<char>) -> Result<Trace> {
        Trace::open_mapped(path, blk_event, ReplayMap::default())
    }

    /// `open`, each request then changed by `map`.
    pub(crate) fn open_mapped(
        path: &Path,
        blk_event: Option<char>,
        map: ReplayMap,
    ) -> Result<Trace> {
        use crate::io::sys::fs::{Mode, OFlags};
        // O_NONBLOCK: opening a FIFO without a writer waits forever, and a
        // FIFO is refused below anyway; cleared before any read.
        let fd = crate::io::sys::fs::open(
            path,
            OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY,
            Mode::empty(),
        )
        .map_err(|e| bad(path, std::io::Error::from(e)))?;
        let file = std::fs::File::from(fd);
        let meta = file.metadata().map_err(|e| bad(path, e))?;
        if !meta.is_file() {
            return Err(bad(path, "not a regular file (a trace is read twice)"));
        }
        crate::io::sys::fs::fcntl_setfl(&file, OFlags::empty())
            .map_err(|e| bad(path, std::io::Error::from(e)))?;
        if meta.len() > bounds::MAX_TRACE_BYTES {
            return Err(bad(
                path,
                format!(
                    "{} is larger than the {} a replay reads",
                    crate::units::format_size(meta.len()),
                    crate::units::format_size(bounds::MAX_TRACE_BYTES)
                ),
            ));
        }
        let mut head = [0u8; 32];
        let mut got = 0;
        {
            let mut f = &file;
            while got < head.len() {
                match f.read(head.get_mut(got..).unwrap_or_default()) {
                    Ok(0) => break,
                    Ok(n) => got += n,
                    Err(e) => return Err(bad(path, e)),
                }
            }
        }
        let head = head.get(..got).unwrap_or_default();
        let mut file = file;
        std::io::Seek::rewind(&mut file).map_err(|e| bad(path, e))?;
        let reader = BufReader::with_capacity(64 << 10, file);
        let (inner, format) = if let Some(order) = blktrace::detect(head) {
            (
                Inner::Blk(blktrace::BlkReader::new(
                    reader,
                    path,
                    order,
                    blk_event.unwrap_or('Q'),
                )),
                TraceFormat::Blktrace,
            )
        } else if let Some(format) = text::detect(head) {
            (
                Inner::Text(text::TextReader::new(reader, path, format)),
                format,
            )
        } else if head.starts_with(b"# volbench.trace/") {
            // A later schema is named, not read as this one.
            let schema: String = String::from_utf8_lossy(head)
                .trim_start_matches("# ")
                .split(|c: char| c.is_whitespace())
                .next()
                .unwrap_or_default()
                .chars()
                .filter(|c| !c.is_control())
                .collect();
            return Err(bad(
                path,
                format!(
                    "{schema} is a newer trace schema than this volbench reads \
                     (volbench.trace/v1); replay it with the volbench that wrote it"
                ),
            ));
        } else {
            return Err(bad(
                path,
                "not a trace volbench reads (its first bytes are none of '# volbench.trace/v1', \
                 'fio version 2 iolog', 'fio version 3 iolog' or blktrace's magic)",
            ));
        };
        Ok(Trace {
            inner,
            format,
            last_ns: 0,
            count: 0,
            map,
        })
    }

    /// The next request to issue: checked as recorded, then changed by the
    /// replay options (an op they skip is read past).
    pub(crate) fn next_request(&mut self) -> Result<Option<Request>> {
        loop {
            let Some(mut r) = self.next_recorded()? else {
                return Ok(None);
            };
            let bit = match r.op {
                ReqOp::Read => ReplayMap::SKIP_READ,
                ReqOp::Write => ReplayMap::SKIP_WRITE,
                ReqOp::Flush => ReplayMap::SKIP_FLUSH,
                ReqOp::Discard => ReplayMap::SKIP_DISCARD,
            };
            if self.map.skip & bit != 0 {
                continue;
            }
            if r.op != ReqOp::Flush {
                r.offset = self.map.offset(r.offset);
            }
            return Ok(Some(r));
        }
    }

    /// The last request's recorded completion time (volbench traces that
    /// have one).
    fn done_ns(&self) -> Option<u64> {
        match &self.inner {
            Inner::Text(t) => t.done_ns,
            Inner::Mem(t) => t.done_ns,
            Inner::Blk(_) => None,
        }
    }

    /// The next request as recorded, checked against the bounds every
    /// format shares.
    fn next_recorded(&mut self) -> Result<Option<Request>> {
        let (r, path) = match &mut self.inner {
            Inner::Text(t) => (t.next_request()?, t.path()),
            Inner::Blk(b) => (b.next_request()?, b.path()),
            Inner::Mem(t) => (t.next_request()?, t.path()),
        };
        let Some(r) = r else {
            return Ok(None);
        };
        self.count += 1;
        let n = self.count;
        if n > bounds::MAX_TRACE_REQUESTS {
            return Err(bad(
                path,
                format!(
                    "more than {} requests, the most a replay takes",
                    crate::units::thousands(bounds::MAX_TRACE_REQUESTS as f64)
                ),
            ));
        }
        if r.at_ns < self.last_ns {
            return Err(bad(
                path,
                format!(
                    "request {n}: its time ({} ns) is before the one before it ({} ns); \
                     requests must be in issue order",
                    r.at_ns, self.last_ns
                ),
            ));
        }
        if r.at_ns > bounds::MAX_DURATION.as_nanos() as u64 {
            return Err(bad(
                path,
                format!("request {n}: its time is past the 30 days a replay may last"),
            ));
        }
        self.last_ns = r.at_ns;
        let max_len = match r.op {
            ReqOp::Read | ReqOp::Write => bounds::MAX_TRACE_REQUEST_BYTES,
            ReqOp::Discard => bounds::MAX_SIZE,
            ReqOp::Flush => u64::MAX,
        };
        if r.op != ReqOp::Flush && (r.len == 0 || r.len > max_len) {
            return Err(bad(
                path,
                format!(
                    "request {n}: {} bytes; a request is 1 byte..{}",
                    r.len,
                    crate::units::format_size(max_len)
                ),
            ));
        }
        if r.op != ReqOp::Flush && r.offset.saturating_add(r.len) > bounds::MAX_SIZE {
            return Err(bad(
                path,
                format!(
                    "request {n}: offset {} + {} bytes is past {}, beyond any volume",
                    r.offset,
                    r.len,
                    crate::units::format_size(bounds::MAX_SIZE)
                ),
            ));
        }
        Ok(Some(r))
    }
}

/// Reads the whole trace once, checking every request, and counts it: the
/// run is sized and refused from this before any I/O.
#[cfg(test)]
pub(crate) fn scan(path: &Path) -> Result<(TraceFormat, TraceSummary)> {
    scan_mapped(path, ReplayMap::default())
}

/// `scan` of the requests as `map` changes them.
pub(crate) fn scan_mapped(path: &Path, map: ReplayMap) -> Result<(TraceFormat, TraceSummary)> {
    let mut t = Trace::open_mapped(path, None, map)?;
    let format = t.format;
    let blk_event = match &mut t.inner {
        Inner::Blk(b) => Some(b.choose_event()?),
        Inner::Text(_) | Inner::Mem(_) => None,
    };
    if blk_event.is_some() {
        t = Trace::open_mapped(path, blk_event, map)?;
    }
    let mut s = TraceSummary {
        align: 4096,
        blk_event,
        ..TraceSummary::default()
    };
    // The issue times of the last 1 ms's reads and writes, and the
    // completion times of those recorded in flight, each bounded: the
    // peaks only need to be known up to the depth they may choose.
    let mut window = std::collections::VecDeque::new();
    let mut in_flight = std::collections::BinaryHeap::new();
    while let Some(r) = t.next_request()? {
        count(&mut s, &r);
        if let (Some(done), true) = (t.done_ns(), matches!(r.op, ReqOp::Read | ReqOp::Write)) {
            while in_flight
                .peek()
                .is_some_and(|&std::cmp::Reverse(d)| d <= r.at_ns)
            {
                in_flight.pop();
            }
            in_flight.push(std::cmp::Reverse(done));
            if in_flight.len() as u64 > bounds::MAX_REPLAY_AUTO_DEPTH {
                in_flight.pop();
            }
            s.recorded_in_flight = s.recorded_in_flight.max(in_flight.len() as u64);
        }
        if matches!(r.op, ReqOp::Read | ReqOp::Write) {
            window.push_back(r.at_ns);
            let since = r.at_ns.saturating_sub(999_999);
            while window.front().is_some_and(|&at| at < since) {
                window.pop_front();
            }
            if window.len() as u64 > bounds::MAX_REPLAY_AUTO_DEPTH {
                window.pop_front();
            }
            s.peak_1ms = s.peak_1ms.max(window.len() as u64);
        }
    }
    if s.requests == 0 {
        let why = if map.skip != 0 {
            "no requests are left once the skipped ops are left out"
        } else {
            "the trace holds no requests"
        };
        return Err(bad(path, why));
    }
    Ok((format, s))
}

/// A trace's format and, for a fio log, the one file its requests go to
/// (fio replays onto it unless replay_redirect says otherwise): read up to
/// its first request only, so an import need not scan the whole log.
pub(crate) fn named_file(path: &Path) -> Result<(TraceFormat, Option<String>)> {
    let mut t = Trace::open_mapped(path, None, ReplayMap::default())?;
    let format = t.format;
    t.next_request()?;
    let file = match &t.inner {
        Inner::Text(r) => r.file().map(str::to_string),
        Inner::Blk(_) | Inner::Mem(_) => None,
    };
    Ok((format, file))
}

/// Adds one request to a summary (a scan's, or a host's part's).
pub(crate) fn count(s: &mut TraceSummary, r: &Request) {
    s.requests += 1;
    s.last_ns = r.at_ns;
    match r.op {
        ReqOp::Read => {
            s.reads += 1;
            s.read_bytes += r.len;
        }
        ReqOp::Write => {
            s.writes += 1;
            s.write_bytes += r.len;
        }
        ReqOp::Flush => s.flushes += 1,
        ReqOp::Discard => {
            s.discards += 1;
            s.discard_bytes = s.discard_bytes.saturating_add(r.len);
        }
    }
    if r.op != ReqOp::Flush {
        s.span_bytes = s.span_bytes.max(r.offset + r.len);
    }
    if matches!(r.op, ReqOp::Read | ReqOp::Write) {
        s.max_bytes = s.max_bytes.max(r.len);
        while s.align > 1 && (r.offset % s.align != 0 || r.len % s.align != 0) {
            s.align /= 2;
        }
    }
}

#[cfg(test)]
mod tests;
