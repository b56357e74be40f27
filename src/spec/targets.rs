//! Several targets in one local job (`--target '/mnt/x{0..9}.dat'`, a
//! diskspd line naming ten files, fio's `filename=a:b`): each target is
//! planned, prepared, locked and run as a target of its own, all started
//! together; the totals are the exact merge over the targets.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::error::{Result, VbError};
use crate::units::bounds;

/// Every target of the job, in the order given (`JobSpec::target.path` is
/// the first), and how `threads` is counted over them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TargetList {
    pub(crate) paths: Vec<PathBuf>,
    /// `threads` is the total over all targets, spread evenly (diskspd -F);
    /// otherwise each target gets `threads` of its own (diskspd -t).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) threads_total: bool,
    /// `--on-host-loss continue`: a target whose server is lost (an
    /// `nfs://` target past its `reconnect=`) is left out and the others go
    /// on; otherwise the first target that fails ends the run for all.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) keep_going: bool,
}

impl TargetList {
    pub(crate) fn validate(&self, threads: impl Iterator<Item = u32>) -> Result<()> {
        let n = self.paths.len();
        if !(2..=bounds::MAX_TARGETS).contains(&n) {
            return Err(VbError::input(format!(
                "--target names {n} targets; a list holds 2..{}",
                bounds::MAX_TARGETS
            )));
        }
        let mut seen = std::collections::HashSet::new();
        for p in &self.paths {
            if p.as_os_str().is_empty() || p.to_str().is_none() {
                return Err(VbError::input(format!(
                    "--target {}: every target is a non-empty UTF-8 path",
                    p.to_string_lossy().escape_debug()
                )));
            }
            if !seen.insert(p) {
                return Err(VbError::input(format!(
                    "--target names {} twice; each target is run once",
                    p.display()
                )));
            }
        }
        if self.threads_total {
            for t in threads {
                if (t as usize) < n {
                    return Err(VbError::input(format!(
                        "--threads-total: {t} threads over {n} targets leaves a target without \
                         a thread; give at least {n}, or drop --threads-total for {t} per target"
                    )));
                }
            }
        }
        Ok(())
    }

    /// Threads target `i` runs: its own `threads`, or its even share of
    /// the total (the first `threads % n` targets take one more).
    pub(crate) fn threads_of(&self, threads: u32, i: usize) -> u32 {
        if !self.threads_total {
            return threads;
        }
        let n = self.paths.len().max(1) as u32;
        threads / n + u32::from((i as u32) < threads % n)
    }

    /// Threads over every target.
    pub(crate) fn threads_in_all(&self, threads: u32) -> u32 {
        if self.threads_total {
            threads
        } else {
            threads.saturating_mul(self.paths.len() as u32)
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    fn list(n: usize, total: bool) -> TargetList {
        TargetList {
            paths: (0..n).map(|i| PathBuf::from(format!("/t{i}"))).collect(),
            threads_total: total,
            keep_going: false,
        }
    }

    #[test]
    fn total_threads_spread_evenly_and_add_up() {
        let l = list(3, true);
        let shares: Vec<u32> = (0..3).map(|i| l.threads_of(16, i)).collect();
        assert_eq!(shares, [6, 5, 5]);
        assert_eq!(shares.iter().sum::<u32>(), l.threads_in_all(16));
        let per = list(3, false);
        assert_eq!(per.threads_of(8, 2), 8);
        assert_eq!(per.threads_in_all(8), 24);
    }

    #[test]
    fn lists_are_bounded_and_each_target_gets_a_thread() {
        assert!(list(2, false).validate([1].into_iter()).is_ok());
        let e = list(3, true).validate([2].into_iter()).unwrap_err();
        assert!(e.message.contains("without a thread"), "{e}");
        let e = list(bounds::MAX_TARGETS + 1, false)
            .validate(std::iter::empty())
            .unwrap_err();
        assert!(e.message.contains("2..256"), "{e}");
        let mut twice = list(2, false);
        twice.paths[1] = twice.paths[0].clone();
        assert!(twice.validate(std::iter::empty()).is_err());
    }
}
