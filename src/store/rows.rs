//! A result as the store's rows: the run, its conditions and environment,
//! each workload with its per-op totals and percentiles, the merged
//! intervals, the hosts and each host's totals, the targets, the findings.
//! Pure (no database), so the figures can be held against the result in
//! unit tests; every figure is copied from the result, never recomputed,
//! except a run's combined p99, which comes from `RunResult::latency` (the
//! merged histogram), as every view of the result takes it.

use std::collections::BTreeMap;

use super::db::Val;
use crate::result::{OpTotals, ResultDoc, RunResult, engine_names};

/// The rows of one result, ready to insert (each table's columns in the
/// order of its `*_COLUMNS`).
#[derive(Debug, Clone, Default)]
pub(crate) struct Rows {
    pub(crate) run: Vec<Val>,
    pub(crate) workloads: Vec<Vec<Val>>,
    pub(crate) op_totals: Vec<Vec<Val>>,
    pub(crate) intervals: Vec<Vec<Val>>,
    pub(crate) hosts: Vec<Vec<Val>>,
    pub(crate) host_totals: Vec<Vec<Val>>,
    pub(crate) targets: Vec<Vec<Val>>,
    pub(crate) findings: Vec<Vec<Val>>,
}

pub(crate) const RUN_COLUMNS: &[&str] = &[
    "digest",
    "started",
    "started_s",
    "stored",
    "source",
    "origin",
    "tool_version",
    "host",
    "hosts",
    "target",
    "target_kind",
    "suite",
    "workloads",
    "interrupted",
    "error",
    "findings",
    "headline",
    "iops",
    "mib_s",
    "p99_us",
    "environment",
    "result_codec",
    "result_bytes",
    "result",
];
/// Each child table's columns after `run_id`, which the writer prepends.
pub(crate) const WORKLOAD_COLUMNS: &[&str] = &[
    "idx",
    "name",
    "pattern",
    "read_pct",
    "bs",
    "threads",
    "iodepth",
    "engine",
    "rate_iops",
    "duration_s",
    "discarded",
    "interrupted",
    "conditions",
    "conditions_key",
    "iops",
    "mib_s",
    "lat_mean_us",
];
pub(crate) const OP_COLUMNS: &[&str] = &[
    "workload",
    "op",
    "ops",
    "bytes",
    "iops",
    "mib_s",
    "lat_mean_us",
    "lat_min_us",
    "lat_max_us",
    "lat_stddev_us",
    "p50_us",
    "p90_us",
    "p99_us",
    "p99_9_us",
    "p99_99_us",
];
pub(crate) const INTERVAL_COLUMNS: &[&str] = &[
    "workload",
    "seq",
    "t_s",
    "duration_s",
    "phase",
    "read_iops",
    "read_mib_s",
    "read_lat_mean_us",
    "read_p99_us",
    "write_iops",
    "write_mib_s",
    "write_lat_mean_us",
    "write_p99_us",
];
pub(crate) const HOST_COLUMNS: &[&str] = &[
    "idx",
    "name",
    "status",
    "error",
    "version",
    "kernel",
    "cpus",
    "clock_offset_ms",
];
pub(crate) const HOST_TOTAL_COLUMNS: &[&str] = &[
    "workload",
    "host",
    "op",
    "ops",
    "iops",
    "mib_s",
    "lat_mean_us",
    "p99_us",
];
pub(crate) const TARGET_COLUMNS: &[&str] = &[
    "workload",
    "idx",
    "host",
    "path",
    "read_iops",
    "write_iops",
    "mib_s",
    "lat_mean_us",
    "p99_us",
];
pub(crate) const FINDING_COLUMNS: &[&str] = &["idx", "kind", "confidence", "message", "runs"];

/// Where a stored result came from: a run's own finish, or an import.
#[derive(Debug, Clone)]
pub(crate) struct Origin {
    /// `run`, `import` (a result directory) or `fio` (fio's JSON output).
    pub(crate) source: &'static str,
    /// The directory or file imported; empty for a run.
    pub(crate) path: String,
}

/// The result.json text as the store keeps it: compressed, with its
/// length and codec.
pub(crate) struct Blob {
    pub(crate) codec: &'static str,
    pub(crate) text_len: usize,
    pub(crate) bytes: Vec<u8>,
}

/// The content digest that makes a result stored twice one run: the same
/// result.json text, imported again or copied from another store.
pub(crate) fn digest(json: &str) -> String {
    format!("{:032x}", xxhash_rust::xxh3::xxh3_128(json.as_bytes()))
}

/// Seconds since 1970 of an RFC 3339 time (the result's `started`); 0 for
/// a time that does not parse (an imported result's may not).
pub(crate) fn epoch_s(rfc3339: &str) -> f64 {
    humantime::parse_rfc3339_weak(rfc3339.trim_end_matches('Z'))
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0.0, |d| d.as_secs_f64())
}

