//! Results in the shape of fio's `--output-format=json`, so tools built
//! for fio (fio-plot, dashboards, scripts) read volbench results: one job
//! per run with read and write bandwidth, IOPS and latency percentiles.
//! Percentiles come from the run's merged histogram, as everywhere else;
//! the IOPS and bandwidth spreads (`iops_stddev`, `bw_dev`...) from the
//! measured intervals, fio's samples being its own averaging periods; the
//! `latency_ns|us|ms` maps and json+'s `bins` from the merged histogram.
//! What volbench does not measure (`slat_ns`, `ctx`, `iodepth_level`...)
//! is left out rather than written as a made-up zero, except `slat_ns`,
//! which is zero by definition here (docs/guide/import.md, fio's JSON).

use serde_json::{Map, Value, json};

use super::{Source, items};
use crate::error::{Result, VbError};
use crate::result::ops::Op;
use crate::result::{OpTotals, RunResult};
use crate::stats::percentile_ns;

/// fio's default percentile list (its `percentile_list`).
pub(crate) const PERCENTILES: [f64; 17] = [
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
        // json+'s bins: each histogram bucket by its midpoint in ns, as
        // fio keys its own buckets by their value (fio_jsonplus_clat2csv).
        let mut bins = Map::new();
        for [lo, hi, count] in &run.histograms.op(op).buckets {
            let mid = lo + (hi - lo) / 2;
            bins.insert(mid.to_string(), json!(count));
        }
        m.insert("bins".into(), Value::Object(bins));
    }
    Value::Object(m)
}

/// min, max, mean, sample stddev and count of one figure over the
/// measured intervals (fio's `iops_*` and `bw_*` sample statistics).
fn spread(samples: &[f64]) -> (f64, f64, f64, f64, usize) {
    let n = samples.len();
    if n == 0 {
        return (0.0, 0.0, 0.0, 0.0, 0);
    }
    let min = samples.iter().copied().fold(f64::INFINITY, f64::min);
    let max = samples.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mean = samples.iter().sum::<f64>() / n as f64;
    let dev = if n < 2 {
        0.0
    } else {
        (samples.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
    };
    (min, max, mean, dev, n)
}

/// fio's latency buckets: a value falls under the first key above it, in
/// the unit of its size (under 1 us in `latency_ns`, under 1 ms in
/// `latency_us`, else `latency_ms`, with `2000` and `>=2000` last); each a
/// percentage of all the run's I/Os, reads and writes together.
fn latency_maps(run: &RunResult) -> Value {
    const KEYS: [u64; 10] = [2, 4, 10, 20, 50, 100, 250, 500, 750, 1000];
    let mut ns = [0u64; 10];
    let mut us = [0u64; 10];
    let mut ms = [0u64; 12];
    let mut total = 0u64;
    for op in [Op::Read, Op::Write] {
        for [lo, hi, count] in &run.histograms.op(op).buckets {
            // A bucket counts at its midpoint, as percentiles read it.
            let v = lo + (hi - lo) / 2;
            total += count;
            let slot = |x: u64| KEYS.iter().position(|k| x < *k);
            let cell = if v < 1_000 {
                slot(v).and_then(|i| ns.get_mut(i))
            } else if v < 1_000_000 {
                slot(v / 1_000).and_then(|i| us.get_mut(i))
            } else {
                let m = v / 1_000_000;
                let i = slot(m).unwrap_or(if m < 2000 { 10 } else { 11 });
                ms.get_mut(i)
            };
            if let Some(c) = cell {
                *c += count;
            }
        }
    }
    let pct = |c: u64| {
        if total == 0 {
            0.0
        } else {
            100.0 * c as f64 / total as f64
        }
    };
    let map = |counts: &[u64], keys: &[&str]| {
        let mut m = Map::new();
        for (k, c) in keys.iter().zip(counts) {
            m.insert((*k).to_string(), json!(pct(*c)));
        }
        Value::Object(m)
    };
    let k10 = [
        "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000",
    ];
    let k12 = [
        "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000", "2000", ">=2000",
    ];
    json!({
        "latency_ns": map(&ns, &k10),
        "latency_us": map(&us, &k10),
        "latency_ms": map(&ms, &k12),
    })
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
    let measured: Vec<_> = run
        .intervals
        .iter()
        .filter(|i| i.phase.name() == "measure")
        .map(|i| i.op(op))
        .collect();
    let iops: Vec<f64> = measured.iter().map(|i| i.iops).collect();
    let kib_s: Vec<f64> = measured.iter().map(|i| i.mib_s * 1024.0).collect();
    let (iops_min, iops_max, iops_mean, iops_dev, iops_n) = spread(&iops);
    let (bw_min, bw_max, bw_mean, bw_dev, bw_n) = spread(&kib_s);
    let mut v = json!({
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
    });
    if let Value::Object(m) = &mut v {
        let spreads = json!({
            "iops_min": iops_min.round() as u64,
            "iops_max": iops_max.round() as u64,
            "iops_mean": iops_mean,
            "iops_stddev": iops_dev,
            "iops_samples": iops_n,
            "bw_min": bw_min.round() as u64,
            "bw_max": bw_max.round() as u64,
            // One job per group: its share of the group's bandwidth is all of it.
            "bw_agg": if t.ops > 0 { 100.0 } else { 0.0 },
            "bw_mean": bw_mean,
            "bw_dev": bw_dev,
            "bw_samples": bw_n,
        });
        if let Value::Object(extra) = spreads {
            m.extend(extra);
        }
    }
    v
}

pub(crate) fn fio_json(sources: &[Source]) -> Result<String> {
    let many = sources.len() > 1;
    let mut jobs = Vec::new();
    for (i, item) in items(sources).into_iter().enumerate() {
        let run = item.run;
        let w = &run.workload;
        let name = match sources.get(item.source) {
            Some(s) if many => format!("{}/{}", s.label, run.name),
            _ => run.name.clone(),
        };
        // fio's own form: sizes joined by ':', reads' then writes' after a
        // ',' when they differ (bs=R,W).
        let sizes = |list: &[crate::spec::BlockSize]| {
            list.iter()
                .map(|b| b.bytes.to_string())
                .collect::<Vec<_>>()
                .join(":")
        };
        let bs = if w.write_bs.is_empty() {
            sizes(&w.bs)
        } else {
            format!("{},{}", sizes(&w.bs), sizes(&w.write_bs))
        };
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
        if let Some(Value::Object(job)) = jobs.last_mut() {
            if let Value::Object(maps) = latency_maps(run) {
                job.extend(maps);
            }
        }
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

/// One fio document per run, named like bench-fio's files: fio-plot reads
/// a directory of them and takes each file for one point, adding up the
/// jobs inside a file as one run's concurrent jobs.
pub(crate) fn fio_json_per_run(sources: &[Source]) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    for (si, s) in sources.iter().enumerate() {
        for (ri, run) in s.doc.runs.iter().enumerate() {
            if run.workload.discard {
                continue;
            }
            let mut doc = s.doc.clone();
            doc.runs = vec![run.clone()];
            let one = Source {
                label: s.label.clone(),
                path: s.path.clone(),
                doc,
            };
            let safe: String = run
                .name
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '-' {
                        c
                    } else {
                        '_'
                    }
                })
                .take(100)
                .collect();
            let name = format!("{si:02}-{ri:04}-{safe}.json");
            out.push((name, fio_json(std::slice::from_ref(&one))? + "\n"));
        }
    }
    Ok(out)
}
