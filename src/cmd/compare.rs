//! `volbench compare`: results side by side, matched run by run, with what
//! differs between their conditions said first; with `--fail-below`, a
//! regression gate whose verdict is the exit code.

use super::report::emit;
use crate::error::{Result, VbError};
use crate::input::args::CompareArgs;
use crate::report;

pub(crate) fn cmd_compare(a: &CompareArgs) -> Result<i32> {
    if let Some(profile) = super::capture::load_profile(&a.dirs[0])? {
        return compare_profile(a, &profile);
    }
    // --against baseline: the store's baseline of the results' target and
    // suite is the base, first.
    let mut dirs = a.dirs.clone();
    if a.against.is_some() {
        dirs.insert(0, format!("{}baseline", crate::store::refs::PREFIX).into());
    }
    if dirs.len() < 2 {
        return Err(VbError::input(
            "compare takes two results or more (or one with --against baseline)",
        ));
    }
    let gate = report::compare::gate::Gate::parse(a.fail_below.as_deref(), a.fail_on.as_deref())?;
    // `-o -` is "none", as before -o became the only way to ask for one.
    let html_to = a.output.as_deref().filter(|o| o.as_os_str() != "-");
    if let Some(o) = html_to {
        crate::output::file::check_file(o)?;
    }
    let sources = crate::store::refs::load(&dirs, a.store.store.as_deref())?;
    let all = report::items(&sources);
    let c = report::compare::match_runs(&sources, &all);
    let verdict = gate.judge(&c, &sources, &all);
    if a.json {
        crate::console::outln!("{}", gate.json(&verdict)?);
    } else {
        print_comparison(a, &c, &sources, &all);
    }
    for w in &c.warnings {
        crate::console::errln!("warning: {w}");
    }
    if let Some(o) = html_to {
        let html = report::html::render(&report::compare::page(&sources))?;
        emit(Some(o), &html)?;
        crate::console::errln!("comparison report: {}", o.display());
    }
    Ok(gate.exit_code(&verdict))
}

fn print_comparison(
    a: &CompareArgs,
    c: &report::compare::Comparison,
    sources: &[report::Source],
    all: &[report::Item],
) {
    let table = report::compare::table(c, sources, all);
    let conditions = report::sections::conditions::differing(sources);
    // Metadata runs: each operation's figures and their change, after the classes.
    let per_op = report::compare::meta::table(c, sources, all);
    if a.markdown {
        if let Some(t) = &conditions {
            crate::console::outln!("{}", t.to_markdown());
        }
        crate::console::out!("{}", table.to_markdown());
        if let Some(t) = &per_op {
            crate::console::out!("\n{}", t.to_markdown());
        }
    } else {
        if let Some(t) = &conditions {
            crate::console::outln!("{}\n", t.to_terminal());
        }
        crate::console::outln!("{}", table.to_terminal());
        for line in report::compare::headlines(c, all) {
            crate::console::outln!("{line}");
        }
        if let Some(t) = &per_op {
            crate::console::outln!("\n{}", t.to_terminal());
            for line in report::compare::meta::headlines(c, all) {
                crate::console::outln!("{line}");
            }
        }
    }
}

/// `compare PROFILE RESULT`: the headroom statement (no HTML page: the
/// statement is the whole answer).
fn compare_profile(a: &CompareArgs, profile: &crate::result::profile::Profile) -> Result<i32> {
    let [p, r] = a.dirs.as_slice() else {
        return Err(VbError::input(format!(
            "compare {} takes one result after the profile, got {}",
            a.dirs[0].display(),
            a.dirs.len() - 1
        )));
    };
    if a.fail_on.is_some() || a.markdown || a.against.is_some() || a.output.is_some() {
        return Err(VbError::input(
            "compare PROFILE RESULT states the headroom: --fail-on, --markdown, --against and -o \
             apply to comparing results only (use --json and --fail-below)",
        ));
    }
    if super::capture::load_profile(r)?.is_some() {
        return Err(VbError::input(format!(
            "{} is a profile too: compare a profile with a result (volbench run writes one)",
            r.display()
        )));
    }
    let gate = report::compare::gate::Gate::parse(a.fail_below.as_deref(), None)?;
    let doc = crate::output::read_result(r)?;
    let h = report::compare::headroom::headroom(
        profile,
        &doc,
        &r.display().to_string(),
        gate.fail_below,
    )
    .map_err(|e| VbError::input(format!("compare {} {}: {e}", p.display(), r.display())))?;
    if a.json {
        let text = serde_json::to_string_pretty(&h)
            .map_err(|e| VbError::run(format!("writing the verdict as JSON: {e}")))?;
        crate::console::outln!("{text}");
    } else {
        for line in h.lines() {
            crate::console::outln!("{line}");
        }
    }
    Ok(if h.passed {
        crate::error::exit::OK
    } else {
        crate::error::exit::REGRESSION
    })
}
