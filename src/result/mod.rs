//! The results structure, schema `volbench.result/v1`. Every output
//! (terminal, CSV, JSON, later HTML and comparisons) is a view of it, and
//! it carries the merged histograms so it can be re-read and merged again.

pub mod check;
pub mod clean_json;
pub mod cluster;
pub mod conditions;
pub mod counters;
pub mod diagnosis;
pub mod environment;
pub mod expect;
pub mod fill;
pub mod merge;
pub mod meta;
pub mod mount;
pub mod ops;
pub mod profile;
pub mod protocol;
pub mod replay;
pub mod search;
pub mod sizes;
pub(crate) mod smb;
pub(crate) mod targets;
pub mod thin;
pub mod threads;

use serde::{Deserialize, Serialize};

use crate::spec::{Arrivals, EngineKind, JobSpec, RunSpec, TargetKind};
use crate::stats::{BucketedHistogram, OpStats};

pub use ops::Op;

/// At most this many intervals are kept per run; beyond it, neighbours are
/// merged pairwise, so memory stays flat however long a run lasts.
pub(crate) const MAX_INTERVALS: usize = 4096;
/// At most this many latency buckets over all of a run's intervals
/// (`IntervalOp::lat_hist`, about 2 MiB of JSON); beyond it intervals are
/// merged pairwise as above, so a long run with a wide latency spread
/// still fits the remote protocol's line and stays readable.
pub(crate) const MAX_INTERVAL_BUCKETS: usize = 131_072;

pub(crate) const SCHEMA: &str = "volbench.result/v1";

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ResultDoc {
    pub schema: String,
    pub tool: Tool,
    pub host: HostInfo,
    /// When the invocation started (RFC 3339, UTC).
    pub started: String,
    pub spec: JobSpec,
    pub target: Option<TargetInfo>,
    pub runs: Vec<RunResult>,
    /// Stopped by Ctrl-C or SIGTERM before the plan finished.
    pub(crate) interrupted: bool,
    /// Why the invocation failed, when it did.
    pub(crate) error: Option<String>,
    /// The exit code `error` ends the command with, where the error's kind
    /// said it (a set refused as another user's when the workers opened it:
    /// 3, as at the fill). Not written: the file's `error` is the words, and
    /// a result read back without it takes the code from them.
    #[serde(skip)]
    pub(crate) error_code: Option<i32>,
    /// Things the user should know about how the numbers were produced.
    pub notes: Vec<String>,
    /// A multi-host run: each host's own figures, start skew and clock
    /// offsets. `runs` then holds the exact merge over every host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<crate::result::merge::Cluster>,
    /// What the storage should deliver (`--expect`), when the user said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect: Option<expect::Expectation>,
    /// Findings read from the figures (`diagnosis::diagnose`), surest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub diagnosis: Vec<diagnosis::Finding>,
    /// The fill of each file set volbench prepared (absent in results
    /// written before it was recorded, and when no set was prepared).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fill: Vec<fill::FillResult>,
    /// Each `--latency-target` search: its steps (runs in `runs`) and the
    /// rate found.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) latency_search: Vec<search::LatencySearchResult>,
    /// `run --expect-from PROFILE`: the headroom statement of `compare
    /// PROFILE RESULT` (schema volbench.headroom/v1), kept as it was
    /// written since its shape belongs to the comparison.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) headroom: Option<serde_json::Value>,
}

impl ResultDoc {
    /// The invocation failed with `e` (the first failure is the one kept):
    /// its words, and the exit code of its kind. A run's failure takes the
    /// code from the words (`error::failed_run_code`: a full disk is the
    /// target's), as one read back would.
    pub(crate) fn fail(&mut self, e: &crate::error::VbError) {
        if self.error.is_some() {
            return;
        }
        let message = e.to_string();
        self.error_code = Some(match e.kind {
            crate::error::Kind::Run | crate::error::Kind::Lost => {
                crate::error::failed_run_code(&message)
            }
            _ => e.exit_code(),
        });
        self.error = Some(message);
    }

