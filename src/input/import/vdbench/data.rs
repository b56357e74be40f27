//! vdbench's general parameters, one row each: the data ones (`compratio`,
//! `dedupratio`, `dedupunit`, `validate`, `journal`) onto the suite's data
//! keys, read from the guide's meaning (compratio R makes the data compress
//! about R:1, dedupratio R leaves one block in R unique, dedupunit is the
//! block the duplicates are counted in, validate checks what is read
//! against what was written), and vdbench's own reporting ones, noted.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use super::super::table::{Row, Rule, Said, Verdict, row};
use super::super::{Mapping, Notes, size_text};
use super::parse::{Opt, exact, noted};
use crate::input::suite::Defaults;
use crate::input::suite::write::value;
use crate::units::{bounds, parse_size};

use Rule::{Always, Map};
use Verdict::{Note, Refuse};

/// The general parameters read so far: how each was mapped, and the
/// suite's data keys they set.
#[derive(Default)]
pub(super) struct General {
    pub(super) said: Vec<Mapping>,
    pub(super) data: Defaults,
}

impl Said for General {
    fn said(&mut self) -> &mut Vec<Mapping> {
        &mut self.said
    }
}

const REPORTING: &str =
    "reporting detail of vdbench's own; volbench keeps its time series and histograms";

pub(super) const GENERAL: &[Row<General>] = &[
    row("compratio", Map(compratio)),
    row("dedupratio", Map(dedupratio)),
    row("dedupunit", Map(dedupunit)),
    row("validate", Map(validate)),
    row(
        "journal",
        Always(Refuse(
            "volbench's journal is a file: give -j to `volbench vdbench` (or run the imported \
             suite with --verify --journal FILE)",
        )),
    ),
    row("messagescan", Always(Note(REPORTING))),
    row("histogram", Always(Note(REPORTING))),
    row("report", Always(Note(REPORTING))),
    row("data_errors", Always(Note(REPORTING))),
    row("debug", Always(Note(REPORTING))),
    row("create_anchors", Always(Note(REPORTING))),
    row("monitor", Always(Note(REPORTING))),
];

fn ratio(p: &Opt) -> Option<f64> {
    p.val().trim().parse::<f64>().ok().filter(|r| r.is_finite())
}

fn compratio(p: &Opt, g: &mut General, notes: &mut Notes) {
    match ratio(p) {
        Some(r) if (bounds::MIN_COMPRESS..=bounds::MAX_COMPRESS).contains(&r) => {
            g.data.compress = value(r);
            exact(
                &mut g.said,
                p,
                &format!("compress = {r}: blocks compress about {r}:1"),
            );
        }
        _ => p.refuse(
            notes,
            format!(
                "must be a ratio from {} to {} (volbench's --compress)",
                bounds::MIN_COMPRESS,
                bounds::MAX_COMPRESS
            ),
        ),
    }
}

fn dedupratio(p: &Opt, g: &mut General, notes: &mut Notes) {
    match ratio(p) {
        Some(r) if r >= 1.0 && r.round() as u64 <= bounds::MAX_DEDUP => {
            let copies = r.round() as u64;
            g.data.dedup = value(copies);
            if (r - copies as f64).abs() > 1e-9 {
                noted(
                    &mut g.said,
                    p,
                    &format!(
                        "dedup = {copies}: volbench writes whole copies of each unique block, so {r} is rounded"
                    ),
                );
            } else {
                exact(
                    &mut g.said,
                    p,
                    &format!("dedup = {copies}: {copies} copies of each unique block"),
                );
            }
        }
        _ => p.refuse(
            notes,
            format!(
                "must be a ratio from 1 to {} (volbench's --dedup)",
                bounds::MAX_DEDUP
            ),
        ),
    }
}

fn dedupunit(p: &Opt, g: &mut General, notes: &mut Notes) {
    match parse_size(&p.val().trim().to_ascii_lowercase()) {
        Ok(n)
            if n.is_power_of_two()
                && (bounds::MIN_DEDUP_UNIT..=bounds::MAX_DEDUP_UNIT).contains(&n) =>
        {
            g.data.dedup_unit = value(size_text(n));
            exact(&mut g.said, p, &format!("dedup_unit = {n} bytes"));
        }
        _ => p.refuse(
            notes,
            "must be a power of two from 512 to 1m (volbench's --dedup-unit)",
        ),
    }
}

fn validate(p: &Opt, g: &mut General, notes: &mut Notes) {
    match p.val().trim().to_ascii_lowercase().as_str() {
        "no" => exact(&mut g.said, p, "no verification"),
        "yes" => {
            g.data.verify = value(true);
            noted(
                &mut g.said,
                p,
                "verify = true: volbench checks every read against the last write as it \
                 goes (offset, write counter and checksum per 512-byte sector, its own \
                 stamp rather than vdbench's key) and stops at the first mismatch",
            );
        }
        _ => p.refuse(
            notes,
            "only validate=yes or no (volbench checks every read as it goes; \
             read-after-write, time stamps and continue-on-error have no equivalent)",
        ),
    }
}
