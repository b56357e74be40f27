//! An import written out as a suite file (and, for many hosts, a hosts
//! file), with a comment per source option saying how it was mapped.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod toml;
mod tree;

use std::fmt::Write;

use self::toml::{comment, num, quote};
use super::{Draft, Imported, secs_text, size_text};
use crate::units::bounds;

/// The hosts file: one host a line with its own targets.
pub fn hosts_file(d: &Draft) -> Option<String> {
    if d.hosts.is_empty() {
        return None;
    }
    let mut out = format!(
        "# hosts of {} (volbench import): ssh name, then this host's targets\n",
        bounds::one_line(&d.source)
    );
    for h in &d.hosts {
        let t = match h.targets.as_slice() {
            [one] => one.clone(),
            many => format!("{{{}}}", many.join(",")),
        };
        let _ = writeln!(out, "{}  target={t}", h.ssh);
    }
    Some(out)
}

/// How to run the suite, for its header and for `import`'s closing line.
pub fn command_line(d: &Draft, suite_path: &str, hosts_path: &str) -> String {
    let hosts = if d.hosts.is_empty() {
        String::new()
    } else {
        format!(" --hosts-file {hosts_path}")
    };
    // Threads that are the total over the list are the suite's
    // `threads_total = true`, so the line needs no flag for it.
    format!(
        "volbench suite run {suite_path}{hosts} --target '{}'",
        d.target.replace('\'', "'\\''")
    )
}

pub fn suite_toml(imp: &Imported, suite_path: &str, hosts_path: &str) -> String {
    let d = &imp.draft;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# Imported by volbench from {}.",
        bounds::one_line(&d.source)
    );
    let _ = writeln!(
        out,
        "# Run it with: {}",
        bounds::one_line(&command_line(d, suite_path, hosts_path))
    );
    if let Some(h) = hosts_file(d) {
        out.push_str("# Its hosts file:\n");
        for line in h.lines() {
            let _ = writeln!(out, "#   {line}");
        }
    }
    out.push_str("# Each option of the source, and how it was mapped:\n");
    for m in &d.global {
        comment(&mut out, m);
    }
    let _ = writeln!(out, "name = {}", quote(&d.name));
    let _ = writeln!(out, "source = {}", quote(&d.source));
    if let Some(t) = &d.tree {
        tree::tree(&mut out, d, t);
        return out;
    }
    out.push_str("table = \"patterns\"\n");
    // The source tools run no discarded warm-up run of their own.
    out.push_str("warmup_run = false\n");
    if d.threads_total {
        out.push_str("# The threads are the total over the target list, as --threads-total.\nthreads_total = true\n");
    }
    out.push_str("\n[defaults]\n");
    if let Some(s) = d.size {
        let _ = writeln!(out, "size = {}", quote(&size_text(s)));
    }
    if let Some(f) = d.files {
        let _ = writeln!(out, "files = {f}");
    }
    if let Some(b) = d.fill_bs {
        let _ = writeln!(out, "fill_bs = {}", quote(&size_text(b)));
    }
    let _ = writeln!(out, "direct = {}", d.direct);
    if let Some(w) = d.write_sync {
        let _ = writeln!(out, "write_sync = {}", quote(w));
    }
    for (k, v) in &d.data {
        let _ = writeln!(out, "{k} = {v}");
    }
    if let Some(e) = d.engine {
        let _ = writeln!(out, "engine = {}", quote(e));
    }
    if let Some(i) = d.interval_s {
        let _ = writeln!(out, "interval = {}", quote(&secs_text(i)));
    }
    if let Some(s) = d.seed {
        let _ = writeln!(out, "seed = {s}");
    }
    for r in &d.runs {
        out.push('\n');
        for m in &r.notes {
            comment(&mut out, m);
        }
        out.push_str("[[run]]\n");
        let _ = writeln!(out, "name = {}", quote(&r.name));
        if let Some(rp) = &r.replay {
            replay(&mut out, r, rp);
            continue;
        }
        let _ = writeln!(out, "rw = {}", quote(r.rw.name()));
        if r.rw.is_mixed() {
            let _ = writeln!(out, "read_pct = {}", r.read_pct);
        }
        let bs: Vec<String> = match r.bs.as_slice() {
            [(b, _)] => vec![size_text(*b)],
            many => many
                .iter()
                .map(|(b, w)| format!("{}:{w}", size_text(*b)))
                .collect(),
        };
        let _ = writeln!(out, "bs = {}", quote(&bs.join(",")));
        let _ = writeln!(out, "threads = {}", r.threads);
        let _ = writeln!(out, "iodepth = {}", r.iodepth);
        if let Some(f) = r.files {
            let _ = writeln!(out, "files = {f}");
        }
        if let Some(rate) = r.rate {
            let _ = writeln!(out, "rate = {}", num(rate));
        }
        if let Some(a) = r.arrivals {
            let name = match a {
                crate::spec::Arrivals::Uniform => "uniform",
                crate::spec::Arrivals::Poisson => "poisson",
            };
            let _ = writeln!(out, "arrivals = {}", quote(name));
        }
        let _ = writeln!(out, "duration = {}", quote(&secs_text(r.duration_s)));
        let _ = writeln!(out, "warmup = {}", quote(&secs_text(r.warmup_s)));
        if let Some(l) = r.io_limit {
            let _ = writeln!(out, "io_limit = {}", quote(&size_text(l)));
        }
        for (k, v) in &r.shape {
            let _ = writeln!(out, "{k} = {v}");
        }
        if let Some(c) = &r.curve {
            let pts: Vec<String> = c.iter().map(|p| num(*p)).collect();
            let _ = writeln!(out, "curve = [{}]", pts.join(", "));
        }
    }
    out
}

/// A replay run: the trace says what, when and where; the depth and a
/// duration cap are the run's own.
fn replay(out: &mut String, r: &super::DraftRun, rp: &super::DraftReplay) {
    let _ = writeln!(out, "iodepth = {}", r.iodepth);
    if rp.timed {
        let _ = writeln!(out, "duration = {}", quote(&secs_text(r.duration_s)));
    }
    let mut keys = vec![format!("file = {}", quote(&rp.file))];
    for (k, v) in [
        ("speed", &rp.speed),
        ("scale", &rp.scale),
        ("align", &rp.align),
        ("skip", &rp.skip),
    ] {
        if let Some(v) = v {
            keys.push(format!("{k} = {}", quote(v)));
        }
    }
    let _ = writeln!(out, "replay = {{ {} }}", keys.join(", "));
}
