//! `--metrics-listen`: OpenMetrics at `/metrics` while the run lives, for
//! Prometheus and Grafana. Counters of operations, bytes and measured
//! seconds by op, host, target and phase; a latency histogram in Prometheus
//! buckets filled from each interval's own histogram; I/Os in flight
//! (Little's law on the last interval); the run, the phase and each host's
//! state. A multi-host run's coordinator serves every host's series.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use prometheus_client::encoding::{EncodeLabelSet, EncodeMetric, MetricEncoder};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::{MetricType, TypedMetric};
use prometheus_client::registry::Registry;

use crate::error::{Result, VbError};
use crate::events::{Event, Observer, Scope};
use crate::plan::PlannedRun;
use crate::result::IntervalOp;

/// The histogram's upper bounds, in seconds: 10 µs to 10 s, three per
/// decade, the range of storage latencies from NVMe to a struggling share.
pub(crate) const LATENCY_BUCKETS_S: [f64; 19] = [
    1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 1e-2, 2.5e-2, 5e-2, 0.1, 0.25, 0.5,
    1.0, 2.5, 5.0, 10.0,
];

/// The phases the `volbench_phase` state set names.
const PHASES: [&str; 5] = ["preparing", "filling", "warmup", "measure", "done"];

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OpLabels {
    op: String,
    host: String,
    target: String,
    phase: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PartLabels {
    host: String,
    target: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct LatLabels {
    op: String,
    host: String,
    target: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PhaseLabels {
    phase: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RunLabels {
    run: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct HostLabels {
    host: String,
    state: String,
}

/// A Prometheus histogram fed whole buckets at a time: an interval's
/// histogram holds every I/O of it, and observing them one by one would
/// cost the collector a lock per I/O.
#[derive(Debug, Default)]
struct Buckets {
    state: Mutex<(Vec<u64>, f64, u64)>,
}

impl Buckets {
    fn add(&self, lat_hist: &[[u64; 2]], sum_s: f64) {
        let Ok(mut st) = self.state.lock() else {
            return;
        };
        let (counts, sum, count) = &mut *st;
        counts.resize(LATENCY_BUCKETS_S.len() + 1, 0);
        for &[lower_ns, n] in lat_hist {
            let (lo, hi) =
                crate::stats::live_hist::bounds(crate::stats::live_hist::index(lower_ns));
            // The bucket's midpoint, as the percentiles take it.
            let v = (lo as f64 + hi as f64) / 2.0 / 1e9;
            let i = LATENCY_BUCKETS_S
                .iter()
                .position(|&b| v <= b)
                .unwrap_or(LATENCY_BUCKETS_S.len());
            counts[i] = counts[i].saturating_add(n);
            *count = count.saturating_add(n);
        }
        *sum += sum_s;
    }
}

impl TypedMetric for Buckets {
    const TYPE: MetricType = MetricType::Histogram;
}

impl EncodeMetric for Buckets {
    fn encode(&self, mut encoder: MetricEncoder) -> std::result::Result<(), std::fmt::Error> {
        let (counts, sum, count) = match self.state.lock() {
            Ok(st) => st.clone(),
            Err(_) => return Ok(()),
        };
        let buckets: Vec<(f64, u64)> = LATENCY_BUCKETS_S
            .iter()
            .copied()
            .chain([f64::INFINITY])
            .enumerate()
            .map(|(i, b)| (b, counts.get(i).copied().unwrap_or(0)))
            .collect();
        encoder
            .encode_histogram::<prometheus_client::encoding::NoLabelSet>(sum, count, &buckets, None)
    }
    fn metric_type(&self) -> MetricType {
        MetricType::Histogram
    }
}

/// The metric handles (shared with the registry the server encodes).
#[derive(Clone)]
struct Metrics {
    ops: Family<OpLabels, Counter>,
    bytes: Family<OpLabels, Counter>,
    seconds: Family<OpLabels, Counter<f64, AtomicU64>>,
    latency: Family<LatLabels, Buckets>,
    inflight: Family<PartLabels, Gauge<f64, AtomicU64>>,
    phase: Family<PhaseLabels, Gauge>,
    run: Family<RunLabels, Gauge>,
    hosts: Family<HostLabels, Gauge>,
}

impl Metrics {
    fn register(reg: &mut Registry) -> Self {
        let m = Metrics {
            ops: Family::default(),
            bytes: Family::default(),
            seconds: Family::default(),
            latency: Family::default(),
            inflight: Family::default(),
            phase: Family::default(),
            run: Family::default(),
            hosts: Family::default(),
        };
        reg.register(
            "volbench_ops",
            "I/O operations completed, by op, host, target and phase",
            m.ops.clone(),
        );
        reg.register(
            "volbench_bytes",
            "Bytes transferred, by op, host, target and phase",
            m.bytes.clone(),
        );
        reg.register(
            "volbench_interval_seconds",
            "Seconds of intervals counted, by host, target and phase (ops / seconds = IOPS)",
            m.seconds.clone(),
        );
        reg.register(
            "volbench_latency_seconds",
            "I/O latency, submission to completion",
            m.latency.clone(),
        );
        reg.register(
            "volbench_inflight_ios",
            "Mean I/Os in flight over the last interval (IOPS x mean latency)",
            m.inflight.clone(),
        );
        reg.register(
            "volbench_phase",
            "1 for the phase the run is in",
            m.phase.clone(),
        );
        reg.register("volbench_run", "1 for the run in progress", m.run.clone());
        reg.register(
            "volbench_host_state",
            "1 for each host's state (running, idle, failed)",
            m.hosts.clone(),
        );
        m
    }

    fn set_phase(&self, now: &str) {
        for p in PHASES {
            let l = PhaseLabels {
                phase: p.to_string(),
            };
            self.phase.get_or_create(&l).set(i64::from(p == now));
        }
    }

    fn part(&self, host: &str, target: &str, phase: &str, iv: &crate::result::Interval) {
        let mut inflight = 0.0;
        for (name, op) in [("read", &iv.read), ("write", &iv.write)] {
            let l = OpLabels {
                op: name.into(),
                host: host.into(),
                target: target.into(),
                phase: phase.into(),
            };
            let n = op.iops * iv.duration_s;
            self.ops.get_or_create(&l).inc_by(n.round() as u64);
            self.bytes
                .get_or_create(&l)
                .inc_by((op.mib_s * iv.duration_s * 1024.0 * 1024.0).round() as u64);
            self.seconds.get_or_create(&l).inc_by(iv.duration_s);
            add_latency(&self.latency, name, host, target, op, n);
            inflight += op.iops * op.lat_us_mean / 1e6;
        }
        let l = PartLabels {
            host: host.into(),
            target: target.into(),
        };
        self.inflight.get_or_create(&l).set(inflight);
    }
}

fn add_latency(
    fam: &Family<LatLabels, Buckets>,
    op: &str,
    host: &str,
    target: &str,
    o: &IntervalOp,
    n: f64,
) {
    if o.lat_hist.is_empty() {
        return;
    }
    let l = LatLabels {
        op: op.into(),
        host: host.into(),
        target: target.into(),
    };
    fam.get_or_create(&l)
        .add(&o.lat_hist, o.lat_us_mean * n / 1e6);
}

/// The endpoint: bound before any I/O (a port in use or an address not
/// of this machine is one line and exit 2), served by one thread.
pub(crate) struct Exporter {
    m: Metrics,
    what: Mutex<String>,
    run: Mutex<Option<String>>,
}

impl Exporter {
    pub(crate) fn listen(addr: SocketAddr) -> Result<(Self, SocketAddr)> {
        let listener = TcpListener::bind(addr).map_err(|e| {
            let why = match e.kind() {
                std::io::ErrorKind::AddrInUse => "the port is in use".to_string(),
                std::io::ErrorKind::AddrNotAvailable => {
                    "not an address of this machine".to_string()
                }
                std::io::ErrorKind::PermissionDenied => "not allowed to bind it".to_string(),
                _ => e.to_string(),
            };
            VbError::input(format!("--metrics-listen {addr}: {why}"))
        })?;
        let mut reg = Registry::default();
        let m = Metrics::register(&mut reg);
        m.set_phase("preparing");
        let reg = Arc::new(reg);
        // A std listener and one thread, not an HTTP crate: the endpoint
        // answers one GET from a scraper every few seconds, and the
        // protocol it needs is a request line and a response.
        std::thread::Builder::new()
            .name("vb-metrics".into())
            .spawn(move || {
                for conn in listener.incoming().flatten() {
                    let _ = serve(conn, &reg);
                }
            })
            .map_err(|e| VbError::run(format!("cannot start the metrics thread: {e}")))?;
        Ok((
            Exporter {
                m,
                what: Mutex::new("preparing".into()),
                run: Mutex::new(None),
            },
            addr,
        ))
    }

    fn phase(&self, p: &str) {
        let Ok(mut w) = self.what.lock() else { return };
        if *w != p {
            self.m.set_phase(p);
            *w = p.to_string();
        }
    }
}

/// One request: `GET /metrics` gets the exposition, anything else a 404.
/// A scraper that sends nothing is dropped after 5 s.
fn serve(conn: TcpStream, reg: &Registry) -> std::io::Result<()> {
    conn.set_read_timeout(Some(Duration::from_secs(5)))?;
    conn.set_write_timeout(Some(Duration::from_secs(5)))?;
    let mut reader = BufReader::new(conn.try_clone()?);
    let mut line = String::new();
    // At most one request line of 8 KiB; the headers are not needed.
    (&mut reader).take(8192).read_line(&mut line)?;
    let mut header = String::new();
    let mut openmetrics = false;
    while (&mut reader).take(8192).read_line(&mut header)? > 2 {
        let h = header.to_ascii_lowercase();
        if h.starts_with("accept:") && h.contains("application/openmetrics-text") {
            openmetrics = true;
        }
        header.clear();
    }
    let mut conn = conn;
    let path = line.split_whitespace().nth(1).unwrap_or("");
    if !line.starts_with("GET ") || (path != "/metrics" && !path.starts_with("/metrics?")) {
        let body = "volbench serves /metrics\n";
        return write!(
            conn,
            "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
    }
    let mut body = String::new();
    if prometheus_client::encoding::text::encode(&mut body, reg).is_err() {
        body = "# EOF\n".into();
    }
    let kind = if openmetrics {
        "application/openmetrics-text; version=1.0.0"
    } else {
        body = prometheus_text(&body);
        "text/plain; version=0.0.4"
    };
    write!(
        conn,
        "HTTP/1.1 200 OK\r\nContent-Type: {kind}; charset=utf-8\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

/// OpenMetrics text as Prometheus' older text format, for scrapers that do
/// not ask for OpenMetrics (curl, promtool): a counter's family takes its
/// samples' `_total` name, and there is no `# EOF`. The rest is the same.
pub(crate) fn prometheus_text(om: &str) -> String {
    let mut out = String::with_capacity(om.len());
    let mut help: Option<&str> = None;
    for line in om.lines() {
        if line == "# EOF" {
            continue;
        }
        if line.starts_with("# HELP ") {
            help = Some(line);
            continue;
        }
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let counter = rest.ends_with(" counter");
            let name = rest.split(' ').next().unwrap_or("");
            let fix = |l: &str| {
                if counter {
                    l.replacen(&format!(" {name} "), &format!(" {name}_total "), 1)
                } else {
                    l.to_string()
                }
            };
            if let Some(h) = help.take() {
                out.push_str(&fix(h));
                out.push('\n');
            }
            out.push_str(&fix(line));
            out.push('\n');
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

impl Observer for Exporter {
    fn on(&self, ev: &Event<'_>) {
        match ev {
            Event::FillStarted { .. } => self.phase("filling"),
            Event::RunStarted { run, .. } => self.run_started(run),
            Event::Interval(iv) => {
                let phase = iv.iv.phase.to_string();
                match iv.scope {
                    Scope::Part { host, target } => self.m.part(host, target, &phase, iv.iv),
                    Scope::Total => self.phase(&phase),
                }
            }
            Event::RunFinished(_) => self.phase("done"),
            Event::HostState { host, state } => self.host_state(host, state),
            // Gauges of the I/O, not a log: notes, the fill's bytes and
            // the I/O's start have no series.
            Event::Note(_)
            | Event::FillAdvanced { .. }
            | Event::FillFinished
            | Event::IoStarted { .. } => {}
        }
    }
}

impl Exporter {
    fn run_started(&self, run: &PlannedRun) {
        let name = run.spec.name.clone();
        let old = self
            .run
            .lock()
            .ok()
            .and_then(|mut cur| cur.replace(name.clone()));
        if let Some(old) = old {
            self.m.run.get_or_create(&RunLabels { run: old }).set(0);
        }
        self.m.run.get_or_create(&RunLabels { run: name }).set(1);
        self.phase(if run.spec.warmup_s > 0.0 {
            "warmup"
        } else {
            "measure"
        });
    }
    fn host_state(&self, host: &str, state: &str) {
        for s in ["running", "idle", "failed"] {
            let l = HostLabels {
                host: host.into(),
                state: s.into(),
            };
            self.m.hosts.get_or_create(&l).set(i64::from(s == state));
        }
    }
}
