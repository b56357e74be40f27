//! How a run's I/O threads open the set's files: all of them, or a bounded
//! number at a time as their I/Os reach them (`PlannedRun::open_files`,
//! `engine::on_demand`), with the read-ahead advice each open file needs,
//! and the cache of the whole set dropped before a buffered run, one file
//! at a time when the set does not fit.

use crate::io::backend::Files;
use crate::io::target::{self, Prepared};
use crate::io::worker::WorkerSetup;
use crate::plan::{Plan, PlannedRun};

/// The set's files as a worker of `run` does its I/O on them: opened
/// here, or, when the plan said the set does not fit, a table that opens
/// them as they are needed.
pub(super) fn open_set(
    plan: &Plan,
    run: &PlannedRun,
    prepared: &Prepared,
) -> crate::error::Result<Files> {
    let (job, spec) = (&plan.job, &run.spec);
    let direct = job.target.direct && !spec.buffered;
    let kernel_async = run.engine.caps().kernel_async;
    if let Some(at_once) = run.open_files {
        if let Some((n, mut open)) =
            target::opener(prepared, direct, job.target.write_sync, kernel_async)
        {
            // The advice belongs to the open file: each gets it as it opens.
            let random = (!direct).then_some(spec.rw.is_random());
            let open: crate::io::engine::on_demand::Opener = Box::new(move |i| {
                let fd = open(i)?;
                if let Some(random) = random {
                    advise(std::slice::from_ref(&fd), random);
                }
                Ok(fd)
            });
            let table = crate::io::engine::on_demand::OnDemand::new(open, n, at_once);
            return Ok(Files::OnDemand(table));
        }
    }
    target::open_files(
        prepared,
        direct,
        job.target.write_sync,
        kernel_async,
        (run.depth, spec.max_bs()),
    )
}

/// Proves, before any thread starts, that every file of the set opens as
/// the workers will open it: the whole set at once, or each file in turn
/// when they open them on demand. Nothing stays open.
pub(super) fn prove_set_opens(
    plan: &Plan,
    run: &PlannedRun,
    prepared: &Prepared,
) -> crate::error::Result<()> {
    match open_set(plan, run, prepared)? {
        Files::OnDemand(mut table) => table.open_each(),
        _ => Ok(()),
    }
}

/// fio's invalidate=1: drops the set's cached pages, so a buffered run
/// starts from the storage, not from the pages the fill or the run before
/// left cached. Advice only, so a file system that ignores it costs a
/// warmer run, never a failure. Windows has no such advice: a buffered run
/// there starts from whatever its cache holds (docs/guide/windows.md).
#[cfg(unix)]
pub(super) fn drop_cached(
    run: &PlannedRun,
    prepared: &Prepared,
    sync: crate::spec::WriteSync,
) -> crate::error::Result<()> {
    use rustix::fs::{Advice, fadvise};
    if run.open_files.is_some() {
        if let Some((n, mut open)) = target::opener(prepared, false, sync, false) {
            for i in 0..n {
                let _ = fadvise(open(i)?, 0, None, Advice::DontNeed);
            }
            return Ok(());
        }
    }
    for fd in target::open_files(prepared, false, sync, false, (1, 4096))?.fds() {
        let _ = fadvise(fd, 0, None, Advice::DontNeed);
    }
    Ok(())
}

#[cfg(windows)]
pub(super) fn drop_cached(
    _run: &PlannedRun,
    _prepared: &Prepared,
    _sync: crate::spec::WriteSync,
) -> crate::error::Result<()> {
    Ok(())
}

/// fio's fadvise_hint=1 (its default) on a buffered run's files: the
/// kernel's read-ahead would otherwise turn each random 4k miss into a 128k
/// read and cache the set within seconds, measuring memory, not storage.
#[cfg(unix)]
pub(super) fn advise(files: &[std::os::fd::OwnedFd], random: bool) {
    let advice = if random {
        rustix::fs::Advice::Random
    } else {
        rustix::fs::Advice::Sequential
    };
    for fd in files {
        let _ = rustix::fs::fadvise(fd, 0, None, advice);
    }
}

/// Windows takes its read-ahead hint (FILE_FLAG_RANDOM_ACCESS or
/// SEQUENTIAL_SCAN) as a flag of the open, not as advice afterwards.
#[cfg(windows)]
pub(super) fn advise<F>(_files: &[F], _random: bool) {}

/// After a worker reopened its files: the advice belongs to the open file,
/// so the reopened ones need it again (without it read-ahead cached a
/// random run's set within seconds), and the random map's cache drop at
/// each pass's end is set up here, in the thread's own table: a second set
/// held open, or, when the thread opens its files on demand, each file
/// opened in turn for its advice and closed again.
pub(super) fn readvise(
    setup: &mut WorkerSetup,
    (buffered, random): (bool, bool),
    drop_per_pass: bool,
    prepared: &Prepared,
) -> Result<(), String> {
    if buffered {
        advise(setup.files.fds(), random);
    }
    let on_demand = matches!(setup.files, Files::OnDemand(_));
    if !drop_per_pass || (setup.files.fds().is_empty() && !on_demand) {
        return Ok(());
    }
    let sync = crate::spec::WriteSync::default();
    if on_demand {
        if let Some((n, mut open)) = target::opener(prepared, false, sync, false) {
            setup.io_gen.drop_at_pass_end(Box::new(move || {
                for i in 0..n {
                    if let Ok(fd) = open(i) {
                        drop_pages(&fd);
                    }
                }
            }));
        }
        return Ok(());
    }
    let files =
        target::open_files(prepared, false, sync, false, (1, 4096)).map_err(|e| e.to_string())?;
    if let Files::Fds(fds) = files {
        setup
            .io_gen
            .drop_at_pass_end(Box::new(move || fds.iter().for_each(drop_pages)));
    }
    Ok(())
}

/// Advice to drop a file's cached pages. Advice only: a file system that
/// ignores it costs a warmer pass, never a failure.
fn drop_pages(fd: &crate::io::sys::fd::OwnedFd) {
    let _ = crate::io::sys::fs::fadvise(fd, 0, None, crate::io::sys::fs::Advice::DontNeed);
}
