//! The flags `run` and `suite run` share (`CommonArgs`), read once into
//! `Overrides`, each value by its flag's rules. Beside the flags' file, not
//! in it, so `input::args` stays a leaf the readers use.

use std::time::Duration;

use crate::error::Result;
use crate::input::args::CommonArgs;
use crate::input::overrides::Overrides;
use crate::spec::{Arrivals, EngineChoice, WriteSync};
use crate::units::bounds;

impl CommonArgs {
    /// The shared flags, each value read once by its flag's rules: what a
    /// suite takes from the command line, and what `run` builds on.
    pub(crate) fn overrides(&self) -> Result<Overrides> {
        use crate::units::{parse_count_in, parse_duration_in, parse_size_in};
        let counts = |flag: &str, t: &Option<String>, hi: u64| {
            t.as_deref()
                .map(|t| crate::input::sweep::parse_counts(flag, t, 1, hi))
                .transpose()
        };
        let seconds = |flag: &str, t: &Option<String>, lo, hi| {
            t.as_deref()
                .map(|t| parse_duration_in(flag, t, lo, hi).map(|d| d.as_secs_f64()))
                .transpose()
        };
        Ok(Overrides {
            target: self.target.clone(),
            size: self
                .size
                .as_deref()
                .map(|s| parse_size_in("--size", s, 1, bounds::MAX_SIZE))
                .transpose()?,
            files: counts("--files", &self.files, bounds::MAX_FILES)?,
            open_files: self
                .open_files
                .as_deref()
                .map(|t| parse_count_in("--open-files", t, 1, bounds::MAX_FILES))
                .transpose()?
                .map(|n| n as u32),
            threads: counts("--threads", &self.threads, bounds::MAX_THREADS)?,
            iodepth: counts("--iodepth", &self.iodepth, bounds::MAX_IODEPTH)?,
            duration_s: seconds(
                "--duration",
                &self.duration,
                bounds::MIN_DURATION,
                bounds::MAX_DURATION,
            )?,
            warmup_s: seconds("--warmup", &self.warmup, Duration::ZERO, bounds::MAX_WARMUP)?,
            interval_s: seconds(
                "--interval",
                &self.interval,
                bounds::MIN_INTERVAL,
                bounds::MAX_INTERVAL,
            )?,
            engine: self
                .engine
                .as_deref()
                .map(EngineChoice::parse)
                .transpose()?,
            write_sync: self
                .write_sync
                .as_deref()
                .map(WriteSync::parse)
                .transpose()?,
            arrivals: self.arrivals.as_deref().map(Arrivals::parse).transpose()?,
            seed: self
                .seed
                .as_deref()
                .map(|t| parse_count_in("--seed", t, 0, u64::MAX))
                .transpose()?,
            buffered: self.buffered,
            steady: self.steady,
            allow_overwrite: self.allow_overwrite,
            fill_bs: self
                .fill
                .fill_bs
                .as_deref()
                .map(|t| parse_size_in("--fill-bs", t, bounds::MIN_FILL_BS, bounds::MAX_FILL_BS))
                .transpose()?,
            fill_threads: self
                .fill
                .fill_threads
                .as_deref()
                .map(|t| crate::input::args::fill::fill_threads("--fill-threads", t))
                .transpose()?,
            invalidate: crate::input::args::fill::invalidate_flag(&self.fill),
            data: self.data.flags()?,
            shape: crate::input::shape::from_flags(&self.shape)?,
            reading: self.reading.spec()?,
            multi_host: self.remote.is_multi_host(),
            no_warmup_run: false,
        })
    }
}
