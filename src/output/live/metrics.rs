//! `--metrics-listen`: OpenMetrics at `/metrics` while the run lives, for
//! Prometheus and Grafana. Counters of operations, bytes and measured
//! seconds by op, host, target and phase; a latency histogram in Prometheus
//! buckets filled from each interval's own histogram; I/Os in flight
//! (Little's law on the last interval); the run, the phase and each host's
//! state. A multi-host run's coordinator serves every host's series.

use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use prometheus_client::encoding::{
    EncodeLabelSet, EncodeLabelValue, EncodeMetric, LabelValueEncoder, MetricEncoder,
};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::{MetricType, TypedMetric};
use prometheus_client::registry::Registry;

use crate::error::{Result, VbError};
use crate::events::{Event, Observer, Scope};
use crate::plan::PlannedRun;
use crate::result::IntervalOp;
use crate::result::protocol::ProtocolInterval;

mod links;

/// The histogram's upper bounds, in seconds: 10 µs to 10 s, three per
/// decade, the range of storage latencies from NVMe to a struggling share.
pub(crate) const LATENCY_BUCKETS_S: [f64; 19] = [
    1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 1e-2, 2.5e-2, 5e-2, 0.1, 0.25, 0.5,
    1.0, 2.5, 5.0, 10.0,
];

/// The phases the `volbench_phase` state set names.
const PHASES: [&str; 5] = ["preparing", "filling", "warmup", "measure", "done"];

/// A label value as the exposition formats write it: `\`, `"` and a line
/// break escaped (`\\`, `\"`, `\n`). The encoder writes values as they
/// are, and one run name or target path holding a quote would make
/// Prometheus refuse every scrape of the run.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Label(String);

impl From<&str> for Label {
    fn from(s: &str) -> Self {
        Label(s.to_string())
    }
}

impl From<String> for Label {
    fn from(s: String) -> Self {
        Label(s)
    }
}

