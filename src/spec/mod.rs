//! The one validated description of what to run. Every front end (flags,
//! built-in runs, later suites and imported job files) produces a `JobSpec`;
//! nothing downstream knows where it came from.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

pub(crate) mod data;
pub(crate) mod engine;
pub mod fill;
pub(crate) mod latency;
pub(crate) mod layout;
pub(crate) mod live;
pub(crate) mod meta;
pub(crate) mod output;
pub mod reading;
pub(crate) mod replay;
pub mod shape;
pub(crate) mod streams;
pub mod targets;
mod validate;

pub use engine::{ENGINES, EngineChoice, EngineKind, EngineRow, Storage};

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::error::{Result, VbError};
use crate::units::format_size;

/// Access pattern, with fio's names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Pattern {
    Read,
    Write,
    Randread,
    Randwrite,
    Rw,
    Randrw,
}

impl Pattern {
    pub(crate) fn parse(text: &str) -> Result<Self> {
        Ok(match text.trim().to_ascii_lowercase().as_str() {
            "read" => Self::Read,
            "write" => Self::Write,
            "randread" => Self::Randread,
            "randwrite" => Self::Randwrite,
            "rw" | "readwrite" => Self::Rw,
            "randrw" => Self::Randrw,
            _ => {
                return Err(VbError::input(format!(
                    "--rw '{text}' is not one of read, write, randread, randwrite, rw, randrw"
                )));
            }
        })
    }

    pub(crate) fn is_random(self) -> bool {
        matches!(self, Self::Randread | Self::Randwrite | Self::Randrw)
    }

    pub(crate) fn is_mixed(self) -> bool {
        matches!(self, Self::Rw | Self::Randrw)
    }

    /// The read share a pure pattern implies, or None for the mixed ones.
    pub(crate) fn fixed_read_pct(self) -> Option<u8> {
        match self {
            Self::Read | Self::Randread => Some(100),
            Self::Write | Self::Randwrite => Some(0),
            Self::Rw | Self::Randrw => None,
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Read => "read",
            Self::Write => "write",
            Self::Randread => "randread",
            Self::Randwrite => "randwrite",
            Self::Rw => "rw",
            Self::Randrw => "randrw",
        }
    }
}

/// One entry of a block-size mix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockSize {
    pub bytes: u64,
    pub weight: u32,
}

/// Where the I/O goes and how the data set is laid out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TargetSpec {
    pub path: PathBuf,
    /// Working set on this host, in bytes.
    pub size: u64,
    /// Number of files the working set is split into (directory targets).
    pub files: u32,
    /// O_DIRECT: bypass the client's page cache.
    pub direct: bool,
    /// The user allowed writes to a block device or a file volbench did not create.
    pub allow_overwrite: bool,
    /// How durable each write must be before it completes (O_DSYNC/O_SYNC).
    #[serde(default, skip_serializing_if = "WriteSync::is_none")]
    pub write_sync: WriteSync,
    /// The data written and how it is checked (--compress, --verify...).
    #[serde(default, skip_serializing_if = "data::DataSpec::is_default")]
    pub data: data::DataSpec,
    /// How a file set volbench creates is filled before the first run.
    #[serde(default, skip_serializing_if = "fill::FillSpec::is_default")]
    pub fill: fill::FillSpec,
    /// The most files of the set each I/O thread keeps open at a time,
    /// opening the others as its I/Os reach them (`--open-files`, fio's
    /// openfiles); None: all of them, as the open-file limit allows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_files: Option<u32>,
}

/// What every write waits for: nothing beyond the device's acceptance (the
/// default), its data on stable storage (O_DSYNC: diskspd -Sw and the write
/// half of -Sh, fio sync=dsync, vdbench openflags=o_dsync), or its data and
/// metadata (O_SYNC: fio sync=1, vdbench o_sync). Write-through storage
/// reports what these cost; read-only runs are unaffected.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WriteSync {
    #[default]
    None,
    Dsync,
    Sync,
}

