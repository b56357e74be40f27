//! Stops that always leave results. SIGINT, SIGTERM, SIGHUP (a closed
//! terminal or ssh session) and SIGQUIT, or on Windows the console's
//! Ctrl-C, Ctrl-Break, close and shutdown events (`signals`), set the stop
//! flag the job polls;
//! the job then winds down and writes what it measured. If it has not
//! within `GRACE` (I/O threads blocked on slow or frozen storage, a fill
//! stuck in a write), the result kept in `executor::rescue` is written
//! instead and the process ends with exit 130. A second signal does that
//! at once, but never before the result is on disk: a write under way is
//! finished first.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use crate::error::{Result, exit};
use crate::executor::rescue;
use crate::result::ResultDoc;
use crate::result::expect::Expectation;

/// How long a stopped job has to write its own result before the result
/// kept so far is written for it (docs/reference/targets-and-safety.md: "within 3 seconds", the write
/// included).
pub(crate) const GRACE: Duration = Duration::from_secs(2);

/// Where and how the job's result is written, for whichever of the job and
/// the stop gets there first.
#[derive(Clone)]
pub(crate) struct Job {
    to: super::finish::Outputs,
    expect: Option<Expectation>,
}

static JOB: Mutex<Option<Job>> = Mutex::new(None);
/// Held while a result is written; true once one was.
static WRITTEN: Mutex<bool> = Mutex::new(false);
/// What to undo on the way out (quick's scratch directory), once.
static CLEANUP: Mutex<Option<Box<dyn FnOnce() + Send>>> = Mutex::new(None);
static STOP: OnceLock<Arc<AtomicBool>> = OnceLock::new();
/// The grace of the job armed now: `GRACE`, or longer for a coordinator,
/// whose hosts have their own time to report what they measured.
static JOB_GRACE: Mutex<Duration> = Mutex::new(GRACE);