/// The target a run is filed under: the path (or hosts' template) the job
/// named, as `--target` said it.
pub(crate) fn target_of(doc: &ResultDoc) -> String {
    doc.spec.target.path.display().to_string()
}

/// The suite a run is filed under; empty for a plain `run`.
pub(crate) fn suite_of(doc: &ResultDoc) -> String {
    doc.spec
        .suite
        .as_ref()
        .map(|s| s.name.clone())
        .unwrap_or_default()
}

/// The hosts that ran I/O: each host of a many-host run, else this one.
pub(crate) fn hosts_of(doc: &ResultDoc) -> usize {
    doc.cluster.as_ref().map_or(1, |c| c.hosts.len().max(1))
}

/// The run the history line shows: the first measured (not discarded) one.
pub(crate) fn headline(doc: &ResultDoc) -> Option<&RunResult> {
    doc.runs
        .iter()
        .find(|r| !r.workload.discard)
        .or(doc.runs.first())
}

impl Rows {
    pub(crate) fn of(doc: &ResultDoc, blob: &Blob, digest: &str, origin: &Origin) -> Rows {
        let head = headline(doc);
        let environment: Vec<(String, String)> = crate::result::conditions::conditions(doc);
        let run = vec![
            Val::text(digest),
            Val::text(&doc.started),
            Val::Real(epoch_s(&doc.started)),
            Val::text(crate::result::now_rfc3339()),
            Val::text(origin.source),
            Val::text(&origin.path),
            Val::text(&doc.tool.version),
            Val::text(&doc.host.hostname),
            Val::count(hosts_of(doc) as u64),
            Val::text(target_of(doc)),
            Val::text(doc.target.as_ref().map_or("", |t| t.kind.name())),
            Val::text(suite_of(doc)),
            Val::count(doc.runs.len() as u64),
            Val::flag(doc.interrupted),
            Val::opt_text(doc.error.as_deref()),
            Val::count(doc.diagnosis.len() as u64),
            Val::text(head.map_or("", |r| r.name.as_str())),
            Val::real(head.map(RunResult::total_iops)),
            Val::real(head.map(RunResult::total_mib_s)),
            Val::real(head.map(|r| r.latency().p99)),
            Val::text(serde_json::to_string(&environment).unwrap_or_default()),
            Val::text(blob.codec),
            Val::count(blob.text_len as u64),
            Val::Bytes(blob.bytes.clone()),
        ];
        let mut rows = Rows {
            run,
            ..Rows::default()
        };
        for (w, r) in doc.runs.iter().enumerate() {
            rows.workload(doc, w as i64, r);
        }
        rows.hosts(doc);
        for (i, f) in doc.diagnosis.iter().enumerate() {
            rows.findings.push(vec![
                Val::Int(i as i64),
                Val::text(json_word(&f.kind)),
                Val::text(json_word(&f.confidence)),
                Val::text(&f.message),
                Val::text(serde_json::to_string(&f.runs).unwrap_or_default()),
            ]);
        }
        rows
    }

    fn workload(&mut self, doc: &ResultDoc, w: i64, r: &RunResult) {
        let conditions = workload_conditions(doc, r);
        let text = serde_json::to_string(&conditions).unwrap_or_default();
        let key = format!("{:016x}", xxhash_rust::xxh3::xxh3_64(text.as_bytes()));
        self.workloads.push(vec![
            Val::Int(w),
            Val::text(&r.name),
            Val::text(r.workload.rw.name()),
            Val::Int(i64::from(r.workload.read_pct)),
            Val::text(r.workload.bs_label()),
            Val::Int(i64::from(r.workload.threads)),
            Val::Int(i64::from(r.workload.iodepth)),
            Val::text(engine_names(&r.engine)),
            Val::real(r.rate.as_ref().map(|x| x.target_iops)),
            Val::Real(r.workload.duration_s),
            Val::flag(r.workload.discard),
            Val::flag(r.interrupted),
            Val::text(text),
            Val::text(key),
            Val::Real(r.total_iops()),
            Val::Real(r.total_mib_s()),
            Val::Real(r.mean_latency_us()),
        ]);
        let mut ops: Vec<(String, &OpTotals)> = r
            .ops()
            .into_iter()
            .map(|(op, t)| (op.name().to_string(), t))
            .collect();
        for (name, t) in [("flush", &r.totals.flush), ("discard", &r.totals.discard)] {
            if let Some(t) = t {
                ops.push((name.to_string(), t));
            }
        }
        for m in &r.meta_ops {
            ops.push((format!("meta:{}", m.op.name()), &m.totals));
        }
        for (name, t) in ops {
            let l = &t.lat_us;
            self.op_totals.push(vec![
                Val::Int(w),
                Val::text(name),
                Val::count(t.ops),
                Val::count(t.bytes),
                Val::Real(t.iops),
                Val::Real(t.mib_s),
                Val::Real(l.mean),
                Val::Real(l.min),
                Val::Real(l.max),
                Val::Real(l.stddev),
                Val::Real(l.p50),
                Val::Real(l.p90),
                Val::Real(l.p99),
                Val::Real(l.p99_9),
                Val::Real(l.p99_99),
            ]);
        }
        for (seq, iv) in r.intervals.iter().enumerate() {
            self.intervals.push(vec![
                Val::Int(w),
                Val::Int(seq as i64),
                Val::Real(iv.t_s),
                Val::Real(iv.duration_s),
                Val::text(iv.phase.name()),
                Val::Real(iv.read.iops),
                Val::Real(iv.read.mib_s),
                Val::Real(iv.read.lat_us_mean),
                Val::real(iv.read.lat_percentile_us(99.0)),
                Val::Real(iv.write.iops),
                Val::Real(iv.write.mib_s),
                Val::Real(iv.write.lat_us_mean),
                Val::real(iv.write.lat_percentile_us(99.0)),
            ]);
        }
        for (i, t) in r.targets.iter().enumerate() {
            self.targets.push(vec![
                Val::Int(w),
                Val::Int(i as i64),
                Val::text(t.host.clone().unwrap_or_default()),
                Val::text(&t.path),
                Val::Real(t.read.iops),
                Val::Real(t.write.iops),
                Val::Real(t.read.mib_s + t.write.mib_s),
                Val::Real(t.lat_us.mean),
                Val::Real(t.lat_us.p99),
            ]);
        }
    }

