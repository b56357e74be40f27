//! Parsing and printing of the quantities users type: sizes, durations,
//! percentages, weighted block-size lists and numeric sweeps.

use std::time::Duration;

use crate::error::{Result, VbError};

/// Parses a size in bytes. Units are binary (`k` = 1024) whatever their
/// spelling (`4k`, `4K`, `4KB`, `4KiB`): storage people mean powers of two
/// here, and fio and vdbench read them the same way.
pub fn parse_size(text: &str) -> Result<u64> {
    let t = text.trim();
    let split = t
        .find(|c: char| !c.is_ascii_digit() && c != '_')
        .unwrap_or(t.len());
    let (digits, unit) = t.split_at(split);
    let digits: String = digits.chars().filter(|&c| c != '_').collect();
    if digits.is_empty() {
        return Err(VbError::input(format!(
            "size '{text}' does not start with a number (examples: 512, 4k, 64KiB, 1m, 4G, 1T)"
        )));
    }
    let n: u64 = digits
        .parse()
        .map_err(|_| VbError::input(format!("size '{text}' is too large")))?;
    let shift = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        "p" | "pb" | "pib" => 50,
        _ => {
            return Err(VbError::input(format!(
                "size '{text}' has an unknown unit '{unit}' (use k, m, g, t or p, binary: 1k = 1024)"
            )));
        }
    };
    n.checked_mul(1u64 << shift)
        .ok_or_else(|| VbError::input(format!("size '{text}' is too large")))
}

/// Parses a duration such as `60s`, `1m30s`, `500ms` or a bare number of seconds.
pub fn parse_duration(text: &str) -> Result<Duration> {
    let t = text.trim();
    if let Ok(secs) = t.parse::<f64>()
        && secs.is_finite()
        && secs >= 0.0
    {
        return Ok(Duration::from_secs_f64(secs));
    }
    humantime::parse_duration(t).map_err(|e| {
        VbError::input(format!(
            "duration '{text}' is not valid ({e}); examples: 30, 60s, 1m30s, 500ms"
        ))
    })
}

/// Formats a byte count the way people read it: `64KiB`, `1.5GiB`.
pub fn format_size(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut unit = 0;
    let mut whole = bytes;
    while unit + 1 < UNITS.len() && whole >= 1024 && whole.is_multiple_of(1024) {
        whole /= 1024;
        unit += 1;
    }
    if whole < 1024 || unit + 1 == UNITS.len() {
        return format!("{whole}{}", UNITS[unit]);
    }
    let mut v = bytes as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    format!("{v:.2}{}", UNITS[u])
}

/// Formats a duration compactly for plans and summaries: `60s`, `1m30s`, `0.5s`.
pub fn format_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if !ms.is_multiple_of(1000) {
        let text = format!("{:.2}", d.as_secs_f64());
        return format!("{}s", text.trim_end_matches('0').trim_end_matches('.'));
    }
    let s = d.as_secs();
    match (s / 3600, (s % 3600) / 60, s % 60) {
        (0, 0, sec) => format!("{sec}s"),
        (0, m, 0) => format!("{m}m"),
        (0, m, sec) => format!("{m}m{sec}s"),
        (h, m, sec) => format!("{h}h{m}m{sec}s"),
    }
}

/// Parses a whole number, naming the flag in the error.
pub fn parse_count(flag: &str, text: &str) -> Result<u64> {
    text.trim()
        .parse::<u64>()
        .map_err(|_| VbError::input(format!("{flag} '{text}' is not a whole number")))
}

/// A block size list: `8k` or weighted `4k:30,64k:70`.
pub fn parse_bs_list(text: &str) -> Result<Vec<(u64, u32)>> {
    let mut out = Vec::new();
    for part in text.split(',') {
        let part = part.trim();
        if part.is_empty() {
            return Err(VbError::input(format!("--bs '{text}' has an empty entry")));
        }
        let (size, weight) = match part.split_once(':') {
            Some((s, w)) => {
                let w: u32 = w.trim().parse().map_err(|_| {
                    VbError::input(format!(
                        "--bs '{text}': weight '{w}' is not a whole number (form: 4k:30,64k:70)"
                    ))
                })?;
                (s, w)
            }
            None => (part, 1),
        };
        let bs = parse_size(size)?;
        if bs == 0 {
            return Err(VbError::input(format!("--bs '{text}': a block size of 0")));
        }
        if bs > u32::MAX as u64 {
            return Err(VbError::input(format!(
                "--bs '{text}': {size} is larger than 4GiB"
            )));
        }
        if weight == 0 {
            return Err(VbError::input(format!(
                "--bs '{text}': weight 0 for {size}"
            )));
        }
        out.push((bs, weight));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_take_binary_units_in_any_spelling() {
        assert_eq!(parse_size("512").unwrap(), 512);
        assert_eq!(parse_size("4k").unwrap(), 4096);
        assert_eq!(parse_size("4K").unwrap(), 4096);
        assert_eq!(parse_size("64KiB").unwrap(), 65536);
        assert_eq!(parse_size("1m").unwrap(), 1 << 20);
        assert_eq!(parse_size("4G").unwrap(), 4 << 30);
        assert_eq!(parse_size("1T").unwrap(), 1 << 40);
        assert_eq!(parse_size("2gb").unwrap(), 2 << 30);
    }

    #[test]
    fn bad_sizes_name_the_problem() {
        let e = parse_size("12Q").unwrap_err().to_string();
        assert!(e.contains("12Q") && e.contains("unit 'Q'"), "{e}");
        let e = parse_size("k").unwrap_err().to_string();
        assert!(e.contains("does not start with a number"), "{e}");
        assert!(parse_size("99999999999999999999").is_err());
        assert!(parse_size("100000000P").is_err());
        assert!(parse_size("-4k").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("60s").unwrap(), Duration::from_secs(60));
        assert_eq!(parse_duration("1m30s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("2").unwrap(), Duration::from_secs(2));
        assert!(parse_duration("soon").is_err());
        assert!(parse_duration("-1").is_err());
    }

    #[test]
    fn formatting_round_trips_what_people_typed() {
        assert_eq!(format_size(4096), "4KiB");
        assert_eq!(format_size(1 << 30), "1GiB");
        assert_eq!(format_size(1536 << 20), "1.50GiB");
        assert_eq!(format_size(100), "100B");
        assert_eq!(format_duration(Duration::from_secs(90)), "1m30s");
        assert_eq!(format_duration(Duration::from_millis(500)), "0.5s");
        assert_eq!(format_duration(Duration::from_secs_f64(5.0 / 3.0)), "1.67s");
    }

    #[test]
    fn block_size_lists() {
        assert_eq!(parse_bs_list("8k").unwrap(), vec![(8192, 1)]);
        assert_eq!(
            parse_bs_list("4k:30,64k:70").unwrap(),
            vec![(4096, 30), (65536, 70)]
        );
        assert!(parse_bs_list("4k:x").is_err());
        assert!(parse_bs_list("4k:0").is_err());
        assert!(parse_bs_list("0").is_err());
        assert!(parse_bs_list("4k,,8k").is_err());
    }
}
