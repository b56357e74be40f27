//! The coordinator-agent protocol: one JSON object per line on the agent's
//! stdin and stdout, tagged by `type`. Version 2. The `hello` messages keep
//! this exact shape in every version, so two versions can always tell each
//! other apart and refuse with both versions named.
//!
//! Conversation (C = coordinator, A = agent):
//! ```text
//! C hello{protocol,version,heartbeat_ms,timeout_ms}   A hello{protocol,version,host,pid}
//! C ping{id,sent_ns} x N                              A pong{id,sent_ns,agent_ns}
//! C trace{data} x N (a replay's part, before its job)
//! C job{...}                                          A planned{targets}
//! C prepare                                           A progress{done,total}... prepared{targets}
//! per run i:
//!   C run{index,step?}                                A ready{index}
//!   C start{index,at_ns}  (agent clock)               A started{..} interval{..}... run_done{..}
//! C bye (or stdin closes)                             A exits
//! ```
//! An agent sends `heartbeat` after `heartbeat_ms` of saying nothing else;
//! the coordinator sends one to every agent every `heartbeat_ms` or a third
//! of `timeout_ms`, whichever is longer. An agent that hears
//! nothing for `timeout_ms` stops its I/O and exits, and the coordinator
//! gives up on a host that is silent as long. `stop` ends the current run
//! early (results so far are still sent); `error` is an agent giving up.

use std::io::{self, BufRead};
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::result::{HostInfo, Interval, RunResult, TargetInfo};
use crate::spec::JobSpec;

/// Bumped on any change to the messages below. 2: `run` carries an
/// optional latency-search `step`; an agent of protocol 1 would ignore it
/// and run the plain run, so the two are refused at hello instead.
pub(crate) const PROTOCOL: u32 = 2;

/// The most trace text one `trace` message carries: well inside `MAX_LINE`
/// even if every byte were escaped.
pub(crate) const TRACE_CHUNK: usize = 4 << 20;

/// A replay part's text in `trace` messages, cut at line ends (the text
/// is ASCII, so every piece is a valid string).
pub(crate) fn trace_chunks(text: &[u8]) -> Vec<ToAgent> {
    let mut out = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let mut cut = rest.len().min(TRACE_CHUNK);
        if cut < rest.len() {
            if let Some(nl) = rest
                .get(..cut)
                .and_then(|h| h.iter().rposition(|&b| b == b'\n'))
            {
                cut = nl + 1;
            }
        }
        let (head, tail) = rest.split_at(cut);
        out.push(ToAgent::Trace {
            data: String::from_utf8_lossy(head).into_owned(),
        });
        rest = tail;
    }
    out
}

/// Longest line either side accepts. A result with full histograms and a
/// long interval series is a few hundred KiB; anything much larger is not
/// a volbench agent talking.
pub(crate) const MAX_LINE: usize = 16 << 20;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum ToAgent {
    Hello {
        protocol: u32,
        version: String,
        #[serde(default)]
        heartbeat_ms: u64,
        #[serde(default)]
        timeout_ms: u64,
    },
    Ping {
        id: u32,
        sent_ns: u64,
    },
    /// A piece of this host's part of a replayed trace (volbench.trace/v1
    /// text), sent before the job that replays it; the job's
    /// `replay.part.bytes` says how much to expect. Added within protocol
    /// 1: an agent that predates it refuses the message by its type, before
    /// any I/O.
    Trace {
        data: String,
    },
    Job(Box<AgentJob>),
    Prepare,
    Run {
        index: u32,
        /// A step of a latency search instead of the run as planned (new
        /// in protocol 2, so every agent that gets one knows it; the
        /// coordinator still refuses a result under another run's name).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        step: Option<StepRun>,
    },
    /// Release the run's workers at `at_ns` (Unix ns, in the agent's clock).
    Start {
        index: u32,
        at_ns: u64,
    },
    Stop,
    Heartbeat,
    Bye,
}

/// A latency-search step as one host runs it: the run renamed, at this
/// rate on each of the host's targets (None: closed loop).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct StepRun {
    pub(crate) name: String,
    pub(crate) rate_iops: Option<f64>,
}

