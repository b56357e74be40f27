//! How many files this process may hold open, and raising that before a run.
//!
//! Each local I/O thread opens the file set in a descriptor table of its
//! own (`worker::own_fd_table`), so one table holds one set (two for a
//! buffered random run, which keeps a second set to drop the cache at each
//! pass's end) and the few descriptors the process had before. The plan
//! checks that need against `ceiling()` (`plan::descriptors`): a set past
//! it is opened on demand, at most the ceiling less the spare at a time.
//! The executor `raise()`s the limit to what the plan chose, so a large
//! set is held whole where the host allows it.

/// Descriptors a table needs beyond the set's: the process's own (standard
/// streams, the lock, the marker, logs, sockets of the live outputs).
pub(crate) const SPARE_FDS: u64 = 64;

/// The most open files this process can have: its hard limit, or, where it
/// may raise the hard limit (CAP_SYS_RESOURCE), the kernel's `fs.nr_open`.
/// None where there is no such limit (Windows: handles run to millions).
#[cfg(unix)]
pub(crate) fn ceiling() -> Option<u64> {
    let hard = rustix::process::getrlimit(rustix::process::Resource::Nofile).maximum?;
    Some(match may_raise_hard().then(nr_open).flatten() {
        Some(n) => n.max(hard),
        None => hard,
    })
}

#[cfg(windows)]
pub(crate) fn ceiling() -> Option<u64> {
    None
}

/// Raises the soft limit to the hard one, and the hard one toward `want`
/// (up to `fs.nr_open`) where the process may. Best effort: where it cannot,
/// the plan has already refused a set that would not fit.
#[cfg(unix)]
pub(crate) fn raise(want: u64) {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
    let lim = getrlimit(Resource::Nofile);
    let Some(hard) = lim.maximum else {
        return; // unlimited: nothing to raise
    };
    let mut target = hard;
    if want > hard && may_raise_hard() {
        if let Some(max) = nr_open() {
            // Never below the hard limit it has: raising must not lower it.
            target = want.min(max).max(hard);
        }
    }
    if lim.current.is_some_and(|c| c >= target) && target == hard {
        return;
    }
    let raised = setrlimit(
        Resource::Nofile,
        Rlimit {
            current: Some(target),
            maximum: Some(target),
        },
    );
    if raised.is_err() && target > hard {
        // The capability check said yes but the kernel said no (a user
        // namespace, say): the soft limit to the hard one still helps.
        let _ = setrlimit(
            Resource::Nofile,
            Rlimit {
                current: Some(hard),
                maximum: Some(hard),
            },
        );
    }
}

#[cfg(windows)]
pub(crate) fn raise(_want: u64) {}

/// Whether this process holds CAP_SYS_RESOURCE (bit 24 of `CapEff` in
/// /proc/self/status), which lets it raise its hard limit. Root in a
/// container often lacks it.
#[cfg(unix)]
fn may_raise_hard() -> bool {
    const CAP_SYS_RESOURCE: u32 = 24;
    let Ok(status) = std::fs::read_to_string("/proc/self/status") else {
        return false;
    };
    status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
        .is_some_and(|caps| (caps >> CAP_SYS_RESOURCE) & 1 == 1)
}

/// The kernel's ceiling on any process's open files (`fs.nr_open`).
#[cfg(unix)]
fn nr_open() -> Option<u64> {
    std::fs::read_to_string("/proc/sys/fs/nr_open")
        .ok()?
        .trim()
        .parse()
        .ok()
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn the_ceiling_is_at_least_the_hard_limit() {
        let hard = rustix::process::getrlimit(rustix::process::Resource::Nofile).maximum;
        match (ceiling(), hard) {
            (Some(c), Some(h)) => assert!(c >= h, "ceiling {c} below the hard limit {h}"),
            (c, h) => assert_eq!(c, h),
        }
    }

    #[test]
    fn raising_leaves_the_soft_limit_at_least_at_the_hard_one() {
        raise(0);
        let lim = rustix::process::getrlimit(rustix::process::Resource::Nofile);
        assert_eq!(lim.current, lim.maximum);
    }
}
