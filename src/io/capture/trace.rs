//! `capture --trace`, the pure half: a line of tracefs's `trace_pipe` (the
//! block_rq_issue and block_rq_complete events) read into an event, and the
//! recorder that pairs each issue with its completion and writes the
//! volbench trace (`volbench.trace/v1`, the format `run --replay` reads) as
//! a stream, in issue order, with a bounded number of requests held.

use std::collections::{HashMap, VecDeque};
use std::io::Write;

/// The first line's tag: the format `run --replay` recognises.
pub(crate) const TRACE_SCHEMA: &str = "volbench.trace/v1";

/// A request's direction as the trace writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Op {
    Read,
    Write,
    Flush,
    Discard,
}

impl Op {
    pub(crate) fn letter(self) -> char {
        match self {
            Op::Read => 'R',
            Op::Write => 'W',
            Op::Flush => 'F',
            Op::Discard => 'D',
        }
    }

    /// The op of the kernel's rwbs letters (blk_fill_rwbs): a leading F is
    /// a preflush and a trailing F a FUA, both riding on the request's own
    /// R, W or D; a request with only F letters is a flush. N (no data:
    /// write-zeroes, zone commands) and anything else is not a request the
    /// trace format has an op for: None, and the caller counts it.
    pub(crate) fn of_rwbs(rwbs: &str) -> Option<Op> {
        let mut flush = false;
        for c in rwbs.chars() {
            match c {
                'R' => return Some(Op::Read),
                'W' => return Some(Op::Write),
                'D' => return Some(Op::Discard),
                'F' => flush = true,
                'N' => return None,
                _ => {}
            }
        }
        flush.then_some(Op::Flush)
    }
}

/// Which of the two tracepoints a line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Issue,
    Complete,
}

/// One event of `trace_pipe`: its timestamp (ns of the instance's clock),
/// and the request's sector range; `op` None for an rwbs with no op here.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Event {
    pub(crate) kind: Kind,
    pub(crate) ts_ns: u64,
    pub(crate) op: Option<Op>,
    pub(crate) sector: u64,
    pub(crate) nr_sector: u64,
}

/// What a line of `trace_pipe` says.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Line {
    Event(Event),
    /// "CPU:1 [LOST 12 EVENTS]": the kernel's buffer overflowed.
    Lost(u64),
    /// Anything else (another event, a blank line): skipped.
    Other,
}

/// "12345.678901" (seconds, any number of fraction digits) as ns.
fn parse_ts(s: &str) -> Option<u64> {
    let (secs, frac) = s.split_once('.').unwrap_or((s, ""));
    let secs: u64 = secs.parse().ok()?;
    if frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut ns: u64 = 0;
    for i in 0..9 {
        let d = frac.as_bytes().get(i).map_or(0, |b| u64::from(b - b'0'));
        ns = ns * 10 + d;
    }
    secs.checked_mul(1_000_000_000)?.checked_add(ns)
}

/// One line of `trace_pipe`, default options:
/// `  fio-812 [001] d..1. 5069.123456: block_rq_issue: 7,0 R 4096 () 2048 + 8 none,0,0 [fio]`.
/// The task name may hold spaces and the kernel adds fields over versions
/// (ioprio after 6.x), so the parse anchors on the event name and on the
/// `SECTOR + COUNT` triple rather than on positions.
pub(crate) fn parse_line(line: &str) -> Line {
    if let Some(at) = line.find("[LOST ") {
        let n = line[at + 6..].split_whitespace().next();
        return n
            .and_then(|n| n.parse().ok())
            .map_or(Line::Other, Line::Lost);
    }
    let (kind, at, name) = if let Some(at) = line.find(" block_rq_issue: ") {
        (Kind::Issue, at, " block_rq_issue: ")
    } else if let Some(at) = line.find(" block_rq_complete: ") {
        (Kind::Complete, at, " block_rq_complete: ")
    } else {
        return Line::Other;
    };
    let ts = line[..at]
        .split_whitespace()
        .last()
        .map(|t| t.trim_end_matches(':'))
        .and_then(parse_ts);
    // Tokens after the name: dev, rwbs, ..., SECTOR + COUNT, ...; read in
    // one pass without collecting (this runs for every request traced).
    let mut tokens = line[at + name.len()..].split_whitespace();
    let rwbs = tokens.nth(1);
    let mut prev = rwbs;
    let mut range = None;
    while let Some(t) = tokens.next() {
        if t == "+" {
            range = Some((prev, tokens.next()));
            break;
        }
        prev = Some(t);
    }
    let num = |f: Option<&str>| f.and_then(|f| f.parse::<u64>().ok());
    match (ts, rwbs, range) {
        (Some(ts_ns), Some(rwbs), Some((s, n))) => match (num(s), num(n)) {
            (Some(sector), Some(nr_sector)) => Line::Event(Event {
                kind,
                ts_ns,
                op: Op::of_rwbs(rwbs),
                sector,
                nr_sector,
            }),
            _ => Line::Other,
        },
        _ => Line::Other,
    }
}

