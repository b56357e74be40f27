//! The SMB client's figures while the run goes, against a real Samba on
//! loopback (`common::smb`): each `--live` line of a two-channel run holds
//! the client's interval and each channel's, both channels carry traffic,
//! the intervals add up to the result's figures, `--live-csv` carries the
//! protocol columns, and the Prometheus exporter has a series per
//! channel, labelled with its place and server.

use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::live_run::{free_port, scrape};
use crate::common::smb::{PASSWORD, Samba, SambaConfig, USER};
use crate::common::vb;

const PW: &str = "VOLBENCH_SMB_PASSWORD";

/// The exporter's last figures: it serves them after the run until the
/// next scrape (`bounds::METRICS_LINGER`), so the scrapes go on until one
/// says the run is done, or the run ends without one.
fn final_scrape(child: &mut Child, port: u16) -> Option<String> {
    let until = Instant::now() + Duration::from_secs(180);
    while Instant::now() < until {
        let done = |t: &String| t.lines().any(|l| l == r#"volbench_phase{phase="done"} 1"#);
        if let Some(t) = scrape(port).filter(done) {
            return Some(t);
        }
        if child.try_wait().ok().flatten().is_some() {
            return None;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = child.kill();
    None
}

/// A counter's series of one name holding `has`, summed.
fn metric(text: &str, name: &str, has: &str) -> u64 {
    text.lines()
        .filter(|l| l.starts_with(&format!("{name}{{")) && l.contains(has))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
        .sum()
}

/// Bytes of every command on each channel in the result's `protocol.smb`.
fn result_channel_bytes(run: &Value) -> Vec<u64> {
    run["protocol"]["smb"]["channels"]
        .as_array()
        .expect("the result's channels")
        .iter()
        .map(|c| {
            c["commands"]
                .as_array()
                .map_or(0, |x| x.iter().filter_map(|x| x["bytes"].as_u64()).sum())
        })
        .collect()
}

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

#[test]
fn smb_live_lines_and_the_exporter_carry_each_channels_figures() {
    let test = "smb_live_lines_and_the_exporter_carry_each_channels_figures";
    let Some(s) = Samba::up(test, SambaConfig::default()) else {
        return;
    };
    let tmp = tempfile::tempdir().expect("a temporary folder");
    let (live, csv, out) = (
        tmp.path().join("live.jsonl"),
        tmp.path().join("live.csv"),
        tmp.path().join("out"),
    );
    let port = free_port();
    let url = format!("smb://{USER}@127.0.0.1:{}/bench/live", s.port);
    // A fixed --io-limit and no warm-up: every I/O is measured, and the
    // last interval ends when the last worker finished, after its last
    // publish; so the intervals hold every byte the result counts. A
    // fixed rate (2048 I/Os at 4000 a second: half a second) gives the
    // run several 50 ms intervals however fast the machine is.
    let mut child = vb(["run", "--target", &url])
        .env(PW, PASSWORD)
        .args(["--size", "8m", "--rw", "randrw", "--bs", "4k"])
        .args(["--threads", "2", "--iodepth", "8", "--smb-channels", "2"])
        .args(["--io-limit", "8m", "--rate", "4000"])
        .args(["--warmup", "0", "--duration", "120s", "--interval", "50ms"])
        .args(["--metrics-listen", &port.to_string()])
        .arg("--live")
        .arg(&live)
        .arg("--live-csv")
        .arg(&csv)
        .arg("--output")
        .arg(&out)
        .into_command()
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("volbench starts");
    let text = final_scrape(&mut child, port);
    let o = child.wait_with_output().expect("the run ends");
    assert!(
        o.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&o.stderr),
        s.log()
    );
    let text = text.expect("a scrape after the run");
    let doc: Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("result.json")).expect("result.json"),
    )
    .expect("the result");
    let run = &doc["runs"][0];
    let server = format!("127.0.0.1:{}", s.port);

    // The lines: each of the part's with traffic holds both channels, in
    // SMB's words.
    let parts: Vec<Value> = lines(&live)
        .into_iter()
        .filter(|l| l["scope"] == "part")
        .collect();
    assert!(parts.len() >= 2, "{parts:?}");
    let mut live_bytes = [0u64; 2];
    let mut live_requests = [0u64; 2];
    let mut client_bytes = 0;
    for l in &parts {
        let p = &l["protocol"];
        client_bytes += p["bytes"].as_u64().unwrap_or(0);
        // A line from before the worker's first publish (a loaded
        // machine) knows no channels yet, and carries nothing either.
        let Some(chans) = p["channels"].as_array() else {
            assert_eq!(
                p["bytes"].as_u64().unwrap_or(0),
                0,
                "bytes without channels: {p}"
            );
            continue;
        };
        assert_eq!(chans.len(), 2, "{p}");
        assert!(p.get("connections").is_none(), "{p}");
        for (k, c) in chans.iter().enumerate() {
            assert_eq!(c["channel"], k as u64, "{c}");
            assert_eq!(c["server"], server.as_str(), "{c}");
            // Not asserted zero: the worker's own requests before the
            // measured phase (its session and opens) land in the first
            // interval, refusals included.
            assert!(c["credit_waits"].is_u64() && c["errors"].is_u64(), "{c}");
            live_bytes[k] += c["bytes"].as_u64().expect("bytes");
            live_requests[k] += c["requests"].as_u64().expect("requests");
        }
    }
    assert!(
        live_requests.iter().all(|&n| n > 0) && live_bytes.iter().all(|&b| b > 0),
        "both channels carry traffic: {live_requests:?} requests, {live_bytes:?} bytes"
    );
    // Every byte the result counts per channel is in one interval.
    let moved = run["totals"]["read"]["bytes"].as_u64().unwrap_or(0)
        + run["totals"]["write"]["bytes"].as_u64().unwrap_or(0);
    assert_eq!(moved, 8 << 20);
    assert_eq!(
        result_channel_bytes(run),
        live_bytes,
        "each channel's intervals add up to its figures in the result"
    );
    assert_eq!(live_bytes.iter().sum::<u64>(), moved);
    assert_eq!(client_bytes, moved, "the client's own bytes too");

    // --live-csv: the client's columns hold the same bytes.
    let mut r = csv::Reader::from_path(&csv).expect("the CSV");
    let names: Vec<String> = r
        .headers()
        .expect("a header")
        .iter()
        .map(str::to_string)
        .collect();
    let (scope, bytes) = (
        names.iter().position(|x| x == "scope").expect("scope"),
        names
            .iter()
            .position(|x| x == "protocol_bytes")
            .expect("protocol_bytes"),
    );
    let csv_bytes: u64 = r
        .records()
        .map(|rec| rec.expect("a row"))
        .filter(|rec| &rec[scope] == "part")
        .map(|rec| rec[bytes].parse::<u64>().expect("bytes"))
        .sum();
    assert_eq!(csv_bytes, moved);

    // The exporter: a series per channel, by its place and its server.
    for (k, b) in live_bytes.iter().enumerate() {
        let has = format!(r#"channel="{k}",server="{server}""#);
        assert_eq!(
            metric(&text, "volbench_protocol_channel_bytes_total", &has),
            *b,
            "{text}"
        );
        assert_eq!(
            metric(&text, "volbench_protocol_channel_requests_total", &has),
            live_requests[k]
        );
        assert!(text.contains("volbench_protocol_channel_credit_waits_total{"));
    }
    assert!(
        metric(&text, "volbench_protocol_calls_total", "") > 0,
        "{text}"
    );
}
