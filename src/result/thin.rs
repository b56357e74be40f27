//! A result file that every reader can read back: `fit` gives up detail,
//! least valuable first, until the file is within the bound the readers
//! hold to (`report`, `compare`, `store import`: `MAX_RESULT_BYTES`).
//!
//! Each host bounds its own interval record (`MAX_INTERVALS`,
//! `MAX_INTERVAL_BUCKETS`), but nothing bounded the sum over hosts: 1,000
//! hosts each sending a 10-minute record of 1-second intervals made a
//! result.json of nearly 1 GiB that `report` then refused. The merged runs
//! (the figures every table and chart reads) keep their detail longest; a
//! host's per-interval detail goes first, and a note says what went.

use std::io::Write;

use super::{Interval, IntervalOp, ResultDoc, RunResult};
use crate::stats::live_hist::sparse_add;

/// Two consecutive intervals of one phase as one: rates weighted by
/// duration, latency means by operations, the latency buckets added, so
/// operations, bytes and the distribution are all kept.
pub(crate) fn combine(a: &Interval, b: &Interval) -> Interval {
    let secs = a.duration_s + b.duration_s;
    let op = |x: &IntervalOp, y: &IntervalOp| {
        let (ox, oy) = (x.iops * a.duration_s, y.iops * b.duration_s);
        let ops = ox + oy;
        IntervalOp {
            iops: if secs > 0.0 { ops / secs } else { 0.0 },
            mib_s: if secs > 0.0 {
                (x.mib_s * a.duration_s + y.mib_s * b.duration_s) / secs
            } else {
                0.0
            },
            lat_us_mean: if ops > 0.0 {
                (x.lat_us_mean * ox + y.lat_us_mean * oy) / ops
            } else {
                0.0
            },
            service_us_mean: match (x.service_us_mean, y.service_us_mean) {
                (Some(sx), Some(sy)) if ops > 0.0 => Some((sx * ox + sy * oy) / ops),
                (a, b) => a.or(b),
            },
            lat_hist: sparse_add(&x.lat_hist, &y.lat_hist),
        }
    };
    Interval {
        t_s: b.t_s,
        duration_s: secs,
        phase: a.phase,
        read: op(&a.read, &b.read),
        write: op(&a.write, &b.write),
        meta_ops: super::meta::merge_interval_ops(
            [
                (&a.meta_ops[..], a.duration_s),
                (&b.meta_ops[..], b.duration_s),
            ]
            .into_iter(),
            Some(secs),
        ),
    }
}

/// Neighbours of the same phase merged pairwise: about half as many.
/// Returns whether anything was merged.
pub(crate) fn halve(v: &mut Vec<Interval>) -> bool {
    let before = v.len();
    let old = std::mem::take(v);
    let mut it = old.into_iter().peekable();
    while let Some(a) = it.next() {
        match it.next_if(|b| b.phase == a.phase) {
            Some(b) => v.push(combine(&a, &b)),
            None => v.push(a),
        }
    }
    v.len() < before
}

