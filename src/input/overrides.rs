//! What a suite (or an import, which is a suite) takes from the command
//! line: the flags `run` and `suite run` share, each value read once by its
//! flag's own rules (`args::CommonArgs::overrides`). A value given here
//! replaces the suite's `[defaults]`; a value a run entry sets itself is
//! kept. `run` builds its job from the same values.

use std::path::PathBuf;

use crate::error::{Result, VbError};
use crate::spec::data::{DataSpec, defaults};
use crate::spec::reading::ReadingSpec;
use crate::spec::shape::Shape;
use crate::spec::{Arrivals, EngineChoice, WriteSync};

#[derive(Debug, Clone, Default)]
pub struct Overrides {
    /// The target path: the first local target, or the hosts' template.
    pub(crate) target: PathBuf,
    /// The working set, in bytes.
    pub(crate) size: Option<u64>,
    /// Sweeps: one run per point.
    pub(crate) files: Option<Vec<u64>>,
    pub(crate) threads: Option<Vec<u64>>,
    pub(crate) iodepth: Option<Vec<u64>>,
    /// Seconds.
    pub(crate) duration_s: Option<f64>,
    pub(crate) warmup_s: Option<f64>,
    pub(crate) interval_s: Option<f64>,
    pub(crate) engine: Option<EngineChoice>,
    pub(crate) write_sync: Option<WriteSync>,
    pub(crate) arrivals: Option<Arrivals>,
    pub(crate) seed: Option<u64>,
    /// `--buffered`: every run through the page cache.
    pub(crate) buffered: bool,
    /// `--steady`: every run's warm-up ends once IOPS are steady.
    pub(crate) steady: bool,
    pub(crate) allow_overwrite: bool,
    /// The fill's transfer size, in bytes.
    pub(crate) fill_bs: Option<u64>,
    /// The fill's threads.
    pub(crate) fill_threads: Option<u32>,
    /// `--open-files`: the most files each I/O thread keeps open.
    pub(crate) open_files: Option<u32>,
    /// `--invalidate` / `--no-invalidate`.
    pub(crate) invalidate: Option<bool>,
    pub(crate) data: DataFlags,
    /// The shape flags' keys applied to a default shape: a run's own
    /// shape keys are applied over it.
    pub(crate) shape: Shape,
    pub(crate) reading: ReadingSpec,
    /// The job runs on many hosts (a replay's split needs to know).
    pub(crate) multi_host: bool,
    /// `--no-warmup-run` (and every import): no discarded copy of the
    /// first run.
    pub(crate) no_warmup_run: bool,
}

impl Overrides {
    /// No flag given: the suite's own values, on `target`.
    pub fn new(target: PathBuf) -> Self {
        Self {
            target,
            ..Self::default()
        }
    }
}

/// The data flags as given, before the defaults: a suite's keys fill in
/// what the flags left out.
#[derive(Debug, Clone, Default)]
pub(crate) struct DataFlags {
    pub(crate) compress: Option<f64>,
    pub(crate) dedup: Option<u64>,
    pub(crate) dedup_unit: Option<u64>,
    pub(crate) verify: bool,
    pub(crate) max_data_errors: Option<u64>,
    pub(crate) journal: Option<PathBuf>,
}

impl DataFlags {
    /// The data spec, the defaults filled in, the flags that go together
    /// checked together.
    pub(crate) fn spec(&self) -> Result<DataSpec> {
        if !self.verify && (self.max_data_errors.is_some() || self.journal.is_some()) {
            return Err(VbError::input(
                "--max-data-errors and --journal go with --verify; add --verify",
            ));
        }
        Ok(DataSpec {
            compress: self.compress.unwrap_or(defaults::COMPRESS),
            dedup: self.dedup.unwrap_or(defaults::DEDUP),
            dedup_unit: self.dedup_unit.unwrap_or(defaults::DEDUP_UNIT),
            verify: self.verify,
            max_data_errors: self.max_data_errors.unwrap_or(defaults::MAX_DATA_ERRORS),
            journal: self.journal.clone(),
        })
    }
}
