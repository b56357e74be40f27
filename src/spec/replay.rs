//! A replayed trace (`run --replay FILE`): which file, in which format, how
//! its timing is kept and how its offsets meet the target, and what a scan
//! of the whole file found (counted before any I/O, so the run is sized
//! and checked from it).

use serde::{Deserialize, Serialize};

/// The trace formats volbench reads, told apart by the file's first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum TraceFormat {
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
    pub(crate) fn name(self) -> &'static str {
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
pub(crate) struct TraceSummary {
    pub(crate) requests: u64,
    pub(crate) reads: u64,
    pub(crate) writes: u64,
    pub(crate) flushes: u64,
    pub(crate) discards: u64,
    pub(crate) read_bytes: u64,
    pub(crate) write_bytes: u64,
    pub(crate) discard_bytes: u64,
    /// The end of the furthest request (offset + bytes): the span the
    /// target must hold.
    pub(crate) span_bytes: u64,
    /// The largest read or write: the size of each in-flight buffer.
    pub(crate) max_bytes: u64,
    /// The last request's issue time, ns from the trace's start.
    pub(crate) last_ns: u64,
    /// Every offset and length of a read or write is a multiple of this
    /// (up to 4096): direct I/O needs the target's sector.
    pub(crate) align: u64,
    /// The most reads and writes issued within any 1 ms of the trace's
    /// time (at most `bounds::MAX_REPLAY_AUTO_DEPTH`): the depth a timed
    /// replay needs so that none waits for another at a 1 ms service time.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub(crate) peak_1ms: u64,
    /// The most reads and writes the trace recorded in flight at once
    /// (from its completion times, when it has them; at most
    /// `MAX_REPLAY_AUTO_DEPTH`): the depth it was recorded at.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub(crate) recorded_in_flight: u64,
    /// blktrace: which event marks an issue (`Q` queued, else `D` issued).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) blk_event: Option<char>,
}

impl TraceSummary {
    /// The depth a replay takes when none is given: the most requests the
    /// trace recorded in flight, when it has completion times (the depth it
    /// was recorded at); else, for a timed replay, what its timing needs for
    /// no request to wait for another: the most requests it issues within
    /// 1 ms (Little's law at a 1 ms service time, an upper end for the
    /// volumes the papers measure), scaled by the pace (at 2x, the requests of
    /// 2 ms of trace come due within one). 1..`MAX_REPLAY_AUTO_DEPTH`. More
    /// slots than requests in flight cost only their buffers; fewer make
    /// requests late (`replay.late`).
    pub(crate) fn depth_for(&self, speed: Option<f64>) -> u64 {
        use crate::units::bounds::MAX_REPLAY_AUTO_DEPTH;
        if self.recorded_in_flight > 0 {
            return self.recorded_in_flight.min(MAX_REPLAY_AUTO_DEPTH);
        }
        let pace = speed.unwrap_or(1.0).max(1.0);
        ((self.peak_1ms.max(1) as f64 * pace).ceil() as u64).clamp(1, MAX_REPLAY_AUTO_DEPTH)
    }
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// A replay as the run carries it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplaySpec {
    pub(crate) path: std::path::PathBuf,
    pub(crate) format: TraceFormat,
    /// Times divided by this (2 = twice as fast); None: as fast as the
    /// queue depth allows (`--replay-speed max`).
    pub(crate) speed: Option<f64>,
    /// Offsets beyond the target wrap around it instead of being refused.
    #[serde(default)]
    pub(crate) wrap: bool,
    pub(crate) summary: TraceSummary,
    /// Across hosts (`--hosts`): how the trace is dealt to them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) split: Option<ReplaySplit>,
    /// On one host of many: which part of the trace it replays; `summary`
    /// is then this part's, and the part itself arrives as `text`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) part: Option<HostPart>,
    /// The part's requests as volbench.trace/v1 text, held in memory: the
    /// coordinator's trace is not on the agent's host, so it is sent over
    /// the protocol (bounded by `bounds::MAX_REMOTE_TRACE_BYTES`) and never
    /// written there. Not serialized: it travels in chunks of its own.
    #[serde(skip)]
    pub(crate) text: Option<std::sync::Arc<[u8]>>,
    /// How each recorded request is changed before it is issued (fio's
    /// replay_scale, replay_align, replay_skip); as recorded by default.
    #[serde(default, skip_serializing_if = "ReplayMap::is_identity")]
    pub(crate) map: ReplayMap,
    /// The depth was chosen from the trace's timing (`peak_1ms`), not
    /// given (--iodepth, a suite's iodepth).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) depth_from_trace: bool,
}

/// fio's replay options on a trace's requests, applied as each request is
/// read, so the scan, the hosts' parts and the worker see the same ones.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ReplayMap {
    /// Offsets divided by this (fio's replay_scale); 0 and 1 keep them.
    #[serde(default)]
    pub(crate) scale: u64,
    /// Offsets rounded down to a multiple of this power of two (fio's
    /// replay_align); 0 keeps them.
    #[serde(default)]
    pub(crate) align: u64,
    /// Ops left out (fio's replay_skip), `SKIP_*` bits.
    #[serde(default)]
    pub(crate) skip: u8,
}

impl ReplayMap {
    pub(crate) const SKIP_READ: u8 = 1;
    pub(crate) const SKIP_WRITE: u8 = 2;
    pub(crate) const SKIP_FLUSH: u8 = 4;
    pub(crate) const SKIP_DISCARD: u8 = 8;

    pub(crate) fn is_identity(&self) -> bool {
        self.scale <= 1 && self.align == 0 && self.skip == 0
    }

    /// An offset as replayed.
    #[inline]
    pub(crate) fn offset(&self, recorded: u64) -> u64 {
        let o = if self.scale > 1 {
            recorded / self.scale
        } else {
            recorded
        };
        if self.align > 1 {
            o & !(self.align - 1)
        } else {
            o
        }
    }
}

/// How a trace is dealt to the hosts of a multi-host replay.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "rule")]
pub(crate) enum ReplaySplit {
    /// Each request to one host, chosen by its offset's 1 MiB stripe
    /// (stripe number modulo the hosts), so the merged run issues the
    /// trace once; a flush goes with the request before it.
    Share,
    /// The whole trace on every host, host i starting i x `offset_ns` later.
    Whole { offset_ns: u64 },
}

/// One host's part of a multi-host replay.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct HostPart {
    /// This host's index and the number of hosts.
    pub(crate) host: u32,
    pub(crate) hosts: u32,
    /// The length of `text`, so an agent knows it received all of it.
    pub(crate) bytes: u64,
    /// Its requests start this much later than recorded (`whole` with an
    /// offset), in wall time whatever the pace.
    pub(crate) delay_ns: u64,
}

impl ReplaySpec {
    /// The recorded time a request is due at, scaled: ns from the start.
    #[inline]
    pub(crate) fn due_ns(&self, trace_ns: u64) -> u64 {
        let delay = self.part.as_ref().map_or(0, |p| p.delay_ns);
        delay
            + match self.speed {
                Some(s) if s != 1.0 => (trace_ns as f64 / s) as u64,
                Some(_) => trace_ns,
                None => 0,
            }
    }
}
