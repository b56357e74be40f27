//! `run` and `suite run` over several local targets (`--target` with a
//! brace list): one plan per target, run together, one merged result.

use std::path::PathBuf;

use crate::error::{Result, VbError, exit};
use crate::input::args::{CommonArgs, RunArgs};
use crate::input::targets::{attach, check_threads_total, expand_local};
use crate::output::file::OutputDir;
use crate::output::ui::TerminalObserver;
use crate::result::expect::Expectation;
use crate::spec::JobSpec;

/// The local targets `--target` names (one for a plain path), after
/// checking that `--threads-total` has several to spread over.
pub(crate) fn local_targets(c: &CommonArgs, multi_host: bool) -> Result<Vec<PathBuf>> {
    if multi_host {
        check_threads_total(c.targets.threads_total, 0, true)?;
        return Ok(vec![c.target.clone()]);
    }
    let paths = expand_local(&c.target)?;
    check_threads_total(c.targets.threads_total, paths.len(), false)?;
    Ok(paths)
}

/// The flags with a suite's `threads_total = true` applied: over a local
/// list its threads are the total, as with `--threads-total`; over one
/// target total and per target are the same; with hosts it is refused, as
/// the flag is.
pub(crate) fn with_suite_threads_total(
    c: &CommonArgs,
    suite_says: bool,
    multi_host: bool,
) -> Result<CommonArgs> {
    let mut c = c.clone();
    if suite_says && !c.targets.threads_total {
        if multi_host {
            return Err(VbError::input(
                "the suite's threads_total = true is for several targets on this host; with --hosts, threads are per target",
            ));
        }
        c.targets.threads_total = expand_local(&c.target)?.len() > 1;
    }
    Ok(c)
}

/// `volbench run` over `paths` (two or more).
pub(crate) fn cmd_run(
    a: &RunArgs,
    paths: Vec<PathBuf>,
    expect: Option<Expectation>,
) -> Result<i32> {
    let mut first = a.clone();
    first.common.target = paths.first().cloned().unwrap_or_default();
    // Each target's own size is worked out when it is planned.
    let mut job =
        crate::input::flags::job_with_size(&first, Some(crate::spec::defaults::DIR_SIZE))?;
    attach(&mut job, paths, a.common.targets.threads_total)?;
    run_job(&job, &a.common, expect)
}

/// A job over several targets, `--dry-run` or run and reported.
pub(crate) fn run_job(job: &JobSpec, c: &CommonArgs, expect: Option<Expectation>) -> Result<i32> {
    crate::input::rate::refuse_search(job, "a search over several targets")?;
    let list = job
        .targets
        .as_ref()
        .ok_or_else(|| VbError::input("no list of targets"))?;
    let plans = crate::plan::targets::plan_targets(job, c.size.is_some())?;
    if c.out.dry_run {
        print!("{}", crate::plan::targets::describe(&plans, list));
        println!("resolved spec:");
        println!(
            "{}",
            serde_json::to_string_pretty(job).map_err(|e| VbError::run(e.to_string()))?
        );
        return Ok(exit::OK);
    }
    let out = c.out.output.as_deref().map(OutputDir::open).transpose()?;
    let (stop, finisher) = super::stop::arm(out, c.out.json, expect)?;
    let obs = TerminalObserver::new(true);
    eprint!("{}", crate::plan::targets::describe(&plans, list));
    let doc = crate::executor::execute_targets(job, &plans, &obs, &stop)?;
    finisher.finish(doc)
}
