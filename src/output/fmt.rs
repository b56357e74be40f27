//! How every figure a person reads is written: the terminal, tables.md,
//! the HTML report and its charts all format through here, so one latency
//! reads the same everywhere ("850 µs", "1.25 ms"). Machine outputs
//! (summary.csv, result.json) keep plain numbers in fixed units instead.
//!
//! Sizes and durations are printed by `crate::units`, beside their parsers,
//! because the layers below `output` (spec, plan, targets) print them too;
//! they are re-exported here so outputs have one place to look.

pub(crate) use crate::units::{format_size as size, thousands, trim};

use crate::result::Cpu;

/// A figure of any size, as short as it stays readable: "126,397",
/// "12.5M", "2.5", "0.25".
pub fn number(v: f64) -> String {
    let a = v.abs();
    if a >= 10_000_000.0 {
        format!("{}M", trim(v / 1e6, 1))
    } else if a >= 1000.0 {
        thousands(v)
    } else if a >= 10.0 || a == 0.0 {
        trim(v, 0)
    } else if a >= 1.0 {
        trim(v, 1)
    } else {
        trim(v, 2)
    }
}

/// A latency given in microseconds: "0.04 µs", "8.5 µs", "250 µs",
/// "1.5 ms", "2 s" (the null engine and the page cache answer in well
/// under a microsecond, which must not read as "0 µs").
pub fn micros(us: f64) -> String {
    if us >= 1_000_000.0 {
        format!("{} s", trim(us / 1e6, 2))
    } else if us >= 1000.0 {
        format!("{} ms", trim(us / 1000.0, 2))
    } else if us >= 10.0 {
        format!("{} µs", trim(us, 0))
    } else if us >= 1.0 || us == 0.0 {
        format!("{} µs", trim(us, 1))
    } else {
        format!("{} µs", trim(us, 2))
    }
}

/// Throughput in MiB/s, one decimal: "323.4".
pub(crate) fn mib_s(v: f64) -> String {
    format!("{v:.1}")
}

/// I/Os in flight (Little's law: IOPS x mean latency), two decimals: "4.55".
pub(crate) fn in_flight(v: f64) -> String {
    format!("{v:.2}")
}

/// CPU time of the process as user/system percent of one core: "3%/37%".
pub(crate) fn cpu(c: &Cpu) -> String {
    format!("{:.0}%/{:.0}%", c.user_pct, c.sys_pct)
}

/// Text from a file or another host (a catalogue's titles and notes, a
/// suite, a host's messages) as it may reach a terminal: every control
/// character but newline and tab written as its escape (`\u{1b}`), so an
/// ESC or OSC sequence in it cannot move the cursor, retitle the window or
/// hide what came before. The one helper every terminal printer of such
/// text goes through.
pub fn terminal(text: &str) -> std::borrow::Cow<'_, str> {
    let bad = |c: char| c.is_control() && c != '\n' && c != '\t';
    if !text.chars().any(bad) {
        return text.into();
    }
    text.chars()
        .map(|c| {
            if bad(c) {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect::<String>()
        .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_text_carries_no_escape_sequence() {
        assert_eq!(
            terminal("title\u{1b}]0;owned\u{7}\u{1b}[2J\r\u{9b}31m"),
            "title\\u{1b}]0;owned\\u{7}\\u{1b}[2J\\r\\u{9b}31m"
        );
        assert_eq!(terminal("two\nlines\tand a tab"), "two\nlines\tand a tab");
    }

    #[test]
    fn thousands_separators() {
        assert_eq!(thousands(0.0), "0");
        assert_eq!(thousands(999.4), "999");
        assert_eq!(thousands(1000.0), "1,000");
        assert_eq!(thousands(1234567.8), "1,234,568");
        assert_eq!(thousands(-1234.0), "-1,234");
    }

    #[test]
    fn numbers_stay_short() {
        assert_eq!(number(126397.0), "126,397");
        assert_eq!(number(12_500_000.0), "12.5M");
        assert_eq!(number(2.5), "2.5");
        assert_eq!(number(0.25), "0.25");
        assert_eq!(number(0.0), "0");
    }

    /// One spelling of latency for every human output, µs with a space.
    #[test]
    fn latency_has_one_spelling() {
        assert_eq!(micros(0.0), "0 µs");
        assert_eq!(micros(0.036), "0.04 µs");
        assert_eq!(micros(8.46), "8.5 µs");
        assert_eq!(micros(250.0), "250 µs");
        assert_eq!(micros(850.4), "850 µs");
        assert_eq!(micros(1500.0), "1.5 ms");
        assert_eq!(micros(1234.0), "1.23 ms");
        assert_eq!(micros(23_300.0), "23.3 ms");
        assert_eq!(micros(2_000_000.0), "2 s");
    }
}
