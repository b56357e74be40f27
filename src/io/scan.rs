//! `volbench verify`: read a whole file set back and check every sector,
//! against a journal when given one.
//!
//! Without a journal each sector must be a well-formed volbench sector of
//! its own file and offset (checksum, offset, file): corruption, torn
//! sectors and misplaced data are found, stale data is not. With a journal
//! closed cleanly each block must hold exactly its last acknowledged write;
//! with one not closed cleanly (a crash) at least that write: a write
//! issued but not acknowledged, or acknowledged after the journal's last
//! sync, may or may not have landed. A clean check of an unclean journal
//! records what the blocks hold and marks it clean.

use std::path::Path;

use super::verify::journal::Journal;
use super::verify::map::{FORMED, UNKNOWN, block_unit};
use super::verify::sectors::{Found, Pool, SECTOR, check_sector};
use super::verify::{describe, judge, mismatch};
use crate::error::{Result, VbError};
use crate::io::data::AlignedBuf;
use crate::io::target::readset;

const CHUNK: usize = 1 << 20;

pub(crate) struct ScanResult {
    pub(crate) files: u32,
    pub(crate) bytes: u64,
    pub(crate) blocks: u64,
    pub(crate) errors: u64,
    /// The set was read through the page cache (O_DIRECT refused).
    pub(crate) buffered: bool,
    pub(crate) journal: Option<String>,
}

