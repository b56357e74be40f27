//! fio's JSON output (`--output-format=json` or `json+`) as a volbench
//! result, so fio users bring their history into the store. Each job with
//! I/O becomes a run: its counts and bytes exactly as fio counted them,
//! IOPS and MiB/s over fio's runtime, latency from fio's `clat_ns` (its
//! default percentiles) or `lat_ns` when it reported percentiles there.
//! fio keeps no histogram in plain JSON: the run's histogram is rebuilt
//! from fio's percentile points (from `json+`'s bins when present, which
//! are fio's own buckets), and the notes say which. An untrusted file:
//! capped in size, every figure bounded by `result::check` afterwards.

use serde_json::Value;

use crate::error::{Result, VbError};
use crate::result::{
    Cpu, Histograms, HostInfo, LatSummary, LittlesLaw, OpTotals, Phase, PhaseName, ResultDoc,
    RunResult, SCHEMA, Tool, Totals,
};
use crate::spec::{
    BlockSize, EngineChoice, EngineKind, JobSpec, Pattern, RunSpec, TargetSpec, WriteSync,
};
use crate::stats::{BucketedHistogram, GROUPING_POWER, MAX_VALUE_POWER};

const MIB: f64 = 1024.0 * 1024.0;

/// Whether `v` is fio's JSON output (its version and its jobs).
pub(crate) fn is_fio(v: &Value) -> bool {
    v.get("fio version").is_some_and(Value::is_string) && v.get("jobs").is_some_and(Value::is_array)
}

/// fio's JSON output as a result; `shown` names the file in messages.
pub(crate) fn to_result(v: &Value, shown: &str) -> Result<ResultDoc> {
    let bad = |what: String| VbError::input(format!("{shown}: fio JSON output {what}"));
    let version = text(v.get("fio version")).unwrap_or_default();
    let global = v.get("global options");
    let jobs = v
        .get("jobs")
        .and_then(Value::as_array)
        .ok_or_else(|| bad("without jobs".into()))?;
    if jobs.len() > crate::result::sizes::MAX_RUNS {
        return Err(bad(format!("with {} jobs", jobs.len())));
    }
    let mut notes = vec![format!(
        "imported from fio's JSON output ({version}): counts, bytes and latency figures are \
         fio's; IOPS and MiB/s are its counts over its runtime"
    )];
    let mut runs = Vec::new();
    let mut longest_ms = 0.0f64;
    for (i, job) in jobs.iter().enumerate() {
        let Some(run) = job_run(job, global, i, &mut notes).map_err(bad)? else {
            continue;
        };
        longest_ms = longest_ms.max(run.phases[0].duration_s * 1000.0);
        runs.push(run);
    }
    if runs.is_empty() {
        return Err(bad("with no job that did I/O".into()));
    }
    let end_ms = number(v.get("timestamp_ms"))
        .or_else(|| number(v.get("timestamp")).map(|s| s * 1000.0))
        .unwrap_or(0.0)
        .max(0.0);
    let start = std::time::UNIX_EPOCH
        + std::time::Duration::from_millis((end_ms - longest_ms).max(0.0) as u64);
    let started = humantime::format_rfc3339_millis(start).to_string();
    for r in &mut runs {
        r.phases[0].start = started.clone();
    }
    let opt = |k: &str| option(jobs.first(), global, k);
    let target = opt("filename")
        .or_else(|| opt("directory"))
        .unwrap_or_else(|| "(fio)".into());
    let spec = JobSpec {
        target: TargetSpec {
            path: target.into(),
            size: opt("size")
                .and_then(|s| crate::units::parse_size(&s).ok())
                .unwrap_or(0),
            files: opt("nrfiles")
                .and_then(|s| s.parse().ok())
                .filter(|&n| n > 0)
                .unwrap_or(1),
            direct: opt("direct").is_some_and(|d| d == "1"),
            allow_overwrite: false,
            write_sync: WriteSync::None,
            data: Default::default(),
            fill: Default::default(),
            open_files: None,
        },
        engine: EngineChoice::Only(runs[0].engine[0]),
        interval_s: 1.0,
        seed: 1,
        runs: runs.iter().map(|r| r.workload.clone()).collect(),
        suite: None,
        targets: None,
        reading: Default::default(),
    };
    let host = HostInfo {
        hostname: jobs
            .first()
            .and_then(|j| text(j.get("hostname")))
            .unwrap_or_default(),
        kernel: String::new(),
        cpus: 0,
        memory_bytes: 0,
        cpu_model: String::new(),
        machine: String::new(),
        os: String::new(),
        vm_size: None,
        net: Default::default(),
        platform: Default::default(),
    };
    let mut doc = ResultDoc::begin(host, started, spec);
    doc.schema = SCHEMA.into();
    doc.tool = Tool {
        name: "fio".into(),
        version,
    };
    doc.runs = runs;
    doc.notes = notes;
    Ok(doc)
}

