//! A trace dealt to the hosts of a multi-host replay (`--replay-split`):
//! each host's part written as volbench.trace/v1 text, in memory, with its
//! own summary, so the coordinator can send it and the agent replay it
//! without the trace file existing on the agent's host.
//!
//! `share` deals each request by its offset's 1 MiB stripe (stripe number
//! modulo the hosts), not round-robin by request: requests to the same
//! blocks stay on one host in their recorded order (a read after a write
//! of the same block still follows it), a sequential stream keeps runs of
//! 1 MiB on one host, and a trace spread over its span loads the hosts
//! evenly. Every request keeps its recorded time, so the hosts together
//! issue the trace's arrivals as recorded. A flush has no offset: it goes
//! to the host of the request before it (the writes it would make durable
//! are most likely there), so the merged run counts it once.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::io::Write as _;
use std::sync::Arc;

use super::{ReqOp, Request, Trace, bad};
use crate::error::Result;
use crate::spec::replay::{ReplaySpec, ReplaySplit, TraceSummary};
use crate::units::bounds;

/// The stripe `share` deals by.
pub(crate) const STRIPE: u64 = 1 << 20;

/// One host's part: its text and what it holds.
pub(crate) struct Part {
    pub(crate) text: Arc<[u8]>,
    pub(crate) summary: TraceSummary,
}

const HEAD: &str = "# volbench.trace/v1\nissue_ns,complete_ns,op,offset,bytes\n";

/// Which of `hosts` a request goes to under `share`; `last` is the host of
/// the request before it (a flush's).
pub(crate) fn host_of(r: &Request, hosts: u32, last: u32) -> u32 {
    if r.op == ReqOp::Flush {
        return last;
    }
    ((r.offset / STRIPE) % u64::from(hosts.max(1))) as u32
}

/// Reads the whole trace once and deals it to `hosts` by `spec.split`
/// (`whole`: one part, the same for every host). A part larger than the
/// bound a host is sent is refused, naming it.
pub(crate) fn split(spec: &ReplaySpec, hosts: u32) -> Result<Vec<Part>> {
    let n = match spec.split {
        Some(ReplaySplit::Share) => hosts.max(1),
        _ => 1,
    };
    let mut trace = Trace::of(spec)?;
    let mut texts: Vec<Vec<u8>> = (0..n).map(|_| HEAD.as_bytes().to_vec()).collect();
    let mut sums: Vec<TraceSummary> = (0..n)
        .map(|_| TraceSummary {
            align: 4096,
            ..TraceSummary::default()
        })
        .collect();
    let mut last = 0u32;
    while let Some(r) = trace.next_request()? {
        let h = host_of(&r, n, last);
        last = h;
        let (Some(text), Some(sum)) = (texts.get_mut(h as usize), sums.get_mut(h as usize)) else {
            continue;
        };
        let op = match r.op {
            ReqOp::Read => 'R',
            ReqOp::Write => 'W',
            ReqOp::Flush => 'F',
            ReqOp::Discard => 'D',
        };
        // Writing to a Vec cannot fail.
        let _ = writeln!(text, "{},,{op},{},{}", r.at_ns, r.offset, r.len);
        if text.len() as u64 > bounds::MAX_REMOTE_TRACE_BYTES {
            return Err(bad(
                &spec.path,
                format!(
                    "one host's part of the trace is larger than the {} a host is sent; \
                     replay it with more hosts (--replay-split share), or one trace per host \
                     by hand",
                    crate::units::format_size(bounds::MAX_REMOTE_TRACE_BYTES)
                ),
            ));
        }
        super::count(sum, &r);
    }
    Ok(texts
        .into_iter()
        .zip(sums)
        .map(|(t, summary)| Part {
            text: Arc::from(t),
            summary,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(op: ReqOp, offset: u64) -> Request {
        Request {
            at_ns: 0,
            op,
            offset,
            len: 4096,
        }
    }

    #[test]
    fn share_deals_by_stripe_and_a_flush_follows_the_request_before() {
        assert_eq!(host_of(&req(ReqOp::Read, 0), 3, 2), 0);
        assert_eq!(host_of(&req(ReqOp::Write, STRIPE - 4096), 3, 2), 0);
        assert_eq!(host_of(&req(ReqOp::Write, STRIPE), 3, 0), 1);
        assert_eq!(host_of(&req(ReqOp::Discard, 5 * STRIPE), 3, 0), 2);
        assert_eq!(host_of(&req(ReqOp::Flush, 0), 3, 2), 2);
        assert_eq!(host_of(&req(ReqOp::Read, 7 * STRIPE), 1, 0), 0);
    }
}
