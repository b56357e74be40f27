//! An imported tree of small files written out as `ops` runs (the suite
//! keys of `docs/guide/files-and-metadata.md`).
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::fmt::Write;

use super::super::{Draft, DraftTree, secs_text};
use super::toml::{comment, num, quote};

pub(super) fn tree(out: &mut String, d: &Draft, t: &DraftTree) {
    out.push_str("table = \"ops\"\n");
    // A discarded copy of a phase would leave the tree changed for the real one.
    out.push_str("warmup_run = false\n");
    if let Some(i) = d.interval_s {
        let _ = writeln!(out, "\n[defaults]\ninterval = {}", quote(&secs_text(i)));
    }
    for r in &t.runs {
        out.push('\n');
        for m in &r.notes {
            comment(out, m);
        }
        out.push_str("[[run]]\n");
        let _ = writeln!(out, "name = {}", quote(&r.name));
        let _ = writeln!(out, "ops = {}", quote(&r.ops));
        let _ = writeln!(out, "depth = {}", t.depth);
        let _ = writeln!(out, "width = {}", t.width);
        let _ = writeln!(out, "files_per_dir = {}", t.files_per_dir);
        let _ = writeln!(out, "file_size = {}", quote(&t.file_size));
        if t.shared_dirs {
            out.push_str("shared_dirs = true\n");
        }
        let _ = writeln!(out, "threads = {}", r.threads);
        if let Some(d) = r.duration_s {
            let _ = writeln!(out, "duration = {}", quote(&secs_text(d)));
        }
        if let Some(w) = r.warmup_s {
            let _ = writeln!(out, "warmup = {}", quote(&secs_text(w)));
        }
        if let Some(rate) = r.rate {
            let _ = writeln!(out, "rate = {}", num(rate));
        }
    }
}
