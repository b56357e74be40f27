//! diskspd command lines: the switches and targets of one invocation.
//! diskspd's defaults differ from volbench's (cached I/O, 64 KiB blocks,
//! 2 outstanding I/Os, 10 s, 5 s warm-up), so every value is written out.
//! Each switch is a row of `switches::SWITCHES`; this file reads the line
//! through the table and assembles the suite.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod state;
pub(crate) mod switches;
mod targets;

use super::table::{self, Opt};
use super::{How, Imported, Notes, PathMap, bs_text, secs_text, size_text};
use crate::error::{Result, VbError};
use crate::input::suite::write::value;
use crate::input::suite::{Defaults, SuiteFile};
use crate::spec::{Pattern, TableKind};
use crate::units::{bounds, format_size};
use state::State;

/// One switch or target of the line, through the table.
fn read(s: &mut State, i: usize, raw: &str, notes: &mut Notes) {
    let at = format!("argument {}", i + 1);
    let sw = raw.strip_prefix('-').or_else(|| {
        // `/x` is a switch only when it is not a path.
        raw.strip_prefix('/')
            .filter(|_| raw.len() < 4 && !raw.contains('/'))
    });
    let Some(sw) = sw else {
        s.targets.push((at, raw.to_string()));
        return;
    };
    let mut chars = sw.chars();
    let Some(c) = chars.next() else {
        notes.refuse(&at, raw, "an empty switch");
        return;
    };
    let a = Opt::written_as(&at, &c.to_string(), chars.as_str(), raw);
    if c == '-' {
        return a.refuse(
            notes,
            "not a diskspd switch; volbench's own flags go before the diskspd arguments",
        );
    }
    match table::find(switches::SWITCHES, &a.key) {
        Some(row) => table::apply(row, &a, s, notes),
        // Refused as written: a command line is the user's own text.
        None => a.refuse(
            notes,
            "not supported yet (no volbench equivalent of this diskspd switch)",
        ),
    }
}

/// `-r<align>`, judged against the final `-b` (diskspd takes them in any order).
fn judge_align(s: &mut State, notes: &mut Notes) {
    if let Some(g) = s.align.take() {
        let how = if g.value == s.bs {
            How::Exact("random offsets, block aligned".into())
        } else {
            notes.unsupported(
                &g.at,
                &g.text,
                "random offsets aligned other than to the block size",
            );
            return;
        };
        s.push(&g.at, &g.text, how);
    }
}

/// volbench's iodepth: outstanding I/Os per thread. diskspd's `-o` is per
/// thread per target, so a `-F` thread reaching n targets keeps n x `-o`
/// in flight; `-O` is the per-thread total itself.
fn iodepth(s: &mut State, n: u64) -> Result<u64> {
    if let Some(g) = &s.per_thread {
        return Ok(g.value);
    }
    if s.total_threads.is_none() || n < 2 {
        return Ok(s.outstanding);
    }
    let depth = s.outstanding.saturating_mul(n);
    if depth > bounds::MAX_IODEPTH {
        return Err(VbError::input(format!(
            "diskspd: -o{} on each of {n} targets is {depth} outstanding I/Os per thread; at most {}",
            s.outstanding,
            bounds::MAX_IODEPTH
        )));
    }
    s.push(
        "targets",
        &format!("-o{} with -F over {n} targets", s.outstanding),
        How::Exact(format!(
            "iodepth = {depth}: each diskspd thread keeps -o{} in flight on each of the {n} targets",
            s.outstanding
        )),
    );
    Ok(depth)
}

/// `-g`: bytes per ms (or IOPS with `i`) per thread, as volbench's total rate.
fn rate(s: &mut State, all_threads: u64) -> Result<Option<f64>> {
    let Some(g) = s.throttle.clone() else {
        return Ok(None);
    };
    let (v, iops) = g.value;
    let per_thread = if iops { v } else { v * 1000.0 / s.bs as f64 };
    let total = per_thread * all_threads as f64;
    // Bounded like --rate, so the suite written is one a run takes
    // (-g1e308i wrote a 309-digit rate).
    let rate =
        bounds::number("the rate", total, bounds::MIN_RATE, bounds::MAX_RATE).map_err(|e| {
            VbError::input(bounds::one_line(&format!(
                "{}: {}: {}",
                g.at, g.text, e.message
            )))
        })?;
    s.push(
        &g.at,
        &g.text,
        How::Exact(format!(
            "rate = {} IOPS ({} per thread x {all_threads} threads)",
            bounds::short(rate),
            bounds::short(per_thread)
        )),
    );
    Ok(Some(rate))
}

