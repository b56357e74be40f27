//! fio's buffer-content and verification options onto volbench's data keys
//! (suite [defaults] compress, dedup, verify). fio's semantics, from its
//! HOWTO: buffer_compress_percentage=P makes each block compress to about
//! P% smaller (random data plus a zeroed share), dedupe_percentage=P makes
//! P% of written blocks identical, verify=<kind> writes a checksum into
//! each block and checks it on reads (after the writes unless
//! verify_backlog says sooner).
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use super::super::{Mapping, Notes};
use super::parse::Opt;
use super::shape::Extra;
use super::shape::mapping;
use crate::units::bounds;

/// Set a data key once per job; the suite holds one value for all jobs.
fn set(extra: &mut Extra, key: &'static str, v: String) {
    extra.data.retain(|(k, _)| *k != key);
    extra.data.push((key, v));
}

/// `P` as a ratio 100/(100-P): P% of the data is redundant.
fn ratio(v: &str) -> Option<f64> {
    let p: f64 = v.parse().ok().filter(|p: &f64| (0.0..100.0).contains(p))?;
    Some(100.0 / (100.0 - p))
}

fn num(v: f64) -> String {
    // Two decimals are finer than any storage's compression ratio.
    let r = (v * 100.0).round() / 100.0;
    if r.fract() == 0.0 {
        format!("{}", r as i64)
    } else {
        format!("{r}")
    }
}

/// True when `key` is one of these options (mapped, noted or refused here).
pub(super) fn map(
    key: &str,
    opt: &Opt,
    extra: &mut Extra,
    mapped: &mut Vec<Mapping>,
    notes: &mut Notes,
) -> bool {
    let v = opt.val().trim();
    let (at, text) = (opt.at.as_str(), opt.text());
    let mut say = |how: String, exact: bool| mapped.push(mapping(opt, how, exact));
    match key {
        // fio drops the files' cached pages at job start unless told not to;
        // volbench does the same before each buffered run by default.
        "invalidate" => match v {
            "1" | "" => say(
                "volbench's default: cached pages dropped before each run".into(),
                true,
            ),
            "0" => {
                set(extra, "invalidate", "false".into());
                say(
                    "invalidate = false: cached pages kept between runs".into(),
                    true,
                );
            }
            _ => notes.refuse(at, &text, "must be 0 or 1"),
        },
        "verify" => match v {
            "0" | "none" => say("no verification".into(), true),
            "md5" | "crc64" | "crc32c" | "crc32c-intel" | "crc32" | "crc16" | "crc7" | "xxhash"
            | "sha512" | "sha256" | "sha1" | "sha3-224" | "sha3-256" | "sha3-384" | "sha3-512"
            | "meta" | "1" => {
                set(extra, "verify", "true".into());
                say(
                    "verify = true: volbench stamps every sector with its offset, a write \
                     counter and an xxh3 checksum (not fio's checksum) and checks every read \
                     as it happens against the block's last write, rather than in a read-back \
                     phase after the writes"
                        .into(),
                    false,
                );
            }
            _ => notes.unsupported(
                at,
                &text,
                "this verify kind (volbench checks its own per-sector header and checksum; \
                 a fixed pattern cannot be checked)",
            ),
        },
        "do_verify"
        | "verify_backlog"
        | "verify_fatal"
        | "verify_async"
        | "verify_interval"
        | "verify_offset"
        | "verify_backlog_batch" => say(
            "volbench checks every read against the last write as it goes, per sector, \
             and stops at the first mismatch (--max-data-errors raises that)"
                .into(),
            false,
        ),
        "verify_only" => notes.unsupported(
            at,
            &text,
            "a verify-only job (use `volbench verify --target DIR` on a set a run wrote)",
        ),
        "verify_pattern" | "buffer_pattern" | "zero_buffers" => notes.unsupported(
            at,
            &text,
            "a fixed buffer pattern (volbench writes its own stamped data; --compress R \
             makes it compressible)",
        ),
        "buffer_compress_percentage" => match ratio(v) {
            Some(r) if (bounds::MIN_COMPRESS..=bounds::MAX_COMPRESS).contains(&r) => {
                set(extra, "compress", num(r));
                say(
                    format!(
                        "compress = {}: {v}% compressible is about {}:1, block by block",
                        num(r),
                        num(r)
                    ),
                    false,
                );
            }
            _ => notes.refuse(
                at,
                &text,
                format!(
                    "must be a percentage from 0 to {} (volbench's compress ratio 100/(100-P) \
                     is bounded {}..{})",
                    num(100.0 - 100.0 / bounds::MAX_COMPRESS),
                    bounds::MIN_COMPRESS,
                    bounds::MAX_COMPRESS
                ),
            ),
        },
        "buffer_compress_chunk" | "scramble_buffers" => say(
            "volbench lays out compressible data itself, per 512-byte sector".into(),
            false,
        ),
        "dedupe_percentage" => match ratio(v) {
            Some(r) if r.round() as u64 <= bounds::MAX_DEDUP => {
                let copies = r.round().max(1.0) as u64;
                set(extra, "dedup", copies.to_string());
                say(
                    format!(
                        "dedup = {copies}: {v}% identical blocks leaves 1 in {} unique, \
                         {copies} copies of each distinct 4 KiB unit{}",
                        num(r),
                        if (r - copies as f64).abs() > 1e-9 {
                            " (rounded: volbench's copies are whole)"
                        } else {
                            ""
                        }
                    ),
                    false,
                );
            }
            _ => notes.refuse(
                at,
                &text,
                "must be a percentage from 0 to below 100 (volbench writes 100/(100-P) \
                 copies of each distinct block)",
            ),
        },
        _ => return false,
    }
    true
}
