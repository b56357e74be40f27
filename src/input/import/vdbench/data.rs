//! vdbench's data parameters (`compratio`, `dedupratio`, `dedupunit`,
//! `validate`, `journal`) onto the suite's data keys, read from the
//! guide's meaning: compratio R makes the data compress about R:1,
//! dedupratio R leaves one block in R unique, dedupunit is the block the
//! duplicates are counted in, validate checks what is read against what
//! was written.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use super::super::{Mapping, Notes};
use super::parse::{Param, exact, noted};
use crate::units::{bounds, parse_size};

/// True when `p` is one of these parameters (mapped or refused here);
/// mapped values go to `data` as suite keys with their TOML values.
pub(super) fn map(
    p: &Param,
    global: &mut Vec<Mapping>,
    data: &mut Vec<(&'static str, String)>,
    notes: &mut Notes,
) -> bool {
    let v = p.value.trim().to_ascii_lowercase();
    let mut set = |key: &'static str, value: String| {
        data.retain(|(k, _)| *k != key);
        data.push((key, value));
    };
    let ratio = v.parse::<f64>().ok().filter(|r| r.is_finite());
    match p.key.as_str() {
        "compratio" => match ratio {
            Some(r) if (bounds::MIN_COMPRESS..=bounds::MAX_COMPRESS).contains(&r) => {
                set("compress", r.to_string());
                exact(
                    global,
                    p,
                    &format!("compress = {r}: blocks compress about {r}:1"),
                );
            }
            _ => notes.refuse(
                &p.at,
                &p.text(),
                format!(
                    "must be a ratio from {} to {} (volbench's --compress)",
                    bounds::MIN_COMPRESS,
                    bounds::MAX_COMPRESS
                ),
            ),
        },
        "dedupratio" => match ratio {
            Some(r) if r >= 1.0 && r.round() as u64 <= bounds::MAX_DEDUP => {
                let copies = r.round() as u64;
                set("dedup", copies.to_string());
                if (r - copies as f64).abs() > 1e-9 {
                    noted(
                        global,
                        p,
                        &format!(
                            "dedup = {copies}: volbench writes whole copies of each unique block, so {r} is rounded"
                        ),
                    );
                } else {
                    exact(
                        global,
                        p,
                        &format!("dedup = {copies}: {copies} copies of each unique block"),
                    );
                }
            }
            _ => notes.refuse(
                &p.at,
                &p.text(),
                format!(
                    "must be a ratio from 1 to {} (volbench's --dedup)",
                    bounds::MAX_DEDUP
                ),
            ),
        },
        "dedupunit" => match parse_size(&v) {
            Ok(n)
                if n.is_power_of_two()
                    && (bounds::MIN_DEDUP_UNIT..=bounds::MAX_DEDUP_UNIT).contains(&n) =>
            {
                set("dedup_unit", format!("\"{n}\""));
                exact(global, p, &format!("dedup_unit = {n} bytes"));
            }
            _ => notes.refuse(
                &p.at,
                &p.text(),
                "must be a power of two from 512 to 1m (volbench's --dedup-unit)",
            ),
        },
        "validate" => match v.as_str() {
            "no" => exact(global, p, "no verification"),
            "yes" => {
                set("verify", "true".into());
                noted(
                    global,
                    p,
                    "verify = true: volbench checks every read against the last write as it \
                     goes (offset, write counter and checksum per 512-byte sector, its own \
                     stamp rather than vdbench's key) and stops at the first mismatch",
                );
            }
            _ => notes.refuse(
                &p.at,
                &p.text(),
                "only validate=yes or no (volbench checks every read as it goes; \
                 read-after-write, time stamps and continue-on-error have no equivalent)",
            ),
        },
        "journal" => notes.refuse(
            &p.at,
            &p.text(),
            "volbench's journal is a file: run the imported suite with --verify --journal FILE",
        ),
        _ => return false,
    }
    true
}