impl EncodeLabelValue for Label {
    fn encode(&self, encoder: &mut LabelValueEncoder) -> std::fmt::Result {
        use std::fmt::Write;
        for c in self.0.chars() {
            match c {
                '\\' => encoder.write_str("\\\\")?,
                '"' => encoder.write_str("\\\"")?,
                '\n' => encoder.write_str("\\n")?,
                c => encoder.write_char(c)?,
            }
        }
        Ok(())
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OpLabels {
    run: Label,
    op: Label,
    host: Label,
    target: Label,
    phase: Label,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PartLabels {
    run: Label,
    host: Label,
    target: Label,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PhasePartLabels {
    run: Label,
    host: Label,
    target: Label,
    phase: Label,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct LatLabels {
    run: Label,
    op: Label,
    host: Label,
    target: Label,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PhaseLabels {
    phase: Label,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RunLabels {
    run: Label,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct HostLabels {
    host: Label,
    state: Label,
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
            // The encoder writes `le="+Inf"` for f64::MAX (INFINITY came
            // out as `inf`, which the exposition formats do not know).
            .chain([f64::MAX])
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
    /// A protocol client's calls, their round-trip and execute seconds
    /// (summed: over calls, the means), retransmissions, timeouts and
    /// reconnects (an `nfs://` or `smb://` target).
    proto_calls: Family<PhasePartLabels, Counter>,
    proto_rtt: Family<PhasePartLabels, Counter<f64, AtomicU64>>,
    proto_exec: Family<PhasePartLabels, Counter<f64, AtomicU64>>,
    proto_retrans: Family<PhasePartLabels, Counter>,
    proto_timeouts: Family<PhasePartLabels, Counter>,
    proto_reconnects: Family<PhasePartLabels, Counter>,
    /// The same per channel (SMB) or connection (NFS).
    links: links::LinkMetrics,
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
            proto_calls: Family::default(),
            proto_rtt: Family::default(),
            proto_exec: Family::default(),
            proto_retrans: Family::default(),
            proto_timeouts: Family::default(),
            proto_reconnects: Family::default(),
            links: links::LinkMetrics::register(reg),
        };
        reg.register(
            "volbench_ops",
            "I/O operations completed, by run, op, host, target and phase",
            m.ops.clone(),
        );
        reg.register(
            "volbench_bytes",
            "Bytes transferred, by run, op, host, target and phase",
            m.bytes.clone(),
        );
        reg.register(
            "volbench_interval_seconds",
            "Seconds of intervals counted, by run, op, host, target and phase (ops / seconds = IOPS)",
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
        for (name, help, fam) in [
            (
                "volbench_protocol_calls",
                "Calls a protocol client (nfs://, smb://) had answered",
                &m.proto_calls,
            ),
            (
                "volbench_protocol_retransmissions",
                "Calls a protocol client sent again (after a reconnect or a timeout)",
                &m.proto_retrans,
            ),
            (
                "volbench_protocol_timeouts",
                "Calls a protocol client waited for past the call timeout",
                &m.proto_timeouts,
            ),
            (
                "volbench_protocol_reconnects",
                "Connections a protocol client made again after the server was lost",
                &m.proto_reconnects,
            ),
        ] {
            reg.register(name, help, fam.clone());
        }
        reg.register(
            "volbench_protocol_rtt_seconds",
            "Round-trip seconds of a protocol client's calls, summed (over calls: the mean)",
            m.proto_rtt.clone(),
        );
        reg.register(
            "volbench_protocol_exec_seconds",
            "Execute seconds (queued to completed) of a protocol client's calls, summed",
            m.proto_exec.clone(),
        );
        m
    }

    /// One host's protocol client's interval of one target.
    fn proto(&self, l: PhasePartLabels, p: &ProtocolInterval) {
        self.proto_calls.get_or_create(&l).inc_by(p.calls);
        let secs = |us: f64| us * p.calls as f64 / 1e6;
        self.proto_rtt.get_or_create(&l).inc_by(secs(p.rtt_us_mean));
        self.proto_exec
            .get_or_create(&l)
            .inc_by(secs(p.exec_us_mean));
        self.proto_retrans.get_or_create(&l).inc_by(p.retrans);
        self.proto_timeouts.get_or_create(&l).inc_by(p.timeouts);
        self.proto_reconnects.get_or_create(&l).inc_by(p.reconnects);
        self.links.add(&l, p);
    }

    fn set_phase(&self, now: &str) {
        for p in PHASES {
            let l = PhaseLabels { phase: p.into() };
            self.phase.get_or_create(&l).set(i64::from(p == now));
        }
    }

    /// One host's interval of one target, counted under `run` (a sweep's
    /// runs are series of their own, never blended).
    fn part(&self, run: &str, host: &str, target: &str, phase: &str, iv: &crate::result::Interval) {
        let mut inflight = 0.0;
        for (name, op) in [("read", &iv.read), ("write", &iv.write)] {
            let l = OpLabels {
                run: run.into(),
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
            let at = LatLabels {
                run: run.into(),
                op: name.into(),
                host: host.into(),
                target: target.into(),
            };
            add_latency(&self.latency, at, op, n);
            inflight += op.iops * op.lat_us_mean / 1e6;
        }
        let l = PartLabels {
            run: run.into(),
            host: host.into(),
            target: target.into(),
        };
        self.inflight.get_or_create(&l).set(inflight);
    }
}

fn add_latency(fam: &Family<LatLabels, Buckets>, l: LatLabels, o: &IntervalOp, n: f64) {
    if o.lat_hist.is_empty() {
        return;
    }
    fam.get_or_create(&l)
        .add(&o.lat_hist, o.lat_us_mean * n / 1e6);
}

/// The endpoint: bound before any I/O (a port in use or an address not
/// of this machine is one line and exit 2), served by `serve::Server`, and
/// kept up after the run until one more scrape has read the final figures
/// (`serve::Server::linger`, when the exporter is dropped).
pub(crate) struct Exporter {
    m: Metrics,
    what: Mutex<String>,
    run: Mutex<Option<String>>,
    server: Arc<super::serve::Server>,
    /// Whether any run began: a job refused before its first run has no
    /// final figures to wait for.
    ran: AtomicBool,
    quiet: bool,
}

impl Exporter {
    pub(crate) fn listen(addr: SocketAddr, quiet: bool) -> Result<(Self, SocketAddr)> {
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
        let server = super::serve::Server::start(listener, Arc::new(reg), Default::default())
            .map_err(|e| VbError::run(format!("cannot start the metrics thread: {e}")))?;
        Ok((
            Exporter {
                m,
                what: Mutex::new("preparing".into()),
                run: Mutex::new(None),
                server,
                ran: AtomicBool::new(false),
                quiet,
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

impl Drop for Exporter {
    /// The job is over (its result written): the phase says `done`, and the
    /// endpoint stays up until one more scrape reads it.
    fn drop(&mut self) {
        if !self.ran.load(Ordering::Relaxed) {
            return;
        }
        self.phase("done");
        let quiet = self.quiet;
        self.server.linger(|wait| {
            if !quiet && !wait.is_zero() {
                crate::console::errln!(
                    "metrics: serving the final figures until the next scrape (at most {})",
                    crate::units::format_duration(wait)
                );
            }
        });
    }
}

impl Observer for Exporter {
    fn on(&self, ev: &Event<'_>) {
        match ev {
            Event::FillStarted { .. } => self.phase("filling"),
            Event::RunStarted { run, .. } => self.run_started(run),
            Event::Interval(iv) => {
                let phase = iv.iv.phase.to_string();
                match iv.scope {
                    Scope::Part { host, target } => {
                        let run = self.run.lock().ok().and_then(|r| r.clone());
                        let run = run.as_deref().unwrap_or_default();
                        self.m.part(run, host, target, &phase, iv.iv);
                        if let Some(p) = &iv.proto {
                            let l = PhasePartLabels {
                                run: run.into(),
                                host: host.into(),
                                target: target.into(),
                                phase: phase.as_str().into(),
                            };
                            self.m.proto(l, p);
                        }
                    }
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
        self.ran.store(true, Ordering::Relaxed);
        let name = run.spec.name.clone();
        let old = self
            .run
            .lock()
            .ok()
            .and_then(|mut cur| cur.replace(name.clone()));
        if let Some(old) = old {
            self.m
                .run
                .get_or_create(&RunLabels { run: old.into() })
                .set(0);
        }
        self.m
            .run
            .get_or_create(&RunLabels { run: name.into() })
            .set(1);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::{Interval, PhaseName};

    /// The exposition of one interval of a run and target named with every
    /// character the formats escape.
    fn exposition() -> String {
        let mut reg = Registry::default();
        let m = Metrics::register(&mut reg);
        m.run
            .get_or_create(&RunLabels {
                run: "a \"quoted\" \\ run".into(),
            })
            .set(1);
        let lo = |ns: u64| crate::stats::live_hist::bounds(crate::stats::live_hist::index(ns)).0;
        let iv = Interval {
            t_s: 1.0,
            duration_s: 1.0,
            phase: PhaseName::Measure,
            read: IntervalOp {
                iops: 10.0,
                mib_s: 0.04,
                lat_us_mean: 100.0,
                service_us_mean: None,
                // One I/O far past the last bound: the +Inf bucket's.
                lat_hist: vec![[lo(100_000), 9], [lo(60_000_000_000), 1]],
            },
            write: IntervalOp::default(),
            meta_ops: Vec::new(),
        };
        m.part("r1", "h1", "/mnt/new\nline", "measure", &iv);
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &reg).unwrap();
        text
    }

    #[test]
    fn label_values_are_escaped_and_the_top_bucket_is_plus_inf() {
        let text = exposition();
        assert!(text.contains(r#"run="a \"quoted\" \\ run""#), "{text}");
        assert!(text.contains(r#"target="/mnt/new\nline""#), "{text}");
        assert!(!text.contains("new\nline"), "a raw line break in a label");
        let top = text
            .lines()
            .find(|l| l.starts_with("volbench_latency_seconds_bucket") && l.contains("+Inf"))
            .unwrap_or_else(|| panic!("no +Inf bucket:\n{text}"));
        assert!(top.ends_with(" 10"), "{top}");
        assert!(!text.contains("le=\"inf\""), "{text}");
    }

    /// Every series a query of the shipped Grafana dashboard names is one
    /// the exporter serves (by the samples its families' types give: a
    /// counter's `_total`, a histogram's `_bucket`, `_sum` and `_count`),
    /// so a renamed series cannot leave a panel silently empty. That the
    /// queries are valid PromQL is the live end-to-end test's, against a
    /// real Prometheus.
    #[test]
    fn the_dashboards_queries_name_series_the_exporter_serves() {
        let mut reg = Registry::default();
        let _m = Metrics::register(&mut reg);
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &reg).unwrap();
        let mut served = std::collections::BTreeSet::new();
        for l in text.lines() {
            let Some(rest) = l.strip_prefix("# TYPE ") else {
                continue;
            };
            let (name, kind) = rest.split_once(' ').unwrap();
            let samples: &[&str] = match kind {
                "counter" => &["_total"],
                "histogram" => &["_bucket", "_sum", "_count"],
                _ => &[""],
            };
            for s in samples {
                served.insert(format!("{name}{s}"));
            }
        }
        let board: serde_json::Value =
            serde_json::from_str(include_str!("../../../docs/grafana-dashboard.json")).unwrap();
        let mut named = std::collections::BTreeSet::new();
        for panel in board["panels"].as_array().unwrap() {
            for t in panel["targets"].as_array().into_iter().flatten() {
                let e = t["expr"].as_str().unwrap();
                let mut rest = e;
                while let Some(i) = rest.find("volbench_") {
                    let tail = &rest[i..];
                    let end = tail
                        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                        .unwrap_or(tail.len());
                    named.insert((tail[..end].to_string(), panel["title"].to_string()));
                    rest = &tail[end..];
                }
            }
        }
        for (name, panel) in &named {
            assert!(
                served.contains(name),
                "{panel} names {name}, not served: {served:?}"
            );
        }
        // Every protocol series the exporter serves has its panel.
        for s in served
            .iter()
            .filter(|s| s.starts_with("volbench_protocol_"))
        {
            assert!(named.iter().any(|(n, _)| n == s), "no panel shows {s}");
        }
    }

    #[test]
    fn a_protocol_clients_interval_adds_to_its_counters() {
        let mut reg = Registry::default();
        let m = Metrics::register(&mut reg);
        let l = || PhasePartLabels {
            run: "r".into(),
            host: "h".into(),
            target: "nfs://s/e/d".into(),
            phase: "measure".into(),
        };
        let p = ProtocolInterval {
            calls: 2000,
            rtt_us_mean: 100.0,
            exec_us_mean: 150.0,
            retrans: 4,
            reconnects: 1,
            ..ProtocolInterval::default()
        };
        m.proto(l(), &p);
        m.proto(l(), &ProtocolInterval { reconnects: 0, ..p });
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &reg).unwrap();
        let value = |name: &str| {
            text.lines()
                .find(|x| x.starts_with(name))
                .and_then(|x| x.rsplit(' ').next())
                .and_then(|v| v.parse::<f64>().ok())
                .unwrap_or_else(|| panic!("no {name}:\n{text}"))
        };
        assert_eq!(value("volbench_protocol_calls_total{"), 4000.0);
        assert_eq!(value("volbench_protocol_retransmissions_total{"), 8.0);
        assert_eq!(value("volbench_protocol_reconnects_total{"), 1.0);
        // 4000 calls of 100 µs and 150 µs: their sums in seconds.
        assert!((value("volbench_protocol_rtt_seconds_total{") - 0.4).abs() < 1e-9);
        assert!((value("volbench_protocol_exec_seconds_total{") - 0.6).abs() < 1e-9);
        assert!(text.contains(r#"target="nfs://s/e/d""#), "{text}");
    }
}
