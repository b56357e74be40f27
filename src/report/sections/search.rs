//! The latency searches of the results (`--latency-target`): each step and
//! the rate found, the one table the terminal shows too.

use super::super::Source;
use super::super::page::Section;

pub(crate) fn section(sources: &[Source]) -> Option<Section> {
    let mut tables = Vec::new();
    for s in sources {
        for mut t in crate::output::search::tables(&s.doc) {
            if sources.len() > 1 {
                t.title = format!("{} ({})", t.title, s.label);
            }
            tables.push(t);
        }
    }
    if tables.is_empty() {
        return None;
    }
    let mut sec = Section::new(
        "latency-search",
        "Latency search",
        "The highest open-loop rate that keeps the latency limits: a closed-loop run for the \
         ceiling, bisection on the rate, then a confirming run. Each step is a run of the \
         results below, so the curve of latency against rate is the one the search walked.",
    );
    sec.tables = tables;
    Some(sec)
}