/// What one host runs: the job, with this host's targets and overrides.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct AgentJob {
    /// The host's name as the user gave it (for messages).
    pub(crate) host: String,
    pub(crate) index: u32,
    /// The job; its target path is replaced by each of `targets` in turn.
    pub(crate) job: JobSpec,
    pub(crate) targets: Vec<PathBuf>,
    /// `--size` was given; otherwise a file or device target is used whole.
    pub(crate) size_given: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FromAgent {
    Hello {
        protocol: u32,
        version: String,
        #[serde(default)]
        host: Option<Box<HostInfo>>,
        #[serde(default)]
        pid: u32,
    },
    Pong {
        id: u32,
        sent_ns: u64,
        agent_ns: u64,
    },
    Planned {
        targets: Vec<PlannedTarget>,
        notes: Vec<String>,
    },
    Progress {
        done: u64,
        total: u64,
    },
    Prepared {
        targets: Vec<TargetInfo>,
        notes: Vec<String>,
        /// Each file set's fill (absent from agents that predate it).
        #[serde(default)]
        fill: Vec<crate::result::fill::FillResult>,
    },
    Ready {
        index: u32,
    },
    Started {
        index: u32,
        target: u32,
        at_ns: u64,
    },
    Interval {
        index: u32,
        target: u32,
        seq: u32,
        interval: Interval,
    },
    /// One result per target that produced one; `error` when the run failed.
    RunDone {
        index: u32,
        results: Vec<TargetResult>,
        error: Option<String>,
    },
    Note {
        message: String,
    },
    /// The agent gives up; `code` is its exit code (the kinds of volbench's
    /// exit codes: 2 bad input, 3 refused, 4 target unusable, 1 run failed).
    Error {
        message: String,
        #[serde(default)]
        code: i32,
    },
    Heartbeat,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TargetResult {
    pub target: u32,
    pub result: RunResult,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PlannedTarget {
    pub(crate) path: String,
    pub(crate) runs: Vec<PlannedRunInfo>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct PlannedRunInfo {
    pub(crate) engine: String,
    pub(crate) io_threads: u32,
    pub(crate) depth: u32,
    /// The run's own working set, as the agent read it from the job: an
    /// agent that predates per-run sizes sends none, and would quietly use
    /// the job's size instead (`sizes_understood`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) size: Option<u64>,
}

/// Whether an agent read every run's own size from the job it was sent;
/// the message says which run it would get wrong. A job without per-run
/// sizes passes with agents of any version (the protocol is unchanged).
pub(crate) fn sizes_understood(job: &JobSpec, planned: &[PlannedTarget]) -> Result<(), String> {
    for t in planned {
        for (run, info) in job.runs.iter().zip(&t.runs) {
            if run.size.is_some() && info.size != run.size {
                return Err(format!(
                    "its volbench does not know a run's own size (run '{}'); install this \
                     version there, or pass --push-binary",
                    run.name
                ));
            }
        }
    }
    Ok(())
}

pub fn encode<T: Serialize>(msg: &T) -> String {
    // Serializing these plain structures cannot fail (no maps with
    // non-string keys, no foreign Serialize impls).
    let mut s = serde_json::to_string(msg).unwrap_or_else(|e| {
        format!(r#"{{"type":"error","message":"cannot encode a message: {e}"}}"#)
    });
    s.push('\n');
    s
}

/// Decodes one message from the other side: every string in it is cleaned
/// of control characters (no terminal escapes from a remote host reach a
/// terminal, a table or a result file), whatever field it arrives in.
pub fn decode<T: serde::de::DeserializeOwned>(line: &[u8]) -> Result<T, serde_json::Error> {
    // Why a fast path: a thousand hosts send an interval line a second each,
    // and the detour through a `Value` was most of the coordinator's
    // decoding. A line of printable ASCII with no escape cannot hold a
    // control character in any string (JSON forbids them raw), nor a
    // string longer than the cap: the cleaning would change nothing.
    let plain = |b: &u8| (0x20..0x7f).contains(b) && *b != b'\\';
    if line.len() <= crate::result::check::MAX_STRING && line.iter().all(plain) {
        return serde_json::from_slice(line);
    }
    let mut v: serde_json::Value = serde_json::from_slice(line)?;
    crate::result::check::clean_strings(&mut v, true);
    serde_json::from_value(v)
}

/// Reads one line of at most `MAX_LINE` bytes. `Ok(None)` at end of input.
/// A longer line is an error, without buffering it all.
pub fn read_line(r: &mut impl BufRead, buf: &mut Vec<u8>) -> io::Result<Option<()>> {
    buf.clear();
    loop {
        let chunk = r.fill_buf()?;
        if chunk.is_empty() {
            return if buf.is_empty() {
                Ok(None)
            } else {
                Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "input ended in the middle of a line",
                ))
            };
        }
        let (take, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        if buf.len() + take > MAX_LINE + 1 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("a line longer than {MAX_LINE} bytes"),
            ));
        }
        buf.extend_from_slice(&chunk[..take]);
        r.consume(take);
        if done {
            buf.pop();
            if buf.last() == Some(&b'\r') {
                buf.pop();
            }
            return Ok(Some(()));
        }
    }
}

