//! The one validated description of what to run. Every front end (flags,
//! built-in runs, later suites and imported job files) produces a `JobSpec`;
//! nothing downstream knows where it came from.

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
    pub fn parse(text: &str) -> Result<Self> {
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

    pub fn is_random(self) -> bool {
        matches!(self, Self::Randread | Self::Randwrite | Self::Randrw)
    }

    pub fn is_mixed(self) -> bool {
        matches!(self, Self::Rw | Self::Randrw)
    }

    /// The read share a pure pattern implies, or None for the mixed ones.
    pub fn fixed_read_pct(self) -> Option<u8> {
        match self {
            Self::Read | Self::Randread => Some(100),
            Self::Write | Self::Randwrite => Some(0),
            Self::Rw | Self::Randrw => None,
        }
    }

    pub fn name(self) -> &'static str {
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

/// Which I/O engine to use; `Auto` is resolved before anything runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EngineChoice {
    Auto,
    Psync,
    IoUring,
    Null,
}

impl EngineChoice {
    pub fn parse(text: &str) -> Result<Self> {
        Ok(
            match text.trim().to_ascii_lowercase().replace('-', "_").as_str() {
                "auto" => Self::Auto,
                "psync" | "sync" => Self::Psync,
                "io_uring" | "uring" => Self::IoUring,
                "null" => Self::Null,
                _ => {
                    return Err(VbError::input(format!(
                        "--engine '{text}' is not one of auto, psync, io_uring, null"
                    )));
                }
            },
        )
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Psync => "psync",
            Self::IoUring => "io_uring",
            Self::Null => "null",
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
}

/// One measured run: the workload and its timing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSpec {
    pub name: String,
    pub rw: Pattern,
    /// Share of operations that are reads, 0..=100.
    pub read_pct: u8,
    pub bs: Vec<BlockSize>,
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
}

impl Default for RunSpec {
    fn default() -> Self {
        Self {
            name: String::new(),
            rw: Pattern::Randread,
            read_pct: 100,
            bs: vec![BlockSize {
                bytes: 4096,
                weight: 1,
            }],
            threads: 1,
            iodepth: 1,
            warmup_s: 5.0,
            duration_s: 60.0,
            io_limit: None,
            files: None,
            rate_iops: None,
            rate_pct: None,
            arrivals: Arrivals::Uniform,
            steady: false,
            discard: false,
            stop_rule: None,
        }
    }
}

/// The engine a run actually uses, after `auto` and fallbacks.
/// In results as "psync", "io_uring" or "null".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EngineKind {
    Psync,
    IoUring,
    Null,
}

impl EngineKind {
    pub fn name(self) -> &'static str {
        match self {
            Self::Psync => "psync",
            Self::IoUring => "io_uring",
            Self::Null => "null",
        }
    }

    /// Synchronous engines have one I/O in flight per OS thread (null
    /// completes a whole queue at once, so it honours iodepth itself).
    pub fn is_sync(self) -> bool {
        matches!(self, Self::Psync)
    }
}

/// What a target is; in results as "directory", "file" or "block_device".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TargetKind {
    /// A directory (existing or to be created) holding volbench's file set.
    Directory,
    /// An existing regular file volbench did not create.
    File,
    BlockDevice,
}

