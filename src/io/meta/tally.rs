//! One metadata worker's per-operation histograms and the running totals
//! the interval collector reads, merged exactly into class totals at the end.

use std::sync::atomic::Ordering;

use crate::io::phase::{MetaOpStats, PhaseStats, WorkerResult};
use crate::spec::meta::{ALL_OPS, MetaOp};
use crate::stats::{LiveCounters, OpStats};

/// Running totals for the interval collector, cumulative over both phases.
#[derive(Default)]
pub(crate) struct Live {
    ops: [u64; 2],
    bytes: [u64; 2],
    lat: [u64; 2],
    svc: [u64; 2],
    op_ops: [u64; ALL_OPS.len()],
    op_lat: [u64; ALL_OPS.len()],
}

impl Live {
    pub(crate) fn publish(&self, c: &LiveCounters) {
        let r = Ordering::Relaxed;
        c.read_ops.store(self.ops[0], r);
        c.read_bytes.store(self.bytes[0], r);
        c.read_lat_ns.store(self.lat[0], r);
        c.write_ops.store(self.ops[1], r);
        c.write_bytes.store(self.bytes[1], r);
        c.write_lat_ns.store(self.lat[1], r);
        c.read_svc_ns.store(self.svc[0], r);
        c.write_svc_ns.store(self.svc[1], r);
    }
}

/// Per-operation histograms and running totals of one worker.
pub(crate) struct Tally {
    stats: [Vec<Option<Box<OpStats>>>; 2],
    /// Service times (without the wait for the schedule), rated runs only.
    service: [PhaseStats; 2],
    pub(crate) live: Live,
}

impl Tally {
    pub(crate) fn new() -> Self {
        Self {
            stats: [
                (0..ALL_OPS.len()).map(|_| None).collect(),
                (0..ALL_OPS.len()).map(|_| None).collect(),
            ],
            service: [PhaseStats::default(), PhaseStats::default()],
            live: Live::default(),
        }
    }

    /// One operation done in `phase`; `svc` is its service time when rated.
    pub(crate) fn record(
        &mut self,
        phase: usize,
        op: MetaOp,
        lat: u64,
        svc: Option<u64>,
        bytes: u64,
        counters: &LiveCounters,
    ) {
        self.stats[phase][op.index()]
            .get_or_insert_with(|| Box::new(OpStats::new()))
            .record(lat, bytes);
        // This operation's own running totals, for per-operation intervals.
        let (i, r, live) = (op.index(), Ordering::Relaxed, &mut self.live);
        live.op_ops[i] += 1;
        live.op_lat[i] += lat;
        counters.meta_ops[i].store(live.op_ops[i], r);
        counters.meta_lat_ns[i].store(live.op_lat[i], r);
        let class = usize::from(op.mutates());
        live.ops[class] += 1;
        live.bytes[class] += bytes;
        live.lat[class] += lat;
        if let Some(svc) = svc {
            live.svc[class] += svc;
            let s = &mut self.service[phase];
            if class == 0 {
                s.read_service.record(svc, bytes);
            } else {
                s.write_service.record(svc, bytes);
            }
        }
        live.publish(counters);
    }

    /// Class totals (reads = looking, writes = changing) by exact merge of
    /// the per-operation histograms.
    /// `kept`: the files a create phase left as they were (`--keep-complete`),
    /// reported with its creates even when it made none.
    pub(crate) fn into_result(self, error: Option<String>, kept: u64) -> WorkerResult {
        let [warm_ops, meas_ops] = self.stats;
        let [mut warmup, mut measure] = self.service;
        let mut meta = Vec::new();
        for op in ALL_OPS {
            let (w, s) = (&warm_ops[op.index()], &meas_ops[op.index()]);
            let keeps = op == MetaOp::Create && kept > 0;
            if w.is_none() && s.is_none() && !keeps {
                continue;
            }
            let w = w.as_deref().cloned().unwrap_or_default();
            let s = s.as_deref().cloned().unwrap_or_default();
            let (wc, mc) = if op.mutates() {
                (&mut warmup.write, &mut measure.write)
            } else {
                (&mut warmup.read, &mut measure.read)
            };
            wc.merge(&w);
            mc.merge(&s);
            meta.push(MetaOpStats {
                op,
                warmup: w,
                measure: s,
                kept: if keeps { kept } else { 0 },
            });
        }
        WorkerResult {
            warmup,
            measure,
            error,
            meta,
            data: Default::default(),
            protocol: None,
        }
    }
}
