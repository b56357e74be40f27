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
    pub(crate) title: String,
    /// What ran it, as the papers title their tables ("8 hosts, Ubuntu
    /// 22.04.3 LTS"): shown after the title, kept out of file names.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub(crate) about: String,
    pub(crate) head: Vec<String>,
    pub(crate) rows: Vec<Vec<String>>,
    /// Per column: figures, right-aligned.
    pub(crate) numeric: Vec<bool>,
    /// Lines shown under the table (discarded warm-up runs, a knee...).
    pub(crate) notes: Vec<String>,
}

impl Table {
    /// An empty table whose columns from `numeric_from` on hold figures.
    pub(crate) fn new(title: impl Into<String>, head: &[&str], numeric_from: usize) -> Self {
        Self {
            title: title.into(),
            about: String::new(),
            head: head.iter().map(|h| h.to_string()).collect(),
            rows: Vec::new(),
            numeric: (0..head.len()).map(|i| i >= numeric_from).collect(),
            notes: Vec::new(),
        }
    }

    /// The title, and what ran it when known: `Results (1 host, Debian
    /// GNU/Linux 12 (bookworm))`.
    pub(crate) fn heading(&self) -> String {
        if self.about.is_empty() {
            self.title.clone()
        } else {
            format!("{} ({})", self.title, self.about)
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
            out.push_str(&self.heading());
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
            out.push_str(&format!("### {}\n\n", md_cell(&self.heading())));
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

    /// The header and rows as CSV (title and notes left out), figures as
    /// numbers a spreadsheet computes with: `4,250` is 4250, a latency
    /// column's `235 µs` and `1.03 ms` are 235 and 1030 under a header that
    /// says `(µs)`, `3%/37%` two columns of percents, `-` an empty cell.
    /// The figures are those shown (three significant digits for a
    /// latency); summary.csv keeps them whole.
    pub(crate) fn to_csv(&self) -> Result<String, String> {
        let mut w = csv::Writer::from_writer(Vec::new());
        let kinds: Vec<ColumnKind> = (0..self.head.len()).map(|i| self.column_kind(i)).collect();
        let mut head = Vec::new();
        for (h, k) in self.head.iter().zip(&kinds) {
            match k {
                ColumnKind::Latency => head.push(format!("{h} (µs)")),
                ColumnKind::Pair => {
                    let (a, b) = pair_heads(h);
                    head.push(a);
                    head.push(b);
                }
                ColumnKind::Number | ColumnKind::Text => head.push(h.clone()),
            }
        }
        w.write_record(head.iter().map(|c| csv_cell(c).into_owned()))
            .map_err(|e| e.to_string())?;
        for r in &self.rows {
            let mut out = Vec::new();
            for (c, k) in r
                .iter()
                .zip(kinds.iter().chain(std::iter::repeat(&ColumnKind::Text)))
            {
                match k {
                    ColumnKind::Text => out.push(c.clone()),
                    ColumnKind::Number => out.push(plain_number(c).unwrap_or_else(|| blank(c))),
                    ColumnKind::Latency => out.push(latency_us(c).unwrap_or_else(|| blank(c))),
                    ColumnKind::Pair => match percent_pair(c) {
                        Some((a, b)) => {
                            out.push(a);
                            out.push(b);
                        }
                        None => {
                            out.push(blank(c));
                            out.push(String::new());
                        }
                    },
                }
            }
            w.write_record(out.iter().map(|c| csv_cell(c).into_owned()))
                .map_err(|e| e.to_string())?;
        }
        let bytes = w.into_inner().map_err(|e| e.to_string())?;
        String::from_utf8(bytes).map_err(|e| e.to_string())
    }
}

/// How a column's cells are written to CSV: decided from every cell, so
/// a column is converted only when all its figures read the same way.
#[derive(Debug, Clone, Copy, PartialEq)]
enum ColumnKind {
    Text,
    Number,
    Latency,
    Pair,
}

impl Table {
    fn column_kind(&self, i: usize) -> ColumnKind {
        if self.numeric.get(i) != Some(&true) {
            return ColumnKind::Text;
        }
        let cells: Vec<&str> = self
            .rows
            .iter()
            .filter_map(|r| r.get(i).map(|c| c.trim()))
            .filter(|c| !c.is_empty() && *c != "-")
            .collect();
        let all = |f: fn(&str) -> bool| !cells.is_empty() && cells.iter().all(|c| f(c));
        if all(|c| plain_number(c).is_some()) {
            ColumnKind::Number
        } else if all(|c| latency_us(c).is_some()) {
            ColumnKind::Latency
        } else if all(|c| percent_pair(c).is_some()) {
            ColumnKind::Pair
        } else {
            ColumnKind::Text
        }
    }
}

/// A cell with no figure ("-", a run that did not do that operation) is
/// empty in CSV; anything else stays as written.
fn blank(c: &str) -> String {
    if c.trim() == "-" {
        String::new()
    } else {
        c.to_string()
    }
}

/// `4,250` -> `4250`, `323.4` stays; None for anything but a number with
/// optional thousands separators.
fn plain_number(c: &str) -> Option<String> {
    let t: String = c.trim().chars().filter(|&ch| ch != ',').collect();
    let digits = t.strip_prefix('-').unwrap_or(&t);
    let ok = !digits.is_empty()
        && digits.chars().all(|ch| ch.is_ascii_digit() || ch == '.')
        && digits.matches('.').count() <= 1
        && digits.chars().any(|ch| ch.is_ascii_digit());
    ok.then_some(t)
}

/// `fmt::micros`'s text back in µs, exactly as shown: `235 µs` -> 235,
/// `1.03 ms` -> 1030, `2.5 s` -> 2500000 (the decimal point moved, no
/// floating-point rounding).
fn latency_us(c: &str) -> Option<String> {
    let (num, unit) = c.trim().split_once(' ')?;
    let shift = match unit {
        "µs" | "us" => 0,
        "ms" => 3,
        "s" => 6,
        _ => return None,
    };
    let num = plain_number(num)?;
    Some(shift_decimal(&num, shift))
}

/// `num` times 10^shift, in decimal text.
fn shift_decimal(num: &str, shift: usize) -> String {
    let (neg, num) = match num.strip_prefix('-') {
        Some(n) => (true, n),
        None => (false, num),
    };
    let (int, frac) = num.split_once('.').unwrap_or((num, ""));
    let mut frac: String = frac.to_string();
    while frac.len() < shift {
        frac.push('0');
    }
    let (moved, rest) = frac.split_at(shift);
    let mut int = format!("{int}{moved}");
    let trimmed = int.trim_start_matches('0');
    int = if trimmed.is_empty() {
        "0".into()
    } else {
        trimmed.to_string()
    };
    let rest = rest.trim_end_matches('0');
    let sign = if neg { "-" } else { "" };
    if rest.is_empty() {
        format!("{sign}{int}")
    } else {
        format!("{sign}{int}.{rest}")
    }
}

/// `3%/37%` (`fmt::cpu`) -> ("3", "37").
fn percent_pair(c: &str) -> Option<(String, String)> {
    let (a, b) = c.trim().split_once('/')?;
    let a = plain_number(a.strip_suffix('%')?)?;
    let b = plain_number(b.strip_suffix('%')?)?;
    Some((a, b))
}

/// "cpu usr/sys" -> ("cpu usr %", "cpu sys %").
fn pair_heads(h: &str) -> (String, String) {
    let (prefix, last) = match h.rsplit_once(' ') {
        Some((p, l)) => (format!("{p} "), l),
        None => (String::new(), h),
    };
    match last.split_once('/') {
        Some((a, b)) => (format!("{prefix}{a} %"), format!("{prefix}{b} %")),
        None => (format!("{h} 1 %"), format!("{h} 2 %")),
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
        assert!(csv.contains("\"a|b<script>\nx\",1000"), "{csv}");
    }

    #[test]
    fn csv_figures_are_numbers_a_spreadsheet_computes_with() {
        let mut t = Table::new(
            "Results",
            &["run", "IOPS", "MiB/s", "p99", "cpu usr/sys"],
            1,
        );
        t.rows.push(vec![
            "a".into(),
            "41,389".into(),
            "323.4".into(),
            "969 µs".into(),
            "3%/37%".into(),
        ]);
        t.rows.push(vec![
            "b".into(),
            "-".into(),
            "0.5".into(),
            "1.03 ms".into(),
            "12%/0%".into(),
        ]);
        t.rows.push(vec![
            "c".into(),
            "7".into(),
            "1.0".into(),
            "2.5 s".into(),
            "1%/2%".into(),
        ]);
        let csv = t.to_csv().unwrap();
        assert_eq!(
            csv,
            "run,IOPS,MiB/s,p99 (µs),cpu usr %,cpu sys %\n\
             a,41389,323.4,969,3,37\n\
             b,,0.5,1030,12,0\n\
             c,7,1.0,2500000,1,2\n"
        );
        // Every figure parses as a number.
        for line in csv.lines().skip(1) {
            for cell in line.split(',').skip(1).filter(|c| !c.is_empty()) {
                assert!(cell.parse::<f64>().is_ok(), "{cell} in {line}");
            }
        }
        // A column whose cells do not all read one way stays as written.
        let mut m = Table::new("", &["x", "v"], 1);
        m.rows.push(vec!["a".into(), "1 ms".into()]);
        m.rows.push(vec!["b".into(), "4 x 8".into()]);
        assert!(m.to_csv().unwrap().contains("a,1 ms\nb,4 x 8"));
        assert_eq!(shift_decimal("0.05", 3), "50");
        assert_eq!(shift_decimal("12", 6), "12000000");
        assert_eq!(shift_decimal("1.2345", 3), "1234.5");
    }
}