impl WriteSync {
    pub(crate) fn parse(text: &str) -> Result<Self> {
        match text.trim().to_ascii_lowercase().as_str() {
            "none" => Ok(Self::None),
            "dsync" | "o_dsync" => Ok(Self::Dsync),
            "sync" | "o_sync" => Ok(Self::Sync),
            _ => Err(VbError::input(format!(
                "--write-sync '{text}' is not none, dsync or sync"
            ))),
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Dsync => "dsync",
            Self::Sync => "sync",
        }
    }

    pub(crate) fn is_none(&self) -> bool {
        *self == Self::None
    }
}

/// One measured run: the workload and its timing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSpec {
    pub name: String,
    pub rw: Pattern,
    /// Share of operations that are reads, 0..=100.
    pub read_pct: u8,
    /// The block sizes of every I/O, or of reads alone when `write_bs`
    /// holds the writes' own.
    pub bs: Vec<BlockSize>,
    /// Writes' own block sizes (fio bs=R,W, `--write-bs`, a profile whose
    /// reads and writes differ); empty: writes draw from `bs` too.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub write_bs: Vec<BlockSize>,
    pub threads: u32,
    /// Outstanding I/Os per thread.
    pub iodepth: u32,
    pub warmup_s: f64,
    pub duration_s: f64,
    /// Stop after this many bytes (warm-up included), or at `duration_s`,
    /// whichever comes first; rounded up to whole I/Os with a block-size mix.
    #[serde(default)]
    pub io_limit: Option<u64>,
    /// Files of the set this run uses, when it differs from the target's
    /// (suites comparing one file with many); each count gets its own set.
    #[serde(default)]
    pub files: Option<u32>,
    /// The working set this run uses, when it differs from the target's
    /// (`spec::layout`); each distinct size gets its own set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Open-loop target rate, IOPS across all threads; None = as fast as it goes.
    #[serde(default)]
    pub rate_iops: Option<f64>,
    /// The rate as a percentage of an earlier run's measured IOPS (curves);
    /// resolved into `rate_iops` when that run has finished.
    #[serde(default)]
    pub rate_pct: Option<RatePct>,
    #[serde(default)]
    pub arrivals: Arrivals,
    /// End the warm-up as soon as IOPS are steady; `warmup_s` is then the cap.
    #[serde(default)]
    pub steady: bool,
    /// A warm-up run: executed and recorded, left out of tables (the papers'
    /// "discard the first test").
    #[serde(default)]
    pub discard: bool,
    /// Skip this run when the rule holds for the earlier runs of its group
    /// (a sweep that stops at the knee, a curve that stops at a latency limit).
    #[serde(default)]
    pub stop_rule: Option<StopRule>,
    /// Search the highest open-loop rate that keeps these latency limits
    /// (`--latency-target`): this run becomes the search's runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_target: Option<latency::LatencySearch>,
    /// A metadata / small-file run: a tree and operations on it instead of
    /// block I/O on a file set (`rw`, `bs` and `iodepth` then do not apply).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<meta::MetaSpec>,
    /// Skew, partial seeks, syncs, think time, cool-down, bandwidth cap.
    #[serde(default, skip_serializing_if = "shape::Shape::is_plain")]
    pub shape: shape::Shape,
    /// Through the page cache although the job's file set is direct (a
    /// suite run with `direct = false`, say a copy-like pass beside a
    /// direct benchmark).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub buffered: bool,
    /// A host-count sweep's point: the run goes to the first N hosts of the
    /// host list, the others idle (`--host-counts`); None = every host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_count: Option<u32>,
    /// A replayed trace (`--replay`): its requests instead of `rw` and `bs`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<replay::ReplaySpec>,
}

/// What every front end (the `run` flags, suite files) uses for a value the
/// user left out, defined once; `--help` and docs/ quote these.
pub(crate) mod defaults {
    use super::{Arrivals, EngineChoice, Pattern};