/// The suite a diskspd command line runs: text in (its arguments after
/// `diskspd`), the suite or the reason out.
pub fn import_args(args: &[String], map: &PathMap) -> Result<Imported> {
    let mut s = State::default();
    let mut notes = Notes::default();
    for (i, raw) in args.iter().enumerate() {
        read(&mut s, i, raw, &mut notes);
    }
    judge_align(&mut s, &mut notes);
    if s.targets.is_empty() {
        return Err(VbError::input(
            "diskspd: no target (a file path, or #N for a disk)",
        ));
    }
    let paths = targets::paths(&mut s, map, &mut notes);
    targets::window(&mut s, &mut notes);
    notes.check()?;
    let n = paths.len() as u64;
    // Several targets without -F run as a list of targets, each with its
    // own -t threads (volbench's --target '{a,b}'), as diskspd binds threads
    // to targets; with -F every thread reaches every file, which one file
    // set of n files does exactly.
    let listed = n > 1 && s.total_threads.is_none();
    let threads = s.total_threads.or(s.per_target).unwrap_or(1);
    let all_threads = if listed { threads * n } else { threads };
    if all_threads > bounds::MAX_THREADS {
        return Err(VbError::input(format!(
            "diskspd: {all_threads} threads in all; at most {}",
            bounds::MAX_THREADS
        )));
    }
    let per_target_threads = if listed {
        threads
    } else {
        threads.div_ceil(n.max(1))
    };
    if !s.random && !s.interlocked && per_target_threads > 1 {
        s.push(
            "threads",
            &format!("{threads} threads, sequential"),
            How::Note(
                "diskspd's threads on one target each stream from its start (plus -T), over the \
                 same blocks; volbench's threads each stream through their own part of it"
                    .into(),
            ),
        );
    }
    let depth = iodepth(&mut s, n)?;
    let placed = targets::place(&mut s, &paths, threads, &mut notes)?;
    let rate = rate(&mut s, all_threads)?;
    if !s.direct {
        s.push(
            "defaults",
            "(no -S)",
            How::Exact("direct = false: diskspd caches unless told -S or -Su".into()),
        );
    }
    let rw = match (s.random, s.write_pct) {
        (true, 0) => Pattern::Randread,
        (true, 100) => Pattern::Randwrite,
        (true, _) => Pattern::Randrw,
        (false, 0) => Pattern::Read,
        (false, 100) => Pattern::Write,
        (false, _) => Pattern::Rw,
    };
    // diskspd's defaults differ from volbench's: every value is written out.
    let mut run = std::mem::replace(&mut s.run, crate::input::suite::RunEntry::named(""));
    run.set_name(&format!(
        "diskspd-{}-{}w-{}",
        if s.random { "rand" } else { "seq" },
        s.write_pct,
        format_size(s.bs).replace(' ', "")
    ));
    run.rw = value(rw.name());
    if rw.is_mixed() {
        run.read_pct = value(100 - s.write_pct);
    }
    run.bs = value(bs_text(&[(s.bs, 1)]));
    run.threads = value(threads);
    run.iodepth = value(depth);
    run.files = value(placed.files);
    run.rate = rate.and_then(value);
    run.duration = value(secs_text(s.duration));
    run.warmup = value(secs_text(s.warmup));
    let mut suite = SuiteFile::new(
        "diskspd",
        &format!("diskspd {}", args.join(" ")),
        TableKind::Patterns,
        // diskspd runs no discarded warm-up run of its own.
        false,
    );
    suite.threads_total = placed.threads_total;
    suite.defaults = Defaults {
        size: placed.size.map(size_text).and_then(value),
        files: value(placed.files),
        direct: value(s.direct),
        write_sync: s.write_sync.and_then(value),
        // diskspd issues overlapped (asynchronous) I/O: this system's
        // engine of that kind (io_uring on Linux, overlapped on Windows);
        // a share mapped to a URL runs on its client's own engine, which
        // queues asynchronously too, so none is named.
        engine: if crate::io::backend::is_url(std::path::Path::new(&placed.target)) {
            None
        } else {
            value(crate::spec::EngineKind::kernel_async_here().name())
        },
        interval: s.interval.map(secs_text).and_then(value),
        seed: s.seed.and_then(value),
        ..Defaults::default()
    };
    let mut imp = Imported::new(suite, placed.target);
    let said = std::mem::take(&mut s.m);
    imp.push_run(run, said);
    Ok(imp.read_first(notes))
}
