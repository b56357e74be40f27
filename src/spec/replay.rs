//! A replayed trace (`run --replay FILE`): which file, in which format, how
//! its timing is kept and how its offsets meet the target, and what a scan
//! of the whole file found (counted before any I/O, so the run is sized
//! and checked from it).

use serde::{Deserialize, Serialize};

/// The trace formats volbench reads, told apart by the file's first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TraceFormat {
    /// `# volbench.trace/v1`: CSV rows of issue time, op, offset, bytes.
    Volbench,
    /// fio's `write_iolog` without timestamps (`fio version 2 iolog`).
    FioV2,
    /// fio's `write_iolog` with a microsecond timestamp per line.
    FioV3,
    /// blktrace's binary events (struct blk_io_trace, version 7).
    Blktrace,
}

impl TraceFormat {
    pub fn name(self) -> &'static str {
        match self {
            Self::Volbench => "volbench.trace/v1",
            Self::FioV2 => "fio iolog v2",
            Self::FioV3 => "fio iolog v3",
            Self::Blktrace => "blktrace",
        }
    }
}

/// What a scan of the whole trace counted (every request, before any I/O).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TraceSummary {
    pub requests: u64,
    pub reads: u64,
    pub writes: u64,
    pub flushes: u64,
    pub discards: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub discard_bytes: u64,
    /// The end of the furthest request (offset + bytes): the span the
    /// target must hold.
    pub span_bytes: u64,
    /// The largest read or write: the size of each in-flight buffer.
    pub max_bytes: u64,
    /// The last request's issue time, ns from the trace's start.
    pub last_ns: u64,
    /// Every offset and length of a read or write is a multiple of this
    /// (up to 4096): direct I/O needs the target's sector.
    pub align: u64,
    /// blktrace: which event marks an issue (`Q` queued, else `D` issued).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blk_event: Option<char>,
}

/// A replay as the run carries it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplaySpec {
    pub path: std::path::PathBuf,
    pub format: TraceFormat,
    /// Times divided by this (2 = twice as fast); None: as fast as the
    /// queue depth allows (`--replay-speed max`).
    pub speed: Option<f64>,
    /// Offsets beyond the target wrap around it instead of being refused.
    #[serde(default)]
    pub wrap: bool,
    pub summary: TraceSummary,
}

impl ReplaySpec {
    /// The recorded time a request is due at, scaled: ns from the start.
    #[inline]
    pub fn due_ns(&self, trace_ns: u64) -> u64 {
        match self.speed {
            Some(s) if s != 1.0 => (trace_ns as f64 / s) as u64,
            Some(_) => trace_ns,
            None => 0,
        }
    }
}