impl std::fmt::Display for EngineKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl TargetKind {
    pub fn name(self) -> &'static str {
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
    pub fn parse(text: &str) -> Result<Self> {
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
    pub percent: f64,
    /// Name of the run whose measured IOPS is 100%.
    pub of: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StopRule {
    /// Runs sharing a group are judged together, in order.
    pub group: String,
    /// Skip once the last run gained less than this over the one before (percent of IOPS).
    #[serde(default)]
    pub gain_below_pct: Option<f64>,
    /// Skip once the last run's mean latency passed this (microseconds).
    #[serde(default)]
    pub latency_above_us: Option<f64>,
}

impl RunSpec {
    pub fn min_bs(&self) -> u64 {
        self.bs.iter().map(|b| b.bytes).min().unwrap_or(4096)
    }

    pub fn max_bs(&self) -> u64 {
        self.bs.iter().map(|b| b.bytes).max().unwrap_or(4096)
    }

    pub fn bs_label(&self) -> String {
        if let [only] = self.bs.as_slice() {
            return format_size(only.bytes);
        }
        self.bs
            .iter()
            .map(|b| format!("{}:{}", format_size(b.bytes), b.weight))
            .collect::<Vec<_>>()
            .join(",")
    }

    pub fn has_writes(&self) -> bool {
        self.read_pct < 100
    }

    /// A default name that says what the run does: `randrw-70r-8KiB-8t-qd16`.
    pub fn auto_name(&self) -> String {
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
}

/// Direct I/O needs sizes and offsets in whole sectors; the target's own
/// alignment (often 4096) is checked again once it is probed.
pub const MIN_DIRECT_ALIGN: u64 = 512;

impl JobSpec {
    /// Checks everything that can be checked without touching the target.
    pub fn validate(&self) -> Result<()> {
        if self.runs.is_empty() {
            return Err(VbError::input("nothing to run: the spec has no runs"));
        }
        if !(self.interval_s >= 0.05 && self.interval_s.is_finite()) {
            return Err(VbError::input("--interval must be at least 50ms"));
        }
        if self.target.files == 0 {
            return Err(VbError::input("--files must be at least 1"));
        }
        if self.target.size == 0 {
            return Err(VbError::input("--size must be larger than 0"));
        }
        let mut names = std::collections::HashSet::new();
        for run in &self.runs {
            if !names.insert(run.name.as_str()) {
                return Err(VbError::input(format!("two runs are named '{}'", run.name)));
            }
            self.validate_run(run)?;
        }
        Ok(())
    }

    fn validate_run(&self, run: &RunSpec) -> Result<()> {
        let at = |msg: String| {
            if self.runs.len() > 1 {
                VbError::input(format!("run '{}': {msg}", run.name))
            } else {
                VbError::input(msg)
            }
        };
        if run.read_pct > 100 {
            return Err(at(format!("--read-pct {} is outside 0..100", run.read_pct)));
        }
        if let Some(p) = run.rw.fixed_read_pct()
            && p != run.read_pct
        {
            return Err(at(format!(
                "--read-pct {} conflicts with --rw {} (it is {} by definition; use rw or randrw for a mix)",
                run.read_pct,
                run.rw.name(),
                p
            )));
        }
        if run.threads == 0 || run.threads > 4096 {
            return Err(at(format!("--threads {} is outside 1..4096", run.threads)));
        }
        if run.iodepth == 0 || run.iodepth > 4096 {
            return Err(at(format!("--iodepth {} is outside 1..4096", run.iodepth)));
        }
        if run.bs.is_empty() {
            return Err(at("--bs is empty".into()));
        }
        if !(run.duration_s > 0.0 && run.duration_s.is_finite()) {
            return Err(at("--duration must be longer than 0".into()));
        }
        if !(run.warmup_s >= 0.0 && run.warmup_s.is_finite()) {
            return Err(at("--warmup must not be negative".into()));
        }
        if let Some(r) = run.rate_iops
            && !(r > 0.0 && r.is_finite())
        {
            return Err(at(format!("--rate {r} must be a positive number of IOPS")));
        }
        if let Some(p) = &run.rate_pct
            && !(p.percent > 0.0 && p.percent <= 1000.0)
        {
            return Err(at(format!(
                "rate {}% must be above 0 and at most 1000%",
                p.percent
            )));
        }
        if run.files == Some(0) {
            return Err(at("files must be at least 1".into()));
        }
        if let Some(limit) = run.io_limit
            && limit < run.min_bs()
        {
            return Err(at(format!(
                "--io-limit {} is smaller than one block ({})",
                format_size(limit),
                format_size(run.min_bs())
            )));
        }
        for b in &run.bs {
            if self.target.direct && b.bytes % MIN_DIRECT_ALIGN != 0 {
                return Err(at(format!(
                    "--bs {} is not a multiple of {MIN_DIRECT_ALIGN} bytes, which direct I/O needs \
                     (use a multiple of 4k, or --buffered)",
                    b.bytes
                )));
            }
        }
        let file_size = self.target.size / run.files.unwrap_or(self.target.files) as u64;
        if run.max_bs() > file_size {
            return Err(at(format!(
                "--bs {} is larger than each file ({} = --size {} / --files {})",
                format_size(run.max_bs()),
                format_size(file_size),
                format_size(self.target.size),
                self.target.files
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub fn sample() -> JobSpec {
        JobSpec {
            target: TargetSpec {
                path: "/tmp/x".into(),
                size: 1 << 30,
                files: 4,
                direct: true,
                allow_overwrite: false,
            },
            engine: EngineChoice::Auto,
            interval_s: 1.0,
            seed: 1,
            suite: None,
            runs: vec![RunSpec {
                name: "r".into(),
                rw: Pattern::Randrw,
                read_pct: 70,
                bs: vec![BlockSize {
                    bytes: 8192,
                    weight: 1,
                }],
                threads: 8,
                iodepth: 16,
                warmup_s: 1.0,
                duration_s: 5.0,
                ..RunSpec::default()
            }],
        }
    }

    #[test]
    fn a_sound_spec_validates() {
        sample().validate().unwrap();
    }

    #[test]
    fn read_pct_must_fit_the_pattern() {
        let mut s = sample();
        s.runs[0].read_pct = 120;
        assert!(
            s.validate()
                .unwrap_err()
                .to_string()
                .contains("--read-pct 120")
        );
        let mut s = sample();
        s.runs[0].rw = Pattern::Randread;
        s.runs[0].read_pct = 70;
        assert!(
            s.validate()
                .unwrap_err()
                .to_string()
                .contains("conflicts with --rw randread")
        );
    }

    #[test]
    fn direct_io_needs_whole_sectors() {
        let mut s = sample();
        s.runs[0].bs = vec![BlockSize {
            bytes: 1000,
            weight: 1,
        }];
        let e = s.validate().unwrap_err().to_string();
        assert!(e.contains("--bs 1000") && e.contains("--buffered"), "{e}");
        s.target.direct = false;
        s.validate().unwrap();
    }

    #[test]
    fn block_larger_than_a_file_is_refused() {
        let mut s = sample();
        s.target.size = 64 << 10;
        s.target.files = 4;
        s.runs[0].bs = vec![BlockSize {
            bytes: 32 << 10,
            weight: 1,
        }];
        assert!(
            s.validate()
                .unwrap_err()
                .to_string()
                .contains("larger than each file")
        );
    }

    #[test]
    fn zero_threads_or_depth_is_refused() {
        let mut s = sample();
        s.runs[0].threads = 0;
        assert!(s.validate().is_err());
        let mut s = sample();
        s.runs[0].iodepth = 0;
        assert!(s.validate().is_err());
    }

    #[test]
    fn names_say_what_runs() {
        assert_eq!(sample().runs[0].auto_name(), "randrw-70r-8KiB-8t-qd16");
    }
}
