//! Suites: the vendors' methods as data. A suite is a TOML file of runs
//! (with sweeps, curves and knee-stopping thread sweeps) that expands into
//! one `JobSpec`; the built-in ones are embedded and can be printed, copied
//! and edited. Every error names the file and line.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use toml::Spanned;

use crate::error::{Result, VbError};
use crate::spec::TableKind;
use crate::units::bounds;
use crate::units::parse_duration_in;

/// The built-in suites, in the order `suite list` shows them.
pub(crate) const BUILTIN: [(&str, &str); 10] = [
    (
        "six-patterns",
        include_str!("../../../suites/six-patterns.toml"),
    ),
    ("mix-sweep", include_str!("../../../suites/mix-sweep.toml")),
    ("mix-table", include_str!("../../../suites/mix-table.toml")),
    (
        "files-threads",
        include_str!("../../../suites/files-threads.toml"),
    ),
    (
        "disk-check",
        include_str!("../../../suites/disk-check.toml"),
    ),
    (
        "latency-curve",
        include_str!("../../../suites/latency-curve.toml"),
    ),
    (
        "thread-sweep",
        include_str!("../../../suites/thread-sweep.toml"),
    ),
    ("metadata", include_str!("../../../suites/metadata.toml")),
    ("eda-mix", include_str!("../../../suites/eda-mix.toml")),
    (
        "small-files",
        include_str!("../../../suites/small-files.toml"),
    ),
];

/// A value that may be one item or a sweep: `4`, `"4k"`, `[1, 2]`, `"1:64:*2"`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(untagged)]
pub(crate) enum Param {
    Int(i64),
    Float(f64),
    Bool(bool),
    Str(String),
    List(Vec<Param>),
}

impl Param {
    /// The value as the text a user would type on the command line, so
    /// suites and flags share one parser.
    fn text(&self) -> String {
        match self {
            Param::Int(v) => v.to_string(),
            Param::Float(v) => v.to_string(),
            Param::Bool(v) => v.to_string(),
            Param::Str(s) => s.clone(),
            Param::List(items) => items.iter().map(Param::text).collect::<Vec<_>>().join(","),
        }
    }
}

pub(crate) type P = Option<Spanned<Param>>;

/// A suite file. What `parse` reads is what serialising writes (importers
/// build one and write it out), so both directions share this one model.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SuiteFile {
    pub(crate) name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub(crate) description: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub(crate) source: String,
    pub(crate) table: TableKind,
    /// Run a copy of the first run first and discard it (the papers' advice).
    #[serde(default = "yes")]
    pub(crate) warmup_run: bool,
    /// The runs' threads are the total over a local target list, spread
    /// over its targets (as `--threads-total`; an imported diskspd -F or a
    /// fio job over `filename=a:b` says so here, so the file runs as
    /// imported without the flag).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) threads_total: bool,
    #[serde(default, skip_serializing_if = "Defaults::is_empty")]
    pub(crate) defaults: Defaults,
    #[serde(rename = "run", default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) runs: Vec<Spanned<RunEntry>>,
    /// Other suites whose runs join these where each entry stands
    /// (`include.rs`).
    #[serde(rename = "include", default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) includes: Vec<Spanned<include::IncludeEntry>>,
    /// The paper's own values (`--published`).
    #[serde(default)]
    pub(crate) published: Option<published::Published>,
    /// A host-count sweep (`--host-counts` overrides it): a list or a range.
    #[serde(default)]
    pub(crate) host_counts: P,
}

impl SuiteFile {
    /// The suite's host-count sweep as `--host-counts` text.
    pub(crate) fn host_counts_text(&self) -> Option<String> {
        self.host_counts.as_ref().map(|p| p.get_ref().text())
    }
}

fn yes() -> bool {
    true
}

