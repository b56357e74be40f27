//! Parsing and printing of the quantities users type: sizes, durations,
//! percentages, weighted block-size lists and numeric sweeps.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::time::Duration;

pub mod bounds;
use crate::error::{Result, VbError};

/// Rounds to `digits` decimals and drops trailing zeros: 2.50 -> "2.5".
pub fn trim(v: f64, digits: usize) -> String {
    let s = format!("{v:.digits$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// 1234567.8 -> "1,234,568": counts and rates in tables and
/// messages (the result layer's findings use it too).
pub fn thousands(v: f64) -> String {
    let n = v.round() as i64;
    let digits = n.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0 { format!("-{out}") } else { out }
}

/// The power of two a size unit stands for (`k`, `KB`, `KiB` -> 10), or
/// None for an unknown unit; every size parser shares this one table.
pub(crate) fn unit_shift(unit: &str) -> Option<u32> {
    Some(match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        "p" | "pb" | "pib" => 50,
        _ => return None,
    })
}

/// Parses a size in bytes. Units are binary (`k` = 1024) whatever their
/// spelling (`4k`, `4K`, `4KB`, `4KiB`): storage people mean powers of two
/// here, and fio and vdbench read them the same way.
pub fn parse_size(text: &str) -> Result<u64> {
    size_value(text)?.ok_or_else(|| VbError::input(format!("size '{text}' is too large")))
}

/// A size, or None when it does not fit in 64 bits (so callers with a
/// bound can state it).
fn size_value(text: &str) -> Result<Option<u64>> {
    let t = text.trim();
    let split = t
        .find(|c: char| !c.is_ascii_digit() && c != '_' && c != '.')
        .unwrap_or(t.len());
    let (digits, unit) = t.split_at(split);
    let digits: String = digits.chars().filter(|&c| c != '_').collect();
    if let Some((whole, frac)) = digits.split_once('.') {
        return decimal_size(text, whole, frac, unit);
    }
    if digits.is_empty() {
        return Err(VbError::input(format!(
            "size '{text}' does not start with a number (examples: 512, 4k, 64KiB, 1m, 4G, 1T)"
        )));
    }
    let shift = match unit_shift(unit) {
        Some(s) => s,
        None => {
            return Err(VbError::input(format!(
                "size '{text}' has an unknown unit '{unit}' (use k, m, g, t or p, binary: 1k = 1024)"
            )));
        }
    };
    Ok(digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(1u64 << shift)))
}

/// `1.5G`: a decimal with a unit, taken when it is a whole number of
/// bytes (1.5G = 1536 MiB, as fio and vdbench users write it); `1.3k`
/// (1331.2 bytes) is refused, naming the nearest whole sizes.
fn decimal_size(text: &str, whole: &str, frac: &str, unit: &str) -> Result<Option<u64>> {
    let number = |s: &str| s.is_empty() || s.chars().all(|c| c.is_ascii_digit());
    if (whole.is_empty() && frac.is_empty()) || !number(whole) || !number(frac) {
        return Err(VbError::input(format!(
            "size '{text}' is not a number (examples: 512, 4k, 1.5G, 64KiB)"
        )));
    }
    let Some(shift) = unit_shift(unit) else {
        return Err(VbError::input(format!(
            "size '{text}' has an unknown unit '{unit}' (use k, m, g, t or p, binary: 1k = 1024)"
        )));
    };
    // Past 19 decimals no size is a whole number of bytes anyway; the cap
    // keeps the arithmetic in u128.
    let frac = frac.trim_end_matches('0');
    if frac.len() > 19 || whole.len() > 20 {
        return Ok(None);
    }
    let scale = 10u128.pow(frac.len() as u32);
    let whole: u128 = if whole.is_empty() {
        0
    } else {
        whole.parse().unwrap_or(u128::MAX)
    };
    let part: u128 = if frac.is_empty() {
        0
    } else {
        frac.parse().unwrap_or(0)
    };
    let Some(scaled) = whole
        .checked_mul(scale)
        .and_then(|w| w.checked_add(part))
        .and_then(|v| v.checked_mul(1u128 << shift))
    else {
        return Ok(None);
    };
    if scaled % scale != 0 {
        let below = scaled / scale;
        return Err(VbError::input(format!(
            "size '{text}' is not a whole number of bytes ({below} or {} would be)",
            below + 1
        )));
    }
    Ok(u64::try_from(scaled / scale).ok())
}

