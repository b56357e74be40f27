//! `--live FILE` and `--live-csv FILE`: a line per interval per host per
//! target, then the interval's total, written as the run goes. Each line is
//! one write(2) of a whole line on an unbuffered file (stdout is flushed
//! after it), so a run killed with SIGKILL leaves only whole lines.
//! The schema is `volbench.live/v1` (docs/reference/live.md): fields are
//! only ever added, and a change of meaning gets a new version.

use std::io::Write;
use std::sync::Mutex;

use serde::Serialize;

use crate::events::{Event, IntervalEvent, Observer, Scope};

use crate::result::IntervalOp;
use crate::result::protocol::ProtocolInterval;
use crate::stats::live_hist::sparse_percentile;

pub(crate) const SCHEMA: &str = "volbench.live/v1";

/// JSON Lines or CSV.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    Json,
    Csv,
}

/// Latency of one interval in µs, from that interval's own histogram
/// (the mean from its exact sums); null without operations.
#[derive(Serialize)]
struct Lat {
    mean: f64,
    p50: f64,
    p99: f64,
    p99_9: f64,
    max: f64,
}

#[derive(Serialize)]
struct Op {
    iops: f64,
    mib_s: f64,
    lat_us: Option<Lat>,
}

#[derive(Serialize)]
struct Line<'a> {
    schema: &'static str,
    time: String,
    run: &'a str,
    phase: String,
    /// End of the interval, seconds since the run started, and its length.
    t_s: f64,
    interval_s: f64,
    /// "part" (one target on one host) or "total" (the sum of the parts).
    scope: &'static str,
    host: Option<&'a str>,
    target: Option<&'a str>,
    read: Op,
    write: Op,
    /// What a protocol client (an `nfs://` target) did in the interval.
    #[serde(skip_serializing_if = "Option::is_none")]
    protocol: Option<&'a ProtocolInterval>,
}

const CSV_HEADER: &str = "schema,time,run,phase,t_s,interval_s,scope,host,target,\
read_iops,read_mib_s,read_lat_us_mean,read_lat_us_p50,read_lat_us_p99,read_lat_us_p99_9,read_lat_us_max,\
write_iops,write_mib_s,write_lat_us_mean,write_lat_us_p50,write_lat_us_p99,write_lat_us_p99_9,write_lat_us_max";

/// The columns a job on a protocol target (`nfs://`, `smb://`) adds after
/// the others, the `--live` line's `protocol` object cell by cell; a job
/// on local targets has none, so its header never changes
/// (docs/reference/live.md). Empty on a `total` row and where the client
/// reported nothing.
const CSV_PROTOCOL: &str = ",protocol_calls,protocol_bytes,protocol_rtt_us_mean,\
protocol_exec_us_mean,protocol_errors,protocol_retrans,protocol_timeouts,protocol_reconnects";

/// The CSV header, with the protocol columns or without.
fn csv_header(protocol: bool) -> String {
    format!("{CSV_HEADER}{}\n", if protocol { CSV_PROTOCOL } else { "" })
}

fn op(o: &IntervalOp) -> Op {
    let p = |q: f64| sparse_percentile(&o.lat_hist, q).map(|ns| ns / 1000.0);
    let lat = match (p(50.0), p(99.0), p(99.9), p(100.0)) {
        (Some(p50), Some(p99), Some(p99_9), Some(max)) => Some(Lat {
            mean: o.lat_us_mean,
            p50,
            p99,
            p99_9,
            max,
        }),
        _ => None,
    };
    Op {
        iops: o.iops,
        mib_s: o.mib_s,
        lat_us: lat,
    }
}

pub(crate) struct Lines {
    out: Mutex<Option<Box<dyn Write + Send>>>,
    format: Format,
    flag: &'static str,
    /// The CSV has the protocol columns (a job on a protocol target).
    protocol: bool,
}

impl Lines {
    /// Writes the CSV header at once, so a reader sees the columns before
    /// the first interval; `protocol`: the job's targets are reached by a
    /// protocol client, and its columns are there.
    pub(crate) fn new(
        mut out: Box<dyn Write + Send>,
        format: Format,
        flag: &'static str,
        protocol: bool,
    ) -> Self {
        let ok = format == Format::Json
            || out
                .write_all(csv_header(protocol).as_bytes())
                .and_then(|_| out.flush())
                .is_ok();
        Lines {
            out: Mutex::new(ok.then_some(out)),
            format,
            flag,
            protocol,
        }
    }