#[derive(Debug, Default, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Defaults {
    pub(crate) size: P,
    pub(crate) files: P,
    pub(crate) threads: P,
    pub(crate) iodepth: P,
    pub(crate) duration: P,
    pub(crate) warmup: P,
    pub(crate) engine: P,
    pub(crate) direct: P,
    pub(crate) write_sync: P,
    pub(crate) interval: P,
    pub(crate) seed: P,
    pub(crate) arrivals: P,
    /// The fill's transfer size (`--fill-bs`).
    pub(crate) fill_bs: P,
    /// The fill's threads (`--fill-threads`).
    pub(crate) fill_threads: P,
    /// The most files each I/O thread keeps open (`--open-files`).
    #[serde(default)]
    pub(crate) open_files: P,
    /// Drop cached pages before each buffered run (`--no-invalidate`).
    pub(crate) invalidate: P,
    /// The data flags (`suite/data.rs`).
    pub(crate) compress: P,
    pub(crate) dedup: P,
    pub(crate) dedup_unit: P,
    pub(crate) verify: P,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RunEntry {
    pub(crate) name: Spanned<String>,
    pub(crate) rw: P,
    pub(crate) read_pct: P,
    pub(crate) bs: P,
    /// Writes' own block size or mix (`--write-bs`).
    pub(crate) write_bs: P,
    pub(crate) threads: P,
    pub(crate) iodepth: P,
    pub(crate) files: P,
    /// The run's own working set (`suite/size.rs`), a list to sweep it.
    pub(crate) size: P,
    pub(crate) rate: P,
    /// Reads and writes per second apart (`--rate-iops R,W`).
    pub(crate) rate_iops: P,
    /// Read and write bandwidth apart (`--rate-bw R,W`).
    pub(crate) rate_bw: P,
    /// The latency search (`--latency-target`, `--search-steps`,
    /// `--search-precision`), parsed by `input::rate`.
    pub(crate) latency_target: P,
    pub(crate) search_steps: P,
    pub(crate) search_precision: P,
    pub(crate) duration: P,
    pub(crate) warmup: P,
    pub(crate) io_limit: P,
    pub(crate) arrivals: P,
    pub(crate) steady: P,
    /// Percentages of the maximum rate, measured by a first run at full speed.
    pub(crate) curve: P,
    pub(crate) curve_stop_latency: P,
    /// Stop the sweep once IOPS grow less than this percentage.
    pub(crate) until_gain_below: P,
    /// A tree of files and operations on it (`volbench run --ops`), with
    /// its shape; a run with `ops` takes none of the block-I/O keys.
    pub(crate) ops: P,
    pub(crate) depth: P,
    pub(crate) width: P,
    pub(crate) files_per_dir: P,
    pub(crate) file_size: P,
    pub(crate) shared_dirs: P,
    pub(crate) drop_caches: P,
    /// A create phase keeps the files already complete (`--keep-complete`).
    pub(crate) keep_complete: P,
    pub(crate) direct: P,
    /// How the I/O is shaped (`spec::shape`; parsed in `suite/shape.rs`).
    pub(crate) distribution: P,
    pub(crate) seek_pct: P,
    pub(crate) streams: P,
    pub(crate) random_map: P,
    pub(crate) fsync_every: P,
    pub(crate) fdatasync: P,
    pub(crate) end_fsync: P,
    pub(crate) think_time: P,
    pub(crate) cooldown: P,
    /// The run replays a trace (`suite/replay.rs`).
    pub(crate) replay: Option<Spanned<replay::ReplayEntry>>,
}

pub use crate::input::overrides::Overrides;

/// Finds a built-in suite by name, or reads a suite file.
pub fn load(name_or_path: &str) -> Result<(String, String)> {
    load_at(name_or_path).map(|(origin, text, _)| (origin, text))
}

/// As `load`, with the file's path (None for a built-in suite): its
/// includes are read relative to it.
pub(crate) fn load_at(name_or_path: &str) -> Result<(String, String, Option<PathBuf>)> {
    if let Some((name, text)) = BUILTIN.iter().find(|(n, _)| *n == name_or_path) {
        return Ok((format!("built-in suite {name}"), text.to_string(), None));
    }
    let path = std::path::Path::new(name_or_path);
    if path.exists() {
        let text = crate::input::file::read_text(path, "suite file", bounds::MAX_INPUT_FILE)?;
        return Ok((path.display().to_string(), text, Some(path.to_path_buf())));
    }
    let names: Vec<&str> = BUILTIN.iter().map(|(n, _)| *n).collect();
    Err(VbError::input(format!(
        "no built-in suite or file named '{name_or_path}' (built-in: {})",
        names.join(", ")
    )))
}

