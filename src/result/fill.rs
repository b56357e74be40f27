//! The fill as a result: before the first run volbench writes every file of
//! a set it creates sequentially to its end; how long that took and at
//! what rate is a figure of its own (the papers time their FillWrite),
//! never mixed into a run's.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use serde::{Deserialize, Serialize};

use crate::units::bounds;
use crate::units::format_size;

/// One file set's fill (a job with several file counts has several sets;
/// a multi-host run one per host and target).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FillResult {
    /// The host that filled it, in a multi-host run; empty on one host.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub host: String,
    /// The set's directory.
    pub path: String,
    pub files: u32,
    /// Bytes of the set: what the fill wrote, or found already written.
    pub bytes: u64,
    /// Transfer size of the fill's writes.
    pub bs: u64,
    /// Threads that wrote the files, each one file at a time (0 in a
    /// result of a volbench that did not say).
    #[serde(default)]
    pub threads: u32,
    /// Wall time of the fill (0 when the set was reused).
    pub seconds: f64,
    /// bytes / seconds, MiB/s (0 when the set was reused).
    pub mib_s: f64,
    /// The set was already filled by an earlier run of the same shape and
    /// data: nothing was written this time.
    pub skipped_reused: bool,
}

impl FillResult {
    /// One line for the terminal and the report's notes.
    pub(crate) fn line(&self) -> String {
        let host = if self.host.is_empty() {
            String::new()
        } else {
            format!("{}: ", self.host)
        };
        let set = format!(
            "{} x {} in {}",
            self.files,
            format_size(self.bytes / u64::from(self.files.max(1))),
            self.path
        );
        if self.skipped_reused {
            format!("{host}fill: reusing the filled file set ({set}), nothing written")
        } else {
            format!(
                "{host}fill: wrote {} ({set}) in {:.2} s at {:.1} MiB/s, {} writes",
                format_size(self.bytes),
                self.seconds,
                self.mib_s,
                format_size(self.bs)
            )
        }
    }

    /// Checks a fill volbench did not just measure (a result.json read
    /// back, an agent's report) against the bounds its own fills keep: the
    /// error is one line naming the field.
    pub(crate) fn check(&self) -> Result<(), String> {
        let max_files = bounds::MAX_FILES as u32;
        if !(1..=max_files).contains(&self.files) {
            return Err(format!("files is {}, outside 1..{max_files}", self.files));
        }
        if self.threads > bounds::MAX_FILL_THREADS.min(self.files) {
            return Err(format!(
                "threads is {}, more than {} (--fill-threads' bound, one file each)",
                self.threads,
                bounds::MAX_FILL_THREADS.min(self.files)
            ));
        }
        if self.bytes == 0 || self.bytes > bounds::MAX_SIZE {
            return Err(format!(
                "bytes is {}, outside 1..{} (--size's bound)",
                self.bytes,
                bounds::MAX_SIZE
            ));
        }
        if self.bytes % u64::from(self.files) != 0 {
            return Err(format!(
                "bytes {} is not {} files of one size",
                self.bytes, self.files
            ));
        }
        if !(bounds::MIN_FILL_BS..=bounds::MAX_FILL_BS).contains(&self.bs) {
            return Err(format!(
                "bs is {}, outside {}..{} (--fill-bs's bound)",
                self.bs,
                bounds::MIN_FILL_BS,
                bounds::MAX_FILL_BS
            ));
        }
        for (field, v, max) in [
            ("seconds", self.seconds, MAX_SECONDS),
            ("mib_s", self.mib_s, MAX_MIB_S),
        ] {
            if !(v.is_finite() && (0.0..=max).contains(&v)) {
                return Err(format!("{field} is {}, outside 0..{max:e}", num(v)));
            }
        }
        if self.skipped_reused {
            if self.seconds != 0.0 || self.mib_s != 0.0 {
                return Err(format!(
                    "seconds {} and mib_s {} on a reused set, which writes nothing",
                    num(self.seconds),
                    num(self.mib_s)
                ));
            }
            return Ok(());
        }
        if self.seconds <= 0.0 {
            return Err("seconds is 0 on a set that was filled".into());
        }
        let expect = self.bytes as f64 / 1048576.0 / self.seconds;
        // JSON keeps f64 exactly; the slack is for other writers' rounding.
        if (self.mib_s - expect).abs() > 1e-6 * expect.max(self.mib_s) {
            return Err(format!(
                "mib_s is {}, but {} bytes in {} s is {} MiB/s",
                num(self.mib_s),
                self.bytes,
                num(self.seconds),
                num(expect)
            ));
        }
        Ok(())
    }
}

use super::check::num;

/// A fill's time bound: a year, as every duration in a result.
const MAX_SECONDS: f64 = super::check::MAX_SECONDS;
/// 10^9 MiB/s, as every rate in a result.
const MAX_MIB_S: f64 = super::check::MAX_MIB_S;

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn filled() -> FillResult {
        FillResult {
            host: String::new(),
            path: "/t/files-1".into(),
            files: 4,
            bytes: 4 << 20,
            bs: 1 << 20,
            threads: 4,
            seconds: 0.5,
            mib_s: 8.0,
            skipped_reused: false,
        }
    }

    #[test]
    fn a_fill_as_volbench_writes_it_passes() {
        filled().check().unwrap();
        let reused = FillResult {
            seconds: 0.0,
            mib_s: 0.0,
            skipped_reused: true,
            ..filled()
        };
        reused.check().unwrap();
    }

    #[test]
    fn a_tampered_fill_is_refused_naming_the_field() {
        type Tamper = fn(&mut FillResult);
        let cases: [(Tamper, &str); 11] = [
            (|f| f.files = 0, "files is 0, outside 1..65536"),
            (|f| f.files = 70_000, "files is 70000"),
            (|f| f.bytes = 0, "bytes is 0, outside"),
            (|f| f.bytes = u64::MAX, "(--size's bound)"),
            (|f| f.bytes = (4 << 20) + 1, "is not 4 files of one size"),
            (|f| f.bs = 0, "bs is 0, outside 512..67108864"),
            (|f| f.seconds = f64::NAN, "seconds is NaN"),
            (|f| f.seconds = -1.0, "seconds is -1"),
            (|f| f.mib_s = 1e300, "mib_s is 1e300"),
            (
                |f| f.mib_s = 80.0,
                "mib_s is 80, but 4194304 bytes in 0.5 s is 8 MiB/s",
            ),
            (|f| f.skipped_reused = true, "on a reused set"),
        ];
        for (tamper, says) in cases {
            let mut f = filled();
            tamper(&mut f);
            let e = f.check().unwrap_err();
            assert!(e.contains(says), "{says}: {e}");
            assert_eq!(e.lines().count(), 1, "{e}");
        }
        let mut f = filled();
        f.seconds = 0.0;
        assert!(
            f.check()
                .unwrap_err()
                .contains("seconds is 0 on a set that was filled")
        );
    }
}