    /// Working set of a directory target (a file or device is used whole).
    pub(crate) const DIR_SIZE: u64 = 1 << 30;
    pub(crate) const FILES: u32 = 1;
    pub(crate) const PATTERN: Pattern = Pattern::Randread;
    /// Read share of the mixed patterns (rw, randrw).
    pub(crate) const MIXED_READ_PCT: u8 = 50;
    pub(crate) const BLOCK_SIZE: u64 = 4096;
    pub(crate) const THREADS: u32 = 1;
    pub(crate) const IODEPTH: u32 = 1;
    pub(crate) const DURATION_S: f64 = 60.0;
    pub(crate) const WARMUP_S: f64 = 5.0;
    pub(crate) const INTERVAL_S: f64 = 1.0;
    pub(crate) const SEED: u64 = 1;
    pub(crate) const ENGINE: EngineChoice = EngineChoice::Auto;
    pub(crate) const ARRIVALS: Arrivals = Arrivals::Uniform;
    /// Direct I/O unless the user asks for the page cache.
    pub(crate) const DIRECT: bool = true;
}

impl Default for RunSpec {
    fn default() -> Self {
        Self {
            name: String::new(),
            rw: defaults::PATTERN,
            read_pct: defaults::PATTERN
                .fixed_read_pct()
                .unwrap_or(defaults::MIXED_READ_PCT),
            bs: vec![BlockSize {
                bytes: defaults::BLOCK_SIZE,
                weight: 1,
            }],
            write_bs: Vec::new(),
            threads: defaults::THREADS,
            iodepth: defaults::IODEPTH,
            warmup_s: defaults::WARMUP_S,
            duration_s: defaults::DURATION_S,
            io_limit: None,
            files: None,
            size: None,
            rate_iops: None,
            rate_pct: None,
            arrivals: defaults::ARRIVALS,
            steady: false,
            discard: false,
            stop_rule: None,
            latency_target: None,
            meta: None,
            shape: shape::Shape::default(),
            buffered: false,
            host_count: None,
            replay: None,
        }
    }
}

/// What a target is; in results as "directory", "file" or "block_device".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum TargetKind {
    /// A directory (existing or to be created) holding volbench's file set.
    Directory,
    /// An existing regular file volbench did not create.
    File,
    BlockDevice,
}

impl TargetKind {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Directory => "directory",
            Self::File => "file",
            Self::BlockDevice => "block_device",
        }
    }
}

impl std::fmt::Display for TargetKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// How rate-limited I/Os are spaced in time.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Arrivals {
    /// Evenly spaced.
    #[default]
    Uniform,
    /// Exponentially distributed gaps, like independent clients.
    Poisson,
}