    fn csv(l: &Line<'_>, protocol: bool) -> String {
        // Names come from users: cleaned as every CSV cell is, then quoted
        // when they hold a separator, a quote or a line break.
        let cell = |s: &str| {
            let c = crate::output::table::csv_cell(s).into_owned();
            if c.contains([',', '"', '\n', '\r']) {
                format!("\"{}\"", c.replace('"', "\"\""))
            } else {
                c
            }
        };
        let mut cells = vec![
            l.schema.to_string(),
            l.time.clone(),
            cell(l.run),
            l.phase.clone(),
            format!("{:.3}", l.t_s),
            format!("{:.3}", l.interval_s),
            l.scope.to_string(),
            cell(l.host.unwrap_or("")),
            cell(l.target.unwrap_or("")),
        ];
        for o in [&l.read, &l.write] {
            cells.push(format!("{:.3}", o.iops));
            cells.push(format!("{:.3}", o.mib_s));
            match &o.lat_us {
                Some(x) => {
                    for v in [x.mean, x.p50, x.p99, x.p99_9, x.max] {
                        cells.push(format!("{v:.3}"));
                    }
                }
                None => cells.extend(std::iter::repeat_n(String::new(), 5)),
            }
        }
        if protocol {
            match &l.protocol {
                Some(p) => {
                    cells.extend([p.calls, p.bytes].map(|v| v.to_string()));
                    cells.extend([p.rtt_us_mean, p.exec_us_mean].map(|v| format!("{v:.3}")));
                    cells.extend(
                        [p.errors, p.retrans, p.timeouts, p.reconnects].map(|v| v.to_string()),
                    );
                }
                None => cells.extend(std::iter::repeat_n(String::new(), 8)),
            }
        }
        cells.join(",") + "\n"
    }

    fn write(&self, text: &str) {
        let Ok(mut guard) = self.out.lock() else {
            return;
        };
        let Some(out) = guard.as_mut() else { return };
        if let Err(e) = out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
            // The run goes on; the live file stops where it could.
            crate::console::errln!(
                "volbench: {}: cannot write ({e}); no more live lines",
                self.flag
            );
            *guard = None;
        }
    }
}

impl Observer for Lines {
    fn on(&self, ev: &Event<'_>) {
        match ev {
            Event::Interval(iv) => self.interval(iv),
            // The lines are the intervals (docs/reference/live.md); the
            // rest is the terminal's and the result's.
            Event::Note(_)
            | Event::FillStarted { .. }
            | Event::FillAdvanced { .. }
            | Event::FillFinished
            | Event::RunStarted { .. }
            | Event::IoStarted { .. }
            | Event::RunFinished(_)
            | Event::HostState { .. } => {}
        }
    }
}

