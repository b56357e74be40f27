//! `volbench suite list` and `volbench suite show` (`suite run` takes the
//! one road, `run.rs`).

use crate::error::{Result, exit};
use crate::input::suite;
use crate::output;

pub(crate) fn cmd_suite_list() -> Result<i32> {
    for (name, description, source) in suite::list() {
        crate::console::outln!("{name:<14} {description}");
        if !source.is_empty() {
            crate::console::outln!("{:<14} from: {source}", "");
        }
        let (origin, text) = suite::load(&name)?;
        let (scaled, published) = suite::footprint::variants(&origin, &text, None)?;
        match published {
            Some(p) => {
                crate::console::outln!("{:<14} default:     {scaled} (scaled down)", "");
                crate::console::outln!("{:<14} --published: {p} (as the paper ran it)", "");
            }
            None => crate::console::outln!("{:<14} runs:        {scaled}", ""),
        }
    }
    crate::console::outln!(
        "\n`volbench suite show NAME` prints a suite to copy and edit; `volbench suite run NAME|FILE --target PATH` runs it; \
         --published (run and show) takes the paper's threads, sizes and durations instead of the scaled-down defaults."
    );
    Ok(exit::OK)
}

/// Prints a suite to copy and edit, or its published variant's values.
pub(crate) fn cmd_suite_show(name: &str, published: bool) -> Result<i32> {
    let (origin, text, path) = suite::load_at(name)?;
    if published {
        suite::parse(&origin, &text)?;
        let section = suite::published::section(&origin, &text)?;
        let runs = suite::footprint::runs_summary(&origin, &text, path.as_deref())?;
        crate::console::out!("{}", output::fmt::terminal(&format!("{section}{runs}")));
    } else {
        crate::console::out!("{}", output::fmt::terminal(&text));
    }
    Ok(exit::OK)
}