/// One request: issued `issue_ns` after the trace's start.
#[derive(Debug, Clone)]
struct Request {
    issue_ns: u64,
    complete_ns: Option<u64>,
    op: Op,
    sector: u64,
    nr_sector: u64,
}

/// What a trace held, for the summary line.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Totals {
    /// Requests written, by op: R, W, F, D.
    pub(crate) requests: [u64; 4],
    pub(crate) bytes: [u64; 4],
    pub(crate) completed: u64,
    pub(crate) latency_ns_sum: u64,
    /// Written without a completion because the end came first.
    pub(crate) uncompleted: u64,
    /// Written without a completion because `MAX_TRACE_PENDING` was reached.
    pub(crate) evicted: u64,
    /// Completions of requests issued before the trace started (or
    /// evicted): no row of theirs.
    pub(crate) unmatched: u64,
    /// Requests whose rwbs has no op in the format (N: write-zeroes...).
    pub(crate) other: u64,
    /// Events the kernel's buffer dropped ([LOST n EVENTS]).
    pub(crate) lost: u64,
}

impl Totals {
    pub(crate) fn all(&self) -> u64 {
        self.requests.iter().sum()
    }

    pub(crate) fn mean_latency_ms(&self) -> Option<f64> {
        (self.completed > 0).then(|| self.latency_ns_sum as f64 / self.completed as f64 / 1e6)
    }
}

fn index(op: Op) -> usize {
    match op {
        Op::Read => 0,
        Op::Write => 1,
        Op::Flush => 2,
        Op::Discard => 3,
    }
}

/// Pairs issues with completions and writes each request's row once it
/// and all issued before it are complete (or pushed out by the bound).
pub(crate) struct Recorder<W: Write> {
    out: W,
    start_ns: u64,
    limit: usize,
    /// Requests not yet written, in issue order; `base` is the sequence
    /// number of the first.
    queue: VecDeque<Request>,
    base: u64,
    /// The sequence numbers issued and not completed, by sector and op:
    /// several flushes (sector 0) may be in flight at once, first in first
    /// out.
    open: HashMap<(u64, Op), VecDeque<u64>>,
    pub(crate) totals: Totals,
}

impl<W: Write> Recorder<W> {
    /// Writes the two header lines. `start_ns` is the instance clock's
    /// reading at the start; `start_unix_ns` the wall clock's then.
    pub(crate) fn new(
        mut out: W,
        device: &str,
        start_ns: u64,
        start_unix_ns: u128,
        limit: usize,
    ) -> std::io::Result<Self> {
        writeln!(
            out,
            "# {TRACE_SCHEMA} device={device} sector=512 start_unix_ns={start_unix_ns}"
        )?;
        writeln!(out, "issue_ns,complete_ns,op,offset,bytes")?;
        Ok(Recorder {
            out,
            start_ns,
            limit: limit.max(1),
            queue: VecDeque::new(),
            base: 0,
            open: HashMap::new(),
            totals: Totals::default(),
        })
    }