    fn hosts(&mut self, doc: &ResultDoc) {
        let Some(c) = &doc.cluster else {
            return;
        };
        for (i, h) in c.hosts.iter().enumerate() {
            let info = h.host.as_ref();
            self.hosts.push(vec![
                Val::Int(i as i64),
                Val::text(&h.name),
                Val::text(json_word(&h.status)),
                Val::opt_text(h.error.as_deref()),
                Val::text(h.version.clone().unwrap_or_default()),
                Val::text(info.map_or("", |x| x.kernel.as_str())),
                Val::Int(info.map_or(0, |x| i64::from(x.cpus))),
                Val::real(h.clock_offset_ms),
            ]);
            for hr in &h.runs {
                let Some(w) = doc.runs.iter().position(|r| r.name == hr.name) else {
                    continue;
                };
                for (op, t) in hr.ops() {
                    self.host_totals.push(vec![
                        Val::Int(w as i64),
                        Val::Int(i as i64),
                        Val::text(op.name()),
                        Val::count(t.ops),
                        Val::Real(t.iops),
                        Val::Real(t.mib_s),
                        Val::Real(t.lat_us.mean),
                        Val::Real(t.lat_us.p99),
                    ]);
                }
            }
        }
    }
}

/// What makes two runs of one workload comparable, by name: the workload
/// as run and the engine, beside the result's environment
/// (`result::conditions`). The trend marks a run whose conditions differ.
pub(crate) fn workload_conditions(doc: &ResultDoc, r: &RunResult) -> BTreeMap<String, String> {
    let w = &r.workload;
    let t = &doc.spec.target;
    let mut c = BTreeMap::new();
    let mut put = |k: &str, v: String| {
        c.insert(k.to_string(), v);
    };
    put("pattern", w.rw.name().into());
    put("read %", w.read_pct.to_string());
    put("block size", w.bs_label());
    put("threads", w.threads.to_string());
    put("iodepth", w.iodepth.to_string());
    put("engine", engine_names(&r.engine));
    put("duration", format!("{}s", w.duration_s));
    put("warm-up", format!("{}s", w.warmup_s));
    put(
        "rate",
        w.rate_iops.map_or_else(|| "max".into(), |x| x.to_string()),
    );
    put(
        "working set",
        crate::units::format_size(w.size.unwrap_or(t.size)),
    );
    put("files", w.files.unwrap_or(t.files).to_string());
    put(
        "I/O",
        if t.direct && !w.buffered {
            "direct"
        } else {
            "buffered"
        }
        .into(),
    );
    put("write sync", t.write_sync.name().into());
    put(
        "hosts",
        w.host_count
            .map_or_else(|| hosts_of(doc).to_string(), |n| n.to_string()),
    );
    // Everything else the spec says (shape, metadata, replay...), as JSON,
    // so a change there marks the run too.
    let mut rest = serde_json::to_value(w).unwrap_or_default();
    if let Some(o) = rest.as_object_mut() {
        for k in [
            "name",
            "rw",
            "read_pct",
            "bs",
            "threads",
            "iodepth",
            "duration_s",
            "warmup_s",
            "rate_iops",
            "size",
            "files",
            "buffered",
            "host_count",
        ] {
            o.remove(k);
        }
    }
    put("other", rest.to_string());
    c
}

/// A serde enum's JSON word (`device_busy`, `high`, `ok`).
fn json_word<T: serde::Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => String::new(),
    }
}