impl Lines {
    fn interval(&self, ev: &IntervalEvent<'_>) {
        let (scope, host, target) = match ev.scope {
            Scope::Part { host, target } => ("part", Some(host), Some(target)),
            Scope::Total => ("total", None, None),
        };
        let line = Line {
            schema: SCHEMA,
            time: crate::result::now_rfc3339(),
            run: &ev.run.spec.name,
            phase: ev.iv.phase.to_string(),
            t_s: ev.iv.t_s,
            interval_s: ev.iv.duration_s,
            scope,
            host,
            target,
            read: op(&ev.iv.read),
            write: op(&ev.iv.write),
            protocol: ev.proto,
        };
        let text = match self.format {
            Format::Json => match serde_json::to_string(&line) {
                Ok(s) => s + "\n",
                Err(_) => return,
            },
            Format::Csv => Self::csv(&line, self.protocol),
        };
        self.write(&text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::PlannedRun;
    use crate::result::protocol::LinkInterval;
    use crate::result::{Interval, PhaseName};
    use crate::stats::live_links::LinkKind;
    use serde_json::json;
    use std::sync::Arc;

    /// A writer the test can read back.
    #[derive(Clone, Default)]
    struct Buf(Arc<Mutex<Vec<u8>>>);
    impl Write for Buf {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn event_lines(format: Format) -> String {
        event_lines_of(format, false)
    }

    fn event_lines_of(format: Format, protocol: bool) -> String {
        let buf = Buf::default();
        let lines = Lines::new(Box::new(buf.clone()), format, "--live", protocol);
        let run = PlannedRun {
            spec: crate::spec::RunSpec {
                name: "r,1".into(),
                ..crate::spec::RunSpec::default()
            },
            engine: crate::spec::EngineKind::Psync,
            engine_note: None,
            io_threads: 1,
            depth: 1,
            open_files: None,
        };
        // 1000 reads of 100 µs and 10 of 10 ms.
        let lo = |ns: u64| crate::stats::live_hist::bounds(crate::stats::live_hist::index(ns)).0;
        let iv = Interval {
            t_s: 2.0,
            duration_s: 1.0,
            phase: PhaseName::Measure,
            read: IntervalOp {
                iops: 1010.0,
                mib_s: 3.9,
                lat_us_mean: 198.0,
                service_us_mean: None,
                lat_hist: vec![[lo(100_000), 1000], [lo(10_000_000), 10]],
            },
            write: IntervalOp::default(),
            meta_ops: Vec::new(),
        };
        let p = ProtocolInterval {
            calls: 1010,
            bytes: 1010 * 4096,
            rtt_us_mean: 90.0,
            exec_us_mean: 120.0,
            retrans: 3,
            reconnects: 1,
            channels: (0..2)
                .map(|k| LinkInterval {
                    kind: LinkKind::Channel,
                    index: k,
                    server: format!("10.0.0.{k}:445"),
                    vals: [505, 505 * 4096, 0, u64::from(k)],
                })
                .collect(),
            ..ProtocolInterval::default()
        };
        for scope in [
            Scope::Part {
                host: "h1",
                target: "/mnt/a",
            },
            Scope::Total,
        ] {
            lines.interval(&IntervalEvent {
                run: &run,
                elapsed_s: 2.0,
                total_s: 10.0,
                iv: &iv,
                scope,
                proto: matches!(scope, Scope::Part { .. }).then_some(&p),
            });
        }
        String::from_utf8(buf.0.lock().unwrap().clone()).unwrap()
    }

    #[test]
    fn a_json_line_holds_the_interval_s_rates_and_its_own_percentiles() {
        let text = event_lines(Format::Json);
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2);
        let (part, total) = (&lines[0], &lines[1]);
        assert_eq!(part["schema"], SCHEMA);
        assert_eq!(
            (part["scope"].as_str(), part["host"].as_str()),
            (Some("part"), Some("h1"))
        );
        assert_eq!(total["scope"], "total");
        assert!(total["host"].is_null());
        let lat = &part["read"]["lat_us"];
        // p50 in the 100 µs bucket, p99.9 and max in the 10 ms one (buckets
        // are a few percent wide).
        assert!((lat["p50"].as_f64().unwrap() - 100.0).abs() < 5.0, "{lat}");
        assert!(
            (lat["p99_9"].as_f64().unwrap() - 10_000.0).abs() < 500.0,
            "{lat}"
        );
        assert!(
            (lat["max"].as_f64().unwrap() - 10_000.0).abs() < 500.0,
            "{lat}"
        );
        assert_eq!(part["read"]["iops"], 1010.0);
        assert!(part["write"]["lat_us"].is_null(), "no writes, no latency");
        // The protocol client's interval, on the part that has one.
        let p = &part["protocol"];
        assert_eq!(
            (p["calls"].as_u64(), p["reconnects"].as_u64()),
            (Some(1010), Some(1))
        );
        assert_eq!(
            (p["rtt_us_mean"].as_f64(), p["exec_us_mean"].as_f64()),
            (Some(90.0), Some(120.0))
        );
        assert_eq!(p["retrans"], 3);
        // Each channel in the SMB client's words.
        let ch = &p["channels"][1];
        assert_eq!(
            (&ch["channel"], &ch["server"], &ch["requests"]),
            (&json!(1), &json!("10.0.0.1:445"), &json!(505))
        );
        assert_eq!(
            (&ch["bytes"], &ch["credit_waits"]),
            (&json!(505 * 4096), &json!(1))
        );
        assert!(p.get("connections").is_none(), "{p}");
        assert!(total.get("protocol").is_none(), "{total}");
    }

    #[test]
    fn the_csv_twin_has_a_header_and_one_row_per_line_quoting_names() {
        let text = event_lines(Format::Csv);
        let rows: Vec<&str> = text.lines().collect();
        assert_eq!(rows.len(), 3);
        let cols = rows[0].split(',').count();
        assert!(rows[1].contains("\"r,1\""), "{}", rows[1]);
        assert!(rows[2].contains(",total,,,"), "{}", rows[2]);
        let mut r = csv::Reader::from_reader(text.as_bytes());
        for rec in r.records() {
            assert_eq!(rec.unwrap().len(), cols);
        }
        assert!(
            !rows[0].contains("protocol"),
            "a local job's header: {}",
            rows[0]
        );
    }

    /// A job on a protocol target: the header's columns are the local
    /// one's, then the protocol's, every row as wide; a part's row holds
    /// its client's interval, a total's none.
    #[test]
    fn the_csv_of_a_protocol_target_adds_its_columns_after_the_others() {
        let local = event_lines_of(Format::Csv, false);
        let text = event_lines_of(Format::Csv, true);
        let head = text.lines().next().unwrap();
        let base = local.lines().next().unwrap();
        assert_eq!(head, format!("{base}{CSV_PROTOCOL}"));
        let mut r = csv::Reader::from_reader(text.as_bytes());
        let names: Vec<String> = r.headers().unwrap().iter().map(str::to_string).collect();
        let rows: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
        assert_eq!(rows.len(), 2);
        let cell = |row: &csv::StringRecord, name: &str| {
            let i = names.iter().position(|n| n == name).unwrap();
            row.get(i).unwrap().to_string()
        };
        let (part, total) = (&rows[0], &rows[1]);
        assert_eq!(part.len(), names.len());
        assert_eq!(cell(part, "protocol_calls"), "1010");
        assert_eq!(cell(part, "protocol_bytes"), (1010 * 4096).to_string());
        assert_eq!(cell(part, "protocol_rtt_us_mean"), "90.000");
        assert_eq!(cell(part, "protocol_exec_us_mean"), "120.000");
        assert_eq!(cell(part, "protocol_retrans"), "3");
        assert_eq!(cell(part, "protocol_reconnects"), "1");
        assert_eq!(cell(part, "protocol_errors"), "0");
        assert_eq!(cell(total, "scope"), "total");
        assert_eq!(cell(total, "protocol_calls"), "");
    }
}
