//! The one road of every command that runs I/O: `run`, `suite run`, the
//! importers' runs (an import is a suite) and `quick`. Arguments -> `Job`
//! (`input::job`: every flag read once) -> plan (`plan::plan_job`: this
//! host's targets or many hosts, decided once) -> the runner (the executor
//! here, or the coordinator of the hosts) -> `finish`. The front ends
//! differ only in how they make the job.

use super::{finish, stop};
use crate::error::{Result, exit};
use crate::executor::runner::{Local, Runner, Watch};
use crate::input::args::{CommonArgs, RunArgs, SuiteRunArgs};
use crate::input::hosts::HostSpec;
use crate::input::job::{self, Job, Suite};
use crate::plan::{self, JobPlan};
use crate::remote::coordinator::Hosts;

/// `volbench run`.
pub(crate) fn cmd_run(a: &RunArgs) -> Result<i32> {
    // --like PROFILE: the flags derived from a captured profile, each said
    // with the figure it came from; flags the user gave win.
    let (a, derived) = crate::input::like::resolve(a)?;
    for l in derived {
        crate::console::errln!("{l}");
    }
    go(job::of_run(&a)?)
}

/// `volbench suite run`.
pub(crate) fn cmd_suite_run(a: &SuiteRunArgs) -> Result<i32> {
    let (suite, said) = Suite::load(&a.suite, a.published.published)?;
    for l in said {
        crate::console::errln!("{l}");
    }
    go(suite.job(&a.common, a.no_warmup_run, None)?)
}

/// `suite run` on a suite's text (an import's); `listed` hosts (an
/// import's) replace the host flags' list.
pub(crate) fn run_suite_text(
    origin: &str,
    text: &str,
    c: &CommonArgs,
    no_warmup_run: bool,
    listed: Option<Vec<HostSpec>>,
) -> Result<i32> {
    go(Suite::text(origin, text)?.job(c, no_warmup_run, listed)?)
}

/// A job from any front end: planned, run by the runner its plan calls
/// for, finished. The output directory and every sink are proven usable
/// before the benchmark, not found unusable after it, and a stop from here
/// on leaves the result gathered so far.
pub(crate) fn go(job: Job) -> Result<i32> {
    let runner: Box<dyn Runner> = match plan::plan_job(&job)? {
        JobPlan::Here(p) => Box::new(Local::new(p)),
        JobPlan::Hosts(p) => Box::new(Hosts::new(p)?),
    };
    if let Some(l) = &job.first {
        crate::console::errln!("{l}");
    }
    if job.outputs.dry_run {
        crate::console::out!("{}", runner.dry_run()?);
        return Ok(exit::OK);
    }
    let to = finish::Outputs::open(&job.outputs)?;
    // The terminal and the live outputs the flags ask for, each file
    // created and port bound before any I/O.
    let obs = crate::output::live::observers(&job.live, job.on_protocol_target())?;
    let (stop, finisher) = stop::arm(to, job.expect, runner.stop_grace())?;
    let doc = runner.run(&Watch {
        obs: &obs,
        stop: &stop,
        on_exit: &stop::on_exit,
    })?;
    finisher.finish(doc)
}
