//! `volbench verify --target DIR [--journal FILE]`: read a file set back,
//! print each mismatch (file, offset, expected, found) and exit 1 if any.

use crate::error::{Result, exit};
use crate::input::args::data::VerifyArgs;
use crate::units::format_size;

/// Mismatches printed in full; the rest are counted.
const SHOWN: u64 = 1000;

pub(crate) fn cmd_verify(a: &VerifyArgs) -> Result<i32> {
    let stop = super::stop_flag()?;
    let mut shown = 0u64;
    let r = crate::io::scan::scan(&a.target, a.journal.as_deref(), &stop, &mut |line| {
        shown += 1;
        if shown <= SHOWN {
            crate::console::errln!("data error: {line}");
        }
    })?;
    if r.buffered {
        crate::console::errln!(
            "note: O_DIRECT was refused, so the set was read through the page cache: data still \
             cached proves nothing about the device"
        );
    }
    if let Some(j) = &r.journal {
        crate::console::errln!("{j}");
    }
    if r.errors > SHOWN {
        crate::console::errln!("... and {} more", r.errors - SHOWN);
    }
    crate::console::outln!(
        "verified {} in {} files ({} blocks): {} data error(s)",
        format_size(r.bytes),
        r.files,
        r.blocks,
        r.errors
    );
    Ok(if r.errors == 0 {
        exit::OK
    } else {
        exit::RUN_FAILED
    })
}