/// The bytes `serde_json::to_writer_pretty` makes of `doc` (what
/// result.json holds), counted without keeping them.
pub fn json_bytes(doc: &ResultDoc) -> u64 {
    struct Count(u64);
    impl Write for Count {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0 += b.len() as u64;
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut c = Count(0);
    // Counting cannot fail; an unencodable value (NaN is written as null)
    // is the writer's to report, so a failure counts as nothing here.
    let _ = serde_json::to_writer_pretty(&mut c, doc);
    c.0
}

/// Every run a host finished, for the steps that read its counters and
/// histograms (a run it did not finish has only intervals:
/// `host_interval_lists`).
fn host_runs(doc: &mut ResultDoc) -> impl Iterator<Item = &mut RunResult> {
    doc.cluster
        .iter_mut()
        .flat_map(|c| c.hosts.iter_mut())
        .flat_map(|h| h.runs.iter_mut())
}

fn host_interval_lists(doc: &mut ResultDoc) -> Vec<&mut Vec<Interval>> {
    let mut out = Vec::new();
    if let Some(c) = doc.cluster.as_mut() {
        for h in &mut c.hosts {
            for r in &mut h.runs {
                out.push(&mut r.intervals);
            }
            if let Some(u) = h.unfinished.as_mut() {
                out.push(&mut u.intervals);
            }
        }
    }
    out
}

fn clear_hists(v: &mut [Interval]) -> bool {
    let mut any = false;
    for iv in v {
        any |= !iv.read.lat_hist.is_empty() || !iv.write.lat_hist.is_empty();
        iv.read.lat_hist = Vec::new();
        iv.write.lat_hist = Vec::new();
    }
    any
}

fn drop_threads(r: &mut RunResult) -> bool {
    let n = u32::try_from(r.threads.len()).unwrap_or(u32::MAX);
    r.threads_left_out = r.threads_left_out.saturating_add(n);
    r.threads = Vec::new();
    n > 0
}

/// One way of giving up detail; true if it changed anything.
type Step = fn(&mut ResultDoc) -> bool;

/// The steps, least valuable detail first, each with what the note says.
/// The per-host steps that halve repeat while they merge anything.
const STEPS: [(&str, Step, bool); 7] = [
    (
        "the per-thread figures (their count stays)",
        |d| {
            let mut any = false;
            for r in &mut d.runs {
                any |= drop_threads(r);
            }
            for r in host_runs(d) {
                any |= drop_threads(r);
            }
            any
        },
        false,
    ),
    (
        "each host's per-interval latency buckets",
        |d| {
            let mut any = false;
            for v in host_interval_lists(d) {
                any |= clear_hists(v);
            }
            any
        },
        false,
    ),
    (
        "each host's intervals, merged pairwise",
        |d| {
            let mut any = false;
            for v in host_interval_lists(d) {
                any |= halve(v);
            }
            for r in host_runs(d) {
                if let Some(c) = r.counters.as_mut() {
                    any |= c.halve();
                }
            }
            any
        },
        true,
    ),
    (
        "each host's intervals (their totals stay)",
        |d| {
            let mut any = false;
            for v in host_interval_lists(d) {
                any |= !v.is_empty();
                *v = Vec::new();
            }
            for r in host_runs(d) {
                if let Some(c) = r.counters.as_mut() {
                    any |= !c.intervals.is_empty();
                    c.intervals = Vec::new();
                }
            }
            any
        },
        false,
    ),
    (
        "each host's latency histograms (its percentiles stay)",
        |d| {
            let mut any = false;
            for r in host_runs(d) {
                for h in [&mut r.histograms.read, &mut r.histograms.write] {
                    any |= !h.buckets.is_empty();
                    h.buckets = Vec::new();
                }
                r.histograms_left_out = true;
            }
            any
        },
        false,
    ),
    (
        "the runs' per-interval latency buckets",
        |d| {
            let mut any = false;
            for r in &mut d.runs {
                any |= clear_hists(&mut r.intervals);
            }
            any
        },
        false,
    ),
    (
        "the runs' intervals, merged pairwise",
        |d| {
            let mut any = false;
            for r in &mut d.runs {
                any |= halve(&mut r.intervals);
            }
            any
        },
        true,
    ),
];

/// Gives up detail, least valuable first, until `doc` written as
/// result.json is at most `max_bytes`; a note names what went. Returns
/// the size it ends at (over `max_bytes` only if every step was taken).
pub fn fit(doc: &mut ResultDoc, max_bytes: u64) -> u64 {
    let mut size = json_bytes(doc);
    if size <= max_bytes {
        return size;
    }
    let was = size;
    let mut gone: Vec<String> = Vec::new();
    for (what, step, repeat) in STEPS {
        let mut passes = 0u32;
        while size > max_bytes && step(doc) {
            passes += 1;
            size = json_bytes(doc);
            if !repeat {
                break;
            }
        }
        if passes > 0 {
            gone.push(if repeat && passes > 1 {
                format!("{what} ({passes} times)")
            } else {
                what.to_string()
            });
        }
        if size <= max_bytes {
            break;
        }
    }
    let mib = |b: u64| b as f64 / (1u64 << 20) as f64;
    doc.notes.push(format!(
        "result.json held to {:.0} MiB, what report, compare and store read back ({:.0} MiB \
         in full): left out {}",
        mib(max_bytes),
        mib(was),
        gone.join("; ")
    ));
    json_bytes(doc)
}
