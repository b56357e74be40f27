//! The text traces: volbench's own (`# volbench.trace/v1`, CSV rows) and
//! fio's iolog (`fio version 2 iolog`, `fio version 3 iolog`), read one
//! line at a time with the line's length capped, so a hostile file can
//! neither make a line buffer grow nor hide a truncated last line.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::io::BufRead;
use std::path::{Path, PathBuf};

use super::{ReqOp, Request, bad};
use crate::error::Result;
use crate::spec::replay::TraceFormat;
use crate::units::bounds;

const VOLBENCH_MAGIC: &str = "# volbench.trace/v1";
const VOLBENCH_HEADER: &str = "issue_ns,complete_ns,op,offset,bytes";
const FIO_V2: &str = "fio version 2 iolog";
const FIO_V3: &str = "fio version 3 iolog";

/// The text format whose first line `head` starts, if any.
pub(crate) fn detect(head: &[u8]) -> Option<TraceFormat> {
    let starts = |m: &str| head.starts_with(m.as_bytes());
    if starts(VOLBENCH_MAGIC) {
        Some(TraceFormat::Volbench)
    } else if starts(FIO_V2) {
        Some(TraceFormat::FioV2)
    } else if starts(FIO_V3) {
        Some(TraceFormat::FioV3)
    } else {
        None
    }
}

pub(crate) struct TextReader<R> {
    reader: R,
    path: PathBuf,
    format: TraceFormat,
    line: Vec<u8>,
    /// Lines read so far (the number of the current one).
    lineno: u64,
    /// fio v2: the time so far, the sum of the `wait` lines (µs -> ns).
    clock_ns: u64,
    /// fio: the one file the log's requests go to.
    file: Option<String>,
    /// volbench: the request count the first line claims, if it does.
    claimed: Option<u64>,
    seen: u64,
    /// volbench: the last request's completion time, when recorded.
    pub(crate) done_ns: Option<u64>,
}