/// Reads every file of the set in `dir` and checks it; each mismatch is
/// passed to `report` as one line (file, offset, expected, found).
pub(crate) fn scan(
    dir: &Path,
    journal: Option<&Path>,
    stop: &std::sync::atomic::AtomicBool,
    report: &mut dyn FnMut(&str),
) -> Result<ScanResult> {
    let set = readset::open(dir)?;
    if set.format.as_deref().is_none_or(|f| f.contains('d')) {
        return Err(VbError::input(format!(
            "{} holds no checkable data: it was filled {}; a set filled by this volbench \
             without --dedup can be checked",
            dir.display(),
            if set.format.is_some() {
                "with --dedup (duplicated blocks carry no offset or counter)"
            } else {
                "by an older volbench"
            }
        )));
    }
    if let Some(note) = &set.unstamped {
        return Err(crate::io::target::unchecked(dir, note));
    }
    let journal = journal.map(Journal::open_existing).transpose()?;
    let unit = match &journal {
        Some(j) => {
            let h = j.header();
            if !h.set.same_set(&set.identity) {
                return Err(crate::io::verify::journal::another_set(
                    j.path(),
                    &h.set,
                    &set.identity,
                ));
            }
            if h.layout() != set.layout || Some(h.format.as_str()) != set.format.as_deref() {
                return Err(VbError::refused(format!(
                    "journal {} belongs to another file set ({} files of {} bytes, data {}; \
                     {} holds {} files of {} bytes, data {})",
                    j.path().display(),
                    h.files,
                    h.file_size,
                    h.format,
                    dir.display(),
                    set.layout.nfiles,
                    set.layout.file_size,
                    set.format.as_deref().unwrap_or("?")
                )));
            }
            h.unit
        }
        None => block_unit([4096]),
    };
    let clean = journal.as_ref().is_some_and(|j| j.header().clean);
    let pool = Pool::new(compress_of(set.format.as_deref().unwrap_or("s1")));
    let per_file = set.layout.file_size.div_ceil(unit);
    let mut buf = AlignedBuf::try_new(CHUNK, 4096)?;
    let mut errors = 0u64;
    let mut blocks = 0u64;
    // What each block holds, to record in an unclean journal found right.
    let mut seen: Vec<u32> = Vec::new();
    if journal.as_ref().is_some_and(|j| !j.header().clean) {
        seen = vec![UNKNOWN; journal.as_ref().map_or(0, |j| j.blocks())];
    }
    for f in 0..set.paths.len() {
        // One file open at a time: a set may hold more than the process may.
        let file = set.file(f)?;
        let path = set.paths.get(f).map(|p| p.display().to_string());
        let path = path.unwrap_or_default();
        let mut off = 0u64;
        while off < set.layout.file_size {
            if stop.load(std::sync::atomic::Ordering::Relaxed) {
                return Err(VbError::run("interrupted while verifying"));
            }
            let n = (set.layout.file_size - off).min(CHUNK as u64) as usize;
            let got = read_full(&*file, &mut buf.as_mut_slice()[..n], off)
                .map_err(|e| VbError::run(format!("read of {path} at offset {off} failed: {e}")))?;
            if got < n {
                return Err(VbError::run(format!(
                    "{path} ended at {} bytes, inside the set's {}",
                    off + got as u64,
                    set.layout.file_size
                )));
            }
            let mut bad_block = u64::MAX;
            for (i, s) in buf.as_mut_slice()[..n].chunks_exact_mut(SECTOR).enumerate() {
                let at = off + (i * SECTOR) as u64;
                let block = f as u64 * per_file + at / unit;
                if at % unit == 0 {
                    blocks += 1;
                }
                let (lo, hi) = match &journal {
                    None => (FORMED, FORMED),
                    Some(j) if clean => (j.ack(block as usize), j.ack(block as usize)),
                    Some(j) => (j.ack(block as usize), FORMED - 1),
                };
                let found = check_sector(s, f as u32, at);
                if let (Found::Counter(c), Some(slot)) = (found, seen.get_mut(block as usize)) {
                    *slot = if *slot == UNKNOWN || *slot == c {
                        c
                    } else {
                        FORMED
                    };
                }
                let Some(what) = judge(found, lo, hi) else {
                    continue;
                };
                if bad_block != block {
                    bad_block = block;
                    errors += 1;
                    let expected = if lo == FORMED {
                        "a volbench sector of this file and offset".to_string()
                    } else if clean {
                        describe(lo)
                    } else {
                        format!("{} or newer", describe(lo))
                    };
                    let known = (lo != FORMED && clean).then_some(lo);
                    report(&mismatch(
                        &pool, s, &path, f as u32, at, found, known, &expected, &what,
                    ));
                }
            }
            off += n as u64;
        }
    }
    let journal_note = journal.as_ref().map(|j| {
        if errors == 0 && !clean {
            for (b, &c) in seen.iter().enumerate() {
                j.acknowledge(b, c);
                j.issue(b, c);
            }
            match j.close(true) {
                Ok(()) => format!(
                    "journal {} was not closed cleanly; the data agrees with it, and it now \
                     records what each block holds (marked clean)",
                    j.path().display()
                ),
                Err(e) => format!("journal {}: {}", j.path().display(), e.message),
            }
        } else {
            format!("checked against journal {}", j.path().display())
        }
    });
    Ok(ScanResult {
        files: set.layout.nfiles,
        bytes: set.layout.total(),
        blocks,
        errors,
        buffered: !set.direct,
        journal: journal_note,
    })
}

fn read_full(
    file: &dyn crate::io::backend::SetFile,
    buf: &mut [u8],
    off: u64,
) -> std::result::Result<usize, std::io::Error> {
    let mut done = 0;
    while done < buf.len() {
        match file.read_at(&mut buf[done..], off + done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(crate::io::sys::io::Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Ok(done)
}

/// The compress ratio a set's data format (`DataSpec::fill_tag`) records.
fn compress_of(format: &str) -> f64 {
    format
        .split_once('c')
        .and_then(|(_, rest)| {
            let end = rest.find('d').unwrap_or(rest.len());
            rest[..end].parse().ok()
        })
        .unwrap_or(1.0)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_compress_ratio_comes_back_from_the_format() {
        assert_eq!(super::compress_of("s1"), 1.0);
        assert_eq!(super::compress_of("s1c2.5"), 2.5);
        assert_eq!(super::compress_of("s1c3d2x4096"), 3.0);
    }
}