    /// A result about to be filled in: this tool, no runs, no findings yet.
    pub(crate) fn begin(host: HostInfo, started: String, spec: JobSpec) -> Self {
        ResultDoc {
            schema: SCHEMA.into(),
            tool: Tool::this(),
            host,
            started,
            spec,
            target: None,
            runs: Vec::new(),
            interrupted: false,
            error: None,
            error_code: None,
            notes: Vec::new(),
            cluster: None,
            expect: None,
            diagnosis: Vec::new(),
            fill: Vec::new(),
            latency_search: Vec::new(),
            headroom: None,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Tool {
    pub(crate) name: String,
    pub(crate) version: String,
}

impl Tool {
    pub(crate) fn this() -> Self {
        Self {
            name: "volbench".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HostInfo {
    pub hostname: String,
    pub kernel: String,
    pub(crate) cpus: u32,
    pub(crate) memory_bytes: u64,
    /// "AMD EPYC 7763 64-Core Processor" from /proc/cpuinfo; empty when
    /// unknown (and in results written before it was recorded).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub(crate) cpu_model: String,
    /// The machine as its firmware names it (DMI vendor and product; on
    /// AWS Nitro the instance type), empty when unknown.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub(crate) machine: String,
    /// The operating system as it names itself ("Ubuntu 22.04.3 LTS", from
    /// os-release; "Windows 10.0.20348"), as the papers title their
    /// tables; empty when unknown.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub(crate) os: String,
    /// The size the user named (`--vm-size`, a hosts file's `vm_size=`),
    /// else the one the platform names (`platform.vm_size`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) vm_size: Option<String>,
    /// Socket buffer sysctls (empty in results written before they were
    /// recorded).
    #[serde(default, skip_serializing_if = "environment::NetBuffers::is_empty")]
    pub net: environment::NetBuffers,
    /// The cloud, VM size and region as the machine's platform says them.
    #[serde(default, skip_serializing_if = "environment::Platform::is_empty")]
    pub platform: environment::Platform,
}

/// What a target that is the host's memory can be (`TargetInfo::memory`).
pub(crate) const MEMORY_KINDS: [&str; 4] = ["tmpfs", "ramfs", "zram", "brd"];

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TargetInfo {
    pub(crate) kind: TargetKind,
    pub(crate) path: String,
    pub(crate) files: u32,
    pub(crate) file_size: u64,
    /// Offset/size alignment used for direct I/O (1 when buffered).
    pub(crate) align: u64,
    /// The file system the target lives on and its mount options (absent
    /// for block devices, and in results written before it was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mount: Option<mount::MountInfo>,
    /// The host's memory the target is (`tmpfs`, `ramfs`, `zram`, `brd`):
    /// its figures are RAM's, not storage's. Absent for storage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<String>,
    /// Block and sector sizes under the target (empty when unknown, and in
    /// results written before they were recorded).
    #[serde(default, skip_serializing_if = "environment::BlockSizes::is_empty")]
    pub blocks: environment::BlockSizes,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunResult {
    pub name: String,
    /// The run's workload, fully resolved.
    pub workload: RunSpec,
    /// The engine actually used; a run merged over hosts that used different
    /// engines names each ("psync+io_uring" in the JSON).
    #[serde(with = "engine_list")]
    pub engine: Vec<EngineKind>,
    /// Threads doing I/O, and I/Os in flight per thread. Synchronous engines
    /// run threads x iodepth threads of depth 1 to keep the concurrency asked for.
    pub io_threads: u32,
    pub(crate) depth_per_thread: u32,
    pub phases: Vec<Phase>,
    pub totals: Totals,
    /// The warm-up, measured and reported apart; not part of `totals`.
    pub(crate) warmup: Option<OpPair>,
    pub intervals: Vec<Interval>,
    pub histograms: Histograms,
    pub littles_law: LittlesLaw,
    /// Rate-limited runs: the target and what was achieved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<RateResult>,
    /// Runs with --steady: whether IOPS settled before the warm-up cap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) steady: Option<SteadyResult>,
    pub(crate) interrupted: bool,
    /// Metadata runs: one entry per operation, in the order of `spec::meta::ALL_OPS`.
    #[serde(default, rename = "ops", skip_serializing_if = "Vec::is_empty")]
    pub meta_ops: Vec<meta::MetaOpResult>,
    /// What the host's CPUs, devices, interfaces and mounts did meanwhile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counters: Option<counters::RunCounters>,
    /// Reads that returned what was not written (--verify); absent when
    /// nothing was checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) data_errors: Option<u64>,
    /// A run over several targets (a local list, or hosts' targets): each
    /// one's own figures; the totals above are their exact merge.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub targets: Vec<targets::TargetRun>,
    /// Times volbench itself stood still during the run (the process
    /// stopped, the machine paused): I/Os in flight then count the stall
    /// in their latency, so the result says when and how long.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) stalls: Vec<Stall>,
    /// A replayed trace (`--replay`): the trace, its pace, and how late it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) replay: Option<replay::ReplayResult>,
    /// The run's figures come from its interval record alone (a stop whose
    /// I/O threads were still blocked, hosts lost before their results
    /// came): operations and bytes exact, latency percentiles from the
    /// per-interval histograms, no min, max or spread, and no merged
    /// histogram (`histograms` is empty).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) from_intervals: bool,
    /// A host's run in a result held to its readers' bound
    /// (`thin::fit`): its histograms were left out (`histograms` is
    /// empty); its totals and percentiles stay.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub histograms_left_out: bool,
    /// Each I/O thread's own figures (`threads::ThreadRun`); empty for a
    /// metadata run, a run from its interval record, and results written
    /// before they were kept. Their ops and bytes add up to `totals`
    /// unless `threads_left_out` says some were not kept.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub threads: Vec<threads::ThreadRun>,
    /// Threads past `threads::MAX_KEPT_THREADS`, or dropped to keep
    /// result.json within its readers' bound (`thin::fit`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub threads_left_out: u32,
    /// A run through volbench's own protocol client (an `nfs://` target):
    /// what the client saw per operation type in the measured phase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) protocol: Option<protocol::ProtocolStats>,
    /// Targets of a local list this run went on without (`--on-host-loss
    /// continue`: their server was lost, in this run or one before): its
    /// totals are the others' only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) left_out: Vec<targets::LeftOut>,
}

/// One stall of the whole process, seen by the collector as a wall-clock
/// gap far beyond its poll.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Stall {
    /// When it began, seconds since the run started.
    pub(crate) at_s: f64,
    pub(crate) secs: f64,
}

impl Stall {
    /// The one line the terminal and the tables show for it.
    pub(crate) fn line(&self, run: &str) -> String {
        format!(
            "{run}: volbench itself stood still for {:.1} s at {:.1} s (the process was \
             stopped, or the machine paused); I/Os in flight then count it in their latency",
            self.secs, self.at_s
        )
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RateResult {
    pub target_iops: f64,
    pub achieved_iops: f64,
    /// Achieved within 1% of the target.
    pub reached: bool,
    pub arrivals: Arrivals,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct SteadyResult {
    pub(crate) reached: bool,
    /// Seconds of warm-up before measuring began.
    pub(crate) after_s: f64,
}

/// The parts of a run: the warm-up (reported apart) and the measured phase.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PhaseName {
    Warmup,
    #[default]
    Measure,
}

impl PhaseName {
    pub fn name(self) -> &'static str {
        match self {
            Self::Warmup => "warmup",
            Self::Measure => "measure",
        }
    }
}

impl std::fmt::Display for PhaseName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Phase {
    pub name: PhaseName,
    /// RFC 3339 UTC.
    pub(crate) start: String,
    pub duration_s: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Totals {
    pub read: OpTotals,
    pub write: OpTotals,
    pub cpu: Cpu,
    /// Flushes and discards a replayed trace issued (absent otherwise):
    /// counted and timed apart, not in the read and write figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) flush: Option<OpTotals>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) discard: Option<OpTotals>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct OpPair {
    pub(crate) read: OpTotals,
    pub(crate) write: OpTotals,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct OpTotals {
    pub ops: u64,
    pub(crate) bytes: u64,
    pub iops: f64,
    pub mib_s: f64,
    /// Latency; for rate-limited runs measured from each I/O's intended start.
    pub lat_us: LatSummary,
    /// Rate-limited runs only: time from actual submission to completion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_lat_us: Option<LatSummary>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct LatSummary {
    pub mean: f64,
    pub min: f64,
    pub max: f64,
    pub(crate) stddev: f64,
    pub(crate) p50: f64,
    pub(crate) p90: f64,
    pub p99: f64,
    pub(crate) p99_9: f64,
    pub(crate) p99_99: f64,
}

/// CPU time of the whole volbench process over the measured phase, in
/// percent of one core (200 = two cores busy).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Cpu {
    pub user_pct: f64,
    pub sys_pct: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Interval {
    /// End of the interval, seconds since the run started.
    pub(crate) t_s: f64,
    pub duration_s: f64,
    pub(crate) phase: PhaseName,
    pub read: IntervalOp,
    pub write: IntervalOp,
    /// Metadata runs: each operation's rate over the interval.
    #[serde(default, rename = "ops", skip_serializing_if = "Vec::is_empty")]
    pub(crate) meta_ops: Vec<meta::IntervalMetaOp>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct IntervalOp {
    pub iops: f64,
    pub(crate) mib_s: f64,
    pub(crate) lat_us_mean: f64,
    /// Mean service time (submission to completion) of rate-limited runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) service_us_mean: Option<f64>,
    /// This interval's latency distribution, `[lower_ns, count]` per
    /// non-empty bucket (`stats::live_hist`), for its own p50/p99; empty
    /// in results written before it was recorded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lat_hist: Vec<[u64; 2]>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Histograms {
    pub read: BucketedHistogram,
    pub write: BucketedHistogram,
}

/// Little's law on the measured phase: I/Os in flight = IOPS x mean latency.
/// On a saturated closed-loop run `iops_x_latency` is close to `concurrency`;
/// a large gap points at time spent outside the I/O (CPU, scheduling).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LittlesLaw {
    pub concurrency: u32,
    pub iops_x_latency: f64,
}

const MIB: f64 = 1024.0 * 1024.0;

fn is_zero(v: &u32) -> bool {
    *v == 0
}

impl OpTotals {
    pub fn from_stats(s: &OpStats, seconds: f64) -> Self {
        let secs = if seconds > 0.0 {
            seconds
        } else {
            f64::INFINITY
        };
        Self {
            ops: s.ops,
            bytes: s.bytes,
            iops: s.ops as f64 / secs,
            mib_s: s.bytes as f64 / MIB / secs,
            lat_us: LatSummary::from_stats(s),
            service_lat_us: None,
        }
    }
}

impl LatSummary {
    pub fn from_stats(s: &OpStats) -> Self {
        if s.ops == 0 {
            return Self::default();
        }
        let us = |ns: f64| ns / 1000.0;
        Self {
            mean: us(s.mean_ns()),
            min: us(s.lat_min_ns as f64),
            max: us(s.lat_max_ns as f64),
            stddev: us(s.stddev_ns()),
            p50: us(s.percentile_ns(50.0)),
            p90: us(s.percentile_ns(90.0)),
            p99: us(s.percentile_ns(99.0)),
            p99_9: us(s.percentile_ns(99.9)),
            p99_99: us(s.percentile_ns(99.99)),
        }
    }
}

impl IntervalOp {
    pub(crate) fn from_delta(
        ops: u64,
        bytes: u64,
        lat_ns: u64,
        svc_ns: Option<u64>,
        seconds: f64,
    ) -> Self {
        if seconds <= 0.0 {
            return Self::default();
        }
        let mean = |ns: u64| {
            if ops == 0 {
                0.0
            } else {
                ns as f64 / ops as f64 / 1000.0
            }
        };
        Self {
            iops: ops as f64 / seconds,
            mib_s: bytes as f64 / MIB / seconds,
            lat_us_mean: mean(lat_ns),
            service_us_mean: svc_ns.map(mean),
            lat_hist: Vec::new(),
        }
    }

    /// The interval's p-th latency percentile in µs, from its own
    /// histogram; None when it has none.
    pub(crate) fn lat_percentile_us(&self, p: f64) -> Option<f64> {
        crate::stats::live_hist::sparse_percentile(&self.lat_hist, p).map(|ns| ns / 1000.0)
    }
}

impl RunResult {
    pub fn total_iops(&self) -> f64 {
        self.totals.read.iops + self.totals.write.iops
    }

    pub fn total_mib_s(&self) -> f64 {
        self.totals.read.mib_s + self.totals.write.mib_s
    }

    /// Mean latency over reads and writes together, weighted by their counts.
    pub fn mean_latency_us(&self) -> f64 {
        let (r, w) = (&self.totals.read, &self.totals.write);
        let ops = (r.ops + w.ops) as f64;
        if ops == 0.0 {
            return 0.0;
        }
        (r.lat_us.mean * r.ops as f64 + w.lat_us.mean * w.ops as f64) / ops
    }
}

pub(crate) fn now_rfc3339() -> String {
    humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string()
}

/// Engines as a person reads them, and as the JSON spells them: "psync+io_uring".
pub(crate) fn engine_names(engines: &[EngineKind]) -> String {
    let names: Vec<&str> = engines.iter().map(|e| e.name()).collect();
    names.join("+")
}

/// `RunResult::engine` as the JSON has always spelled it: names joined by `+`.
mod engine_list {
    use serde::{Deserialize, Deserializer, Serializer, de::Error};

    use crate::spec::EngineKind;

    pub(super) fn serialize<S: Serializer>(v: &[EngineKind], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&super::engine_names(v))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Vec<EngineKind>, D::Error> {
        let text = String::deserialize(d)?;
        text.split('+')
            .map(|name| EngineKind::from_name(name).map_err(D::Error::custom))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The typed fields keep the v1 spellings readers already parse.
    #[test]
    fn typed_fields_keep_the_v1_json_strings() {
        let json = |v: &dyn erased::Ser| v.json();
        assert_eq!(json(&TargetKind::BlockDevice), "\"block_device\"");
        assert_eq!(json(&TargetKind::Directory), "\"directory\"");
        assert_eq!(json(&EngineKind::IoUring), "\"io_uring\"");
        assert_eq!(json(&PhaseName::Warmup), "\"warmup\"");
        assert_eq!(json(&PhaseName::Measure), "\"measure\"");
        assert_eq!(json(&Arrivals::Poisson), "\"poisson\"");

        #[derive(Serialize, Deserialize)]
        struct E {
            #[serde(with = "engine_list")]
            engine: Vec<EngineKind>,
        }
        let merged: E = serde_json::from_str(r#"{"engine":"psync+io_uring"}"#).unwrap();
        assert_eq!(merged.engine, vec![EngineKind::Psync, EngineKind::IoUring]);
        assert_eq!(
            serde_json::to_string(&merged).unwrap(),
            r#"{"engine":"psync+io_uring"}"#
        );
        assert!(serde_json::from_str::<E>(r#"{"engine":"rm -rf"}"#).is_err());
        assert!(serde_json::from_str::<PhaseName>("\"cooldown\"").is_err());
    }

    mod erased {
        pub(super) trait Ser {
            fn json(&self) -> String;
        }
        impl<T: serde::Serialize> Ser for T {
            fn json(&self) -> String {
                serde_json::to_string(self).unwrap_or_default()
            }
        }
    }
}