impl<R: BufRead> TextReader<R> {
    pub(crate) fn new(reader: R, path: &Path, format: TraceFormat) -> Self {
        Self {
            reader,
            path: path.to_path_buf(),
            format,
            line: Vec::with_capacity(256),
            lineno: 0,
            clock_ns: 0,
            file: None,
            claimed: None,
            done_ns: None,
            seen: 0,
        }
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// fio: the file the log's requests go to, once a line named it.
    pub(crate) fn file(&self) -> Option<&str> {
        self.file.as_deref()
    }

    /// The next line without its newline; None at the end. A line longer
    /// than the bound, or a last line with no newline (a trace cut short),
    /// is an error.
    fn next_line(&mut self) -> Result<Option<&str>> {
        self.line.clear();
        loop {
            let buf = self.reader.fill_buf().map_err(|e| bad(&self.path, e))?;
            if buf.is_empty() {
                if self.line.is_empty() {
                    return Ok(None);
                }
                return Err(bad(
                    &self.path,
                    format!(
                        "line {}: the file ends inside it (a truncated trace)",
                        self.lineno + 1
                    ),
                ));
            }
            let (take, done) = match buf.iter().position(|&b| b == b'\n') {
                Some(i) => (i, true),
                None => (buf.len(), false),
            };
            if self.line.len() + take > bounds::MAX_TRACE_LINE {
                return Err(bad(
                    &self.path,
                    format!(
                        "line {} is longer than {} bytes, the longest a trace line may be",
                        self.lineno + 1,
                        bounds::MAX_TRACE_LINE
                    ),
                ));
            }
            self.line
                .extend_from_slice(buf.get(..take).unwrap_or_default());
            self.reader.consume(if done { take + 1 } else { take });
            if done {
                break;
            }
        }
        self.lineno += 1;
        let text = std::str::from_utf8(&self.line)
            .map_err(|_| bad(&self.path, format!("line {} is not text", self.lineno)))?;
        Ok(Some(text.trim_end_matches('\r')))
    }

    fn err(&self, what: impl std::fmt::Display) -> crate::error::VbError {
        bad(&self.path, format!("line {}: {what}", self.lineno))
    }

    /// The next request; file actions, waits and comments are read past.
    pub(crate) fn next_request(&mut self) -> Result<Option<Request>> {
        if self.lineno == 0 {
            self.first_lines()?;
        }
        loop {
            let Some(line) = self.next_line()? else {
                if let Some(c) = self.claimed.filter(|&c| c != self.seen) {
                    return Err(bad(
                        &self.path,
                        format!(
                            "the header claims {c} requests, the trace holds {}",
                            self.seen
                        ),
                    ));
                }
                return Ok(None);
            };
            let line = line.to_string();
            if line.trim().is_empty() || line.starts_with('#') {
                continue;
            }
            let r = match self.format {
                TraceFormat::Volbench => {
                    let (r, done) = self.volbench_row(&line)?;
                    self.done_ns = done;
                    Some(r)
                }
                _ => self.fio_line(&line)?,
            };
            if let Some(r) = r {
                self.seen += 1;
                return Ok(Some(r));
            }
        }
    }

    /// The magic line (with volbench's keys) and volbench's column header.
    fn first_lines(&mut self) -> Result<()> {
        let Some(first) = self.next_line()? else {
            return Err(bad(&self.path, "the file is empty"));
        };
        let first = first.to_string();
        if self.format != TraceFormat::Volbench {
            return Ok(());
        }
        let keys = first.get(VOLBENCH_MAGIC.len()..).unwrap_or_default();
        if !keys.is_empty() && !keys.starts_with(' ') {
            return Err(self.err(format!("'{first}' is not '{VOLBENCH_MAGIC}'")));
        }
        for kv in keys.split_whitespace() {
            let Some((k, v)) = kv.split_once('=') else {
                return Err(self.err(format!("'{kv}' is not key=value")));
            };
            let number = || -> Result<u64> {
                v.parse::<u64>()
                    .map_err(|_| self.err(format!("{k}='{v}' is not a whole number")))
            };
            match k {
                "sector" => {
                    let s = number()?;
                    if !s.is_power_of_two() || !(512..=65536).contains(&s) {
                        return Err(self.err(format!(
                            "sector={s}: a sector is a power of two, 512..65536"
                        )));
                    }
                }
                "start_unix_ns" => {
                    number()?;
                }
                "requests" => {
                    let n = number()?;
                    if n > bounds::MAX_TRACE_REQUESTS {
                        return Err(self.err(format!(
                            "requests={n} claims more than {} requests, the most a replay takes",
                            crate::units::thousands(bounds::MAX_TRACE_REQUESTS as f64)
                        )));
                    }
                    self.claimed = Some(n);
                }
                // Where the trace was taken: recorded by `capture --trace`,
                // not needed to replay it; other keys are left to newer writers.
                _ => {}
            }
        }
        match self.next_line()? {
            Some(h) if h.trim() == VOLBENCH_HEADER => Ok(()),
            Some(h) => {
                let h = h.chars().take(80).collect::<String>();
                Err(self.err(format!("'{h}' is not the header '{VOLBENCH_HEADER}'")))
            }
            None => Err(bad(
                &self.path,
                format!("the file ends before the header '{VOLBENCH_HEADER}'"),
            )),
        }
    }

    fn number(&self, what: &str, text: &str) -> Result<u64> {
        text.trim().parse::<u64>().map_err(|_| {
            let t = text.chars().take(40).collect::<String>();
            self.err(format!(
                "{what} '{t}' is not a whole number of 0..{}",
                u64::MAX
            ))
        })
    }

    /// `issue_ns,complete_ns,op,offset,bytes`.
    fn volbench_row(&self, line: &str) -> Result<(Request, Option<u64>)> {
        let cols: Vec<&str> = line.split(',').collect();
        let [issue, complete, op, offset, len] = cols.as_slice() else {
            return Err(self.err(format!(
                "{} columns; a row is {VOLBENCH_HEADER}",
                cols.len()
            )));
        };
        let at_ns = self.number("issue_ns", issue)?;
        let done = if complete.trim().is_empty() {
            None
        } else {
            Some(self.number("complete_ns", complete)?)
        };
        if done.is_some_and(|d| d < at_ns) {
            return Err(self.err("complete_ns is before issue_ns"));
        }
        let op = match op.trim() {
            "R" => ReqOp::Read,
            "W" => ReqOp::Write,
            "F" => ReqOp::Flush,
            "D" => ReqOp::Discard,
            other => {
                let o = other.chars().take(20).collect::<String>();
                return Err(self.err(format!(
                    "op '{o}' is none of R W F D (read, write, flush, discard)"
                )));
            }
        };
        let r = Request {
            at_ns,
            op,
            offset: self.number("offset", offset)?,
            len: self.number("bytes", len)?,
        };
        Ok((r, done))
    }

    /// `[usec] file action [offset length]`; None for a file action or a wait.
    fn fio_line(&mut self, line: &str) -> Result<Option<Request>> {
        let mut words: Vec<&str> = line.split_whitespace().collect();
        if self.format == TraceFormat::FioV3 {
            let Some(t) = words.first() else {
                return Ok(None);
            };
            let us = self.number("timestamp", t)?;
            self.clock_ns = us
                .checked_mul(1000)
                .ok_or_else(|| self.err("timestamp too large"))?;
            words.remove(0);
        }
        let (file, action, rest) = match words.as_slice() {
            [f, a, rest @ ..] => (*f, *a, rest),
            _ => return Err(self.err("not 'file action [offset length]'")),
        };
        match action {
            "add" | "open" | "close" if rest.is_empty() => {
                self.one_file(file)?;
                return Ok(None);
            }
            "wait" => {
                // fio v2's think time: the offset column is the delay in µs.
                if let Some(us) = rest.first() {
                    let us = self.number("wait", us)?;
                    if self.format == TraceFormat::FioV2 {
                        self.clock_ns = us
                            .checked_mul(1000)
                            .and_then(|d| self.clock_ns.checked_add(d))
                            .ok_or_else(|| self.err("the waits add up past any time"))?;
                    }
                    return Ok(None);
                }
            }
            _ => {}
        }
        let op = match action {
            "read" => ReqOp::Read,
            "write" => ReqOp::Write,
            "sync" | "datasync" => ReqOp::Flush,
            "trim" => ReqOp::Discard,
            other => {
                let o = other.chars().take(20).collect::<String>();
                return Err(self.err(format!(
                    "action '{o}' is none of add, open, close, read, write, sync, datasync, trim, wait"
                )));
            }
        };
        let [offset, len] = rest else {
            return Err(self.err(format!("'{action}' needs an offset and a length")));
        };
        self.one_file(file)?;
        Ok(Some(Request {
            at_ns: self.clock_ns,
            op,
            offset: self.number("offset", offset)?,
            len: self.number("length", len)?,
        }))
    }

    /// Every request of a log goes to the one --target, so a log of two
    /// files (whose offsets would land on each other) is refused.
    fn one_file(&mut self, name: &str) -> Result<()> {
        match &self.file {
            Some(f) if f != name => Err(self.err(format!(
                "a second file '{}' (the log's requests are on '{f}'); a replay maps one file onto --target",
                name.chars().take(80).collect::<String>()
            ))),
            Some(_) => Ok(()),
            None => {
                self.file = Some(name.to_string());
                Ok(())
            }
        }
    }
}
