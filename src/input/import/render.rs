//! An import written out: its suite file serialised (`suite::write`), with
//! a comment per source option saying how it was mapped and the command
//! that runs it, and for many hosts the hosts file beside it.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::fmt::Write;

use super::{How, Imported, Mapping};
use crate::error::Result;
use crate::units::bounds;

/// The hosts file: one host a line with its own targets.
pub(crate) fn hosts_file(imp: &Imported) -> Option<String> {
    if imp.hosts.is_empty() {
        return None;
    }
    let mut out = format!(
        "# hosts of {} (volbench import): ssh name, then this host's targets\n",
        bounds::one_line(&imp.suite.source)
    );
    for h in &imp.hosts {
        match &h.target {
            Some(t) => {
                let _ = writeln!(out, "{}  target={t}", h.name);
            }
            None => {
                let _ = writeln!(out, "{}", h.name);
            }
        }
    }
    Some(out)
}

/// How to run the suite, for its header and for `import`'s closing line.
pub(crate) fn command_line(imp: &Imported, suite_path: &str, hosts_path: &str) -> String {
    let hosts = if imp.hosts.is_empty() {
        String::new()
    } else {
        format!(" --hosts-file {hosts_path}")
    };
    // Threads that are the total over the list are the suite's
    // `threads_total = true`, so the line needs no flag for it.
    format!(
        "volbench suite run {suite_path}{hosts} --target '{}'",
        imp.target.replace('\'', "'\\''")
    )
}

/// The comment that says how one source option was mapped.
pub(crate) fn said(m: &Mapping) -> String {
    match &m.how {
        How::Exact(h) => format!("{}: {} -> {h}", m.at, m.option),
        How::Note(h) => format!("{}: {} -> NOTE: {h}", m.at, m.option),
    }
}

/// The suite file: where it comes from and how to run it, then the suite
/// serialised with each source option's comment above its place.
pub fn suite_toml(imp: &Imported, suite_path: &str, hosts_path: &str) -> Result<String> {
    let mut head = vec![
        format!("Imported by volbench from {}.", imp.suite.source),
        format!("Run it with: {}", command_line(imp, suite_path, hosts_path)),
    ];
    if let Some(h) = hosts_file(imp) {
        head.push("Its hosts file:".into());
        head.extend(h.lines().map(|l| format!("  {l}")));
    }
    head.push("Each option of the source, and how it was mapped:".into());
    head.extend(imp.said.iter().map(said));
    let above = |i: usize| -> Vec<String> {
        imp.run_said
            .get(i)
            .map(|m| m.iter().map(said).collect())
            .unwrap_or_default()
    };
    crate::input::suite::write::write(&imp.suite, &head, &above)
}
