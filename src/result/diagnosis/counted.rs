//! The runs that recorded client counters, each with the host it ran on
//! (the local runs, then each host's own in a multi-host result): what the
//! counter finders read; a leaf.

use super::{measured, usable};
use crate::result::counters::{CounterInterval, RunCounters};
use crate::result::{ResultDoc, RunResult};

/// A run with counters: who it ran on (the host's name in a multi-host
/// run, else its hostname), the run, its counters and their summary.
pub(super) struct Seen<'a> {
    pub(crate) host: String,
    /// The host's bare name (a subject of a grouped finding).
    pub(crate) name: String,
    pub(crate) run: &'a RunResult,
    pub(crate) c: &'a RunCounters,
    pub(crate) s: &'a CounterInterval,
}

/// Every measured run that has counters, with the host it ran on: the
/// local runs, then each host's own in a multi-host result.
pub(super) fn with_counters(doc: &ResultDoc) -> Vec<Seen<'_>> {
    let local = measured(doc).map(|r| (None, r));
    let hosts = doc.cluster.iter().flat_map(|c| &c.hosts).flat_map(|h| {
        h.runs
            .iter()
            .filter(|r| !r.workload.discard && usable(r))
            .map(move |r| (Some(h.name.as_str()), r))
    });
    local
        .chain(hosts)
        .filter_map(|(name, run)| {
            let c = run.counters.as_ref()?;
            let host = match name {
                Some(n) => format!("client {n}"),
                None if c.host.is_empty() => "the client".into(),
                None => format!("client {}", c.host),
            };
            let bare = match name {
                Some(n) => n.to_string(),
                None if c.host.is_empty() => "this client".into(),
                None => c.host.clone(),
            };
            Some(Seen {
                host,
                name: bare,
                run,
                c,
                s: c.summary.as_ref()?,
            })
        })
        .collect()
}

/// "run X" or "run X (and N more)".
pub(super) fn runs_text(worst: &RunResult, n: usize) -> String {
    match n {
        0 | 1 => format!("run {}", worst.name),
        n => format!("run {} (and {} more)", worst.name, n - 1),
    }
}