/// Makes text from a remote host safe to print: no control characters
/// (terminal escapes), bounded length.
pub(crate) fn sanitize(text: &str, max: usize) -> String {
    let mut out: String = text
        .chars()
        .map(|c| if c.is_control() && c != '\n' { '?' } else { c })
        .take(max)
        .collect();
    if text.chars().count() > max {
        out.push_str("...");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hello_keeps_its_shape() {
        let m = ToAgent::Hello {
            protocol: 1,
            version: "0.1.0".into(),
            heartbeat_ms: 1000,
            timeout_ms: 5000,
        };
        assert_eq!(
            encode(&m),
            "{\"type\":\"hello\",\"protocol\":1,\"version\":\"0.1.0\",\"heartbeat_ms\":1000,\"timeout_ms\":5000}\n"
        );
        // A future agent's hello with more fields still parses.
        let h: FromAgent = serde_json::from_str(
            r#"{"type":"hello","protocol":7,"version":"9.0.0","new_field":[1,2]}"#,
        )
        .unwrap();
        assert!(matches!(h, FromAgent::Hello { protocol: 7, .. }));
    }

    #[test]
    fn lines_are_bounded() {
        let mut input = io::Cursor::new(b"{\"a\":1}\r\nrest".to_vec());
        let mut buf = Vec::new();
        assert!(read_line(&mut input, &mut buf).unwrap().is_some());
        assert_eq!(buf, b"{\"a\":1}");
        assert!(
            read_line(&mut input, &mut buf).is_err(),
            "no newline at the end"
        );
        let big = vec![b'x'; MAX_LINE + 10];
        let mut input = io::BufReader::new(io::Cursor::new(big));
        assert!(read_line(&mut input, &mut buf).is_err());
        let mut empty = io::Cursor::new(Vec::new());
        assert!(read_line(&mut empty, &mut buf).unwrap().is_none());
    }

    #[test]
    fn every_string_of_a_message_is_cleaned() {
        let m: FromAgent = decode(
            br#"{"type":"prepared","targets":[{"kind":"file","path":"/x\u0007","files":1,"file_size":1,"align":1,"mount":{"mount_point":"/\u001b]0;t\u0007","source":"s","fs_type":"ext4","options":"rw"}}],"notes":["a\nb\u001b"]}"#,
        )
        .unwrap();
        let FromAgent::Prepared { targets, notes, .. } = m else {
            panic!("a prepared message");
        };
        assert_eq!(targets[0].path, "/x?");
        let text = serde_json::to_string(&targets[0].mount).unwrap();
        assert!(!text.contains("\\u001b"), "{text}");
        assert_eq!(notes, ["a\nb?"]);
    }

    #[test]
    fn the_plain_ascii_fast_path_cleans_what_the_slow_one_would() {
        let note = |line: &[u8]| match decode::<FromAgent>(line).unwrap() {
            FromAgent::Note { message } => message,
            _ => panic!("a note"),
        };
        // A raw C1 control (CSI, U+009B) needs no escape in JSON.
        assert_eq!(
            note("{\"type\":\"note\",\"message\":\"a\u{9b}2J\"}".as_bytes()),
            "a?2J"
        );
        // Plain ASCII, but a string over the cap is still cut.
        let long = "x".repeat(crate::result::check::MAX_STRING + 5);
        let line = format!("{{\"type\":\"note\",\"message\":\"{long}\"}}");
        assert!(note(line.as_bytes()).ends_with("x..."));
        assert_eq!(note(br#"{"type":"note","message":"fine"}"#), "fine");
        // Raw control bytes are refused by the parser, on either path.
        assert!(decode::<FromAgent>(b"{\"type\":\"note\",\"message\":\"a\x1bb\"}").is_err());
    }

    #[test]
    fn remote_text_is_defanged() {
        assert_eq!(sanitize("ok\x1b[2Jgone", 100), "ok?[2Jgone");
        assert_eq!(sanitize("abcdef", 3), "abc...");
    }

    #[test]
    fn an_agent_that_drops_a_runs_own_size_is_caught() {
        let mut job = crate::report::fixtures::doc("p", &[]).spec;
        job.runs = vec![crate::spec::RunSpec {
            name: "big".into(),
            size: Some(128 << 30),
            ..Default::default()
        }];
        let planned = |size: Option<u64>| {
            vec![PlannedTarget {
                path: "/d".into(),
                runs: vec![PlannedRunInfo {
                    engine: "psync".into(),
                    io_threads: 1,
                    depth: 1,
                    size,
                }],
            }]
        };
        assert!(sizes_understood(&job, &planned(Some(128 << 30))).is_ok());
        // An older agent: the field never comes back.
        let old: Vec<PlannedTarget> = serde_json::from_str(
            r#"[{"path":"/d","runs":[{"engine":"psync","io_threads":1,"depth":1}]}]"#,
        )
        .unwrap();
        let e = sizes_understood(&job, &old).unwrap_err();
        assert!(
            e.contains("run 'big'") && e.contains("--push-binary"),
            "{e}"
        );
        // Without per-run sizes nothing changes on the wire or in the check.
        job.runs[0].size = None;
        assert!(sizes_understood(&job, &old).is_ok());
        assert!(!encode(&planned(None)[0]).contains("size"));
    }
}