impl Arrivals {
    pub(crate) fn parse(text: &str) -> Result<Self> {
        match text.trim().to_ascii_lowercase().as_str() {
            "uniform" => Ok(Self::Uniform),
            "poisson" => Ok(Self::Poisson),
            _ => Err(VbError::input(format!(
                "--arrivals '{text}' is not uniform or poisson"
            ))),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RatePct {
    pub(crate) percent: f64,
    /// Name of the run whose measured IOPS is 100%.
    pub(crate) of: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StopRule {
    /// Runs sharing a group are judged together, in order.
    pub(crate) group: String,
    /// Skip once the last run gained less than this over the one before (percent of IOPS).
    #[serde(default)]
    pub(crate) gain_below_pct: Option<f64>,
    /// Skip once the last run's mean latency passed this (microseconds).
    #[serde(default)]
    pub(crate) latency_above_us: Option<f64>,
    /// Skip once the last run broke any of these percentile limits
    /// (`curve_stop_latency = "p99=2ms"`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) percentile_above: Vec<latency::LatencyLimit>,
}

impl RunSpec {
    /// Every block size the run uses, reads' and writes'.
    pub(crate) fn all_bs(&self) -> impl Iterator<Item = u64> + '_ {
        self.bs.iter().chain(&self.write_bs).map(|b| b.bytes)
    }

    pub(crate) fn min_bs(&self) -> u64 {
        self.all_bs().min().unwrap_or(4096)
    }

    pub fn max_bs(&self) -> u64 {
        self.all_bs().max().unwrap_or(4096)
    }

    /// The one block size of every I/O, when there is one (tables and
    /// charts that put the size on an axis need it).
    pub fn single_bs(&self) -> Option<u64> {
        match (self.bs.as_slice(), self.write_bs.is_empty()) {
            ([only], true) => Some(only.bytes),
            _ => None,
        }
    }

    /// The writes' block sizes: their own, or the reads'.
    pub(crate) fn write_sizes(&self) -> &[BlockSize] {
        if self.write_bs.is_empty() {
            &self.bs
        } else {
            &self.write_bs
        }
    }

    /// The mean bytes of one I/O over the read/write mix, each direction's
    /// sizes weighted as drawn.
    pub(crate) fn mean_bs(&self) -> f64 {
        let reads = f64::from(self.read_pct.min(100)) / 100.0;
        reads * self.mean_size(false) + (1.0 - reads) * self.mean_size(true)
    }

    /// The mean request size of one direction, its mix weighted.
    pub(crate) fn mean_size(&self, write: bool) -> f64 {
        let list = if write { self.write_sizes() } else { &self.bs };
        let w: f64 = list.iter().map(|b| b.weight as f64).sum();
        list.iter()
            .map(|b| b.bytes as f64 * b.weight as f64)
            .sum::<f64>()
            / w.max(1.0)
    }

    /// `8KiB`, a mix `4KiB:30,64KiB:70`, or per direction `r8KiB/w128KiB`.
    pub(crate) fn bs_label(&self) -> String {
        fn mix(list: &[BlockSize]) -> String {
            if let [only] = list {
                return format_size(only.bytes);
            }
            list.iter()
                .map(|b| format!("{}:{}", format_size(b.bytes), b.weight))
                .collect::<Vec<_>>()
                .join(",")
        }
        if self.write_bs.is_empty() {
            mix(&self.bs)
        } else {
            format!("r{}/w{}", mix(&self.bs), mix(&self.write_bs))
        }
    }

    pub(crate) fn has_writes(&self) -> bool {
        self.read_pct < 100
    }

    /// A default name that says what the run does: `randrw-70r-8KiB-8t-qd16`.
    pub fn auto_name(&self) -> String {
        if let Some(m) = &self.meta {
            // A mix's operations are in its rows; its name stays short.
            let what = if m.whole_tree {
                m.ops_label()
            } else {
                "mix".into()
            };
            return format!("{what}-{}-{}t", m.size_label(), self.threads);
        }
        let mix = if self.rw.is_mixed() {
            format!("-{}r", self.read_pct)
        } else {
            String::new()
        };
        let mut name = format!(
            "{}{}-{}-{}t-qd{}",
            self.rw.name(),
            mix,
            self.bs_label(),
            self.threads,
            self.iodepth
        );
        if let Some(f) = self.files {
            name.push_str(&format!("-{f}f"));
        }
        if let Some(r) = self.rate_iops {
            name.push_str(&format!("-{}iops", (r * 100.0).round() / 100.0));
        }
        name.push_str(&self.shape.name_suffix());
        name
    }
}

/// Everything one invocation will do, fully resolved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobSpec {
    pub target: TargetSpec,
    pub engine: EngineChoice,
    pub interval_s: f64,
    pub seed: u64,
    pub runs: Vec<RunSpec>,
    /// The suite these runs came from, if any, and how to tabulate them.
    #[serde(default)]
    pub suite: Option<SuiteMeta>,
    /// Several targets run together (`target.path` is the first of them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub targets: Option<targets::TargetList>,
    #[serde(default, flatten)]
    pub reading: reading::ReadingSpec,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SuiteMeta {
    pub name: String,
    pub table: TableKind,
}

/// The papers' table layouts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TableKind {
    /// One row per run, reads and writes side by side (six patterns).
    Patterns,
    /// A "Read" and a "Write" row, one column per read/write mix.
    Mix,
    /// IOPS against latency, point by point (latency curves).
    Curve,
    /// Concurrency against IOPS and latency, with the knee (thread sweeps).
    Threads,
    /// A row per run and operation: ops/s, mean, p50, p99, p99.9
    /// (metadata runs: create, open, stat...).
    Ops,
    /// The small-files suite: the same bytes as many small files and as one
    /// large file side by side (MB/s of each pass), then the benchmark.
    SmallFiles,
}

/// Direct I/O needs sizes and offsets in whole sectors; the target's own
/// alignment (often 4096) is checked again once it is probed.
pub(crate) const MIN_DIRECT_ALIGN: u64 = 512;

#[cfg(test)]
pub(crate) mod tests;