    pub(crate) fn event(&mut self, e: &Event) -> std::io::Result<()> {
        let Some(op) = e.op else {
            if e.kind == Kind::Issue {
                self.totals.other += 1;
            }
            return Ok(());
        };
        let t = e.ts_ns.saturating_sub(self.start_ns);
        match e.kind {
            Kind::Issue => {
                if self.queue.len() >= self.limit {
                    self.write_head(true)?;
                }
                let seq = self.base + self.queue.len() as u64;
                self.queue.push_back(Request {
                    issue_ns: t,
                    complete_ns: None,
                    op,
                    sector: e.sector,
                    nr_sector: e.nr_sector,
                });
                self.open.entry((e.sector, op)).or_default().push_back(seq);
            }
            Kind::Complete => {
                let seq = self
                    .open
                    .get_mut(&(e.sector, op))
                    .and_then(|q| q.pop_front());
                if self.open.get(&(e.sector, op)).is_some_and(|q| q.is_empty()) {
                    self.open.remove(&(e.sector, op));
                }
                let req = seq
                    .and_then(|s| s.checked_sub(self.base))
                    .and_then(|i| self.queue.get_mut(i as usize));
                match req {
                    Some(r) => r.complete_ns = Some(t.max(r.issue_ns)),
                    None => self.totals.unmatched += 1,
                }
                while self.queue.front().is_some_and(|r| r.complete_ns.is_some()) {
                    self.write_head(false)?;
                }
            }
        }
        Ok(())
    }

    /// Writes the oldest request; `evict` when the bound pushes it out.
    fn write_head(&mut self, evict: bool) -> std::io::Result<()> {
        let Some(r) = self.queue.pop_front() else {
            return Ok(());
        };
        let seq = self.base;
        self.base += 1;
        let key = (r.sector, r.op);
        if let Some(q) = self.open.get_mut(&key) {
            q.retain(|s| *s != seq);
            if q.is_empty() {
                self.open.remove(&key);
            }
        }
        let i = index(r.op);
        let bytes = r.nr_sector * 512;
        self.totals.requests[i] += 1;
        self.totals.bytes[i] += bytes;
        match r.complete_ns {
            Some(c) => {
                self.totals.completed += 1;
                self.totals.latency_ns_sum += c - r.issue_ns;
                writeln!(
                    self.out,
                    "{},{c},{},{},{bytes}",
                    r.issue_ns,
                    r.op.letter(),
                    r.sector * 512
                )
            }
            None => {
                if evict {
                    self.totals.evicted += 1;
                } else {
                    self.totals.uncompleted += 1;
                }
                writeln!(
                    self.out,
                    "{},,{},{},{bytes}",
                    r.issue_ns,
                    r.op.letter(),
                    r.sector * 512
                )
            }
        }
    }

