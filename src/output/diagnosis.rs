//! The diagnosis as the terminal and tables.md show it: one line per
//! finding, surest first, after the tables.

use super::table::Table;
use crate::result::ResultDoc;

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
            f.message.clone(),
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
    }
    if let Some(e) = &doc.expect {
        out.push(format!("  expected ({}): {}", e.given, e.limits_text()));
        out.extend(e.basis.iter().map(|b| format!("    {b}")));
    }
    out.join("\n")
}
