//! Results in the shape of fio's `--output-format=json`, so tools built
//! for fio (fio-plot, dashboards, scripts) read volbench results: one job
//! per run with read and write bandwidth, IOPS and latency percentiles.
//! Percentiles come from the run's merged histogram, as everywhere else.

use serde_json::{Map, Value, json};

use super::{Source, items};
use crate::error::{Result, VbError};
use crate::result::ops::Op;
use crate::result::{OpTotals, RunResult};
use crate::stats::percentile_ns;

/// fio's default percentile list (its `percentile_list`).
pub const PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

fn lat(run: &RunResult, op: Op, t: &OpTotals, with_percentiles: bool) -> Value {
    let ns = |us: f64| (us * 1000.0).round();
    let mut m = Map::new();
    m.insert("min".into(), json!(ns(t.lat_us.min) as u64));
    m.insert("max".into(), json!(ns(t.lat_us.max) as u64));
    m.insert("mean".into(), json!(t.lat_us.mean * 1000.0));
    m.insert("stddev".into(), json!(t.lat_us.stddev * 1000.0));
    m.insert("N".into(), json!(t.ops));
    if with_percentiles && t.ops > 0 {
        let mut p = Map::new();
        if let Ok(h) = run.histograms.op(op).to_histogram() {
            let lo = ns(t.lat_us.min) as u64;
            let hi = ns(t.lat_us.max).ceil() as u64;
            for q in PERCENTILES {
                p.insert(
                    format!("{q:.6}"),
                    json!(percentile_ns(&h, q, lo, hi).round() as u64),
                );
            }
        }
        m.insert("percentile".into(), Value::Object(p));
    }
    Value::Object(m)
}

fn op_json(run: &RunResult, op: Op) -> Value {
    let t = run.totals.op(op);
    let runtime_ms = run
        .phases
        .iter()
        .filter(|p| p.name.name() == "measure")
        .map(|p| p.duration_s)
        .sum::<f64>()
        * 1000.0;
    let bw_bytes = t.mib_s * 1024.0 * 1024.0;
    json!({
        "io_bytes": t.bytes,
        "io_kbytes": t.bytes / 1024,
        "bw_bytes": bw_bytes.round() as u64,
        "bw": (bw_bytes / 1024.0).round() as u64,
        "iops": t.iops,
        "runtime": runtime_ms.round() as u64,
        "total_ios": t.ops,
        "short_ios": 0,
        "drop_ios": 0,
        // Latency is measured from submission (or, under a rate limit, from
        // the intended start), so completion and total latency are one figure.
        "clat_ns": lat(run, op, t, true),
        "lat_ns": lat(run, op, t, true),
        "slat_ns": {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0},
    })
}

pub fn fio_json(sources: &[Source]) -> Result<String> {
    let many = sources.len() > 1;
    let mut jobs = Vec::new();
    for (i, item) in items(sources).into_iter().enumerate() {
        let run = item.run;
        let w = &run.workload;
        let name = match sources.get(item.source) {
            Some(s) if many => format!("{}/{}", s.label, run.name),
            _ => run.name.clone(),
        };
        let bs =
            w.bs.iter()
                .map(|b| b.bytes.to_string())
                .collect::<Vec<_>>()
                .join(":");
        jobs.push(json!({
            "jobname": name,
            "groupid": i,
            "error": 0,
            "job options": {
                "rw": w.rw.name(),
                "rwmixread": w.read_pct.to_string(),
                "bs": bs,
                "iodepth": w.iodepth.to_string(),
                "numjobs": w.threads.to_string(),
                "runtime": w.duration_s.to_string(),
            },
            "read": op_json(run, Op::Read),
            "write": op_json(run, Op::Write),
            "trim": op_json_empty(),
            "job_runtime": (w.duration_s * 1000.0).round() as u64,
            "usr_cpu": run.totals.cpu.user_pct,
            "sys_cpu": run.totals.cpu.sys_pct,
        }));
    }
    let started = sources
        .first()
        .map(|s| s.doc.started.clone())
        .unwrap_or_default();
    let doc = json!({
        "fio version": format!("fio-3.36-compatible (volbench {})", env!("CARGO_PKG_VERSION")),
        "time": started,
        "global options": {},
        "jobs": jobs,
        "disk_util": [],
    });
    serde_json::to_string_pretty(&doc).map_err(|e| VbError::run(e.to_string()))
}

fn op_json_empty() -> Value {
    json!({"io_bytes": 0, "bw": 0, "iops": 0.0, "runtime": 0, "total_ios": 0})
}
