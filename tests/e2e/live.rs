//! Outputs made while a run goes: `--live` and `--live-csv` lines that a
//! kill cannot tear, per-host lines in a multi-host run while it runs, and
//! `--metrics-listen` scraped by a real Prometheus.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use volbench::error::exit;

use crate::common::live_run::{free_port, scrape};
use crate::common::{read_json, skip, stderr, vb, volbench};

const BIN: &str = env!("CARGO_BIN_EXE_volbench");

/// The lines of a live file, each parsed; panics on a torn or bad line.
fn live_lines(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    assert!(text.is_empty() || text.ends_with('\n'), "a torn last line");
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// Polls `path` until `done` holds for its lines, while `child` still
/// runs; false if the child ended first or 60 s passed.
fn wait_for_lines(child: &mut Child, path: &Path, done: impl Fn(&[Value]) -> bool) -> bool {
    let until = Instant::now() + Duration::from_secs(60);
    while Instant::now() < until {
        if done(&live_lines(path)) {
            return child.try_wait().unwrap().is_none();
        }
        if child.try_wait().unwrap().is_some() {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

#[test]
fn a_sigkill_mid_run_leaves_a_live_file_whose_lines_all_parse() {
    let tmp = tempfile::tempdir().unwrap();
    let live = tmp.path().join("live.jsonl");
    let mut child = volbench()
        .args(["run", "--size", "4m", "--buffered", "--engine", "null"])
        .args(["--duration", "60s", "--warmup", "0", "--interval", "50ms"])
        .arg("--target")
        .arg(tmp.path().join("t"))
        .arg("--live")
        .arg(&live)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    assert!(
        wait_for_lines(&mut child, &live, |l| l.len() >= 20),
        "the run wrote live lines while it ran"
    );
    child.kill().unwrap();
    child.wait().unwrap();
    let lines = live_lines(&live);
    assert!(lines.len() >= 20);
    for l in &lines {
        assert_eq!(l["schema"], "volbench.live/v1");
        assert!(l["read"]["iops"].as_f64().is_some(), "{l}");
    }
}

#[test]
fn per_host_lines_appear_mid_run_and_each_total_is_the_sum_of_the_hosts() {
    let tmp = tempfile::tempdir().unwrap();
    let live = tmp.path().join("live.jsonl");
    let hosts = ["h1", "h2", "h3", "h4"];
    let port = free_port();
    // Four simulated hosts: the exec launcher starts each agent here.
    let mut child = volbench()
        .args([
            "run",
            "--hosts",
            &hosts.join(","),
            "--launcher",
            "env VB_HOST={host}",
        ])
        .args(["--remote-volbench", BIN])
        .arg("--target")
        .arg(tmp.path().join("{host}"))
        .args([
            "--size",
            "4m",
            "--buffered",
            "--engine",
            "null",
            "--rw",
            "randrw",
        ])
        .args(["--duration", "3s", "--warmup", "0", "--interval", "250ms"])
        .arg("--live")
        .arg(&live)
        .arg("--metrics-listen")
        .arg(format!("127.0.0.1:{port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let every_host = |l: &[Value]| {
        hosts
            .iter()
            .all(|h| l.iter().any(|x| x["scope"] == "part" && x["host"] == *h))
    };
    assert!(
        wait_for_lines(&mut child, &live, every_host),
        "each host's lines were in the file while the run went on"
    );
    // The coordinator serves every host's own series, labelled with it,
    // while the run goes on.
    let body = scrape(port).expect("/metrics answers while the run goes on");
    for h in hosts {
        let label = format!("host=\"{h}\"");
        let has = |name: &str| {
            body.lines()
                .any(|l| l.starts_with(name) && l.contains(&label))
        };
        assert!(has("volbench_ops_total{"), "no ops of {h}:\n{body}");
        assert!(has("volbench_host_state{"), "no state of {h}:\n{body}");
    }
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(child.wait().unwrap().success(), "{err}");
    let lines = live_lines(&live);
    // The k-th total is the sum of every host's k-th interval.
    let totals: Vec<&Value> = lines.iter().filter(|l| l["scope"] == "total").collect();
    assert!(totals.len() >= 8, "{}", totals.len());
    for (k, t) in totals.iter().enumerate() {
        for op in ["read", "write"] {
            let parts: Vec<f64> = hosts
                .iter()
                .map(|h| {
                    let mine: Vec<&Value> = lines
                        .iter()
                        .filter(|l| l["scope"] == "part" && l["host"] == *h)
                        .collect();
                    mine[k][op]["iops"].as_f64().unwrap()
                })
                .collect();
            let sum: f64 = parts.iter().sum();
            let total = t[op]["iops"].as_f64().unwrap();
            assert!(
                (total - sum).abs() <= 1e-6 * sum.max(1.0),
                "interval {k} {op}: total {total} != sum of hosts {sum} ({parts:?})"
            );
        }
    }
}

#[test]
fn live_and_metrics_flags_are_refused_before_any_io() {
    let tmp = tempfile::tempdir().unwrap();
    let target = tmp.path().join("t");
    std::fs::create_dir(&target).unwrap();
    let taken = tmp.path().join("taken.jsonl");
    std::fs::write(&taken, "someone's\n").unwrap();
    let busy = TcpListener::bind("127.0.0.1:0").unwrap();
    let busy_port = busy.local_addr().unwrap().port().to_string();
    let in_use = format!("127.0.0.1:{busy_port}");
    let cases: Vec<(Vec<&str>, i32, &str)> = vec![
        (
            vec!["--live", taken.to_str().unwrap()],
            exit::REFUSED,
            "already there",
        ),
        (
            vec!["--live-csv", taken.to_str().unwrap()],
            exit::REFUSED,
            "already there",
        ),
        (
            vec!["--metrics-listen", &in_use],
            exit::BAD_INPUT,
            "port is in use",
        ),
        (
            vec!["--metrics-listen", "80"],
            exit::BAD_INPUT,
            "below 1024",
        ),
        (
            vec!["--metrics-listen", "192.0.2.1:19999"],
            exit::BAD_INPUT,
            "not an address of this machine",
        ),
        (
            vec!["--metrics-listen", "example.com:9100"],
            exit::BAD_INPUT,
            "IP address",
        ),
        (
            vec!["--progress-interval", "-1"],
            exit::BAD_INPUT,
            "--progress-interval",
        ),
    ];
    for (args, code, want) in cases {
        let o = vb(["run", "--size", "4m", "--duration", "1s", "--target"])
            .arg(&target)
            .args(&args)
            .expect(code);
        let err = stderr(&o);
        assert!(err.contains(want), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: one line: {err}");
    }
    assert_eq!(std::fs::read_to_string(&taken).unwrap(), "someone's\n");
    assert_eq!(
        std::fs::read_dir(&target).unwrap().count(),
        0,
        "nothing was written to the target"
    );
}

/// A Prometheus server on loopback, killed on drop.
struct Prometheus(Child);

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Prometheus's instant query answer as one number.
fn query(port: u16, q: &str) -> Option<f64> {
    let out = Command::new("curl")
        .args(["-sf", "--get", "--data-urlencode"])
        .arg(format!("query={q}"))
        .arg(format!("http://127.0.0.1:{port}/api/v1/query"))
        .output()
        .ok()?;
    let v: Value = serde_json::from_slice(&out.stdout).ok()?;
    v["data"]["result"][0]["value"][1].as_str()?.parse().ok()
}

#[test]
fn a_real_prometheus_scrapes_the_run_and_agrees_with_its_result() {
    let test = "a_real_prometheus_scrapes_the_run";
    for tool in ["prometheus", "promtool", "curl"] {
        if Command::new(tool).arg("--version").output().is_err() {
            skip(
                test,
                &format!("{tool} is missing (apt-get install prometheus curl)"),
            );
            return;
        }
    }
    let tmp = tempfile::tempdir().unwrap();
    let (mport, pport) = (free_port(), free_port());
    let conf = tmp.path().join("prometheus.yml");
    std::fs::write(
        &conf,
        format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: volbench\n    static_configs:\n      - targets: ['127.0.0.1:{mport}']\n"
        ),
    )
    .unwrap();
    let _prom = Prometheus(
        Command::new("prometheus")
            .arg(format!("--config.file={}", conf.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                tmp.path().join("tsdb").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{pport}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    // A fixed rate: the figure Prometheus saw so far and the run's own
    // agree whatever the machine's load.
    let mut run = volbench()
        .args([
            "run",
            "--size",
            "8m",
            "--buffered",
            "--rw",
            "randread",
            "--rate",
            "2000",
        ])
        .args(["--warmup", "2s", "--duration", "12s"])
        .arg("--target")
        .arg(tmp.path().join("t"))
        .arg("--output")
        .arg(tmp.path().join("out"))
        .arg("--metrics-listen")
        .arg(format!("127.0.0.1:{mport}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // promtool checks the exposition once the measured phase is on.
    let until = Instant::now() + Duration::from_secs(60);
    let text = loop {
        match scrape(mport) {
            Some(t) if t.contains("phase=\"measure\"} 1") => break t,
            _ if Instant::now() > until => panic!("no measure phase scraped"),
            _ => std::thread::sleep(Duration::from_millis(100)),
        }
    };
    let mut check = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    check
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let o = check.wait_with_output().unwrap();
    assert!(
        o.status.success(),
        "promtool: {}{}\n{text}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(run.wait().unwrap().success());
    let doc = read_json(&tmp.path().join("out/result.json"));
    let want = doc["runs"][0]["totals"]["read"]["iops"].as_f64().unwrap();
    let q = "sum(last_over_time(volbench_ops_total{op=\"read\",phase=\"measure\"}[5m])) / \
             sum(last_over_time(volbench_interval_seconds_total{op=\"read\",phase=\"measure\"}[5m]))";
    let got = query(pport, q).expect("Prometheus answered the query");
    assert!(
        (got - want).abs() <= 0.05 * want,
        "Prometheus saw {got} read IOPS, the result says {want}"
    );
}

/// A short run on the null engine, the file set filled in `dir`.
fn short_run(dir: &Path) -> Command {
    let mut c = volbench();
    c.args(["run", "--size", "4m", "--buffered", "--engine", "null"])
        .args([
            "--duration",
            "300ms",
            "--warmup",
            "0",
            "--interval",
            "100ms",
        ])
        .arg("--target")
        .arg(dir.join("t"));
    c
}

#[test]
fn live_to_stdout_carries_json_lines_only_and_the_table_goes_to_stderr() {
    let tmp = tempfile::tempdir().unwrap();
    let o = short_run(tmp.path())
        .args(["--live", "-"])
        .arg("--output")
        .arg(tmp.path().join("out"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8(o.stdout.clone()).unwrap();
    // What `| jq` reads: every line one JSON document.
    let lines: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l:?}")))
        .collect();
    assert!(lines.len() >= 2, "{out}");
    assert!(lines.iter().all(|l| l["schema"] == "volbench.live/v1"));
    let err = stderr(&o);
    assert!(err.contains("Results") && err.contains("IOPS"), "{err}");
}

#[test]
fn quiet_prints_nothing_but_errors() {
    let tmp = tempfile::tempdir().unwrap();
    // With the result kept in --output: nothing at all, no fill line.
    let o = short_run(tmp.path())
        .arg("-q")
        .arg("--output")
        .arg(tmp.path().join("out"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(String::from_utf8_lossy(&o.stdout), "");
    assert_eq!(stderr(&o), "");
    assert!(tmp.path().join("out/result.json").is_file());
    // With --json: the result, and nothing else, on stdout.
    let o = short_run(tmp.path())
        .args(["-q", "--json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(doc["runs"].as_array().is_some_and(|r| !r.is_empty()));
    assert_eq!(stderr(&o), "");
    // Without either, the tables are the run's one record: they alone.
    let o = short_run(tmp.path()).arg("-q").output().unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("IOPS"), "{out}");
    assert!(!out.contains("fill:"), "{out}");
    assert_eq!(stderr(&o), "");
    // An error still says so.
    let o = volbench()
        .args(["run", "-q", "--target"])
        .arg(tmp.path().join("t"))
        .args(["--size", "12Q"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(exit::BAD_INPUT));
    assert!(stderr(&o).contains("volbench: error:"), "{}", stderr(&o));
}

/// A Prometheus scraping 127.0.0.1:`mport` every second, its API on
/// `pport`; None (skipped, with the reason) without prometheus and curl.
fn prometheus(test: &str, dir: &Path, mport: u16, pport: u16) -> Option<Prometheus> {
    for tool in ["prometheus", "curl"] {
        if Command::new(tool).arg("--version").output().is_err() {
            skip(
                test,
                &format!("{tool} is missing (apt-get install prometheus curl)"),
            );
            return None;
        }
    }
    let conf = dir.join("prometheus.yml");
    std::fs::write(
        &conf,
        format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: volbench\n    static_configs:\n      - targets: ['127.0.0.1:{mport}']\n"
        ),
    )
    .unwrap();
    Some(Prometheus(
        Command::new("prometheus")
            .arg(format!("--config.file={}", conf.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("tsdb").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{pport}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    ))
}

/// A run named with a quote and a backslash, with a client that connects
/// and never says a word holding the endpoint for the whole run: Prometheus
/// still scrapes every interval (its count of operations is the run's,
/// the last interval included) and the final `done`, and reads the name.
#[test]
fn prometheus_gets_every_interval_past_an_idle_client_and_a_quoted_name() {
    let test = "prometheus_gets_every_interval_past_an_idle_client_and_a_quoted_name";
    let tmp = tempfile::tempdir().unwrap();
    let (mport, pport) = (free_port(), free_port());
    let Some(_prom) = prometheus(test, tmp.path(), mport, pport) else {
        return;
    };
    let mut run = volbench()
        .args(["run", "--engine", "null", "--size", "4m", "--buffered"])
        .args(["--rate", "2000", "--warmup", "0", "--duration", "4s"])
        .args(["--name", r#"q"u\o"#])
        .args(served(tmp.path(), mport))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Bound before any I/O: connected as soon as the run listens, then silent.
    let until = Instant::now() + Duration::from_secs(60);
    let idle = loop {
        match TcpStream::connect(("127.0.0.1", mport)) {
            Ok(c) => break c,
            Err(_) if Instant::now() < until => std::thread::yield_now(),
            Err(e) => panic!("the endpoint never listened: {e}"),
        }
    };
    let mut err = String::new();
    run.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    assert!(run.wait().unwrap().success(), "{err}");
    drop(idle);
    assert!(err.contains("metrics: serving the final figures"), "{err}");
    let doc = read_json(&tmp.path().join("out/result.json"));
    let want = measured_reads(&doc["runs"][0]);
    let got = query(
        pport,
        "sum(last_over_time(volbench_ops_total{op=\"read\",phase=\"measure\"}[5m]))",
    );
    assert_eq!(got, Some(want), "every interval, the last included");
    let done = query(pport, "last_over_time(volbench_phase{phase=\"done\"}[5m])");
    assert_eq!(done, Some(1.0), "the final state was scraped");
    let named = query(pport, r#"last_over_time(volbench_run{run="q\"u\\o"}[5m])"#);
    assert!(named.is_some(), "the quoted run name reached Prometheus");
}

/// A run's target and output in `dir`, its metrics served on `mport`.
fn served(dir: &Path, mport: u16) -> Vec<std::ffi::OsString> {
    vec![
        "--target".into(),
        dir.join("t").into(),
        "--output".into(),
        dir.join("out").into(),
        "--metrics-listen".into(),
        format!("127.0.0.1:{mport}").into(),
    ]
}

/// A run's measured reads, interval by interval as Prometheus counts them.
fn measured_reads(run: &Value) -> f64 {
    run["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|iv| iv["phase"] == "measure")
        .map(|iv| {
            (iv["read"]["iops"].as_f64().unwrap() * iv["duration_s"].as_f64().unwrap()).round()
        })
        .sum()
}

/// Prometheus's answer to `q`: whether it was a valid query, and each
/// series' labels and value.
fn query_all(port: u16, q: &str) -> Option<(bool, Vec<(Value, f64)>)> {
    let out = Command::new("curl")
        .args(["-s", "--get", "--data-urlencode"])
        .arg(format!("query={q}"))
        .arg(format!("http://127.0.0.1:{port}/api/v1/query"))
        .output()
        .ok()?;
    let v: Value = serde_json::from_slice(&out.stdout).ok()?;
    let series = v["data"]["result"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|s| Some((s["metric"].clone(), s["value"][1].as_str()?.parse().ok()?)))
                .collect()
        })
        .unwrap_or_default();
    Some((v["status"] == "success", series))
}

/// A sweep's runs are series of their own: Prometheus counts each run's
/// operations under its name, exactly as its result does, and every query
/// of the Grafana dashboard in docs/ is one Prometheus accepts and answers.
#[test]
fn a_sweep_s_runs_are_separate_series_and_the_dashboard_s_queries_answer() {
    let test = "a_sweep_s_runs_are_separate_series_and_the_dashboard_s_queries_answer";
    let tmp = tempfile::tempdir().unwrap();
    let (mport, pport) = (free_port(), free_port());
    let Some(_prom) = prometheus(test, tmp.path(), mport, pport) else {
        return;
    };
    let run = volbench()
        .args(["run", "--engine", "null", "--size", "4m", "--buffered"])
        .args(["--bs", "4k,16k", "--rw", "randread"])
        .args(["--rate", "1000", "--warmup", "0", "--duration", "3s"])
        .args(served(tmp.path(), mport))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let doc = read_json(&tmp.path().join("out/result.json"));
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2, "two runs of the sweep");
    for r in runs {
        let name = r["name"].as_str().unwrap();
        let want = measured_reads(r);
        let q = format!(
            "sum(last_over_time(volbench_ops_total{{run=\"{name}\",op=\"read\",phase=\"measure\"}}[5m]))"
        );
        assert_eq!(
            query(pport, &q),
            Some(want),
            "run {name}: its own operations"
        );
    }
    let board: Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/grafana-dashboard.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let mut exprs = 0;
    for panel in board["panels"].as_array().unwrap() {
        for t in panel["targets"].as_array().into_iter().flatten() {
            let e = t["expr"].as_str().unwrap();
            // Grafana's variables as "all" and a fixed rate window.
            let q = e
                .replace("$run", ".*")
                .replace("$host", ".*")
                .replace("$__rate_interval", "5m");
            let (valid, series) = query_all(pport, &q).expect("Prometheus answered");
            assert!(valid, "{}: not a valid query: {q}", panel["title"]);
            if q.contains("volbench_interval_seconds_total") {
                let runs: std::collections::BTreeSet<String> = series
                    .iter()
                    .filter_map(|(m, _)| m["run"].as_str().map(str::to_string))
                    .collect();
                assert_eq!(
                    runs.len(),
                    2,
                    "the measured figure is one per run: {series:?}"
                );
            }
            exprs += 1;
        }
    }
    assert!(exprs >= 8, "{exprs} queries in the dashboard");
}