/// Parses a duration such as `60s`, `1m30s`, `500ms` or a bare number of
/// seconds. Never panics: a value too large for a `Duration`, negative, or
/// positive but below a nanosecond is an error; callers then apply their
/// flag's own bounds (`parse_duration_in`).
pub fn parse_duration(text: &str) -> Result<Duration> {
    let t = text.trim();
    if let Ok(secs) = t.parse::<f64>() {
        if !secs.is_finite() || secs < 0.0 {
            return Err(VbError::input(format!(
                "duration '{text}' is not a positive number of seconds"
            )));
        }
        let d = Duration::try_from_secs_f64(secs)
            .map_err(|_| VbError::input(format!("duration '{text}' is too long")))?;
        if d.is_zero() && secs > 0.0 {
            return Err(VbError::input(format!(
                "duration '{text}' is shorter than 1ns"
            )));
        }
        return Ok(d);
    }
    humantime::parse_duration(t).map_err(|e| {
        VbError::input(format!(
            "duration '{text}' is not valid ({e}); examples: 30, 60s, 1m30s, 500ms"
        ))
    })
}

/// A duration for `flag`, within `lo..=hi` (the bounds are in the error).
pub fn parse_duration_in(flag: &str, text: &str, lo: Duration, hi: Duration) -> Result<Duration> {
    // A plain number beyond the bounds (1e30, 1e-300) gets the bounds in
    // its message rather than "too long for a Duration".
    if let Ok(secs) = text.trim().parse::<f64>() {
        if secs.is_finite() && secs >= 0.0 && (secs > hi.as_secs_f64() || secs < lo.as_secs_f64()) {
            return Err(VbError::input(format!(
                "{flag} {}s is outside {}..{}",
                bounds::short(secs),
                bounds::human(lo),
                bounds::human(hi)
            )));
        }
    }
    let d = parse_duration(text).map_err(|e| VbError::input(format!("{flag}: {}", e.message)))?;
    bounds::duration(flag, d, lo, hi)
}

/// A size for `flag`, within `lo..=hi` bytes.
pub fn parse_size_in(flag: &str, text: &str, lo: u64, hi: u64) -> Result<u64> {
    match size_value(text).map_err(|e| VbError::input(format!("{flag}: {}", e.message)))? {
        Some(n) => bounds::size(flag, n, lo, hi),
        None => Err(VbError::input(format!(
            "{flag} '{}' is outside {}..{}",
            text.trim(),
            format_size(lo),
            format_size(hi)
        ))),
    }
}

/// Formats a byte count the way people read it: `64KiB`, `1.5GiB`.
pub fn format_size(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut unit = 0;
    let mut whole = bytes;
    while unit + 1 < UNITS.len() && whole >= 1024 && whole % 1024 == 0 {
        whole /= 1024;
        unit += 1;
    }
    let name = |u: usize| UNITS.get(u).copied().unwrap_or("B");
    if whole < 1024 || unit + 1 == UNITS.len() {
        return format!("{whole}{}", name(unit));
    }
    let mut v = bytes as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    format!("{v:.2}{}", name(u))
}

/// Formats a duration compactly for plans and summaries: `60s`, `1m30s`,
/// `0.5s`, `2ms`, `30d`.
pub(crate) fn format_duration(d: Duration) -> String {
    if d < Duration::from_millis(10) && !d.is_zero() {
        let ns = d.subsec_nanos();
        return if ns % 1_000_000 == 0 {
            format!("{}ms", ns / 1_000_000)
        } else if ns % 1_000 == 0 {
            format!("{}us", ns / 1_000)
        } else {
            format!("{ns}ns")
        };
    }
    let ms = d.as_millis();
    if ms % 1000 != 0 {
        return format!("{}s", trim(d.as_secs_f64(), 2));
    }
    let s = d.as_secs();
    let (days, s) = (s / 86_400, s % 86_400);
    let rest = match (s / 3600, (s % 3600) / 60, s % 60) {
        (0, 0, 0) if days > 0 => String::new(),
        (0, 0, sec) => format!("{sec}s"),
        (0, m, 0) => format!("{m}m"),
        (0, m, sec) => format!("{m}m{sec}s"),
        (h, m, sec) => format!("{h}h{m}m{sec}s"),
    };
    if days > 0 {
        format!("{days}d{rest}")
    } else {
        rest
    }
}

/// A whole number for `flag`, within `lo..=hi`.
pub fn parse_count_in(flag: &str, text: &str, lo: u64, hi: u64) -> Result<u64> {
    let t = text.trim();
    match t.parse::<u64>() {
        Ok(v) => bounds::count(flag, v, lo, hi),
        // All digits yet no u64: too large, which is a bound, not a typo.
        Err(_) if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) => {
            Err(VbError::input(format!("{flag} {t} is outside {lo}..{hi}")))
        }
        Err(_) => Err(VbError::input(format!(
            "{flag} '{text}' is not a whole number ({lo}..{hi})"
        ))),
    }
}

