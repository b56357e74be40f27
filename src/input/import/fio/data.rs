//! fio's buffer-content and verification options onto volbench's data keys
//! (suite `[defaults]` compress, dedup, verify). fio's semantics, from its
//! HOWTO: buffer_compress_percentage=P makes each block compress to about
//! P% smaller (random data plus a zeroed share), dedupe_percentage=P makes
//! P% of written blocks identical, verify=`<kind>` writes a checksum into
//! each block and checks it on reads (after the writes unless
//! verify_backlog says sooner).
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use super::super::Notes;
use super::parse::{Opt, Read};
use crate::input::suite::write::value;
use crate::units::bounds;

/// `P` as a ratio 100/(100-P): P% of the data is redundant.
fn ratio(v: &str) -> Option<f64> {
    let p: f64 = v.parse().ok().filter(|p: &f64| (0.0..100.0).contains(p))?;
    Some(100.0 / (100.0 - p))
}

/// Two decimals are finer than any storage's compression ratio.
fn round2(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

fn num(v: f64) -> String {
    crate::units::trim(round2(v), 2)
}

/// `invalidate`: fio drops the files' cached pages at job start unless
/// told not to; volbench does the same before each buffered run by default.
pub(super) fn invalidate(opt: &Opt, r: &mut Read, notes: &mut Notes) {
    match opt.val().trim() {
        "1" | "" => r.say(
            opt,
            "volbench's default: cached pages dropped before each run",
            true,
        ),
        "0" => {
            r.data.invalidate = value(false);
            r.say(
                opt,
                "invalidate = false: cached pages kept between runs",
                true,
            );
        }
        _ => notes.refuse(&opt.at, &opt.text(), "must be 0 or 1"),
    }
}

/// `openfiles=N`: fio keeps at most N of a job's files open, opening the
/// others as it reaches them; volbench's `--open-files` does the same per
/// I/O thread.
pub(super) fn openfiles(opt: &Opt, r: &mut Read, notes: &mut Notes) {
    match opt.val().trim().parse::<u64>() {
        Ok(n) if (1..=crate::units::bounds::MAX_FILES).contains(&n) => {
            r.data.open_files = value(n);
            r.say(
                opt,
                "open_files (at most this many files open per I/O thread)",
                true,
            );
        }
        _ => notes.refuse(
            &opt.at,
            &opt.text(),
            format!("must be 1..{}", crate::units::bounds::MAX_FILES),
        ),
    }
}

/// `verify=<kind>`: checked reads.
pub(super) fn verify(opt: &Opt, r: &mut Read, notes: &mut Notes) {
    match opt.val().trim() {
        "0" | "none" => r.say(opt, "no verification", true),
        "md5" | "crc64" | "crc32c" | "crc32c-intel" | "crc32" | "crc16" | "crc7" | "xxhash"
        | "sha512" | "sha256" | "sha1" | "sha3-224" | "sha3-256" | "sha3-384" | "sha3-512"
        | "meta" | "1" => {
            r.data.verify = value(true);
            r.say(
                opt,
                "verify = true: volbench stamps every sector with its offset, a write \
                 counter and an xxh3 checksum (not fio's checksum) and checks every read \
                 as it happens against the block's last write, rather than in a read-back \
                 phase after the writes",
                false,
            );
        }
        _ => notes.unsupported(
            &opt.at,
            &opt.text(),
            "this verify kind (volbench checks its own per-sector header and checksum; \
             a fixed pattern cannot be checked)",
        ),
    }
}

/// `buffer_compress_percentage=P`: blocks about P% compressible.
pub(super) fn compress(opt: &Opt, r: &mut Read, notes: &mut Notes) {
    let v = opt.val().trim();
    match ratio(v) {
        Some(c) if (bounds::MIN_COMPRESS..=bounds::MAX_COMPRESS).contains(&c) => {
            r.data.compress = value(round2(c));
            r.say(
                opt,
                format!(
                    "compress = {}: {v}% compressible is about {}:1, block by block",
                    num(c),
                    num(c)
                ),
                false,
            );
        }
        _ => notes.refuse(
            &opt.at,
            &opt.text(),
            format!(
                "must be a percentage from 0 to {} (volbench's compress ratio 100/(100-P) \
                 is bounded {}..{})",
                num(100.0 - 100.0 / bounds::MAX_COMPRESS),
                bounds::MIN_COMPRESS,
                bounds::MAX_COMPRESS
            ),
        ),
    }
}

/// `dedupe_percentage=P`: P% of the written blocks identical.
pub(super) fn dedupe(opt: &Opt, r: &mut Read, notes: &mut Notes) {
    let v = opt.val().trim();
    match ratio(v) {
        Some(d) if d.round() as u64 <= bounds::MAX_DEDUP => {
            let copies = d.round().max(1.0) as u64;
            r.data.dedup = value(copies);
            r.say(
                opt,
                format!(
                    "dedup = {copies}: {v}% identical blocks leaves 1 in {} unique, \
                     {copies} copies of each distinct 4 KiB unit{}",
                    num(d),
                    if (d - copies as f64).abs() > 1e-9 {
                        " (rounded: volbench's copies are whole)"
                    } else {
                        ""
                    }
                ),
                false,
            );
        }
        _ => notes.refuse(
            &opt.at,
            &opt.text(),
            "must be a percentage from 0 to below 100 (volbench writes 100/(100-P) \
             copies of each distinct block)",
        ),
    }
}
