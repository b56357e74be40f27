//! What the data written looks like (compressibility, duplication) and
//! whether what comes back is checked (--verify, --journal).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::error::{Result, VbError};
use crate::units::bounds;
use crate::units::format_size;

/// The data a target is filled and written with, and how it is checked.
/// The default is unique, incompressible data and no checking.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DataSpec {
    /// Each block compresses about this much (1 = incompressible).
    #[serde(default = "one_f")]
    pub(crate) compress: f64,
    /// Copies of each distinct `dedup_unit` block over the data set.
    #[serde(default = "one")]
    pub(crate) dedup: u64,
    #[serde(default = "unit")]
    pub(crate) dedup_unit: u64,
    /// Every read checks what the last write (or the fill) put there.
    #[serde(default)]
    pub(crate) verify: bool,
    /// Stop the run at this many mismatches.
    #[serde(default = "one")]
    pub(crate) max_data_errors: u64,
    /// Where the per-block write counters are kept across runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) journal: Option<PathBuf>,
}

fn one() -> u64 {
    1
}
fn one_f() -> f64 {
    1.0
}
fn unit() -> u64 {
    defaults::DEDUP_UNIT
}

pub(crate) mod defaults {
    pub(crate) const COMPRESS: f64 = 1.0;
    pub(crate) const DEDUP: u64 = 1;
    pub(crate) const DEDUP_UNIT: u64 = 4096;
    /// Production storage that returned wrong data once has said enough.
    pub(crate) const MAX_DATA_ERRORS: u64 = 1;
}

impl Default for DataSpec {
    fn default() -> Self {
        Self {
            compress: defaults::COMPRESS,
            dedup: defaults::DEDUP,
            dedup_unit: defaults::DEDUP_UNIT,
            verify: false,
            max_data_errors: defaults::MAX_DATA_ERRORS,
            journal: None,
        }
    }
}

impl DataSpec {
    pub(crate) fn is_default(&self) -> bool {
        *self == Self::default()
    }

    /// The data format of a set this spec fills, recorded in the set's
    /// marker: two sets with the same tag hold the same kind of data.
    pub(crate) fn fill_tag(&self) -> String {
        let mut tag = String::from("s1");
        if self.compress != 1.0 {
            tag.push_str(&format!("c{}", self.compress));
        }
        if self.dedup > 1 {
            tag.push_str(&format!("d{}x{}", self.dedup, self.dedup_unit));
        }
        tag
    }

    /// Whether a filled set whose marker records `tag` holds the data this
    /// spec writes. Sets made before tags existed hold unique incompressible
    /// data without checkable sector headers: fine for plain runs only.
    pub(crate) fn can_reuse(&self, tag: Option<&str>) -> bool {
        match tag {
            Some(t) => t == self.fill_tag(),
            None => self.compress == 1.0 && self.dedup == 1 && !self.verify,
        }
    }

    /// Checks every number against its bound and the combinations that
    /// cannot work; `block_sizes` are every --bs of every run.
    pub(crate) fn validate(&self, block_sizes: &[u64]) -> Result<()> {
        bounds::number(
            "--compress",
            self.compress,
            bounds::MIN_COMPRESS,
            bounds::MAX_COMPRESS,
        )?;
        bounds::count("--dedup", self.dedup, 1, bounds::MAX_DEDUP)?;
        bounds::size(
            "--dedup-unit",
            self.dedup_unit,
            bounds::MIN_DEDUP_UNIT,
            bounds::MAX_DEDUP_UNIT,
        )?;
        bounds::count(
            "--max-data-errors",
            self.max_data_errors,
            1,
            bounds::MAX_DATA_ERRORS,
        )?;
        if !self.dedup_unit.is_power_of_two() {
            return Err(VbError::input(format!(
                "--dedup-unit {}: a power of two from 512 to 1MiB",
                self.dedup_unit
            )));
        }
        let stamped = self.dedup > 1 || self.verify || self.compress != 1.0;
        for &b in block_sizes {
            if stamped && b % 512 != 0 {
                return Err(VbError::input(format!(
                    "--bs {b}: --compress, --dedup and --verify work in 512-byte sectors; \
                     use a multiple of 512"
                )));
            }
            if self.dedup > 1 && b % self.dedup_unit != 0 {
                return Err(VbError::input(format!(
                    "--bs {} is not a multiple of --dedup-unit {}: every write must cover \
                     whole dedup units",
                    format_size(b),
                    format_size(self.dedup_unit)
                )));
            }
        }
        if self.dedup > 1 && self.verify {
            return Err(VbError::input(
                "--verify with --dedup: duplicated blocks cannot carry their own offset and \
                 write counter, so they cannot be checked; use one or the other",
            ));
        }
        if self.journal.is_some() && !self.verify {
            return Err(VbError::input(
                "--journal keeps --verify's write counters; add --verify",
            ));
        }
        Ok(())
    }
}

impl DataSpec {
    /// --verify's map (4 bytes per block of the largest size dividing every
    /// --bs) must stay within its bound; checked before any I/O.
    pub(crate) fn check_map_size(&self, block_sizes: &[u64], size: u64, files: u32) -> Result<()> {
        if !self.verify {
            return Ok(());
        }
        fn gcd(a: u64, b: u64) -> u64 {
            if b == 0 { a } else { gcd(b, a % b) }
        }
        let unit = block_sizes.iter().fold(0, |a, &b| gcd(a, b)).max(512);
        let bytes = (size / unit).saturating_add(files as u64).saturating_mul(4);
        if bytes > bounds::MAX_VERIFY_MAP_BYTES {
            return Err(VbError::input(format!(
                "--verify over {} in {unit}-byte blocks needs a {} map; at most {}: use a \
                 smaller --size or a larger --bs",
                format_size(size),
                format_size(bytes),
                format_size(bounds::MAX_VERIFY_MAP_BYTES)
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_are_named_in_errors() {
        let d = DataSpec {
            compress: 20.0,
            ..DataSpec::default()
        };
        let e = d
            .validate(&[4096])
            .err()
            .map(|e| e.message)
            .unwrap_or_default();
        assert!(e.contains("16"), "{e}");
        let d = DataSpec {
            dedup: 3,
            dedup_unit: 8192,
            ..DataSpec::default()
        };
        assert!(d.validate(&[4096]).is_err());
        assert!(d.validate(&[16384]).is_ok());
        let d = DataSpec {
            dedup: 2,
            verify: true,
            ..DataSpec::default()
        };
        assert!(d.validate(&[4096]).is_err());
    }

    #[test]
    fn sets_are_reused_only_with_the_same_data() {
        let plain = DataSpec::default();
        assert!(plain.can_reuse(None), "sets made before tags existed");
        assert!(plain.can_reuse(Some("s1")));
        let verify = DataSpec {
            verify: true,
            ..DataSpec::default()
        };
        assert!(!verify.can_reuse(None), "no sector headers to check");
        assert!(
            verify.can_reuse(Some("s1")),
            "verify does not change the data"
        );
        let d = DataSpec {
            compress: 2.0,
            dedup: 3,
            ..DataSpec::default()
        };
        assert_eq!(d.fill_tag(), "s1c2d3x4096");
        assert!(!d.can_reuse(Some("s1")));
    }
}
