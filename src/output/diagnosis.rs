//! The diagnosis as the terminal and tables.md show it: one line per
//! finding, surest first, after the tables.

use super::table::Table;
use crate::result::ResultDoc;
use crate::result::diagnosis::Finding;

/// The findings as a table (empty when there are none).
pub(crate) fn table(doc: &ResultDoc) -> Option<Table> {
    if doc.diagnosis.is_empty() {
        return None;
    }
    let mut t = Table::new("Diagnosis", &["Finding", "Confidence", "Evidence"], 99);
    for f in &doc.diagnosis {
        t.rows.push(vec![
            f.kind.title().to_string(),
            f.confidence.name().to_string(),
            match subjects(f) {
                Some(who) => format!("{} {who}", f.message),
                None => f.message.clone(),
            },
        ]);
    }
    if let Some(e) = &doc.expect {
        t.notes
            .push(format!("expected ({}): {}", e.given, e.limits_text()));
        t.notes.extend(e.basis.iter().map(|b| format!("  {b}")));
    }
    Some(t)
}

/// The terminal's lines: plain text, so a long message wraps as prose.
pub(crate) fn lines(doc: &ResultDoc) -> String {
    let mut out = Vec::new();
    if doc.diagnosis.is_empty() {
        return String::new();
    }
    out.push("Diagnosis:".to_string());
    for f in &doc.diagnosis {
        out.push(format!("- [{}] {}", f.confidence.name(), f.message));
        if let Some(who) = subjects(f) {
            out.push(format!("  {who}"));
        }
    }
    if let Some(e) = &doc.expect {
        out.push(format!("  expected ({}): {}", e.given, e.limits_text()));
        out.extend(e.basis.iter().map(|b| format!("    {b}")));
    }
    out.join("\n")
}

/// Names shown of a finding said once for many hosts or targets; the rest
/// are counted (result.json's `subjects` has every one), so a thousand
/// hosts keep to a line.
const SHOWN: usize = 6;

/// "Hosts: a, b, c and 809 more (every one in result.json)".
fn subjects(f: &Finding) -> Option<String> {
    let (shown, rest) = f.subjects.split_at(f.subjects.len().min(SHOWN));
    if shown.is_empty() {
        return None;
    }
    let more = match rest.len() {
        0 => String::new(),
        n => format!(
            " and {} more (every one in result.json's diagnosis)",
            crate::units::thousands(n as f64)
        ),
    };
    Some(format!("Which: {}{more}.", shown.join(", ")))
}
