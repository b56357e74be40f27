//! `volbench compare`: results side by side, matched run by run, with what
//! differs between their conditions said first; with `--fail-below`, a
//! regression gate whose verdict is the exit code.

use super::report::emit;
use crate::error::Result;
use crate::input::args::CompareArgs;
use crate::report;

pub(crate) fn cmd_compare(a: &CompareArgs) -> Result<i32> {
    let gate = report::compare::gate::Gate::parse(a.fail_below.as_deref(), a.fail_on.as_deref())?;
    crate::output::file::check_file(&a.output)?;
    let sources = report::load(&a.dirs)?;
    let all = report::items(&sources);
    let c = report::compare::match_runs(&sources, &all);
    let verdict = gate.judge(&c, &sources, &all);
    if a.json {
        println!("{}", gate.json(&verdict)?);
    } else {
        print_comparison(a, &c, &sources, &all);
    }
    for w in &c.warnings {
        eprintln!("warning: {w}");
    }
    if a.output.as_os_str() != "-" {
        let html = report::html::render(&report::compare::page(&sources))?;
        emit(Some(&a.output), &html)?;
        eprintln!("comparison report: {}", a.output.display());
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
            println!("{}", t.to_markdown());
        }
        print!("{}", table.to_markdown());
        if let Some(t) = &per_op {
            print!("\n{}", t.to_markdown());
        }
    } else {
        if let Some(t) = &conditions {
            println!("{}\n", t.to_terminal());
        }
        println!("{}", table.to_terminal());
        for line in report::compare::headlines(c, all) {
            println!("{line}");
        }
        if let Some(t) = &per_op {
            println!("\n{}", t.to_terminal());
            for line in report::compare::meta::headlines(c, all) {
                println!("{line}");
            }
        }
    }
}