fn text(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(s) => Some(crate::result::check::clean(s, 4096)),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn number(v: Option<&Value>) -> Option<f64> {
    match v? {
        Value::Number(n) => n.as_f64().filter(|f| f.is_finite()),
        Value::String(s) => s.trim().parse::<f64>().ok().filter(|f| f.is_finite()),
        _ => None,
    }
}

/// A job option, the job's own before the global one.
fn option(job: Option<&Value>, global: Option<&Value>, key: &str) -> Option<String> {
    job.and_then(|j| text(j.get("job options").and_then(|o| o.get(key))))
        .or_else(|| text(global.and_then(|g| g.get(key))))
}

/// One fio job as a run; None for a job that did no I/O.
fn job_run(
    job: &Value,
    global: Option<&Value>,
    i: usize,
    notes: &mut Vec<String>,
) -> std::result::Result<Option<RunResult>, String> {
    let opt = |k: &str| option(Some(job), global, k);
    let name = text(job.get("jobname")).unwrap_or_else(|| format!("job{}", i + 1));
    let name: String = name
        .chars()
        .take(crate::units::bounds::MAX_NAME_CHARS)
        .collect();
    let side = |k: &str| Side::of(job.get(k), &name, k);
    let (read, write) = (side("read")?, side("write")?);
    if read.ops == 0 && write.ops == 0 {
        return Ok(None);
    }
    let runtime_ms = read.runtime_ms.max(write.runtime_ms);
    // NaN is refused with the zeros.
    if runtime_ms.is_nan() || runtime_ms <= 0.0 {
        return Err(format!("job '{name}': I/O in a runtime of 0 ms"));
    }
    let secs = runtime_ms / 1000.0;
    let rw = pattern(
        opt("rw").or_else(|| opt("readwrite")).as_deref(),
        &read,
        &write,
    );
    let read_pct = match rw.fixed_read_pct() {
        Some(p) => p,
        None => opt("rwmixread")
            .and_then(|s| s.parse::<u8>().ok())
            .filter(|p| *p <= 100)
            .unwrap_or_else(|| (100 * read.ops / (read.ops + write.ops)) as u8),
    };
    let threads = opt("numjobs")
        .and_then(|s| s.parse::<u32>().ok())
        .filter(|n| (1..=4096).contains(n))
        .unwrap_or(1);
    let iodepth = opt("iodepth")
        .and_then(|s| s.parse::<u32>().ok())
        .filter(|n| (1..=4096).contains(n))
        .unwrap_or(1);
    let fio_engine = opt("ioengine").unwrap_or_else(|| EngineKind::Psync.name().into());
    let engine = engine_of(&fio_engine, &name, notes);
    let workload = RunSpec {
        name: name.clone(),
        rw,
        read_pct,
        bs: block_sizes(&[&read, &write]),
        threads,
        iodepth,
        warmup_s: 0.0,
        duration_s: secs,
        ..RunSpec::default()
    };
    let (rt, rh) = read.totals(secs, &name, "read", notes)?;
    let (wt, wh) = write.totals(secs, &name, "write", notes)?;
    let iops = rt.iops + wt.iops;
    let ops = (rt.ops + wt.ops) as f64;
    let mean_us = if ops > 0.0 {
        (rt.lat_us.mean * rt.ops as f64 + wt.lat_us.mean * wt.ops as f64) / ops
    } else {
        0.0
    };
    Ok(Some(RunResult {
        name,
        workload,
        engine: vec![engine],
        io_threads: threads,
        depth_per_thread: iodepth,
        phases: vec![Phase {
            name: PhaseName::Measure,
            start: String::new(),
            duration_s: secs,
        }],
        totals: Totals {
            read: rt,
            write: wt,
            cpu: Cpu {
                user_pct: number(job.get("usr_cpu")).unwrap_or(0.0).max(0.0),
                sys_pct: number(job.get("sys_cpu")).unwrap_or(0.0).max(0.0),
            },
            flush: None,
            discard: None,
        },
        warmup: None,
        intervals: Vec::new(),
        histograms: Histograms {
            read: rh,
            write: wh,
        },
        littles_law: LittlesLaw {
            concurrency: threads.saturating_mul(iodepth),
            iops_x_latency: iops * mean_us / 1e6,
        },
        rate: None,
        steady: None,
        interrupted: false,
        meta_ops: Vec::new(),
        counters: None,
        data_errors: None,
        targets: Vec::new(),
        stalls: Vec::new(),
        replay: None,
        // fio's own summary, not an interval record.
        from_intervals: false,
        histograms_left_out: false,
        threads: Vec::new(),
        threads_left_out: 0,
        protocol: None,
        left_out: Vec::new(),
    }))
}

/// fio's engine as the volbench engine doing the same kind of I/O; fio's
/// own name stays in the notes where they are not the same.
fn engine_of(fio: &str, job: &str, notes: &mut Vec<String>) -> EngineKind {
    if let Ok(EngineChoice::Only(k)) = EngineChoice::parse(fio) {
        return k;
    }
    let kind = if fio.contains("aio") {
        EngineKind::IoUring
    } else {
        EngineKind::Psync
    };
    notes.push(format!(
        "job '{job}': fio's ioengine={} is recorded as {}, the volbench engine doing the same \
         kind of I/O",
        crate::units::bounds::one_line(fio),
        kind.name()
    ));
    kind
}

fn pattern(rw: Option<&str>, read: &Side, write: &Side) -> Pattern {
    match rw.map(str::trim) {
        Some("read") => Pattern::Read,
        Some("write") => Pattern::Write,
        Some("randread") => Pattern::Randread,
        Some("randwrite") => Pattern::Randwrite,
        Some("rw" | "readwrite") => Pattern::Rw,
        Some("randrw") => Pattern::Randrw,
        // Not stated (or trim...): what the counts show, random assumed.
        _ => match (read.ops > 0, write.ops > 0) {
            (true, false) => Pattern::Randread,
            (false, true) => Pattern::Randwrite,
            _ => Pattern::Randrw,
        },
    }
}

/// The block sizes the counts imply: bytes / ops where that is whole,
/// else the two whole sizes around it (so every byte count fits).
fn block_sizes(sides: &[&Side]) -> Vec<BlockSize> {
    let mut sizes: Vec<u64> = Vec::new();
    for s in sides.iter().filter(|s| s.ops > 0) {
        let lo = (s.bytes / s.ops).max(1);
        sizes.push(lo);
        if s.bytes % s.ops != 0 {
            sizes.push(lo + 1);
        }
    }
    sizes.sort_unstable();
    sizes.dedup();
    if sizes.is_empty() {
        sizes.push(4096);
    }
    sizes
        .into_iter()
        .map(|bytes| BlockSize { bytes, weight: 1 })
        .collect()
}

/// One direction of a fio job: its counts and latency block.
struct Side<'a> {
    ops: u64,
    bytes: u64,
    runtime_ms: f64,
    lat: Option<&'a Value>,
    which: &'static str,
}

