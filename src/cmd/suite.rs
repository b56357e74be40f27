//! `volbench suite list` and `volbench suite show` (`suite run` takes the
//! one road, `run.rs`).

use crate::error::{Result, exit};
use crate::input::suite;
use crate::output;

pub(crate) fn cmd_suite_list() -> Result<i32> {
    for (name, description, source) in suite::list() {
        println!("{name:<14} {description}");
        if !source.is_empty() {
            println!("{:<14} from: {source}", "");
        }
        let (origin, text) = suite::load(&name)?;
        let (scaled, published) = suite::published::variants(&origin, &text)?;
        match published {
            Some(p) => {
                println!("{:<14} default:     {scaled} (scaled down)", "");
                println!("{:<14} --published: {p} (as the paper ran it)", "");
            }
            None => println!("{:<14} runs:        {scaled}", ""),
        }
    }
    println!(
        "\n`volbench suite show NAME` prints a suite to copy and edit; `volbench suite run NAME|FILE --target PATH` runs it; \
         --published (run and show) takes the paper's threads, sizes and durations instead of the scaled-down defaults."
    );
    Ok(exit::OK)
}

/// Prints a suite to copy and edit, or its published variant's values.
pub(crate) fn cmd_suite_show(name: &str, published: bool) -> Result<i32> {
    let (origin, text) = suite::load(name)?;
    if published {
        suite::parse(&origin, &text)?;
        let section = suite::published::section(&origin, &text)?;
        let runs = suite::published::runs_summary(&origin, &text)?;
        print!("{}", output::fmt::terminal(&format!("{section}{runs}")));
    } else {
        print!("{}", output::fmt::terminal(&text));
    }
    Ok(exit::OK)
}