/// A block size list: `8k` or weighted `4k:30,64k:70`. Each size is
/// 1..`MAX_BS` bytes, each weight 1..`MAX_BS_WEIGHT`, at most `MAX_BS_MIX`
/// entries.
pub fn parse_bs_list(text: &str) -> Result<Vec<(u64, u32)>> {
    let mut out = Vec::new();
    for part in text.split(',') {
        let part = part.trim();
        if part.is_empty() {
            return Err(VbError::input(format!("--bs '{text}' has an empty entry")));
        }
        if out.len() == bounds::MAX_BS_MIX {
            return Err(VbError::input(format!(
                "--bs '{text}' has more than {} entries",
                bounds::MAX_BS_MIX
            )));
        }
        let (size, weight) = match part.split_once(':') {
            Some((s, w)) => {
                let w =
                    parse_count_in("--bs weight", w, 1, bounds::MAX_BS_WEIGHT).map_err(|e| {
                        VbError::input(format!("--bs '{text}': {} (form: 4k:30,64k:70)", e.message))
                    })?;
                (s, w as u32)
            }
            None => (part, 1),
        };
        out.push((parse_block_size(text, size)?, weight));
    }
    Ok(out)
}

/// One block size of the `--bs` value `whole`: 1..`MAX_BS` bytes.
pub(crate) fn parse_block_size(whole: &str, size: &str) -> Result<u64> {
    let bs = parse_size(size).map_err(|e| VbError::input(format!("--bs: {}", e.message)))?;
    if bs == 0 || bs > bounds::MAX_BS {
        return Err(VbError::input(format!(
            "--bs '{whole}': {} is outside 1B..{}",
            size.trim(),
            format_size(bounds::MAX_BS)
        )));
    }
    Ok(bs)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
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
    fn decimal_sizes_are_taken_when_they_are_whole_bytes() {
        assert_eq!(parse_size("1.5G").unwrap(), 3 << 29);
        assert_eq!(parse_size("0.5k").unwrap(), 512);
        assert_eq!(parse_size(".25M").unwrap(), 1 << 18);
        assert_eq!(parse_size("2.0g").unwrap(), 2 << 30);
        assert_eq!(
            parse_size("1.5").unwrap_err().to_string(),
            "size '1.5' is not a whole number of bytes (1 or 2 would be)"
        );
        let e = parse_size("1.3k").unwrap_err().to_string();
        assert!(
            e.contains("not a whole number of bytes (1331 or 1332"),
            "{e}"
        );
        for bad in ["1.5.2G", ".", "1.5Q"] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
        // Past 64 bits: an error, never a wrap.
        assert!(parse_size("16384.5P").is_err());
        assert!(parse_size("99999999999999999999999.5k").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("60s").unwrap(), Duration::from_secs(60));
        assert_eq!(parse_duration("1m30s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("2").unwrap(), Duration::from_secs(2));
        assert!(parse_duration("soon").is_err());
        assert!(parse_duration("-1").is_err());
        // Found in issue 9: these panicked in Duration::from_secs_f64.
        assert!(parse_duration("1e30").is_err());
        assert!(parse_duration("1e-300").is_err());
        assert!(parse_duration("NaN").is_err());
        assert!(parse_duration("inf").is_err());
        let e = parse_duration_in(
            "--duration",
            "500000000000y",
            bounds::MIN_DURATION,
            bounds::MAX_DURATION,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("outside 1ms..30d"), "{e}");
    }

    #[test]
    fn counts_state_their_bounds() {
        assert_eq!(parse_count_in("--files", "7", 1, 9).unwrap(), 7);
        let e = parse_count_in("--files", "4294967297", 1, 65536).unwrap_err();
        assert_eq!(e.to_string(), "--files 4294967297 is outside 1..65536");
        let e = parse_count_in("--files", "99999999999999999999999", 1, 65536).unwrap_err();
        assert!(e.to_string().contains("outside 1..65536"), "{e}");
        assert!(parse_count_in("--files", "-1", 1, 9).is_err());
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
        assert!(
            parse_bs_list("2g")
                .unwrap_err()
                .to_string()
                .contains("outside 1B..1GiB")
        );
        assert!(parse_bs_list("4k:4294967296").is_err());
        assert!(parse_bs_list(&vec!["4k:1"; 65].join(",")).is_err());
    }
}