impl<'a> Side<'a> {
    fn of(v: Option<&'a Value>, job: &str, dir: &str) -> std::result::Result<Side<'a>, String> {
        let Some(v) = v else {
            return Ok(Side {
                ops: 0,
                bytes: 0,
                runtime_ms: 0.0,
                lat: None,
                which: "",
            });
        };
        let count = |k: &str| -> std::result::Result<u64, String> {
            match number(v.get(k)) {
                Some(n) if (0.0..=9e15).contains(&n) => Ok(n as u64),
                None => Ok(0),
                Some(n) => Err(format!("job '{job}': {dir} {k} of {n}")),
            }
        };
        let ops = count("total_ios")?;
        let bytes = count("io_bytes")?;
        // fio states percentiles for clat by default, for lat with
        // lat_percentiles=1: the block that has them gives every figure.
        let has_pct = |k: &str| v.get(k).and_then(|l| l.get("percentile")).is_some();
        let (lat, which) = if has_pct("lat_ns") {
            (v.get("lat_ns"), "lat_ns")
        } else if v.get("clat_ns").is_some() {
            (v.get("clat_ns"), "clat_ns")
        } else {
            (v.get("lat_ns"), "lat_ns")
        };
        Ok(Side {
            ops,
            bytes,
            runtime_ms: number(v.get("runtime")).unwrap_or(0.0).max(0.0),
            lat,
            which,
        })
    }

    fn totals(
        &self,
        secs: f64,
        job: &str,
        dir: &str,
        notes: &mut Vec<String>,
    ) -> std::result::Result<(OpTotals, BucketedHistogram), String> {
        let mut h = histogram::Histogram::new(GROUPING_POWER, MAX_VALUE_POWER)
            .map_err(|e| e.to_string())?;
        if self.ops == 0 {
            return Ok((OpTotals::default(), BucketedHistogram::from_histogram(&h)));
        }
        let lat = self.lat;
        let ns = |k: &str| number(lat.and_then(|l| l.get(k))).unwrap_or(0.0).max(0.0);
        let max_ns = (1u64 << MAX_VALUE_POWER) as f64 - 1.0;
        let clamp = |x: f64| x.min(max_ns);
        let pct: Vec<(f64, f64)> = lat
            .and_then(|l| l.get("percentile"))
            .and_then(Value::as_object)
            .map(|m| {
                let mut v: Vec<(f64, f64)> = m
                    .iter()
                    .filter_map(|(k, x)| Some((k.parse::<f64>().ok()?, number(Some(x))?)))
                    .filter(|(p, x)| (0.0..=100.0).contains(p) && *x >= 0.0)
                    .map(|(p, x)| (p, clamp(x)))
                    .collect();
                v.sort_by(|a, b| a.0.total_cmp(&b.0));
                v
            })
            .unwrap_or_default();
        let bins = lat.and_then(|l| l.get("bins")).and_then(Value::as_object);
        let mut filled = 0u64;
        if let Some(bins) = bins {
            for (k, c) in bins {
                if let (Ok(v), Some(c)) = (k.parse::<f64>(), number(Some(c))) {
                    let c = c.max(0.0) as u64;
                    if h.add(clamp(v) as u64, c).is_ok() {
                        filled = filled.saturating_add(c);
                    }
                }
            }
        }
        let how = if bins.is_some() && filled == self.ops {
            "from fio's json+ bins"
        } else {
            h = histogram::Histogram::new(GROUPING_POWER, MAX_VALUE_POWER)
                .map_err(|e| e.to_string())?;
            let at = |p: f64| (self.ops as f64 * p / 100.0).round() as u64;
            let mut done = 0u64;
            for (p, v) in &pct {
                let upto = at(*p).min(self.ops);
                if upto > done {
                    h.add(*v as u64, upto - done).map_err(|e| e.to_string())?;
                    done = upto;
                }
            }
            // What lies above fio's last point, at its maximum.
            if done < self.ops {
                h.add(clamp(ns("max")) as u64, self.ops - done)
                    .map_err(|e| e.to_string())?;
            }
            "rebuilt from fio's percentile points (percentiles between them are approximate)"
        };
        notes.push(format!(
            "job '{job}' {dir}: latency from fio's {}; histogram {how}",
            self.which
        ));
        let from_hist = |p: f64| {
            crate::stats::percentile_ns(&h, p, ns("min") as u64, clamp(ns("max")).ceil() as u64)
        };
        let p = |q: f64| {
            pct.iter()
                .find(|(k, _)| (k - q).abs() < 1e-9)
                .map_or_else(|| from_hist(q), |(_, v)| *v)
                / 1000.0
        };
        let t = OpTotals {
            ops: self.ops,
            bytes: self.bytes,
            iops: self.ops as f64 / secs,
            mib_s: self.bytes as f64 / MIB / secs,
            lat_us: LatSummary {
                mean: clamp(ns("mean")) / 1000.0,
                min: clamp(ns("min")) / 1000.0,
                max: clamp(ns("max")) / 1000.0,
                stddev: clamp(ns("stddev")) / 1000.0,
                p50: p(50.0),
                p90: p(90.0),
                p99: p(99.0),
                p99_9: p(99.9),
                p99_99: p(99.99),
            },
            service_lat_us: None,
        };
        Ok((t, BucketedHistogram::from_histogram(&h)))
    }
}