fn lock<T>(m: &'static Mutex<T>) -> MutexGuard<'static, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The stop flag, its signal thread started on first use. Called as soon as
/// a command that runs I/O starts, so no signal finds the default
/// disposition (a silent death) on the way to the I/O.
pub(crate) fn stop_flag() -> Result<Arc<AtomicBool>> {
    if let Some(s) = STOP.get() {
        return Ok(s.clone());
    }
    let stop = STOP
        .get_or_init(|| Arc::new(AtomicBool::new(false)))
        .clone();
    super::signals::spawn(on_stop)?;
    Ok(stop)
}

/// A stop, from a signal or a closed stdout: the first sets the flag the
/// job polls and arms the grace; a second ends it now (once the result is
/// written).
fn on_stop(name: &str) {
    let Some(flag) = STOP.get() else { return };
    // The job's result is already written whole (the metrics endpoint
    // lingering for a last scrape): nothing is left to wait for.
    if WRITTEN.try_lock().is_ok_and(|w| *w) {
        rescue_and_exit();
    }
    if flag.swap(true, Ordering::SeqCst) {
        rescue_and_exit();
    }
    let grace = *lock(&JOB_GRACE);
    crate::console::errln!(
        "volbench: {name}: stopping; the results so far are written within {}s \
         (a second signal ends it sooner, once they are written)",
        grace.as_secs() + 1
    );
    let _ = std::thread::Builder::new()
        .name("vb-grace".into())
        .spawn(move || {
            std::thread::sleep(grace);
            rescue_and_exit();
        });
}

/// Names where the job's result goes, so a stop can write it too; returns
/// the stop flag. `extra` is how much longer than `GRACE` the job's own
/// wind-down may take: a coordinator gives its hosts time to send what
/// they measured (a stop's result then holds every host's runs so far).
pub(crate) fn arm(
    to: super::finish::Outputs,
    expect: Option<Expectation>,
    extra: Duration,
) -> Result<(Arc<AtomicBool>, Job)> {
    *lock(&JOB_GRACE) = GRACE + extra;
    let stop = stop_flag()?;
    let job = Job { to, expect };
    *lock(&JOB) = Some(job.clone());
    // A reader of stdout that goes away while the I/O runs (`--live -`
    // into `| head`) stops the run as a closed terminal does: the results
    // so far are written, exit 130.
    crate::console::on_stdout_closed(Some(Box::new(|| on_stop("stdout closed (EPIPE)"))));
    Ok((stop, job))
}

impl Job {
    /// Writes the job's result, unless a stop already wrote one.
    pub(crate) fn finish(&self, doc: ResultDoc) -> Result<i32> {
        // The job's own summary into a closed pipe stops nothing.
        crate::console::on_stdout_closed(None);
        let mut written = lock(&WRITTEN);
        if *written {
            return Ok(exit::INTERRUPTED);
        }
        let code = self.write(doc);
        *written = true;
        code
    }

    fn write(&self, doc: ResultDoc) -> Result<i32> {
        // A host lost mid-run marks the result interrupted too; the line is
        // for a stop the user asked for.
        if doc.interrupted && STOP.get().is_some_and(|s| s.load(Ordering::Relaxed)) {
            crate::console::errln!("{}", stopped_line(&doc));
        }
        let doc = super::finish::annotate(doc, self.expect.clone());
        super::finish::finish(&doc, &self.to)
    }
}

/// The one line that says where a stop left the job.
fn stopped_line(doc: &ResultDoc) -> String {
    let doing = rescue::what_it_was_doing();
    let doing = if doing.is_empty() {
        String::new()
    } else {
        format!(" while {doing}")
    };
    match doc.runs.len() {
        0 => format!("volbench: stopped{doing}: no run was measured; the result records the stop"),
        n => format!(
            "volbench: stopped{doing}: the result keeps {n} measured run{}",
            if n == 1 { "" } else { "s" }
        ),
    }
}

/// Registers what to undo however the process ends (quick's scratch
/// directory); `cleanup` runs it, once.
pub(crate) fn on_exit(f: Box<dyn FnOnce() + Send>) {
    *lock(&CLEANUP) = Some(f);
}

/// Runs what `on_exit` registered, if it has not run yet, for at most
/// `GRACE`: on a file system that no longer answers it is left behind.
pub(crate) fn cleanup() {
    let Some(f) = lock(&CLEANUP).take() else {
        return;
    };
    let (tx, rx) = std::sync::mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name("vb-cleanup".into())
        .spawn(move || {
            f();
            let _ = tx.send(());
        });
    if spawned.is_ok() && rx.recv_timeout(GRACE).is_err() {
        crate::console::errln!(
            "volbench: the scratch files could not be removed in time (the file system does not answer)"
        );
    }
}

/// The end of a stop: the result kept so far is written (or the one being
/// written finished), the scratch files removed, and the process exits 130.
fn rescue_and_exit() -> ! {
    {
        let mut written = lock(&WRITTEN);
        if !*written {
            let job = lock(&JOB).clone();
            match (job, rescue::take()) {
                (Some(job), Some(doc)) => {
                    if let Err(e) = job.write(doc) {
                        crate::console::errln!("volbench: error: {e}");
                    }
                }
                _ => crate::console::errln!(
                    "volbench: stopped before the run began: nothing was measured"
                ),
            }
            *written = true;
        }
        cleanup();
        std::process::exit(exit::INTERRUPTED);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::output::sink::testing::kept;

    /// A stop's result (and the rescue's, which writes through the same
    /// `Job::write`) reaches the sinks as the run's own end does.
    #[test]
    fn a_stopped_jobs_result_goes_to_the_sinks_after_result_json() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("out");
        let sink = kept(false, &dir);
        let job = Job {
            to: super::super::finish::tests::outputs(&dir, std::slice::from_ref(&sink)),
            expect: None,
        };
        let mut doc = crate::report::fixtures::six_patterns();
        doc.interrupted = true;
        assert_eq!(job.write(doc).unwrap(), exit::INTERRUPTED);
        let seen = sink.seen.lock().unwrap();
        assert_eq!(seen.len(), 1);
        assert!(seen[0].1, "result.json first");
        assert!(dir.join("result.json").is_file());
    }
}
