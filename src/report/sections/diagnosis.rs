//! The diagnosis at the top of the report: what the figures say, before
//! the figures (stored findings; results without them show none).

use super::super::Source;
use super::super::page::Section;

pub(crate) fn section(sources: &[Source]) -> Option<Section> {
    let mut tables = Vec::new();
    for s in sources {
        if let Some(mut t) = crate::output::diagnosis::table(&s.doc) {
            if sources.len() > 1 {
                t.title = format!("Diagnosis: {}", s.label);
            }
            tables.push(t);
        }
    }
    if tables.is_empty() {
        return None;
    }
    let mut sec = Section::new(
        "diagnosis",
        "Diagnosis",
        "Read from the figures below, surest first: limits reached (given with --expect, or \
         inferred from IOPS or MiB/s flat across block sizes), time lost outside the I/O \
         (Little's law), the concurrency a single-thread latency calls for, a host slower \
         than the others, and warm-up effects. Each finding says how sure it is.",
    );
    sec.tables = tables;
    Some(sec)
}
