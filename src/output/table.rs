//! The one table model every output shares, and its renderers: the
//! terminal (comfy-table), Markdown (tables.md, `report --format md`,
//! `compare --markdown`) and CSV (table-N-NAME.csv). The HTML page renders
//! the same model through its template (`report/report.html`), which
//! escapes every cell.

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{CellAlignment, Table as Tty};
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Table {
    pub title: String,
    pub head: Vec<String>,
    pub rows: Vec<Vec<String>>,
    /// Per column: figures, right-aligned.
    pub numeric: Vec<bool>,
    /// Lines shown under the table (discarded warm-up runs, a knee...).
    pub notes: Vec<String>,
}

impl Table {
    /// An empty table whose columns from `numeric_from` on hold figures.
    pub fn new(title: impl Into<String>, head: &[&str], numeric_from: usize) -> Self {
        Self {
            title: title.into(),
            head: head.iter().map(|h| h.to_string()).collect(),
            rows: Vec::new(),
            numeric: (0..head.len()).map(|i| i >= numeric_from).collect(),
            notes: Vec::new(),
        }
    }

    /// The title, then the table, then one line per note.
    pub fn to_terminal(&self) -> String {
        let mut t = Tty::new();
        t.load_preset(UTF8_FULL_CONDENSED);
        t.set_header(self.head.clone());
        for r in &self.rows {
            t.add_row(r.clone());
        }
        for (i, &n) in self.numeric.iter().enumerate() {
            if let (true, Some(c)) = (n, t.column_mut(i)) {
                c.set_cell_alignment(CellAlignment::Right);
            }
        }
        let mut out = String::new();
        if !self.title.is_empty() {
            out.push_str(&self.title);
            out.push('\n');
        }
        out.push_str(&t.to_string());
        for n in &self.notes {
            out.push('\n');
            out.push_str(n);
        }
        out
    }

    /// GitHub-flavoured Markdown: a `###` title, the table, the notes as a
    /// list.
    pub fn to_markdown(&self) -> String {
        let mut out = String::new();
        if !self.title.is_empty() {
            out.push_str(&format!("### {}\n\n", md_cell(&self.title)));
        }
        let line = |cells: &[String]| {
            format!(
                "| {} |\n",
                cells
                    .iter()
                    .map(|c| md_cell(c))
                    .collect::<Vec<_>>()
                    .join(" | ")
            )
        };
        out.push_str(&line(&self.head));
        out.push_str(&format!(
            "|{}|\n",
            (0..self.head.len())
                .map(|i| if self.numeric.get(i) == Some(&true) {
                    "---:"
                } else {
                    "---"
                })
                .collect::<Vec<_>>()
                .join("|")
        ));
        for r in &self.rows {
            out.push_str(&line(r));
        }
        if !self.notes.is_empty() {
            out.push('\n');
            for n in &self.notes {
                out.push_str(&format!("- {}\n", md_cell(n)));
            }
        }
        out
    }

    /// The header and rows as CSV (title and notes left out).
    pub fn to_csv(&self) -> Result<String, String> {
        let mut w = csv::Writer::from_writer(Vec::new());
        for r in std::iter::once(&self.head).chain(&self.rows) {
            w.write_record(r.iter().map(|c| csv_cell(c).into_owned()))
                .map_err(|e| e.to_string())?;
        }
        let bytes = w.into_inner().map_err(|e| e.to_string())?;
        String::from_utf8(bytes).map_err(|e| e.to_string())
    }
}

/// The one Markdown escaper. Pipes would split cells, angle brackets become
/// HTML where Markdown is rendered, a newline ends the row, brackets make
/// a link (`[x](javascript:...)`) and backquotes, stars, underscores and
/// tildes change what the text looks like; run names and paths come from
/// users, so all are escaped.
pub(crate) fn md_cell(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' | '|' | '[' | ']' | '`' | '*' | '_' | '~' => {
                out.push('\\');
                out.push(c);
            }
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\n' | '\r' => out.push(' '),
            _ => out.push(c),
        }
    }
    out
}

/// The one CSV cell guard: a spreadsheet runs a cell that starts with `=`,
/// `+`, `-` or `@` (or a tab or carriage return before one) as a formula,
/// so text from users (run names, paths, hosts) gets OWASP's leading `'`.
/// Figures are left alone: a negative number is not a formula.
pub(crate) fn csv_cell(s: &str) -> std::borrow::Cow<'_, str> {
    let risky = s.starts_with(['=', '+', '-', '@', '\t', '\r']);
    if risky && s != "-" && s.parse::<f64>().is_err() {
        format!("'{s}").into()
    } else {
        s.into()
    }
}

/// A file-name-safe form of a table title.
pub(crate) fn slug(title: &str) -> String {
    let mut s: String = title
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    while s.contains("--") {
        s = s.replace("--", "-");
    }
    s.trim_matches('-').chars().take(60).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Table {
        let mut t = Table::new("results", &["run", "IOPS"], 1);
        t.rows.push(vec!["a|b<script>\nx".into(), "1,000".into()]);
        t.notes.push("knee: <here>".into());
        t
    }

    #[test]
    fn markdown_cells_cannot_break_the_table_or_inject_html() {
        let md = sample().to_markdown();
        assert!(md.contains("| a\\|b&lt;script&gt; x | 1,000 |"), "{md}");
        assert!(md.contains("|---|---:|"), "{md}");
        assert!(md.contains("- knee: &lt;here&gt;"), "{md}");
        assert!(!md.contains('<'), "{md}");
    }

    #[test]
    fn terminal_shows_title_table_and_notes() {
        let text = sample().to_terminal();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "results");
        assert_eq!(lines.last(), Some(&"knee: <here>"));
        assert!(text.contains("1,000"));
    }

    #[test]
    fn markdown_cells_cannot_make_links_or_formatting() {
        assert_eq!(
            md_cell("[x](javascript:alert(1)) *b* `c` a_b ~d~ <i>|"),
            "\\[x\\](javascript:alert(1)) \\*b\\* \\`c\\` a\\_b \\~d\\~ &lt;i&gt;\\|"
        );
    }

    #[test]
    fn csv_cells_that_a_spreadsheet_would_run_get_a_quote() {
        for (cell, want) in [
            ("=HYPERLINK(\"http://x\")", "'=HYPERLINK(\"http://x\")"),
            ("+1+2", "'+1+2"),
            ("-cmd|' /C calc'!A0", "'-cmd|' /C calc'!A0"),
            ("@SUM(A1)", "'@SUM(A1)"),
            ("\t=1", "'\t=1"),
            ("\r=1", "'\r=1"),
            ("randread-4k", "randread-4k"),
            ("-1.5", "-1.5"),
            ("-", "-"),
            ("1,000", "1,000"),
        ] {
            assert_eq!(csv_cell(cell), want, "{cell:?}");
        }
    }

    #[test]
    fn csv_quotes_what_needs_it() {
        let csv = sample().to_csv().unwrap();
        assert!(csv.starts_with("run,IOPS\n"), "{csv}");
        assert!(csv.contains("\"a|b<script>\nx\",\"1,000\""), "{csv}");
    }
}