    /// Writes what is still held (the requests not completed by the end
    /// with an empty complete_ns) and flushes; returns the totals.
    pub(crate) fn finish(mut self) -> std::io::Result<Totals> {
        while !self.queue.is_empty() {
            self.write_head(false)?;
        }
        self.out.flush()?;
        Ok(self.totals)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ISSUE: &str = "             fio-8123    [001] d..1.  5069.123456: block_rq_issue: 7,0 WS 4096 () 2048 + 8 none,0,0 [fio]";
    const DONE: &str = "          <idle>-0       [000] ..s1.  5069.123700: block_rq_complete: 7,0 WS () 2048 + 8 none,0,0 [0]";

    fn ev(line: &str) -> Event {
        match parse_line(line) {
            Line::Event(e) => e,
            other => panic!("{line}: {other:?}"),
        }
    }

    #[test]
    fn lines_of_both_events_read_as_the_kernel_prints_them() {
        let i = ev(ISSUE);
        assert_eq!(
            i,
            Event {
                kind: Kind::Issue,
                ts_ns: 5_069_123_456_000,
                op: Some(Op::Write),
                sector: 2048,
                nr_sector: 8
            }
        );
        let c = ev(DONE);
        assert_eq!(
            (c.kind, c.ts_ns, c.sector),
            (Kind::Complete, 5_069_123_700_000, 2048)
        );
        // An older kernel: no ioprio, no bytes on complete; a task name
        // with spaces; nanosecond timestamps.
        let old = ev(
            "  kworker/u8:2 x-1   [000] ....  12.000000001: block_rq_complete: 8,16 R () 0 + 256 [0]",
        );
        assert_eq!((old.ts_ns, old.nr_sector), (12_000_000_001, 256));
        assert_eq!(parse_line("CPU:1 [LOST 42 EVENTS]"), Line::Lost(42));
        for junk in [
            "",
            "fio-1 [000] .... 1.0: block_bio_queue: 7,0 R 0 + 8 [fio]",
            "fio-1 [000] .... x.y: block_rq_issue: 7,0 R 4096 () 0 + 8 [fio]",
            "fio-1 [000] .... 1.5: block_rq_issue: 7,0 R 4096 () 0 + [fio]",
            "fio-1 [000] .... 1.5: block_rq_issue: 7,0",
            "fio-1 [000] .... 99999999999999999999.5: block_rq_issue: 7,0 R 1 () 0 + 8 [f]",
        ] {
            assert_eq!(parse_line(junk), Line::Other, "{junk}");
        }
    }

    #[test]
    fn rwbs_letters_map_to_the_op_the_request_carries() {
        for (rwbs, op) in [
            ("R", Some(Op::Read)),
            ("RA", Some(Op::Read)),
            ("WS", Some(Op::Write)),
            ("FWS", Some(Op::Write)),
            ("WFS", Some(Op::Write)),
            ("FF", Some(Op::Flush)),
            ("F", Some(Op::Flush)),
            ("D", Some(Op::Discard)),
            ("DE", Some(Op::Discard)),
            ("N", None),
            ("", None),
        ] {
            assert_eq!(Op::of_rwbs(rwbs), op, "{rwbs}");
        }
    }

    fn event(kind: Kind, us: u64, op: Op, sector: u64) -> Event {
        Event {
            kind,
            ts_ns: 1_000_000_000 + us * 1000,
            op: Some(op),
            sector,
            nr_sector: 8,
        }
    }

    fn record(events: &[Event], limit: usize) -> (String, Totals) {
        let mut out = Vec::new();
        let mut r = Recorder::new(&mut out, "loop0", 1_000_000_000, 77, limit).unwrap();
        for e in events {
            r.event(e).unwrap();
        }
        let t = r.finish().unwrap();
        (String::from_utf8(out).unwrap(), t)
    }

    #[test]
    fn rows_come_in_issue_order_with_their_completion_whatever_order_they_complete() {
        use Kind::*;
        let (text, t) = record(
            &[
                event(Issue, 10, Op::Read, 100),
                event(Issue, 20, Op::Write, 200),
                event(Complete, 25, Op::Write, 200),
                event(Issue, 30, Op::Flush, 0),
                event(Issue, 31, Op::Flush, 0),
                event(Complete, 40, Op::Read, 100),
                event(Complete, 50, Op::Flush, 0),
                // Issued before the start: no row, counted.
                event(Complete, 55, Op::Read, 999),
                event(Issue, 60, Op::Discard, 300),
            ],
            100,
        );
        let want = "# volbench.trace/v1 device=loop0 sector=512 start_unix_ns=77\n\
                    issue_ns,complete_ns,op,offset,bytes\n\
                    10000,40000,R,51200,4096\n\
                    20000,25000,W,102400,4096\n\
                    30000,50000,F,0,4096\n\
                    31000,,F,0,4096\n\
                    60000,,D,153600,4096\n";
        assert_eq!(text, want);
        assert_eq!(t.requests, [1, 1, 2, 1]);
        assert_eq!((t.completed, t.uncompleted, t.unmatched), (3, 2, 1));
        assert_eq!(t.latency_ns_sum, 30_000 + 5_000 + 20_000);
    }

    #[test]
    fn a_request_that_never_completes_is_pushed_out_at_the_bound_and_counted() {
        use Kind::*;
        let mut evs = vec![event(Issue, 1, Op::Write, 5)];
        for i in 0..10u64 {
            evs.push(event(Issue, 10 + i, Op::Read, 1000 + i));
            evs.push(event(Complete, 11 + i, Op::Read, 1000 + i));
        }
        // Its late completion finds no row to fill.
        evs.push(event(Complete, 100, Op::Write, 5));
        let (text, t) = record(&evs, 4);
        assert_eq!((t.evicted, t.unmatched, t.all()), (1, 1, 11));
        let rows: Vec<&str> = text.lines().skip(2).collect();
        assert_eq!(rows[0], "1000,,W,2560,4096");
        assert_eq!(rows.len(), 11);
    }
}
