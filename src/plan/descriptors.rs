//! How many files each I/O thread of a run keeps open. Each local I/O
//! thread opens the set in a descriptor table of its own
//! (`worker::own_fd_table`); a set that fits under the process's limit is
//! held open whole, a larger one is opened on demand, at most so many files
//! at a time (fio's `openfiles`, `engine::on_demand`), and only a run that
//! needs every file open at once is refused, before any I/O.

use super::PlannedRun;
use crate::error::{Result, VbError};
use crate::io::fd_limit::SPARE_FDS;
use crate::spec::JobSpec;

/// The files a thread of `r` uses, whether they are local descriptors at
/// all (a diskless engine, a metadata run or a back end with its own
/// client holds none of this process's), and how many sets it holds.
fn local_set(job: &JobSpec, r: &PlannedRun) -> Option<(u64, u64)> {
    let s = &r.spec;
    let caps = r.engine.caps();
    if caps.diskless || s.meta.is_some() || caps.storage != crate::spec::Storage::Local {
        return None;
    }
    let files = u64::from(s.files.unwrap_or(job.target.files));
    let sets = if drops_cache_per_pass(job, r) { 2 } else { 1 };
    Some((files, sets))
}

/// Refuses `--open-files` on a job none of whose runs holds local
/// descriptors (a back end's client, a metadata run, the null engine):
/// it would change nothing.
pub(super) fn check_asked(job: &JobSpec, runs: &[PlannedRun]) -> Result<()> {
    match job.target.open_files {
        Some(n) if runs.iter().all(|r| local_set(job, r).is_none()) => {
            Err(VbError::input(format!(
                "--open-files {n}: it bounds the local files of block I/O runs, and this job has none \
             (a metadata run opens each file only for its operation; an nfs:// or smb:// \
             target's client and the null engine hold no descriptor per file)"
            )))
        }
        _ => Ok(()),
    }
}

/// The open files each I/O thread of `r` needs, the spare included: its
/// set (twice for a cache drop at each pass's end), or the files it keeps
/// open at a time when it opens them on demand (`r.open_files`).
pub(super) fn per_table(job: &JobSpec, r: &PlannedRun) -> u64 {
    let held = match (local_set(job, r), r.open_files) {
        (None, _) => 0,
        (Some(_), Some(at_once)) => u64::from(at_once),
        (Some((files, sets)), None) => files.saturating_mul(sets),
    };
    held.saturating_add(SPARE_FDS)
}

/// Whether run `r`'s workers drop the cached pages of the set at each
/// pass's end, through a second set of descriptors: fio does when it would
/// drop them at the start (invalidate, buffered), so every pass of a random
/// map reads the storage. One rule for the executor that does it and the
/// plan that counts its descriptors.
pub(crate) fn drops_cache_per_pass(job: &JobSpec, r: &PlannedRun) -> bool {
    r.spec.shape.random_map
        && (!job.target.direct || r.spec.buffered)
        && job.target.fill.invalidate
        && !r.engine.caps().diskless
}

/// Why run `r` must hold every file of its set open at once, if it must.
/// (A random map's cache drop at each pass's end needs a second set held
/// open only while the first is: on demand, it opens each file in turn.)
fn whole_set_needed(r: &PlannedRun) -> Option<&'static str> {
    let s = &r.spec;
    if s.shape.fsync_every.is_some() || s.shape.end_fsync {
        Some(
            "--fsync-every and --end-fsync sync each file a thread wrote, which stays open until then",
        )
    } else if s.replay.is_some() {
        Some("a replay keeps every file of its trace open")
    } else if r.engine == crate::spec::EngineKind::Overlapped {
        Some("the overlapped engine keeps every file of its set open")
    } else {
        None
    }
}

/// The files each I/O thread of `r` keeps open at a time: None for the
/// whole set, held open, when it fits under `limit` and the user set no
/// lower `--open-files`; else that many, opened on demand. Refused when
/// the run must hold every file open at once, or its iodepth could keep
/// every open file busy.
pub(super) fn open_at_once(
    job: &JobSpec,
    r: &PlannedRun,
    limit: Option<u64>,
) -> Result<Option<u32>> {
    let Some((files, sets)) = local_set(job, r) else {
        return Ok(None);
    };
    let asked = job.target.open_files.map(u64::from).filter(|&n| n < files);
    let wanted = files.saturating_mul(sets).saturating_add(SPARE_FDS);
    let over = limit.filter(|&l| wanted > l);
    let at_once = match (over, asked) {
        (None, None) => return Ok(None),
        (Some(l), a) => l.saturating_sub(SPARE_FDS).min(a.unwrap_or(u64::MAX)),
        (None, Some(a)) => a,
    };
    let need = || match over {
        Some(l) => format!(
            "{files} files need {wanted} open files in each I/O thread (the set{}, and \
             {SPARE_FDS} spare); this process may hold {l} (ulimit -Hn; root with \
             CAP_SYS_RESOURCE may raise it up to fs.nr_open)",
            if sets > 1 { " twice" } else { "" },
        ),
        None => format!("--open-files {at_once} keeps fewer than its {files} files open"),
    };
    let fix = if over.is_some() {
        "use fewer files, or raise the limit"
    } else {
        "leave --open-files out"
    };
    if let Some(why) = whole_set_needed(r) {
        return Err(VbError::input(format!(
            "run '{}': {}, and {why}: {fix}",
            r.spec.name,
            need()
        )));
    }
    // Each I/O in flight holds its file open until it completes; an I/O
    // is queued only in a slot whose last I/O completed, so at most depth
    // - 1 files are busy then, and depth files always leave one to close.
    // (psync's one I/O at a time works with a single open file.)
    if at_once < u64::from(r.depth) {
        return Err(VbError::input(format!(
            "run '{}': {}, and with --iodepth {} a thread needs at least {} files open at a \
             time: {}",
            r.spec.name,
            need(),
            r.depth,
            r.depth,
            if over.is_some() {
                fix
            } else {
                "use a larger --open-files or a smaller --iodepth"
            }
        )));
    }
    Ok(Some(u32::try_from(at_once).unwrap_or(u32::MAX)))
}

