//! A latency search (`--latency-target`) as a table: one row per step, the
//! rate tried, what it achieved, each limit's percentile, pass or fail; the
//! rate found in the title. The terminal, tables.md and the HTML report
//! show this one table.

use super::fmt;
use super::table::Table;
use crate::result::ResultDoc;
use crate::result::search::LatencySearchResult;

/// One table per search in the result.
pub(crate) fn tables(doc: &ResultDoc) -> Vec<Table> {
    doc.latency_search.iter().map(table).collect()
}

fn table(s: &LatencySearchResult) -> Table {
    let mut head: Vec<String> = ["Step", "Run", "Kind", "Rate tried", "IOPS"]
        .iter()
        .map(|h| h.to_string())
        .collect();
    head.extend(s.limits.iter().map(|l| l.label()));
    head.push("Result".into());
    let refs: Vec<&str> = head.iter().map(String::as_str).collect();
    let mut t = Table::new(format!("Latency search: {}", s.line()), &refs, 3);
    for st in &s.steps {
        let mut row = vec![
            st.step.to_string(),
            st.run.clone(),
            st.kind.name().to_string(),
            st.rate_iops.map_or("closed loop".into(), fmt::number),
            fmt::number(st.iops),
        ];
        row.extend(
            st.measured
                .iter()
                .map(|m| m.measured_us.map_or("-".into(), fmt::micros)),
        );
        row.push(if st.pass { "pass" } else { "fail" }.into());
        t.rows.push(row);
    }
    // The result column is words, not a figure.
    if let Some(last) = t.numeric.last_mut() {
        *last = false;
    }
    t.notes.push(
        "Each step an open-loop run at the rate tried (the first closed loop); a step passes \
         when every limit holds on its merged histograms and it carried 95% of its rate."
            .into(),
    );
    t
}