fn line_of(text: &str, offset: usize) -> usize {
    let upto = text.get(..offset.min(text.len())).unwrap_or(text);
    upto.matches('\n').count() + 1
}

pub fn parse(origin: &str, text: &str) -> Result<SuiteFile> {
    let suite: SuiteFile = toml::from_str(text).map_err(|e| {
        let line = e.span().map(|s| line_of(text, s.start)).unwrap_or(0);
        // toml's messages can span lines; an error is one line.
        let msg = e.message().split_whitespace().collect::<Vec<_>>().join(" ");
        VbError::input(format!("{origin} line {line}: {msg}"))
    })?;
    if suite.runs.is_empty() && suite.includes.is_empty() {
        return Err(VbError::input(format!(
            "{origin}: the suite has no [[run]] or [[include]] entries"
        )));
    }
    Ok(suite)
}

/// Everything needed to report an error at a value's line.
struct Ctx<'a> {
    origin: &'a str,
    text: &'a str,
}

impl Ctx<'_> {
    fn err(&self, at: &Spanned<Param>, key: &str, e: VbError) -> VbError {
        let line = line_of(self.text, at.span().start);
        // Most parsers name the key already ("threads 0 is outside 1..4096").
        if e.message.starts_with(key) {
            VbError::input(format!("{} line {line}: {}", self.origin, e.message))
        } else {
            VbError::input(format!("{} line {line}: {key}: {}", self.origin, e.message))
        }
    }

    /// A run's own value, else the command line's (read already, by its
    /// flag's rules), else the suite's default; a value of the suite's is
    /// parsed by `parse`, an error naming its line.
    fn value<T>(
        &self,
        key: &str,
        (own, over, default): (&P, Option<T>, &P),
        parse: impl Fn(&str) -> Result<T>,
    ) -> Result<Option<T>> {
        if let Some(v) = own {
            return self
                .with(key, Some(v), parse(&v.get_ref().text()))
                .map(Some);
        }
        if over.is_some() {
            return Ok(over);
        }
        match default {
            Some(v) => self
                .with(key, Some(v), parse(&v.get_ref().text()))
                .map(Some),
            None => Ok(None),
        }
    }

    /// A duration in seconds, as `value`, `fallback` when none is given.
    #[allow(clippy::too_many_arguments)]
    fn seconds(
        &self,
        key: &str,
        own: &P,
        over: Option<f64>,
        def: &P,
        fallback: f64,
        lo: Duration,
        hi: Duration,
    ) -> Result<f64> {
        let parse = |t: &str| parse_duration_in(key, t, lo, hi).map(|d| d.as_secs_f64());
        Ok(self
            .value(key, (own, over, def), parse)?
            .unwrap_or(fallback))
    }

    fn with<T>(&self, key: &str, at: Option<&Spanned<Param>>, r: Result<T>) -> Result<T> {
        match (r, at) {
            (Ok(v), _) => Ok(v),
            (Err(e), Some(at)) => Err(self.err(at, key, e)),
            (Err(e), None) => Err(e),
        }
    }
}

/// One line per built-in suite for `suite list`.
pub(crate) fn list() -> Vec<(String, String, String)> {
    BUILTIN
        .iter()
        .map(|(name, text)| match parse(name, text) {
            Ok(s) => (s.name, s.description, s.source),
            Err(e) => (name.to_string(), format!("(invalid: {e})"), String::new()),
        })
        .collect()
}

mod data;
mod expand;
pub(crate) mod footprint;
pub mod include;
pub(crate) mod published;
pub(crate) mod replay;
mod shape;
mod size;
mod tree;
pub(crate) mod write;

pub use expand::{expand, to_job};
pub use include::{Resolved, resolve};

#[cfg(test)]
mod tests;