#[cfg(test)]
mod tests {
    use super::super::{Plan, plan};
    use super::*;

    /// A planned block run of `files` files and `threads` psync threads on a
    /// directory that does not exist yet (nothing is made by planning).
    fn planned(files: u32, threads: u32, buffered_random: bool) -> Plan {
        let t = tempfile::tempdir().unwrap();
        let mut job = crate::spec::tests::sample();
        job.target.path = t.path().join("set");
        job.target.files = files;
        job.target.size = u64::from(files) << 20;
        job.target.direct = !buffered_random;
        job.engine = crate::spec::EngineChoice::Only(crate::spec::EngineKind::Psync);
        let r = &mut job.runs[0];
        (r.threads, r.iodepth, r.read_pct) = (threads, 1, 100);
        r.rw = if buffered_random {
            crate::spec::Pattern::Randread
        } else {
            crate::spec::Pattern::Read
        };
        // fio's random map (each block once a pass), which a buffered run
        // pairs with a cache drop at each pass's end.
        r.shape.random_map = buffered_random;
        plan(job).unwrap()
    }

    #[test]
    fn a_thread_table_holds_one_set_whatever_the_thread_count() {
        let p = planned(150, 8, false);
        assert_eq!(p.open_files_wanted(), 150 + SPARE_FDS);
        assert_eq!(open_at_once(&p.job, &p.runs[0], Some(256)).unwrap(), None);
    }

    #[test]
    fn a_set_past_the_limit_is_opened_on_demand_within_it() {
        let p = planned(400, 1, false);
        let at_once = open_at_once(&p.job, &p.runs[0], Some(256)).unwrap();
        assert_eq!(at_once, Some(256 - SPARE_FDS as u32));
        let mut r = p.runs[0].clone();
        r.open_files = at_once;
        assert_eq!(
            per_table(&p.job, &r),
            256,
            "the table fills the limit, no more"
        );
    }

    #[test]
    fn a_buffered_random_run_needs_its_set_twice_or_opens_it_on_demand() {
        // Held whole, a second set drops the cache at each pass's end; on
        // demand, the drop opens each file in turn instead.
        let p = planned(100, 2, true);
        assert_eq!(p.open_files_wanted(), 200 + SPARE_FDS);
        let at_once = open_at_once(&p.job, &p.runs[0], Some(256)).unwrap();
        assert_eq!(at_once, Some(192));
    }

    #[test]
    fn a_run_that_needs_its_whole_set_open_is_refused_naming_why() {
        let mut p = planned(400, 1, false);
        p.runs[0].spec.shape.end_fsync = true;
        let msg = open_at_once(&p.job, &p.runs[0], Some(256))
            .unwrap_err()
            .to_string();
        assert!(
            msg.contains("400 files need 464 open files in each I/O thread (the set, and 64"),
            "{msg}"
        );
        assert!(msg.contains("may hold 256 (ulimit -Hn"), "{msg}");
        assert!(msg.contains("--end-fsync sync each file"), "{msg}");
    }

    #[test]
    fn open_files_asks_for_files_on_demand_below_the_limit() {
        let mut p = planned(100, 1, false);
        p.job.target.open_files = Some(10);
        assert_eq!(
            open_at_once(&p.job, &p.runs[0], Some(1024)).unwrap(),
            Some(10)
        );
        // The lower of the two wins; a count of at least the set holds it.
        assert_eq!(
            open_at_once(&p.job, &p.runs[0], Some(SPARE_FDS + 5)).unwrap(),
            Some(5)
        );
        p.job.target.open_files = Some(100);
        assert_eq!(open_at_once(&p.job, &p.runs[0], Some(1024)).unwrap(), None);
        p.job.target.open_files = Some(4);
        p.runs[0].depth = 5;
        let msg = open_at_once(&p.job, &p.runs[0], None)
            .unwrap_err()
            .to_string();
        assert!(
            msg.contains(
                "--open-files 4 keeps fewer than its 100 files open, and with --iodepth 5"
            ),
            "{msg}"
        );
        p.runs[0].depth = 1;
        p.runs[0].spec.shape.fsync_every = Some(8);
        let msg = open_at_once(&p.job, &p.runs[0], None)
            .unwrap_err()
            .to_string();
        assert!(msg.contains("leave --open-files out"), "{msg}");
    }

    #[test]
    fn a_limit_below_the_depth_is_refused() {
        let mut p = planned(400, 1, false);
        p.runs[0].depth = 32;
        let msg = open_at_once(&p.job, &p.runs[0], Some(SPARE_FDS + 31))
            .unwrap_err()
            .to_string();
        assert!(
            msg.contains("with --iodepth 32 a thread needs at least 32"),
            "{msg}"
        );
        assert_eq!(
            open_at_once(&p.job, &p.runs[0], Some(SPARE_FDS + 32)).unwrap(),
            Some(32)
        );
    }
}
